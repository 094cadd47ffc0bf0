// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the JSON model reader, then (for accepted input) the writers and the evaluator.
// Build and run: scripts/fuzz.sh json [runs]
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cbg/core/error.hpp"
#include "cbg/model/io.hpp"
#include "exercise_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cm = cbg::model;
  try {
    const cm::model m = cm::read_json(std::string_view(reinterpret_cast<const char*>(data), size));
    cbg::fuzz::exercise_model(m);
  } catch (const cbg::error&) {}
  return 0;
}
