// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .cbm reader, then (for accepted input) the writers and the host evaluator.
// Build and run: scripts/fuzz.sh cbm [runs]
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cm = cbg::model;
  try {
    const cm::model m = cm::read_cbm(data, size);
    std::vector<float> floats(m.float_features.size(), 0.25f);
    std::vector<std::uint32_t> cats(m.cat_features.size(), 12345u);
    cm::host_rows rows{1, floats.data(), floats.size(), cats.data(), cats.size()};
    std::vector<double> out(static_cast<std::size_t>(m.approx_dimension));
    cm::predict_host(m, rows, cm::prediction_type::raw_formula_val, 0, m.tree_count(), out.data(), out.size());
    (void)cm::write_cbm(m);
    (void)cm::write_json(m);
  } catch (const cbg::error&) {
  }
  return 0;
}
