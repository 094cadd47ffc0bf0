// SPDX-License-Identifier: Apache-2.0
// Kernels of the confusion-table and ranked metrics (kernels/train/metric_tables.hpp). The table is
// summed in 64-bit fixed point with integer atomics (order-free); a ranking sorts the scores with
// CUB's radix sort, sums the fixed-point weights of each group of tied scores (ReduceByKey) and of
// the groups below (ExclusiveSum), both exact in integers, and sums the group terms in the ordered
// order of reduce_math.hpp, as the host reference does.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstring>

#include "kernels/common/cccl.cuh"
#include "kernels/train/metric_tables.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/metric_ranked.hpp"
#include "cbg/train/metric_tables.hpp"

namespace cbg::train {

namespace {

constexpr int threads = 256;

int grid_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 8192));
}

#define CBG_FOR_ROWS(r, n)                                                                         \
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < (n); \
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

__device__ inline float row_weight(const float* w, std::int64_t r) { return w == nullptr ? 1.f : w[r]; }

// The largest weight as the ordered bits of its magnitude (reduce_math.hpp's abs_float_key).
__global__ void max_weight_kernel(const float* w, std::int64_t n, unsigned long long* key) {
  CBG_FOR_ROWS(r, n) { atomicMax(key, static_cast<unsigned long long>(abs_float_key(row_weight(w, r)))); }
}

__device__ inline fixed_scale scale_of(const metric_spec& m, const unsigned long long* max_key, std::int64_t n) {
  return table_scale(m, float_of_key(static_cast<std::uint32_t>(*max_key)), n);
}

__global__ void confusion_kernel(metric_rows v, loss_spec l, metric_spec m, int classes,
                                 const unsigned long long* max_key, unsigned long long* cells) {
  const fixed_scale s = scale_of(m, max_key, v.n);
  CBG_FOR_ROWS(r, v.n) {
    double a[max_dims];
    gather_approx(v.approx, v.n, l.dims, r, a);
    const std::int64_t w = to_fixed64(table_weight(m, row_weight(v.weight, r)), s);
    atomicAdd(&cells[confusion_cell(l, a, v.target[r], classes)], static_cast<unsigned long long>(w));
  }
}

// Per row: the score, its index, and its fixed-point weight as a positive or a negative.
__global__ void rank_rows_kernel(metric_rows v, loss_spec l, metric_spec m, int pair_i, int pair_j,
                                 const unsigned long long* max_key, double* score, std::uint32_t* index, long long* pos,
                                 long long* neg) {
  const fixed_scale s = scale_of(m, max_key, v.n);
  CBG_FOR_ROWS(r, v.n) {
    double a[max_dims];
    gather_approx(v.approx, v.n, l.dims, r, a);
    const int c = target_class(l, v.target[r]);
    const std::int64_t w =
        ranked_member(c, pair_i, pair_j) ? to_fixed64(table_weight(m, row_weight(v.weight, r)), s) : 0;
    const bool positive = ranked_positive(c, pair_i, pair_j);
    score[r] = ranked_score(a, pair_i, pair_j);
    index[r] = static_cast<std::uint32_t>(r);
    pos[r] = positive ? w : 0;
    neg[r] = positive ? 0 : w;
  }
}

__global__ void gather_kernel(const std::uint32_t* index, const long long* in, std::int64_t n, long long* out) {
  CBG_FOR_ROWS(r, n) { out[r] = in[index[r]]; }
}

// Group terms; the totals (positives, negatives) come from the last group. totals: [P, N].
__global__ void rank_terms_kernel(metric_kind k, const long long* pos, const long long* neg, const long long* pos_below,
                                  const long long* neg_below, std::int64_t groups, double* term, long long* totals) {
  const std::int64_t last = groups - 1;
  const std::int64_t positives = pos_below[last] + pos[last];
  const std::int64_t negatives = neg_below[last] + neg[last];
  CBG_FOR_ROWS(g, groups) {
    ranked_group rg;
    rg.pos = pos[g];
    rg.neg = neg[g];
    rg.pos_below = pos_below[g];
    rg.neg_below = neg_below[g];
    term[g] = ranked_term(k, rg, positives, negatives);
    if (g == 0) {
      totals[0] = positives;
      totals[1] = negatives;
    }
  }
}

