// SPDX-License-Identifier: Apache-2.0
// The border searches on the GPU, the same steps as the host reference and so the same borders,
// bit for bit (quantize_math.hpp, border_types.hpp):
// Greedy types (GreedyLogSum, GreedyMinEntropy): one warp per feature.
//  - The heap stays in shared memory and lane 0 moves it with the shared heap functions.
//  - The two bins of a cut are made at once, one per half-warp. A bin needs the two edges of the
//    run of its median value; the 16 lanes load the 16 values around the median in one access,
//    which holds both edges unless the run is longer (few distinct values), and then search the
//    rest 16 positions per step. The host does the same with two binary searches; both return
//    std::lower_bound / std::upper_bound, and choose_greedy_cut scores the cut.
//  - Bin starts are ranked in parallel, the candidate borders computed in parallel; lane 0 drops
//    equal neighbours and adds the NaN border in shared memory.
// Median, Uniform, UniformAndQuantiles: one thread per feature (at most 255 binary searches).
// MinEntropy, MaxLogSum: one thread per feature runs the DP in its slot of scratch; the DP is a
// chain of dependent steps (CatBoost's too), so slots are what the device's memory allows.
#include <algorithm>
#include <vector>

#include <cooperative_groups.h>

#include "kernels/quantize/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/quantize/border_types.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::quantize::detail {

