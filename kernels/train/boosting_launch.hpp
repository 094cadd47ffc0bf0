// SPDX-License-Identifier: Apache-2.0
// The kernels of the boosting loop's GPU data passes and their launchers (one file per stage under
// kernels/train/; the backend that drives them is src/train/device_backend.cpp). The kernels
// reproduce the host reference (src/train/boosting_host.cpp) bit for bit:
//  * per-row math from loss.hpp / metric.hpp / boosting_math.hpp (compiled with --fmad=false);
//  * ordered sums in the tile order of reduce_math.hpp (256 lanes x 16 rows per block, then the
//    pairwise fold in shared memory, then the same over the tile sums);
//  * leaf sums in 64-bit fixed point with integer atomics (order-free), maxima with integer atomics;
//  * AUC and the weighted quantile through CUB's (stable, deterministic) radix sort, scans and
//    reductions over integers.
// Launchers only enqueue on `stream` (and check the launch); none synchronises or copies to the host.
// Those that need temporary device memory take it from `mr` on `stream`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include "cbg/config.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/memory/resource.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/boosting_math.hpp"

namespace cbg::train::launch {

constexpr int lanes = sum_lanes;  // threads per block of every row kernel
// Ordered sums of the weak-target pass per tile: sigma and the value; then a learn metric's terms.
constexpr int weak_sums = 2;
constexpr int weak_sums_with_metric = weak_sums + metric_terms;

// The double of an order key (order_key in row_passes.cuh: doubles ordered as unsigned integers).
CBG_HOST_DEVICE inline double key_value(std::uint64_t k) {
  return double_from_bits((k >> 63) != 0 ? k & 0x7fffffffffffffffull : ~k);
}

struct label_facts_dev {
  unsigned long long min_key;
  unsigned long long max_key;
  unsigned non_integer;
  unsigned non_constant;
};

struct start_args {
  column_view baseline[max_dims];
  double bias[max_dims];
  int dims = 1;
  bool has_baseline = false;
};

// ---- learn-set passes -------------------------------------------------------------------------------
struct rows_view {
  const double* approx = nullptr;  // [dims][n]
  const float* target = nullptr;
  const float* weight = nullptr;  // null: 1
  std::int64_t n = 0;
};

struct weak_args {
  rows_view v;
  loss_spec loss;
  weak_request req;
  float* der = nullptr;     // [dims][n], bootstrapped
  float* weight = nullptr;  // [n], bootstrapped
  unsigned* max_key = nullptr;
  double* partial = nullptr;       // [tiles][weak_sums], with_metric: [tiles][weak_sums_with_metric]
  double2* saved = nullptr;        // one dimension: (der, hess) of each row at the approx, or null
  std::int64_t first_row = 0;      // of this shard (draws are keyed by the global row)
  bool with_metric = false;        // also `metric`'s row terms (req.learn_metric)
  bool metric_from_value = false;  // ... taken from the value (metric_is_weighted_loss, want_value)
  metric_spec metric;
};

struct point_args {
  rows_view v;
  loss_spec loss;
  const std::uint32_t* leaf = nullptr;
  const double* point = nullptr;  // [leaves][dims], or null
  int leaves = 1;
  int hess_channels = 0;
  bool want_value = false;
  bool want_max = false;
  const fixed_scale* scales = nullptr;  // [channels], or null: no sums
  unsigned long long* sums = nullptr;   // [leaves][channels]
  unsigned* max_key = nullptr;
  double* partial = nullptr;  // [tiles]
  // Leaf estimation on the device: when set, the pass is the one the search's mode asks for (and
  // none once it is done); point, scales and the wants above are taken from here.
  const leaf_search_status* search = nullptr;
  const double* search_candidate = nullptr;
  const double* search_point = nullptr;
  const fixed_scale* candidate_scales = nullptr;  // bounded losses: the static scales; else null
  const fixed_scale* sums_scales = nullptr;       // mode sums: the scales from the maxima
  bool candidate_value = false;                   // backtracking: the candidate's function value
  const double2* saved = nullptr;                 // one dimension, no point: der and hess at the approx (weak pass)
};

struct eval_tree {
  column_view column[max_depth];
  value_split split[max_depth];
  int count = 0;
};

// Sharded leaf passes (issue 9): one all-gather per pass carries every rank's fixed-point leaf sums,
// channel maxima and value tile partials in one block of `block` bytes: the sums at 0, the maxima at
// keys_at, the tiles at tiles_at. The fold sums the leaf sums (integers: any order is exact), takes
// the maxima and lays the tiles out in row order, so the ordered sum is the single-GPU one.
constexpr int max_fold_ranks = 16;
struct pass_pack {
  std::size_t slots = 0;
  int channels = 0;
  std::int64_t tiles = 0;  // this rank's, in the send block
  std::size_t keys_at = 0, tiles_at = 0, block = 0;
};
struct pass_fold {
  pass_pack p;
  int ranks = 0;
  std::int64_t first_tile[max_fold_ranks + 1] = {};  // rank r's tiles are [first_tile[r], first_tile[r + 1])
};

inline int grid_of(std::int64_t n, int threads = 256) {
  return static_cast<int>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 8192));
}
inline int tiles_of(std::int64_t n) { return static_cast<int>(std::max<std::int64_t>(1, sum_tiles_of(n))); }

// ---- ordered sums (ordered_sums.cu) -------------------------------------------------------------------
// One level of the ordered sum: `count` tiles of C doubles at `in` into tiles_of(count) tiles at `out`
// (C: 1, 2, 3, metric_terms or weak_sums_with_metric).
void reduce_tiles(int C, const double* in, std::int64_t count, double* out, cudaStream_t stream);

