// SPDX-License-Identifier: Apache-2.0
// CatBoost's model-size regularization (model_size_reg; catboost-training.md §2.7): the split
// scores of a CTR feature whose table is not in the model yet are multiplied by
// (1 + u / u_max)^-model_size_reg, u its distinct-value bound (unique_values.hpp) and u_max the
// largest u of the level's CTR candidates (at least 1), so the trees reuse the tables they have and
// the model keeps fewer. As CatBoost's CPU trainer (greedy_tensor_search.cpp, GetCatFeatureWeight):
// a table (projection, CTR type) counts as in the model once a tree split on any CTR feature reading
// it (any prior), u_max is over every candidate; u is the GPU trainer's bound (GetMaxCtrUniqueValues;
// the CPU counts the distinct values themselves), at most ctr_leaf_count_limit for a combination (a
// single feature's bound is its table's size, bounded too unless store_all_simple_ctr). The pool's CTR features get
// their weights at the start of each tree, and a feature chosen at an earlier level of the tree scores unweighted
// (size_weighted_score); the feature combinations' columns of a level get theirs in the level loop,
// u_max also over that level's columns. Internal (not installed).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::train {

class ctr_size_penalty {
 public:
  // `cat`: the prepared categorical data (null: no categorical features, no penalty; else it must
  // outlive this, combinations appended to it as they are committed); the pool has `pool_features`
  // features and `rows` learn rows; `reg` is model_size_reg (0: no penalty).
  ctr_size_penalty(const ctr::prepared_data* cat, std::int64_t pool_features, std::int64_t rows, double reg);

  // The multiplier of each pool feature's scores for the next tree (empty: none).
  [[nodiscard]] std::vector<float> pool_weights() const;
  // The multipliers of the `count` candidate columns `ext` gave last, for a tree with splits `chosen`.
  [[nodiscard]] std::vector<float> column_weights(const search_extension& ext, const std::vector<split>& chosen,
                                                  std::size_t count) const;
  // A tree with `splits` joined the model: the tables of its CTR features are in the model.
  void add_tree(const std::vector<split>& splits);

  [[nodiscard]] bool active() const noexcept { return active_; }

 private:
  [[nodiscard]] float weight(std::uint64_t u, std::uint64_t u_max) const;
  // The table a feature (pool or committed combination) reads, or null.
  [[nodiscard]] const model::ctr_base* base_of(std::int32_t feature) const;

  const ctr::prepared_data* cat_ = nullptr;
  bool active_ = false;
  double reg_ = 0.0;
  std::vector<std::uint64_t> unique_;  // per pool feature: the bound of a CTR feature, 0 for others
  std::uint64_t pool_max_ = 1;         // the largest of them
  std::set<model::ctr_base> in_model_;
};

}  // namespace cbg::train
