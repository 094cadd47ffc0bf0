// SPDX-License-Identifier: Apache-2.0
// Leaf estimation on the device (leaf_math.hpp): the start and decision kernels of the search, and the
// fused sharded pass that folds the ranks' sums and decides in one kernel.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

// Zeroes what the next pass adds into: the leaf sums and the channel maxima (when the search goes on).
__device__ inline void clear_for_next_pass(const leaf_search_config& c, const leaf_search_view& v,
                                           unsigned long long* sums, unsigned* max_key) {
  if (v.status->mode == leaf_mode_done) return;
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t slots = static_cast<std::int64_t>(c.leaves) * c.channels();
  for (std::int64_t i = t; i < slots; i += lanes) sums[i] = 0;
  for (int i = t; i < c.channels(); i += lanes) max_key[i] = 0;
}

// leaf_begin_direction on a block (block-uniform result): the one-iteration copy leaf-parallel; else
// gdir's terms leaf-parallel into shared memory, added by thread 0 in leaf_gdir's order (the same
// bits as one thread: each term is the same product, the additions the same sequence). The serial
// loop of one thread over the leaves' sums in global memory cost ~15 us per pass.
constexpr int gdir_chunk = 1024;
__device__ inline bool begin_direction_block(const leaf_search_config& c, const leaf_search_view& v,
                                             const std::int64_t* sums, const fixed_scale* scales) {
  __shared__ double terms[gdir_chunk];
  const int t = static_cast<int>(threadIdx.x);
  const int values = c.values();
  if (c.iterations <= 1) {
    for (int i = t; i < values; i += lanes) v.point[i] = v.direction[i];
    if (t == 0) v.status->mode = leaf_mode_done;
    return false;
  }
  double total = 0;  // thread 0's
  for (int at = 0; at < values; at += gdir_chunk) {
    const int n = min(gdir_chunk, values - at);
    for (int i = t; i < n; i += lanes) terms[i] = leaf_gdir_term(c, v, sums, scales, at + i);
    __syncthreads();
    if (t == 0) {
      for (int i = 0; i < n; ++i) total += terms[i];
    }
    __syncthreads();
  }
  if (t == 0) {
    leaf_search_status& st = *v.status;
    st.gdir = total;
    st.step = 1.0;
    st.mode = leaf_mode_candidate;
  }
  return true;
}

// After the pass at the approx: point 0, leaf weights, the first direction, gdir, the candidate.
__global__ void __launch_bounds__(lanes)
    leaf_start_kernel(leaf_search_config c, leaf_search_view v, unsigned long long* sums, const fixed_scale* scales,
                      double value, unsigned* max_key) {
  __shared__ int go;
  const int t = static_cast<int>(threadIdx.x);
  const auto* s = reinterpret_cast<const std::int64_t*>(sums);
  leaf_zero_point(c, v, t, lanes);
  leaf_directions(c, v, s, scales, true, t, lanes);
  __syncthreads();
  if (t == 0) leaf_start(v, value);
  const bool begin = begin_direction_block(c, v, s, scales);
  if (t == 0) go = begin ? 1 : 0;
  __syncthreads();
  if (go != 0) leaf_candidate(c, v, v.status->step, t, lanes);
  __syncthreads();
  clear_for_next_pass(c, v, sums, max_key);
}

// After a pass of the search: the decision, the next direction and candidate (one block). The next
// pass adds into next_sums / next_keys (zeroed here): the result buffer's sums and maxima on one GPU,
// the all-gather's send block in a fused sharded pass.
__device__ inline void leaf_decide_block(const leaf_search_config& c, const leaf_search_view& v,
                                         const unsigned long long* sums, const double* value,
                                         const fixed_scale* bound_scales, const unsigned* max_key,
                                         unsigned long long* next_sums, unsigned* next_keys) {
  __shared__ int prev;
  __shared__ int go;
  __shared__ int accept;
  __shared__ int directions;
  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) prev = v.status->mode;
  __syncthreads();
  if (prev == leaf_mode_done) return;
  const auto* s = reinterpret_cast<const std::int64_t*>(sums);
  if (prev == leaf_mode_candidate) {
    if (t == 0) {
      const leaf_next next = leaf_after_candidate(c, v, c.backtracking != 0 ? *value : 0.0);
      if (v.status->mode == leaf_mode_sums) leaf_scales_from_max(c, v, max_key);
      accept = next.accept ? 1 : 0;
      directions = next.directions ? 1 : 0;
      go = next.candidate ? 1 : 0;
    }
    __syncthreads();
    if (accept != 0) leaf_accept(c, v, t, lanes);
    if (directions != 0) leaf_directions(c, v, s, bound_scales, false, t, lanes);
    __syncthreads();
    if (directions != 0) {  // block-uniform
      const bool begin = begin_direction_block(c, v, s, bound_scales);
      if (t == 0) go = begin ? 1 : 0;
    }
  } else {
    leaf_directions(c, v, s, v.scales, false, t, lanes);
    __syncthreads();
    const bool begin = begin_direction_block(c, v, s, v.scales);
    if (t == 0) go = begin ? 1 : 0;
  }
  __syncthreads();
  if (go != 0) leaf_candidate(c, v, v.status->step, t, lanes);
  __syncthreads();
  clear_for_next_pass(c, v, next_sums, next_keys);
}