// One level of reduce_math.hpp's ordered sum: block t sums tile t (lane l: rows t * 4096 + j * 256 + l,
// j = 0..15 in order; then the pairwise fold of the 256 lane sums).
__global__ void __launch_bounds__(sum_lanes) ordered_tiles_kernel(const double* in, std::int64_t n, double* out) {
  __shared__ double lane[sum_lanes];
  const int t = static_cast<int>(threadIdx.x);
  double acc = 0.0;
  for (std::int64_t j = 0, r = static_cast<std::int64_t>(blockIdx.x) * sum_tile + t; j < sum_rows_per_lane && r < n;
       ++j, r += sum_lanes) {
    acc += in[r];
  }
  lane[t] = acc;
  __syncthreads();
  for (int s = sum_lanes / 2; s > 0; s >>= 1) {
    if (t < s) lane[t] += lane[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = lane[0];
}

class launcher {
 public:
  explicit launcher(const context& ctx) : ctx_(ctx) {}

  template <class T>
  device_buffer<T> buffer(std::size_t count) const {
    return device_buffer<T>(std::max<std::size_t>(count, 1), ctx_.stream(), ctx_.resource());
  }
  template <class T>
  void zero(device_buffer<T>& b) const {
    CBG_CUDA_TRY(cudaMemsetAsync(b.data(), 0, b.size_bytes(), ctx_.stream()));
  }
  template <class T>
  void d2h(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::host, src, memory_kind::device, count * sizeof(T), ctx_.stream(), ctx_.copies(),
               ctx_.rules(), CBG_COPY_SITE(what));
  }
  template <class T>
  void d2d(T* dst, const T* src, std::size_t count) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::device, count * sizeof(T), ctx_.stream(), ctx_.copies(),
               ctx_.rules(), CBG_COPY_SITE("metric device copy"));
  }
  [[nodiscard]] cudaStream_t stream() const { return ctx_.stream(); }

  // The largest weight's key in a fresh device slot.
  device_buffer<unsigned long long> max_weight(const metric_rows& v) const {
    auto key = buffer<unsigned long long>(1);
    zero(key);
    max_weight_kernel<<<grid_for(v.n), threads, 0, stream()>>>(v.weight, v.n, key.data());  // null weights: 1
    CBG_CHECK_CUDA(stream());
    return key;
  }

  // reduce_math.hpp's ordered sum of n doubles on the device; the sum stays at out[0] of the result.
  device_buffer<double> ordered_sum(const double* in, std::int64_t n) const {
    std::int64_t count = std::max<std::int64_t>(1, sum_tiles_of(n));
    auto level = buffer<double>(static_cast<std::size_t>(count));
    ordered_tiles_kernel<<<static_cast<unsigned>(count), sum_lanes, 0, stream()>>>(in, n, level.data());
    CBG_CHECK_CUDA(stream());
    while (count > 1) {
      const std::int64_t next = sum_tiles_of(count);
      auto out = buffer<double>(static_cast<std::size_t>(next));
      ordered_tiles_kernel<<<static_cast<unsigned>(next), sum_lanes, 0, stream()>>>(level.data(), count, out.data());
      CBG_CHECK_CUDA(stream());
      level = std::move(out);
      count = next;
    }
    return level;
  }

  // One ranking (the host's rank_rows).
  double rank(const metric_rows& v, const loss_spec& l, const metric_spec& m, int pair_i, int pair_j,
              const unsigned long long* max_key) const {
    const std::int64_t n = v.n;
    const auto size = static_cast<std::size_t>(n);
    auto score = buffer<double>(size), score_sorted = buffer<double>(size), unique = buffer<double>(size);
    auto index = buffer<std::uint32_t>(size), index_sorted = buffer<std::uint32_t>(size);
    auto pos = buffer<long long>(size), neg = buffer<long long>(size);
    auto pos_sorted = buffer<long long>(size), neg_sorted = buffer<long long>(size);
    auto group_pos = buffer<long long>(size), group_neg = buffer<long long>(size);
    auto pos_below = buffer<long long>(size), neg_below = buffer<long long>(size);
    auto groups = buffer<long long>(2);
    rank_rows_kernel<<<grid_for(n), threads, 0, stream()>>>(v, l, m, pair_i, pair_j, max_key, score.data(),
                                                            index.data(), pos.data(), neg.data());
    CBG_CHECK_CUDA(stream());
    const int items = static_cast<int>(n);
    std::size_t sort_bytes = 0, reduce_bytes = 0, scan_bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, score.data(), score_sorted.data(), index.data(),
                                                 index_sorted.data(), items, 0, 64, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, score_sorted.data(), unique.data(),
                                                pos_sorted.data(), group_pos.data(), groups.data(),
                                                cuda::std::plus<long long>{}, items, stream()));
    CBG_CUDA_TRY(
        cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, group_pos.data(), pos_below.data(), items, stream()));
    auto temp = buffer<unsigned char>(std::max({sort_bytes, reduce_bytes, scan_bytes}));
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), sort_bytes, score.data(), score_sorted.data(),
                                                 index.data(), index_sorted.data(), items, 0, 64, stream()));
    gather_kernel<<<grid_for(n), threads, 0, stream()>>>(index_sorted.data(), pos.data(), n, pos_sorted.data());
    gather_kernel<<<grid_for(n), threads, 0, stream()>>>(index_sorted.data(), neg.data(), n, neg_sorted.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp.data(), reduce_bytes, score_sorted.data(), unique.data(),
                                                pos_sorted.data(), group_pos.data(), groups.data(),
                                                cuda::std::plus<long long>{}, items, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp.data(), reduce_bytes, score_sorted.data(), unique.data(),
                                                neg_sorted.data(), group_neg.data(), groups.data() + 1,
                                                cuda::std::plus<long long>{}, items, stream()));
    long long group_count = 0;
    d2h(&group_count, groups.data(), 1, "ranked metric groups");
    if (group_count == 0) return ranked_final(m.kind, 0.0, 0, 0);  // no rows
    const int group_items = static_cast<int>(group_count);
    CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), scan_bytes, group_pos.data(), pos_below.data(), group_items,
                                               stream()));
    CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), scan_bytes, group_neg.data(), neg_below.data(), group_items,
                                               stream()));
    auto term = buffer<double>(static_cast<std::size_t>(group_count));
    auto result = buffer<long long>(3);  // [P, N, the sum's bits]
    rank_terms_kernel<<<grid_for(group_count), threads, 0, stream()>>>(m.kind, group_pos.data(), group_neg.data(),
                                                                       pos_below.data(), neg_below.data(), group_count,
                                                                       term.data(), result.data());
    CBG_CHECK_CUDA(stream());
    const device_buffer<double> sum = ordered_sum(term.data(), group_count);
    d2d(reinterpret_cast<double*>(result.data() + 2), sum.data(), 1);
    long long r[3];
    d2h(r, result.data(), 3, "ranked metric");
    double term_sum = 0;
    std::memcpy(&term_sum, &r[2], sizeof(term_sum));
    return ranked_final(m.kind, term_sum, r[0], r[1]);
  }

 private:
  const context& ctx_;
};

}  // namespace

