// SPDX-License-Identifier: Apache-2.0
// GreedyLogSum on the GPU: one warp per feature, the same steps as greedy_log_sum_borders
// (quantize_math.hpp) and so the same borders, bit for bit.
//  - The heap stays in shared memory and lane 0 moves it with the shared heap functions.
//  - The two bins of a cut are made at once, one per half-warp. A bin needs the two edges of the
//    run of its median value; the 16 lanes load the 16 values around the median in one access,
//    which holds both edges unless the run is longer (few distinct values), and then search the
//    rest 16 positions per step. The host does the same with two binary searches; both return
//    std::lower_bound / std::upper_bound, and choose_greedy_cut scores the cut.
//  - Bin starts are ranked in parallel, the candidate borders computed in parallel; lane 0 drops
//    equal neighbours and adds the NaN border in shared memory.
#include <cooperative_groups.h>

#include "kernels/quantize/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::quantize::detail {

namespace {

namespace cg = cooperative_groups;

constexpr int half = 16;
using half_warp = cg::thread_block_tile<half, cg::thread_block>;

// First position in [lo, hi) where `holds` is true (false ... false true ... true), else hi.
// 16 probes per step, evenly spaced, so the range shrinks 16-fold.
template <class Pred>
__device__ std::uint32_t first_true(const half_warp& t, std::uint32_t lo, std::uint32_t hi,
                                    Pred holds) {
  while (lo < hi) {
    const std::uint32_t step = (hi - lo + half - 1) / half;
    const std::uint32_t pos = lo + (t.thread_rank() + 1) * step - 1;
    const unsigned falses = half - __popc(t.ballot(pos >= hi || holds(pos)));
    // The answer is past the last false probe and at most the first true one.
    const std::uint32_t first_true_probe = lo + (falses + 1) * step - 1;
    lo += falses * step;
    hi = min(hi, first_true_probe);
  }
  return lo;
}

// make_greedy_bin for [s, e) by a half-warp (the result is valid in its lane 0).
__device__ greedy_bin make_bin(const half_warp& t, const float* sorted, const double* log_table,
                               std::uint32_t s, std::uint32_t e) {
  const std::uint32_t mid = s + (e - s) / 2;
  // Lane r holds position mid - 7 + r: lanes 0..6 below the median, 7 the median, 8..15 above.
  const int r = static_cast<int>(t.thread_rank());
  const std::int64_t pos = static_cast<std::int64_t>(mid) - 7 + r;
  const bool inside = pos >= s && pos < e;
  const float x = inside ? sorted[pos] : 0.0f;
  const float v = t.shfl(x, 7);
  // lower_bound over [s, mid): one past the highest position below s or holding a value < v.
  std::uint32_t lb;
  const unsigned below = t.ballot(r < 7 && (!inside || x < v));
  if (below != 0) {
    lb = static_cast<std::uint32_t>(static_cast<std::int64_t>(mid) - 7 + (31 - __clz(below))) + 1;
  } else {  // positions mid-7..mid-1 all hold v
    lb = first_true(t, s, mid - 7, [&](std::uint32_t i) { return !(sorted[i] < v); });
  }
  // upper_bound over [mid, e): the lowest position at e or past it, or holding a value > v.
  std::uint32_t ub;
  const unsigned above = t.ballot(r > 7 && (!inside || v < x));
  if (above != 0) {
    ub = mid - 7 + static_cast<std::uint32_t>(__ffs(static_cast<int>(above)) - 1);
  } else {  // positions mid+1..mid+8 all hold v
    ub = first_true(t, mid + 9, e, [&](std::uint32_t i) { return v < sorted[i]; });
  }
  return choose_greedy_cut(log_table, s, e, lb, ub);
}

__global__ __launch_bounds__(32) void search_kernel(
    const float* sorted_all, std::uint32_t m, const std::int32_t* requested_count,
    const std::uint8_t* requested_mode, const unsigned int* nan_counts, const double* log_table,
    float* borders, std::int32_t* border_count, std::uint8_t* mode_out, int* error_feature) {
  __shared__ greedy_bin heap[greedy_heap_capacity];
  __shared__ greedy_bin made[2];
  __shared__ greedy_bin top;
  __shared__ std::uint32_t size;
  __shared__ bool go_on;
  __shared__ std::uint32_t starts[border_stride];
  __shared__ float out[border_stride];
  __shared__ int count;

  const std::int64_t f = blockIdx.x;
  const unsigned lane = threadIdx.x;
  const int k = requested_count[f];
  const bool has_nan = nan_counts[f] != 0;
  const auto requested = static_cast<nan_mode>(requested_mode[f]);
  if (k == 0 || (has_nan && requested == nan_mode::forbidden)) {
    if (lane == 0) {
      if (k != 0) atomicMin(error_feature, static_cast<int>(f));
      border_count[f] = 0;
      mode_out[f] = static_cast<std::uint8_t>(nan_mode::forbidden);
    }
    return;
  }
  const std::uint32_t n = m - nan_counts[f];
  const int budget = search_border_budget(k, has_nan);
  const float* sorted = sorted_all + static_cast<std::size_t>(f) * m;
  const half_warp t = cg::tiled_partition<half>(cg::this_thread_block());
  const unsigned which = t.meta_group_rank();  // 0: the left bin of a cut, 1: the right one

  if (lane == 0) count = 0;
  if (n > 0 && budget > 0) {
    if (which == 0) {
      const greedy_bin b = make_bin(t, sorted, log_table, 0, n);
      if (t.thread_rank() == 0) made[0] = b;
    }
    __syncwarp();
    if (lane == 0) {
      std::uint32_t sz = 0;
      heap::push(heap, sz, made[0]);
      size = sz;
      go_on = sz <= static_cast<std::uint32_t>(budget) && can_split(heap[0]);
    }
    __syncwarp();
    while (go_on) {
      if (lane == 0) {
        std::uint32_t sz = size;
        top = heap::pop(heap, sz);
        size = sz;
      }
      __syncwarp();
      const greedy_bin cut = top;
      const greedy_bin b = which == 0 ? make_bin(t, sorted, log_table, cut.start, cut.split)
                                      : make_bin(t, sorted, log_table, cut.split, cut.end);
      if (t.thread_rank() == 0) made[which] = b;
      __syncwarp();
      if (lane == 0) {
        std::uint32_t sz = size;
        heap::push(heap, sz, made[0]);
        heap::push(heap, sz, made[1]);
        size = sz;
        go_on = sz <= static_cast<std::uint32_t>(budget) && can_split(heap[0]);
      }
      __syncwarp();
    }
    // Every bin but the one at 0 starts at a border; starts are distinct, so a start's rank among
    // them is its place in ascending order.
    const std::uint32_t bins = size;
    for (std::uint32_t i = lane; i < bins; i += 32) {
      const std::uint32_t st = heap[i].start;
      if (st == 0) continue;
      std::uint32_t rank = 0;
      for (std::uint32_t j = 0; j < bins; ++j) rank += heap[j].start - 1 < st - 1 ? 1u : 0u;
      starts[rank] = st;
    }
    __syncwarp();
    for (std::uint32_t i = lane; i + 1 < bins; i += 32) out[i] = greedy_border_at(sorted, starts[i]);
    __syncwarp();
    if (lane == 0) count = unique_borders(out, static_cast<int>(bins) - 1);
  }
  __syncwarp();
  if (lane == 0) {
    const nan_mode mode = effective_nan_mode(requested, has_nan);
    count = add_nan_border(out, count, mode);
    border_count[f] = count;
    mode_out[f] = static_cast<std::uint8_t>(mode);
  }
  __syncwarp();
  for (int i = static_cast<int>(lane); i < count; i += 32) borders[f * border_stride + i] = out[i];
}

}  // namespace

void search_borders(const float* sorted, std::uint32_t m, std::int64_t features,
                    const std::int32_t* requested_count, const std::uint8_t* requested_mode,
                    const unsigned int* nan_counts, const double* log_table, float* borders,
                    std::int32_t* border_count, std::uint8_t* mode, int* error_feature,
                    cudaStream_t stream) {
  if (features == 0) return;
  CBG_EXPECTS(features <= 0x7fffffff, status::unsupported, "too many features");
  search_kernel<<<static_cast<unsigned>(features), 32, 0, stream>>>(
      sorted, m, requested_count, requested_mode, nan_counts, log_table, borders, border_count,
      mode, error_feature);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::quantize::detail
