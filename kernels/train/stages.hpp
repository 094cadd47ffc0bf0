// SPDX-License-Identifier: Apache-2.0
// The stages of the GPU tree search (src/train/tree_search_device.cpp runs them on one stream):
//   histogram.cu  one level's histograms of the computed children (fixed-point sums)
//   split.cu      per-channel max |value| (the fixed-point scales) and the NaN/infinity check;
//                 siblings by subtraction, every candidate's score, best per feature; the best
//                 split of the level and which child of each leaf the next level computes; the
//                 leaf index update
// Launchers only enqueue on `stream`; none synchronises. Every kernel after the first reads the
// search state on the device and does nothing once the tree has stopped growing.
//
// Histogram memory: slots of [channel][total bins] 64-bit sums; level d's leaf p sits in slot p.
// Level d >= 1 computes one child of each parent q < h = 2^(d-1) (the one compute_bit[q] names)
// into slot q + h, over the parent's histogram in slot q; the score kernel then rewrites slot q as
// leaf q (bit d-1 clear) and slot q + h as leaf q + h: parent - computed for the other child.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include "cbg/train/tree_search.hpp"

namespace cbg::train::detail {

// Channels the kernels handle: der dimensions and the weight (src/train/tree_search_common.hpp
// bounds dims).
inline constexpr int max_channels = 257;

// On the device: what the host reads back at the end (one small copy), then per-channel maxima.
struct search_state {
  int status = 0;   // 0, or channels - c for the lowest channel c holding a NaN or infinity
  int stopped = 0;  // no split at the current level: the tree has ended
  int count = 0;    // splits taken
  int scored = 0;   // score_and_choose: the level's score blocks done (0 again after the level)
  split splits[max_depth];
};

// Per feature, a level's best border.
struct feature_best {
  double score;
  std::int32_t bin;  // -1: the feature has no candidate
  std::int32_t reserved;
};

// Device arrays and sizes shared by the stages of one search.
struct search_view {
  const std::uint32_t* index = nullptr;  // packed bins (quantizer.hpp)
  std::int64_t rows = 0;
  std::int64_t padded_rows = 0;
  std::int64_t features = 0;
  const float* der = nullptr;  // [dims][rows]
  const float* weight = nullptr;
  int dims = 1;
  int channels = 2;                      // dims + 1: der dimensions, then the weight
  const std::int32_t* bins = nullptr;    // per feature: border_count + 1, or 0
  const std::int64_t* offset = nullptr;  // per feature: first histogram column
  std::int64_t total_bins = 0;
  int bin_stride = 0;  // the largest bins over features (the shared-memory stride)
  long long* hist = nullptr;
  std::uint8_t* compute_bit = nullptr;  // per leaf of the level: 1 when the next level computes child 1
  std::uint32_t* leaf = nullptr;
  search_state* state = nullptr;
  unsigned* max_bits = nullptr;  // per channel: bits of max |value| (a float)
  feature_best* best = nullptr;
  const double* noise = nullptr;  // [depth][features] or nullptr
  // [features] or nullptr: the model-size multipliers (size_weighted_score in score_math.hpp)
  const float* feature_weight = nullptr;
  // Row lists (one dimension, histogram_fast): the leaf update of level d writes, per row of a child
  // that level d + 1 computes, {row, parent q} in any order, and level d + 1's histograms read only
  // those rows; null: every level reads every row. With them, each row's fixed-point der and weight
  // are computed once per tree (fixed_values) for all levels.
  uint2* row_list = nullptr;
  unsigned* row_count = nullptr;  // [max_depth]: entries written for level d + 1 at [d + 1]
  int2* fixed = nullptr;          // [rows]: to_fixed(der), to_fixed(weight) at the tree's scales
  // score_splits scores features [score_begin, score_end) (-1: to the last); the sharded search's
  // feature-parallel scoring gives each rank its slice (sliced_search.hpp).
  std::int64_t score_begin = 0;
  std::int64_t score_end = -1;
};

// How one level's histogram kernel splits the work (chosen on the host; see plan_histogram).
struct histogram_plan {
  bool fast = false;           // histogram_fast (one dimension), else histogram_simple
  int features_per_block = 4;  // of a group: 4, 2 or 1
  int groups_per_block = 1;    // fast kernel: packed word groups per block (1, 2 or 4)
  bool prefetch = false;       // fast kernel: the next round's rows into L2 during the adds
  int slots_per_pass = 1;      // computed children per block pass
  int units = 0;               // (group, feature subset, slot chunk)
  int row_chunks = 1;
  std::int64_t row_chunk = 0;  // rows per chunk
  int blocks = 0;
  std::size_t shared_bytes = 0;
};
inline constexpr int histogram_threads = 512;
histogram_plan plan_histogram(const search_view& v, int level, int device, int blocks_per_sm, bool fast,
                              int groups_per_block, bool prefetch);

// Once per workspace: kernel attributes (shared memory above the default).
void prepare_split_kernels(const search_view& v);
std::size_t score_shared_bytes(const search_view& v);

void reduce_scales(const search_view& v, cudaStream_t stream);
// v.fixed from der and weight at the scales (after reduce_scales and, sharded, the maxima's reduction).
void fixed_values(const search_view& v, cudaStream_t stream);
void build_histograms(const search_view& v, const histogram_plan& plan, int level, cudaStream_t stream);
// Scores only (the sharded search's slice of the features: sliced_search.hpp chooses).
void score_splits(const search_view& v, int level, bool last_level, score_function fn, double lambda,
                  cudaStream_t stream);
// The level's scores over every feature, then its split into the search state and the compute bits
// of its leaves (the best of v.best; the tree stops on no candidate or a repeated split). Up to
// fused_choose_leaves leaves (and at the last level) the score kernel's last block chooses (one launch),
// beyond that, or without `fuse` (the policy's A/B switch), a choose kernel follows. Returns the
// kernels launched.
inline constexpr std::int64_t fused_choose_leaves = 256;
int score_and_choose(const search_view& v, int level, bool last_level, score_function fn, double lambda, bool fuse,
                     cudaStream_t stream);
// list: also write the next level's row list (v.row_list; the next level's histograms read it).
void update_leaves(const search_view& v, int level, bool list, cudaStream_t stream);

}  // namespace cbg::train::detail