// ---- labels and targets (targets.cu) -------------------------------------------------------------------
// out: {~0, 0, 0, 0} before the call.
void label_facts(const column_view& c, std::int64_t n, label_facts_dev* out, cudaStream_t stream);
// first_bad: ~0 before the call; the lowest (global row << 8 | target_problem) of a bad label.
void targets(const column_view& c, const target_rule& rule, std::int64_t n, std::int64_t first_row, float* out,
             unsigned long long* first_bad, cudaStream_t stream);
void value_at(const column_view& c, std::int64_t r, double* out, cudaStream_t stream);
void to_float(const column_view& c, std::int64_t n, float* out, cudaStream_t stream);
void fill(float* out, std::int64_t n, float v, cudaStream_t stream);

// ---- weak target and bootstrap (weak_target.cu, bootstrap.cu) ------------------------------------------
// Tile partials of (sum w, sum w t, sum w t^2) into partial [tiles][3]; the largest |w| key into max_key.
void target_moments(const rows_view& v, double* partial, unsigned* max_key, cudaStream_t stream);
void weak_target(const weak_args& a, cudaStream_t stream);
// Tile partials of sum_k |der_k| (MVS's default lambda) into partial [tiles].
void mvs_l1(const float* der, std::int64_t n, int dims, double* partial, cudaStream_t stream);
// MVS in place on the search der and weights, per block of mvs_block_rows rows.
void mvs(float* der, float* weight, std::int64_t n, int dims, float lambda, double subsample, std::uint64_t key,
         std::int64_t first_row, cudaStream_t stream);

// ---- leaf sums and leaf search (leaf_sums.cu, leaf_search.cu, pass_exchange.cu) ------------------------
void leaf_pass(const point_args& a, cudaStream_t stream);
void leaf_start(const leaf_search_config& c, const leaf_search_view& v, unsigned long long* sums,
                const fixed_scale* scales, double value, unsigned* max_key, cudaStream_t stream);
void leaf_decide(const leaf_search_config& c, const leaf_search_view& v, unsigned long long* sums, const double* value,
                 const fixed_scale* bound_scales, unsigned* max_key, cudaStream_t stream);
// A fused sharded leaf pass: the fold of the all-gather's receive block, the value's ordered sum and
// the decision in one kernel.
void fold_and_decide(const pass_fold& f, const unsigned char* recv, bool want_value, const leaf_search_config& c,
                     const leaf_search_view& v, unsigned long long* sums, unsigned* keys, double* value,
                     const fixed_scale* bound_scales, unsigned long long* next_sums, unsigned* next_keys,
                     cudaStream_t stream);
void pack_pass(const pass_pack& p, const unsigned long long* sums, const unsigned* keys, const double* tiles,
               unsigned char* send, cudaStream_t stream);
void fold_pass(const pass_fold& f, const unsigned char* recv, unsigned long long* sums, unsigned* keys, double* tiles,
               cudaStream_t stream);
// Exact leaves (MAE/Quantile): out [leaves] values then [leaves] weights.
void exact_leaves(const double* approx, const float* target, const float* w, const std::uint32_t* leaf, std::int64_t n,
                  int leaves, double alpha, const fixed_scale& ws, double* out, cudaStream_t stream,
                  const std::shared_ptr<device_memory_resource>& mr);

// ---- approx updates (approx_update.cu) ------------------------------------------------------------------
void start_approx(const start_args& a, std::int64_t n, double* approx, cudaStream_t stream);
void apply_learn(double* approx, std::int64_t n, int dims, const std::uint32_t* leaf, const double* delta,
                 cudaStream_t stream);
void apply_eval(double* approx, std::int64_t n, int dims, const eval_tree& tree, const double* delta,
                cudaStream_t stream);
// A tree's splits by bin, passed by value.
struct quantized_tree {
  split splits[max_depth];
  const std::uint8_t* columns[max_depth] = {};  // a feature combination's bins (device), else null
  int count = 0;
};
// leaf[r] = quantized_leaf(q, tree, r) for every learn row.
void tree_leaves(const quantize::quantized_rows& q, const quantized_tree& tree, std::uint32_t* leaf,
                 cudaStream_t stream);

// ---- metrics, AUC and the weighted quantile (metrics.cu, auc.cu, quantile.cu) ---------------------------
// Tile partials of the metric's terms into partial [tiles][metric_terms].
void metric_sums(const rows_view& v, const loss_spec& loss, const metric_spec& m, double* partial, cudaStream_t stream);
// result [2]: sum over positives of (2 * negatives below + negatives tied), then the positives.
void auc_counts(const double* approx, const float* target, std::int64_t n, std::uint64_t* result, cudaStream_t stream,
                const std::shared_ptr<device_memory_resource>& mr);
// Targets sorted ascending into keys_out, their weights into w_out.
void sort_by_target(const float* targets, float* keys_out, const float* w_in, float* w_out, std::int64_t n,
                    cudaStream_t stream, const std::shared_ptr<device_memory_resource>& mr);
// The inclusive sum of the weights in fixed point at scale s into cum.
void cumulative_fixed_weights(const float* w, std::int64_t n, const fixed_scale& s, long long* cum, cudaStream_t stream,
                              const std::shared_ptr<device_memory_resource>& mr);
// first: n - 1 before the call; the first row whose cumulative weight reaches goal.
void first_reaching(const long long* cum, std::int64_t n, const fixed_scale& s, double goal, unsigned long long* first,
                    cudaStream_t stream);

}  // namespace cbg::train::launch
