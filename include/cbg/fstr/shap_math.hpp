// SPDX-License-Identifier: Apache-2.0
// The per-row part of SHAP values, shared by the host and a device path: the contributions of
// every leaf of every tree are prepared once (src/fstr/shap.cpp), so a row's SHAP values are the
// sums, over the trees, of the contributions of the leaf it falls in, in tree order (the order
// CatBoost adds them in).
#pragma once

#include <cstdint>

#include "cbg/config.hpp"

namespace cbg::fstr {

// Prepared contributions in compressed rows: leaf L (numbered over all trees) owns the entries
// [leaf_entry_begin[L], leaf_entry_begin[L + 1]); entry e adds values[e * dims + d] to feature
// features[e] of output dimension d.
struct shap_table_view {
  const std::int64_t* tree_first_leaf = nullptr;   // [trees]: number of the tree's leaf 0
  const std::int64_t* leaf_entry_begin = nullptr;  // [leaves + 1]
  const std::int32_t* features = nullptr;          // [entries]: flat feature index
  const double* values = nullptr;                  // [entries][dims]
  const double* tree_means = nullptr;              // [trees][dims]: expected value of each tree
  std::int64_t trees = 0;
  int dims = 1;
};

// Adds one row's SHAP values into out[d * columns + feature] for the first `out_dims` dimensions
// (columns = features + 1: the expected value goes to the last column). `row_leaves` holds the
// row's leaf in every tree. The caller zeroes `out` and adds the bias to the last column after.
CBG_HOST_DEVICE inline void add_row_shap(const shap_table_view& t, const std::uint32_t* row_leaves, int out_dims,
                                         std::int64_t columns, double* out) noexcept {
  for (std::int64_t tree = 0; tree < t.trees; ++tree) {
    const std::int64_t leaf = t.tree_first_leaf[tree] + row_leaves[tree];
    for (std::int64_t e = t.leaf_entry_begin[leaf]; e < t.leaf_entry_begin[leaf + 1]; ++e) {
      for (int d = 0; d < out_dims; ++d) out[d * columns + t.features[e]] += t.values[e * t.dims + d];
    }
    for (int d = 0; d < out_dims; ++d) out[d * columns + columns - 1] += t.tree_means[tree * t.dims + d];
  }
}

}  // namespace cbg::fstr
