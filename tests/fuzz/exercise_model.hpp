// SPDX-License-Identifier: Apache-2.0
// What both fuzz targets do with a model a reader accepted: evaluate one row, write it both ways.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/io.hpp"

namespace cbg::fuzz {

inline void exercise_model(const cbg::model::model& m) {
  namespace cm = cbg::model;
  std::vector<float> floats(m.float_features.size(), 0.25f);
  std::vector<std::uint32_t> cats(m.cat_features.size(), 12345u);
  cm::host_rows rows{1, floats.data(), floats.size(), cats.data(), cats.size()};
  std::vector<double> out(static_cast<std::size_t>(m.approx_dimension));
  cm::predict_host(m, rows, cm::prediction_type::raw_formula_val, 0, m.tree_count(), out.data(), out.size());
  (void)cm::write_cbm(m);
  (void)cm::write_json(m);
}

}  // namespace cbg::fuzz