namespace {

namespace cg = cooperative_groups;

constexpr int half = 16;
using half_warp = cg::thread_block_tile<half, cg::thread_block>;

// First position in [lo, hi) where `holds` is true (false ... false true ... true), else hi.
// 16 probes per step, evenly spaced, so the range shrinks 16-fold.
template <class Pred>
__device__ std::uint32_t first_true(const half_warp& t, std::uint32_t lo, std::uint32_t hi, Pred holds) {
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
__device__ greedy_bin make_bin(const half_warp& t, const float* sorted, const double* gains, std::uint32_t s,
                               std::uint32_t e) {
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
  return choose_greedy_cut(gains, s, e, lb, ub);
}

// A feature's search: whether it runs (else its empty result, or the Forbidden error, is written),
// its non-NaN value count and budget, and the NaN mode binarization uses.
struct feature_job {
  bool searched;
  std::uint32_t n;
  int budget;
  nan_mode mode;
};

// Every thread of a feature's group may call it; only the `writer` writes.
__device__ feature_job begin_feature(const search_args& a, std::int64_t f, bool writer = true) {
  const int k = a.requested_count[f];
  const bool has_nan = a.nan_counts[f] != 0;
  const auto requested = static_cast<nan_mode>(a.requested_mode[f]);
  if (k == 0 || (has_nan && requested == nan_mode::forbidden)) {
    if (writer) {
      if (k != 0) atomicMin(a.error_feature, static_cast<int>(a.feature_base + f));
      a.border_count[f] = 0;
      a.mode[f] = static_cast<std::uint8_t>(nan_mode::forbidden);
    }
    return {false, 0, 0, nan_mode::forbidden};
  }
  return {true, a.m - a.nan_counts[f], search_border_budget(k, has_nan), effective_nan_mode(requested, has_nan)};
}

// Adds the NaN border to the `count` searched borders in `out` and writes the count and mode.
__device__ int end_feature(const search_args& a, std::int64_t f, const feature_job& job, float* out, int count) {
  count = add_nan_border(out, count, job.mode);
  a.border_count[f] = count;
  a.mode[f] = static_cast<std::uint8_t>(job.mode);
  return count;
}

__global__ __launch_bounds__(32) void greedy_kernel(search_args a) {
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
  const auto type = static_cast<border_type>(a.requested_type[f]);
  if (!is_greedy(type)) return;
  const feature_job job = begin_feature(a, f, lane == 0);
  if (!job.searched) return;
  const std::uint32_t n = job.n;
  const int budget = job.budget;
  const float* sorted = a.sorted + static_cast<std::size_t>(f) * a.m;
  const double* gains = penalty_of(type) == penalty::entropy ? a.entropy_gains : a.log_gains;
  const half_warp t = cg::tiled_partition<half>(cg::this_thread_block());
  const unsigned which = t.meta_group_rank();  // 0: the left bin of a cut, 1: the right one

  if (lane == 0) count = 0;
  if (n > 0 && budget > 0) {
    if (which == 0) {
      const greedy_bin b = make_bin(t, sorted, gains, 0, n);
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
      const greedy_bin b = which == 0 ? make_bin(t, sorted, gains, cut.start, cut.split)
                                      : make_bin(t, sorted, gains, cut.split, cut.end);
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
  if (lane == 0) count = end_feature(a, f, job, out, count);
  __syncwarp();
  for (int i = static_cast<int>(lane); i < count; i += 32) a.borders[f * border_stride + i] = out[i];
}

constexpr int simple_block = 128;

// Median, Uniform, UniformAndQuantiles: one thread per feature, borders written in place.
__global__ __launch_bounds__(simple_block) void simple_kernel(search_args a) {
  const std::int64_t f = static_cast<std::int64_t>(blockIdx.x) * simple_block + threadIdx.x;
  if (f >= a.features) return;
  const auto type = static_cast<border_type>(a.requested_type[f]);
  if (type != border_type::median && type != border_type::uniform && type != border_type::uniform_and_quantiles) {
    return;
  }
  const feature_job job = begin_feature(a, f);
  if (!job.searched) return;
  const float* sorted = a.sorted + static_cast<std::size_t>(f) * a.m;
  float* out = a.borders + f * border_stride;
  int count = 0;
  if (type == border_type::median) {
    count = median_candidates(sorted, job.n, job.budget, out);
  } else if (type == border_type::uniform) {
    count = uniform_candidates(sorted, job.n, job.budget, out);
  } else {
    count = uniform_and_quantiles_candidates(sorted, job.n, job.budget, out);
  }
  end_feature(a, f, job, out, finish_borders(out, count));
}

// One thread per block: the DP's walks branch differently for every feature, so threads of one
// warp would run one after the other (bench, H100, 2026-11-21: 28 features of 200 000 values,
// 32 borders, in one warp took 11.0 s, about the time of 28 features in turn).
constexpr int exact_block = 1;
constexpr std::size_t part_alignment = 256;

// Carves one exact slot for n values and k borders out of `base` (nullptr: sizes only, into
// *bytes). One layout for the host (sizing) and the kernel (carving).
class slot_carver {
 public:
  __host__ __device__ explicit slot_carver(unsigned char* base) : base_(base) {}
  template <class T>
  __host__ __device__ T* take(std::size_t count) {
    T* p = base_ != nullptr ? reinterpret_cast<T*>(base_ + at_) : nullptr;
    at_ += (count * sizeof(T) + part_alignment - 1) / part_alignment * part_alignment;
    return p;
  }
  [[nodiscard]] __host__ __device__ std::size_t bytes() const { return at_; }

 private:
  unsigned char* base_;
  std::size_t at_ = 0;
};

__host__ __device__ exact_scratch exact_layout(unsigned char* base, std::uint32_t n, int k, std::size_t* bytes) {
  const std::size_t n1 = n > 0 ? n : 1;
  const std::uint64_t choices = exact_choice_size(n, k);
  slot_carver c(base);
  exact_scratch s;
  s.values = c.take<float>(n1);
  s.cum = c.take<std::uint32_t>(n1);
  s.err_prev = c.take<double>(n1);
  s.err_cur = c.take<double>(n1);
  s.e1 = c.take<double>(n1);
  s.e2 = c.take<double>(n1);
  s.bs1 = c.take<std::uint32_t>(n1);
  s.bs2 = c.take<std::uint32_t>(n1);
  s.choice = c.take<std::uint32_t>(choices > 0 ? choices : 1);
  if (bytes != nullptr) *bytes = c.bytes();
  return s;
}

__global__ __launch_bounds__(exact_block) void exact_kernel(search_args a, const std::uint32_t* list,
                                                            std::uint32_t count, unsigned char* scratch,
                                                            std::size_t slot_bytes, int k) {
  const std::uint32_t t = blockIdx.x * exact_block + threadIdx.x;
  if (t >= count) return;
  const std::int64_t f = static_cast<std::int64_t>(list[t]) - a.feature_base;
  const feature_job job = begin_feature(a, f);
  if (!job.searched) return;
  const auto type = static_cast<border_type>(a.requested_type[f]);
  const double* gains = penalty_of(type) == penalty::entropy ? a.entropy_gains : a.log_gains;
  const exact_scratch s = exact_layout(scratch + t * slot_bytes, a.m, k, nullptr);
  const float* sorted = a.sorted + static_cast<std::size_t>(f) * a.m;
  float* out = a.borders + f * border_stride;
  const int c = exact_candidates(sorted, job.n, job.budget, gains, s, out);
  end_feature(a, f, job, out, finish_borders(out, c));
}
}  // namespace

void search_borders(const search_args& a, unsigned types_used, cudaStream_t stream) {
  if (a.features == 0) return;
  CBG_EXPECTS(a.features <= 0x7fffffff, status::unsupported, "too many features");
  const auto bit = [](border_type t) { return 1u << static_cast<unsigned>(t); };
  if ((types_used & (bit(border_type::greedy_log_sum) | bit(border_type::greedy_min_entropy))) != 0) {
    greedy_kernel<<<static_cast<unsigned>(a.features), 32, 0, stream>>>(a);
    CBG_CHECK_CUDA(stream);
  }
  if ((types_used & (bit(border_type::median) | bit(border_type::uniform) | bit(border_type::uniform_and_quantiles))) !=
      0) {
    simple_kernel<<<static_cast<unsigned>((a.features + simple_block - 1) / simple_block), simple_block, 0, stream>>>(
        a);
    CBG_CHECK_CUDA(stream);
  }
}

exact_plan plan_exact(std::uint32_t m, int max_budget, std::size_t features) {
  exact_plan plan;
  if (features == 0) return plan;
  plan.n = m;
  plan.k = max_budget;
  exact_layout(nullptr, m, max_budget, &plan.slot_bytes);
  // As many slots as a quarter of the free memory holds (at least one, at most 16 GiB).
  std::size_t free_bytes = 0, total_bytes = 0;
  CBG_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t budget = std::clamp<std::size_t>(free_bytes / 4, std::size_t{256} << 20, std::size_t{16} << 30);
  plan.slots = static_cast<std::uint32_t>(
      std::clamp<std::size_t>(budget / plan.slot_bytes, 1, std::min<std::size_t>(features, 1u << 20)));
  return plan;
}

void search_exact(const exact_plan& plan, void* scratch, const search_args& a, const std::uint32_t* list,
                  std::size_t count, cudaStream_t stream) {
  for (std::size_t b = 0; b < count; b += plan.slots) {
    const auto batch = static_cast<std::uint32_t>(std::min<std::size_t>(plan.slots, count - b));
    exact_kernel<<<(batch + exact_block - 1) / exact_block, exact_block, 0, stream>>>(
        a, list + b, batch, static_cast<unsigned char*>(scratch), plan.slot_bytes, plan.k);
    CBG_CHECK_CUDA(stream);
  }
}

}  // namespace cbg::quantize::detail
