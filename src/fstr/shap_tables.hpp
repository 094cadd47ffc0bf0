// SPDX-License-Identifier: Apache-2.0
// The prepared SHAP contributions of every leaf of a model (TreeSHAP on oblivious trees, as
// CatBoost's shap_values.cpp), by flat feature or by combination class.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/fstr/shap_math.hpp"
#include "cbg/model/model.hpp"

namespace cbg::fstr {

struct shap_tables {
  std::vector<std::int64_t> tree_first_leaf;
  std::vector<std::int64_t> leaf_entry_begin;
  std::vector<std::int32_t> features;  // flat features, or combination classes
  std::vector<double> values;          // [entries][dims]
  std::vector<double> tree_means;      // [trees][dims]
  int dims = 1;
  [[nodiscard]] shap_table_view view() const noexcept {
    return {tree_first_leaf.data(),
            leaf_entry_begin.data(),
            features.data(),
            values.data(),
            tree_means.data(),
            static_cast<std::int64_t>(tree_first_leaf.size()),
            dims};
  }
};

// by_class: entries are combination classes (combination_classes_of), else flat features.
shap_tables prepare_shap(const model::model& m, const std::vector<double>& leaf_weights, bool by_class);

}  // namespace cbg::fstr