__global__ void __launch_bounds__(lanes)
    leaf_decide_kernel(leaf_search_config c, leaf_search_view v, unsigned long long* sums, const double* value,
                       const fixed_scale* bound_scales, unsigned* max_key) {
  leaf_decide_block(c, v, sums, value, bound_scales, max_key, sums, max_key);
}

// A fused sharded leaf pass (one block; every rank's value tiles fit one tile of tiles, so the ordered
// sum is one reduce_tiles_kernel<1> block): the fold of pass_fold_kernel read straight from the
// all-gather's receive block, the value's ordered sum in the order of reduce_tiles_kernel<1> (the
// single-GPU bits), then the decision of leaf_decide_kernel; the next pass adds into the send block
// (next_sums / next_keys), which the decision zeroes. Nothing runs once the search is done.
__global__ void __launch_bounds__(lanes)
    pass_fold_decide_kernel(pass_fold f, const unsigned char* recv, bool want_value, leaf_search_config c,
                            leaf_search_view v, unsigned long long* sums, unsigned* keys, double* value,
                            const fixed_scale* bound_scales, unsigned long long* next_sums, unsigned* next_keys) {
  __shared__ double shared[lanes];
  __shared__ int mode;
  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) mode = v.status->mode;
  __syncthreads();
  if (mode == leaf_mode_done) return;
  for (std::int64_t j = t; j < static_cast<std::int64_t>(f.p.slots); j += lanes) {
    unsigned long long s = 0;  // two's complement: the same bits as NCCL's int64 sum
    for (int r = 0; r < f.ranks; ++r) s += reinterpret_cast<const unsigned long long*>(recv + r * f.p.block)[j];
    sums[j] = s;
  }
  for (int j = t; j < f.p.channels; j += lanes) {
    unsigned m = 0;
    for (int r = 0; r < f.ranks; ++r)
      m = max(m, reinterpret_cast<const unsigned*>(recv + r * f.p.block + f.p.keys_at)[j]);
    keys[j] = m;
  }
  if (want_value) {
    // A lane's tiles (those of CBG_FOR_TILE_ROWS) loaded together first, then added in the same order:
    // one round of load latency instead of one per tile (the loop's adds depend on each other).
    const std::int64_t all = f.first_tile[f.ranks];
    double tile[sum_rows_per_lane];
#pragma unroll
    for (int j = 0; j < sum_rows_per_lane; ++j) {
      const std::int64_t i = t + static_cast<std::int64_t>(j) * lanes;
      int r = 0;
      while (r + 1 < f.ranks && f.first_tile[r + 1] <= i) ++r;
      tile[j] =
          i < all ? reinterpret_cast<const double*>(recv + r * f.p.block + f.p.tiles_at)[i - f.first_tile[r]] : 0.0;
    }
    double acc[1] = {0.0};
#pragma unroll
    for (int j = 0; j < sum_rows_per_lane; ++j) {
      if (t + static_cast<std::int64_t>(j) * lanes < all) acc[0] += tile[j];
    }
    fold_block<1>(acc, shared, value);
  }
  __syncthreads();
  leaf_decide_block(c, v, sums, value, bound_scales, keys, next_sums, next_keys);
}

}  // namespace

void leaf_start(const leaf_search_config& c, const leaf_search_view& v, unsigned long long* sums,
                const fixed_scale* scales, double value, unsigned* max_key, cudaStream_t stream) {
  leaf_start_kernel<<<1, lanes, 0, stream>>>(c, v, sums, scales, value, max_key);
  CBG_CHECK_CUDA(stream);
}

void leaf_decide(const leaf_search_config& c, const leaf_search_view& v, unsigned long long* sums, const double* value,
                 const fixed_scale* bound_scales, unsigned* max_key, cudaStream_t stream) {
  leaf_decide_kernel<<<1, lanes, 0, stream>>>(c, v, sums, value, bound_scales, max_key);
  CBG_CHECK_CUDA(stream);
}

void fold_and_decide(const pass_fold& f, const unsigned char* recv, bool want_value, const leaf_search_config& c,
                     const leaf_search_view& v, unsigned long long* sums, unsigned* keys, double* value,
                     const fixed_scale* bound_scales, unsigned long long* next_sums, unsigned* next_keys,
                     cudaStream_t stream) {
  pass_fold_decide_kernel<<<1, lanes, 0, stream>>>(f, recv, want_value, c, v, sums, keys, value, bound_scales,
                                                   next_sums, next_keys);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
