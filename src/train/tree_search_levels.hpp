// SPDX-License-Identifier: Apache-2.0
// The tree search's control flow, written once (search_levels) over the primitives of a backend:
// the host reference (tree_search_host.cpp) and the GPU (tree_search_device.cpp, whose primitives
// enqueue the kernels of kernels/train/). Per level: the pool's histograms, scores and best split;
// the search extension's columns (feature combinations) scored against it; the winning split taken
// and the leaf index updated. Internal (not installed).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cbg/train/search_extension.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train::detail {

// A level's winner among the extension's columns; column -1: the pool's best split stands.
struct column_choice {
  int column = -1;
  std::int32_t bin = -1;
};

class search_primitives {
 public:
  virtual ~search_primitives() = default;
  // Before the first level: the fixed-point scales of the channels (and their check for NaN and
  // infinity).
  virtual void begin() = 0;
  // Level `level`'s histograms of the pool's features, every candidate's score and the best one.
  virtual void pool_level(int level, bool last_level) = 0;
  // The splits of the tree before `level`, for the extension's candidates; none when the tree has
  // already ended (the extension then sits the level out).
  virtual std::optional<std::vector<split>> splits_before(int level) = 0;
  // Pool feature f's border value of `bin` (the extension's float splits).
  virtual float float_border(std::int32_t feature, std::int32_t bin) = 0;
  // The extension's columns of the level (column k: feature id pool features + k, with score noise
  // noise[k] when noise is not empty and the model-size multiplier weight[k] when weight is not)
  // scored against the pool's best: the winner, if a column.
  virtual column_choice score_columns(int level, bool last_level, const std::vector<search_extension::column>& columns,
                                      const std::vector<double>& noise, const std::vector<float>& weight) = 0;
  // The won column's split `s` (its feature id from the extension's commit) taken into the tree and
  // the leaf index updated from the column's bins; false when the search can stop here (the split
  // repeats one of the tree).
  virtual bool take_column(int level, bool last_level, const search_extension::column& column, split s) = 0;
  // The pool's best split taken and the leaf index updated; false when the search can stop here (no
  // candidate, or a repeated split).
  virtual bool take_pool_split(int level, bool last_level) = 0;
  // The structure found.
  virtual tree_structure finish() = 0;
};

// One tree's levels over `p`, with the extension's columns (null: none).
tree_structure search_levels(search_primitives& p, search_extension* extension, int depth);

}  // namespace cbg::train::detail
