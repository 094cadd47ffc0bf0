// SPDX-License-Identifier: Apache-2.0
// Helpers of the CTR tests: the host evaluator's RawFormulaVal for rows of one float feature and
// `cats_per_row` categorical hashes (row-major); training with an eval set, keeping the last
// iteration's eval metric; the mean Logloss of raw predictions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cbg/train/trainer.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/model.hpp"

namespace cbg::test {

inline std::vector<double> predict_raw(const model::model& m, const float* floats,
                                       const std::vector<std::uint32_t>& cats, std::size_t cats_per_row,
                                       std::int64_t rows, int dims = 1) {
  model::host_rows hr;
  hr.n_rows = static_cast<std::size_t>(rows);
  hr.floats = floats;
  hr.float_row_stride = 1;
  hr.cat_hashes = cats.data();
  hr.cat_row_stride = cats_per_row;
  std::vector<double> out(static_cast<std::size_t>(rows * dims));
  model::predict_host(m, hr, model::prediction_type::raw_formula_val, 0, m.tree_count(), out.data(), out.size());
  return out;
}

inline std::pair<model::model, double> train_with_eval(const pool& learn, const std::string& params, const pool& eval) {
  double last_eval = 0;
  train::train_options opts;
  opts.eval = &eval;
  opts.on_iteration = [&](const train::progress& pg) {
    last_eval = pg.eval;
    return true;
  };
  model::model m = train::train(learn, train::parse_params(params), opts);
  return {std::move(m), last_eval};
}

// The mean Logloss of raw predictions `raw` against 0/1 labels (the trainer's eval metric).
template <class Label>
double mean_logloss(const std::vector<double>& raw, const std::vector<Label>& label) {
  double loss = 0;
  for (std::size_t r = 0; r < raw.size(); ++r) {
    const double y = static_cast<double>(label[r]);
    const double a = raw[r];
    loss += std::log1p(std::exp(-std::fabs(a))) + std::max(a, 0.0) - y * a;
  }
  return loss / static_cast<double>(raw.size());
}

}  // namespace cbg::test
