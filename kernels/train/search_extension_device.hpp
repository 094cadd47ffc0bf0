// SPDX-License-Identifier: Apache-2.0
// The kernels of the GPU tree search's extra candidate columns (feature combinations;
// search_extension.hpp) and their launchers: one level's columns scored against the pool's best
// split (stages.hpp's score_and_choose), and a won column's split taken into the tree. The level's
// orchestration (which columns, the read-backs, the commit) is src/train/tree_search_device.cpp.
// Compiled with --fmad=false like split.cu, so the scores follow score_math.hpp expression for
// expression and equal the host reference's (src/train/tree_search_host.cpp) bit for bit.
#pragma once

#include <cstdint>

#include "kernels/train/stages.hpp"

#include "cbg/config.hpp"

namespace cbg::train::detail {

// The level's columns on the device.
struct ext_columns {
  const std::uint8_t* const* bins = nullptr;  // [K]
  const std::int32_t* nb = nullptr;           // [K]: border_count + 1
  const std::int64_t* offset = nullptr;       // [K]: first histogram column
  const double* noise = nullptr;              // [K]
  const float* weight = nullptr;              // [K] or nullptr: the model-size multipliers
  int count = 0;
  std::int64_t total_bins = 0;
  int max_borders = 0;
};

// What a level reads back, in one copy: the extension's choice, the search state after the level's
// score_and_choose and the float borders of its splits (the next level's candidates need both).
struct ext_record {
  int column = -1;  // -1: the pool's split stands
  int bin = -1;
  int reserved[2] = {0, 0};
  search_state state;
  float borders[max_depth] = {};  // split i's border when its feature is the pool's, else 0
};

// The won column's split taken into the tree (or the tree stopped when it repeats a split): on the
// device's state and on the host's copy of it, the same update.
CBG_HOST_DEVICE inline void take_split(search_state& s, int level, split sp, bool stop) {
  if (stop) {
    s.stopped = 1;
    s.count = level;
  } else {
    s.splits[level] = sp;
    s.count = level + 1;
    s.stopped = 0;
  }
}

// The record without a choice (a level whose previous one read nothing back).
void ext_state(const search_view& v, const float* borders, ext_record* out, cudaStream_t stream);
// Histograms of every leaf of the level over the columns: [leaf][channel][e.total_bins]
// fixed-point sums into `hist` (zeroed by the caller). Shared-memory histograms of a group of
// columns per block, one pass over the rows for the group, when one column's fit the default
// 48 KiB, unless global_only (the global-atomics kernel, for A/B benchmarks).
void ext_histograms(const search_view& v, const ext_columns& e, int level, bool global_only, long long* hist,
                    cudaStream_t stream);
// Every (column, border)'s score as search_tree_host adds it up: scores[k * e.max_borders + b].
// `hist` becomes its running sums over each column's bins (in place; what ext_compute_bits reads).
void ext_scores(const search_view& v, const ext_columns& e, long long* hist, int level, score_function fn,
                double lambda, double* scores, cudaStream_t stream);
// The best of the pool's features (v.best) and the columns (feature v.features + k), written to
// `out` with the state and the splits' borders.
void ext_choose(const search_view& v, const ext_columns& e, const double* scores, const float* borders, ext_record* out,
                cudaStream_t stream);
// take_split on the device's state.
void ext_take(search_state* s, int level, split sp, bool stop, cudaStream_t stream);
// The next level computes the lighter child of each of the level's leaves under column k's split
// (from ext_scores' running sums).
void ext_compute_bits(const search_view& v, const ext_columns& e, const long long* hist, int level, int k, int bin,
                      cudaStream_t stream);
// Every row's leaf index gets bit `level` when its bin of the column is > bin.
void ext_leaves(const search_view& v, const std::uint8_t* bins, int level, int bin, cudaStream_t stream);

}  // namespace cbg::train::detail
