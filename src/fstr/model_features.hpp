// SPDX-License-Identifier: Apache-2.0
// The features feature importance works with, as CatBoost names them (catboost/libs/fstr):
//   split features  what a tree split tests, one per float feature (all its borders), per
//                   categorical feature split one-hot (all its values), per CTR feature;
//   combination classes  split features grouped by the flat features they read (a float or
//                   one-hot feature: itself; a CTR: its projection's categorical features).
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/model/model.hpp"

namespace cbg::fstr {

struct split_feature {
  model::split_kind kind = model::split_kind::float_feature;
  std::int32_t index = 0;  // float feature index; categorical index (one-hot); CTR feature index
  friend bool operator==(const split_feature&, const split_feature&) = default;
};

// The split features in order of first use over the trees, and each tree's splits as indexes into
// them ([tree][depth], depth d sets bit d of the leaf index).
struct tree_split_features {
  std::vector<split_feature> features;
  std::vector<std::vector<std::int32_t>> trees;
};
tree_split_features split_features_of(const model::model& m);

// Adds `value` to the flat features a split feature is credited to (CatBoost's regular feature
// effect): a float feature or one-hot split to its own column; a CTR equally to every float,
// categorical and one-hot part of its projection.
void credit_split_feature(const model::model& m, const split_feature& f, double value, std::vector<double>& flat);

// The flat features a split feature stands for in Interaction: a float feature itself; a CTR its
// projection's float and categorical parts; a one-hot split none (as CatBoost).
std::vector<std::int64_t> interaction_features(const model::model& m, const split_feature& f);

struct combination_classes {
  std::vector<std::int32_t> class_of_binary;    // per binary feature (the model's tree_splits values)
  std::vector<std::vector<std::int64_t>> flat;  // per class: the flat features it reads
  std::vector<split_feature> representative;    // per class: its first split feature
};
combination_classes combination_classes_of(const model::model& m);

// Flat index of float feature `f` / categorical feature `c` (per-type indexes).
std::int64_t float_flat(const model::model& m, std::int32_t f);
std::int64_t cat_flat(const model::model& m, std::int32_t c);

}  // namespace cbg::fstr
