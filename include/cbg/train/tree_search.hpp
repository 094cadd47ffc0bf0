// SPDX-License-Identifier: Apache-2.0
// The structure search of one oblivious tree: the contract between the boosting loop (src/train/,
// which computes the per-row targets, bootstrap and noise, and estimates the leaves afterwards) and
// the tree learner (histograms, split scores, best split, leaf index update). The learner's level
// loop is written once (src/train/tree_search_levels.hpp) over two sets of primitives that share the
// per-element math of score_math.hpp: search_tree_host (the reference, host memory, used by CI) and
// search_tree_device (the GPU; no host round trip per level without a search extension). For the
// same inputs both return the same tree, split for split.
//
// Inputs are "weak targets" as CatBoost's GPU code forms them (catboost-training.md §3.1, §3.4):
//   der[d][row]  the weighted negative gradient of output dimension d, times the bootstrap weight;
//   weight[row]  the bootstrapped weight (for the Newton score functions: the weighted second
//                derivative), shared by all dimensions.
// A split (feature f, bin b) sends a row to the "1" side when its bin of f is > b, i.e. when its
// value is > borders[f][b]; split d of the tree sets bit d of the leaf index (CatBoost's order).
// Rows with weight 0 take part with zero statistics (they still get a leaf index). With dims > 1
// (MultiClass, ...) a candidate's score sums the per-dimension terms over the shared weight.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::dist {
class reducer;
}

namespace cbg::train {

inline constexpr int max_depth = 16;

// Score functions of CatBoost's GPU mode. The Newton variants are the same formulas over
// weight = der2; the caller passes der2 as `weight`, so the learner only knows these two.
enum class score_function : std::uint8_t { cosine = 0, l2 = 1 };

struct split {
  std::int32_t feature = 0;  // quantized feature (pool column) index
  std::int32_t bin = 0;      // border index: true iff bin(row, feature) > bin
  friend bool operator==(const split&, const split&) = default;
};

struct tree_search_params {
  int depth = 6;             // 1..max_depth
  double l2_leaf_reg = 3.0;  // lambda (CatBoost replaces 0 with 1e-20 before it gets here)
  score_function score = score_function::cosine;
};

// The structure found. Shorter than the requested depth when the best split of a level already
// occurs in the tree (CatBoost stops growing there).
struct tree_structure {
  std::vector<split> splits;  // splits[d] sets bit d of the leaf index
  friend bool operator==(const tree_structure&, const tree_structure&) = default;
};

// ---- host reference ---------------------------------------------------------------------------------
struct host_search_input {
  const quantize::host_quantized* q = nullptr;
  int dims = 1;
  const float* der = nullptr;     // [dims][q->rows]
  const float* weight = nullptr;  // [q->rows]
  // Score noise per level and feature, already scaled (sigma * N(0,1)); added to every score of
  // that feature at that level (Cosine only). Empty: no noise. Else depth * q->features values.
  std::vector<double> noise;
  // The model-size multiplier of each feature's scores for this tree (size_weighted_score in
  // score_math.hpp). Empty: none. Else q->features values.
  std::vector<float> feature_weight;
};

// Searches one tree and writes each row's leaf index (bits of the splits taken) into leaf_index
// (q->rows values; resized). Features with border_count 0 are never split on.
tree_structure search_tree_host(const host_search_input& in, const tree_search_params& params,
                                std::vector<std::uint32_t>& leaf_index);

// ---- GPU --------------------------------------------------------------------------------------------
class search_extension;  // search_extension.hpp

struct device_search_input {
  const quantize::device_quantized* q = nullptr;
  int dims = 1;
  const float* der = nullptr;         // device, [dims][q->rows]
  const float* weight = nullptr;      // device, [q->rows]
  std::vector<double> noise;          // host, as host_search_input::noise (uploaded once per tree)
  std::vector<float> feature_weight;  // host, as host_search_input::feature_weight (uploaded once per tree)
  dist::reducer* reducer = nullptr;   // sharded training (issue 9): histograms summed over the ranks
  // Feature combinations: extra columns per level (search_extension.hpp, bins in device memory);
  // null: none.
  search_extension* extension = nullptr;
};

// Working memory kept across trees (histograms, partition statistics, ...), owned by the caller
// so the boosting loop allocates it once. Its layout is private to the learner.
class device_search_workspace;
struct device_search_workspace_deleter {
  void operator()(device_search_workspace* w) const noexcept;
};
using device_search_workspace_ptr = std::unique_ptr<device_search_workspace, device_search_workspace_deleter>;
device_search_workspace_ptr make_device_search_workspace(const context& ctx, const quantize::device_quantized& q,
                                                         int dims, const tree_search_params& params);

// Enqueues the whole search on ctx.stream(): every level's histograms, scores, best split and leaf
// index update stay on the device; the only copy back is the finished structure (a few bytes),
// after which this returns (it blocks on that one small copy). leaf_index (device, q.rows values)
// receives each row's leaf.
tree_structure search_tree_device(const context& ctx, const device_search_input& in, const tree_search_params& params,
                                  device_search_workspace& workspace, std::uint32_t* leaf_index);

}  // namespace cbg::train
