// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .cbm reader, then (for accepted input) the writers and the host evaluator.
// Build and run: scripts/fuzz.sh cbm [runs]
#include <cstddef>
#include <cstdint>

#include "cbg/core/error.hpp"
#include "cbg/model/io.hpp"
#include "exercise_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cm = cbg::model;
  try {
    const cm::model m = cm::read_cbm(data, size);
    cbg::fuzz::exercise_model(m);
  } catch (const cbg::error&) {}
  return 0;
}
