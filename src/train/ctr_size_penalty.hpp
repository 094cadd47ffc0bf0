// SPDX-License-Identifier: Apache-2.0
// CatBoost's model-size regularization (model_size_reg; catboost-training.md §2.7): a CTR feature
// that is not in the model yet has its split scores multiplied by (1 + u / u_max)^-model_size_reg,
// u its distinct-value bound (unique_values.hpp) and u_max the largest u of the CTR features not in
// the model (at least 1), so the trees reuse the CTRs they have and the model keeps fewer tables.
// CatBoost's GPU trainer (catboost/cuda/methods/update_feature_weights.cpp, and the tree CTRs'
// weights in tree_ctr_datasets_visitor.cpp) counts a CTR feature (CTR type, prior and projection)
// as in the model from the level after the one that chose it. Here: the pool's CTR features get
// their weights at the start of each tree (u_max over the pool's unused CTR features), a feature
// chosen at an earlier level of the tree scores unweighted (size_weighted_score); the feature
// combinations' columns of a level get theirs with u_max also over that level's unused columns (as
// CatBoost's GPU searcher does for both). Internal (not installed).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::train {

class ctr_size_penalty {
 public:
  // `cat`: the prepared categorical data (null: no categorical features, no penalty); the pool has
  // `pool_features` features and `rows` learn rows; `reg` is model_size_reg (0: no penalty).
  ctr_size_penalty(const ctr::prepared_data* cat, std::int64_t pool_features, std::int64_t rows, double reg);

  // The multiplier of each pool feature's scores for the next tree (empty: none).
  [[nodiscard]] std::vector<float> pool_weights() const;
  // The multipliers of the `count` candidate columns `ext` gave last, for a tree with splits `chosen`.
  [[nodiscard]] std::vector<float> column_weights(const search_extension& ext, const std::vector<split>& chosen,
                                                  std::size_t count) const;
  // A tree with `splits` joined the model: its CTR features are in the model.
  void add_tree(const std::vector<split>& splits);

  [[nodiscard]] bool active() const noexcept { return active_; }

 private:
  [[nodiscard]] float weight(std::uint64_t u, std::uint64_t u_max) const;
  [[nodiscard]] std::uint64_t pool_max_unused() const;

  bool active_ = false;
  double reg_ = 0.0;
  std::int64_t pool_features_ = 0;
  std::vector<std::uint64_t> unique_;    // per pool feature: the bound of a CTR feature, 0 for others
  std::vector<bool> used_;               // per pool feature: in the model
  std::set<std::int32_t> used_columns_;  // committed combination features in the model
};

}  // namespace cbg::train
