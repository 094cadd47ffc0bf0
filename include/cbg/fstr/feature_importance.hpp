// SPDX-License-Identifier: Apache-2.0
// Feature importance of a model, as CatBoost computes it (catboost/libs/fstr): every value is per
// ORIGINAL (flat) feature, splits on one-hot, CTR and combination features credited back to the
// features they are made of.
//
//   PredictionValuesChange  per split, the weighted spread of the two leaves it separates (leaf
//                           weights stored in the model, or counted on a pool), in percent of the
//                           total; a CTR split's share is divided equally among its projection's
//                           float, categorical and one-hot parts.
//   LossFunctionChange      the objective metric on a pool with each feature's SHAP contribution
//                           removed from the raw predictions, minus the metric of the full model.
//   ShapValues              TreeSHAP on oblivious trees with the leaf weights as the background
//                           distribution; [rows, features + 1] per dimension, the last column is
//                           the expected value (tree means plus the bias).
//   Interaction             per pair of features, the summed |second difference| of the leaf
//                           values over the trees where both split, in percent of the total.
//
// Pools enter as leaf indexes (any evaluator, host or GPU, computes those), plus weights, targets
// and baseline for LossFunctionChange, so nothing here reads feature columns.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/model/model.hpp"

namespace cbg::fstr {

// Values equal the C ABI's CBG_FSTR_* constants.
enum class fstr_type : std::int32_t {
  prediction_values_change = 0,
  loss_function_change = 1,
  shap_values = 2,
  interaction = 3,
};
inline constexpr int fstr_type_count = 4;

// What a pool contributes: its rows' leaves, and their weights.
struct pool_leaves {
  std::size_t rows = 0;
  std::vector<std::uint32_t> leaves;  // [rows][trees]: leaf of row r in tree t at r * trees + t
  std::vector<float> weights;         // empty: every row weighs 1
};

// Per leaf of the model ([tree][leaf] in the model's order) the summed weight of the pool's rows in it.
std::vector<double> pool_leaf_weights(const model::model& m, const pool_leaves& p);

// PredictionValuesChange per flat feature. `leaf_weights`: per leaf, the model's (model::leaf_weights)
// or pool_leaf_weights(). Throws bad_data when the weights are missing or sized wrong.
std::vector<double> prediction_values_change(const model::model& m, const std::vector<double>& leaf_weights);

struct feature_pair_score {
  std::int64_t first = 0;  // flat feature index, first < second
  std::int64_t second = 0;
  double score = 0;
};
// Interaction: every pair that interacts, by descending score (ties by feature indexes).
std::vector<feature_pair_score> interaction(const model::model& m);

// The leaf weights SHAP uses: the model's, or the pool's (plus the model's) when the model has none
// or has a leaf of weight 0 with a value (as CatBoost). `pool` may be null; throws bad_data when it
// is needed.
std::vector<double> shap_leaf_weights(const model::model& m, const pool_leaves* pool);

// Outputs SHAP values have per row: the approx dimension (1 for RMSEWithUncertainty, as CatBoost).
int shap_dimensions(const model::model& m);

// ShapValues: out[row][dim][feature] for features 0..features (the last is the expected value;
// `features` is the data's feature count, at least the model's, as in CatBoost); out holds
// rows * shap_dimensions(m) * (features + 1) doubles.
void shap_values(const model::model& m, const std::vector<double>& leaf_weights, const pool_leaves& p,
                 std::int64_t features, double* out);

// The rows' labels, baseline ([rows][dims] or empty) for LossFunctionChange.
struct pool_targets {
  std::vector<double> labels;
  std::vector<double> baseline;
};
// LossFunctionChange per flat feature, with the model's objective metric (its "params").
std::vector<double> loss_function_change(const model::model& m, const std::vector<double>& leaf_weights,
                                         const pool_leaves& p, const pool_targets& t);

}  // namespace cbg::fstr