std::vector<double> confusion_table_device(const context& ctx, const metric_rows& rows, const loss_spec& l,
                                           const metric_spec& m, int classes) {
  const stage_range range(ctx, "metric.confusion_table");
  const launcher k(ctx);
  const auto cells = static_cast<std::size_t>(classes) * static_cast<std::size_t>(classes);
  // The cells and, after them, the largest weight's key: one copy back.
  auto table = k.buffer<unsigned long long>(cells + 1);
  k.zero(table);
  const device_buffer<unsigned long long> key = k.max_weight(rows);
  k.d2d(table.data() + cells, key.data(), 1);
  confusion_kernel<<<grid_for(rows.n), threads, 0, k.stream()>>>(rows, l, m, classes, key.data(), table.data());
  CBG_CHECK_CUDA(k.stream());
  std::vector<unsigned long long> host(cells + 1);
  k.d2h(host.data(), table.data(), host.size(), "confusion table");
  const fixed_scale s = table_scale(m, float_of_key(static_cast<std::uint32_t>(host[cells])), rows.n);
  std::vector<double> out(cells);
  for (std::size_t c = 0; c < cells; ++c) out[c] = from_fixed64(static_cast<std::int64_t>(host[c]), s);
  return out;
}

double ranked_metric_device(const context& ctx, const metric_rows& rows, const loss_spec& l, const metric_spec& m) {
  const stage_range range(ctx, "metric.ranked");
  const launcher k(ctx);
  const device_buffer<unsigned long long> key = k.max_weight(rows);
  if (m.auc != auc_type::mu || l.dims == 1) return k.rank(rows, l, m, 0, -1, key.data());
  double sum = 0;
  int pairs = 0;
  for (int i = 0; i < l.dims; ++i) {
    for (int j = i + 1; j < l.dims; ++j) {
      sum += k.rank(rows, l, m, i, j, key.data());
      ++pairs;
    }
  }
  return sum / pairs;
}

}  // namespace cbg::train
