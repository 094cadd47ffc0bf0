// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the training parameters reader (params_json of cbg_train). Every input must
// be accepted or refused with a cbg::error; anything else (a crash, a sanitizer report, another
// exception type) is a finding. Build and run: scripts/fuzz.sh params [runs]
#include <cstddef>
#include <cstdint>
#include <string>

#include "cbg/core/error.hpp"
#include "cbg/train/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)cbg::train::parse_params(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const cbg::error&) {}
  return 0;
}
