// SPDX-License-Identifier: Apache-2.0
// The host evaluator of oblivious-tree models: the reference every GPU path is compared to.
// Semantics follow CatBoost's Python/CLI layer (catboost-model-format.md §3, §3.7): raw values are
// summed tree by tree in double, then Scale and (from tree 0 only) Bias, then post-processing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cbg/model/apply_math.hpp"
#include "cbg/model/model.hpp"

namespace cbg::model {

// Values equal the C ABI's CBG_PREDICTION_* constants.
enum class prediction_type : std::int32_t {
  raw_formula_val = 0,
  probability = 1,
  log_probability = 2,
  class_index = 3,
  exponent = 4,
  rmse_with_uncertainty = 5,
  multi_probability = 6,
};
inline constexpr int prediction_type_count = 7;

// Host rows, CatBoost's calcer convention: float features by their per-type index, categorical
// features as 32-bit hashes (cat_hash / cat_hash_int) by their per-type index.
struct host_rows {
  std::size_t n_rows = 0;
  const float* floats = nullptr;  // [n_rows, float_row_stride]; may be NULL without float features
  std::size_t float_row_stride = 0;
  const std::uint32_t* cat_hashes = nullptr;  // [n_rows, cat_row_stride]; may be NULL without cat features
  std::size_t cat_row_stride = 0;
};

// Columns per row of `type` for this model, or throws CBG_ERR_UNSUPPORTED / INVALID_ARGUMENT:
// RawFormulaVal, Exponent, MultiProbability: approx_dimension; Probability and LogProbability:
// 2 for dimension 1 ([P(class 0), P(class 1)], as CatBoost's predict_proba), else the dimension;
// Class: 1, or the dimension for multi-label losses (MultiLogloss, MultiCrossEntropy);
// RMSEWithUncertainty: 2 (needs dimension 2).
std::size_t prediction_columns(const model& m, prediction_type type);

// How `type` post-processes a row of this model (the loss decides softmax against per-dimension
// sigmoids, and which Class rule applies). Throws as prediction_columns().
postprocess_plan plan_postprocess(const model& m, prediction_type type);

// The CTR formula of a CTR feature (its type, target border and prior/shift/scale).
[[nodiscard]] inline ctr_calc calc_of(const ctr_description& d) noexcept {
  return ctr_calc{d.base.type, d.target_border_idx, d.prior_num, d.prior_denom, d.shift, d.scale};
}

// Writes [n_rows, prediction_columns] values into `out` (row-major, out_size elements at least),
// using trees [tree_begin, tree_end). Class predictions are class indices (0, 1, ...).
// The model must have passed validate() (every reader does that).
void predict_host(const model& m, const host_rows& rows, prediction_type type, std::size_t tree_begin,
                  std::size_t tree_end, double* out, std::size_t out_size);

// Leaf index of every row in every tree of [tree_begin, tree_end): out[row * n_trees + t].
void leaf_indexes_host(const model& m, const host_rows& rows, std::size_t tree_begin, std::size_t tree_end,
                       std::uint32_t* out, std::size_t out_size);

}  // namespace cbg::model
