// SPDX-License-Identifier: Apache-2.0
// The border subsets: gathered from the columns as sort keys, then sorted per feature. Two ways
// to sort, same result (stages.hpp, sort_method):
//  - device_wide: one CUB radix sort of 64-bit keys (feature << 32 | order-preserving value bits)
//    over every subset at once, so a few features of 200 000 values still fill the GPU; then the
//    values are taken back out of the keys. The passes grow with log2(features).
//  - segmented: CUB's segmented radix sort of the float values, one block per feature (tuned
//    below).
// Every NaN is the canonical positive quiet NaN (to_feature_float), so it sorts last either way.
#include <algorithm>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "kernels/common/cccl.cuh"
#include "kernels/quantize/order_bits.cuh"
#include "kernels/quantize/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::quantize::detail {

namespace {

constexpr int gather_block = 256;
constexpr int gather_rows = 64;  // subset rows per tile
constexpr int unpack_block = 256;
constexpr std::size_t scratch_alignment = 256;

constexpr std::size_t aligned(std::size_t bytes) noexcept {
  return (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
}

int bits_for(std::int64_t n) noexcept {  // bits of the largest value below n
  int b = 0;
  while ((std::int64_t{1} << b) < n) ++b;
  return b;
}

struct device_wide_key {
  using type = std::uint64_t;
  __device__ static type make(std::int64_t f, float v) { return (static_cast<std::uint64_t>(f) << 32) | order_bits(v); }
};
struct segmented_key {
  using type = float;
  __device__ static type make(std::int64_t, float v) { return v; }
};

// keys[f * m + i] = key of feature f at subset row i; counts the NaNs. A block moves a tile of
// 32 features x gather_rows subset rows through shared memory: it reads the tile with lanes along
// the features (a row-major row's 32 values are adjacent) and writes it with lanes along the rows
// (each feature's keys are adjacent). Grid: (row tiles, feature tiles).
template <class Key>
__global__ __launch_bounds__(gather_block) void gather_kernel(const column_view* columns, std::int64_t features,
                                                              const std::uint32_t* subset, std::uint32_t m,
                                                              const std::int32_t* border_count,
                                                              typename Key::type* keys, unsigned int* nan_counts) {
  constexpr int warps = gather_block / 32;
  __shared__ typename Key::type tile[32][gather_rows + 1];  // +1: no bank conflicts on the turn
  __shared__ unsigned int nans[warps][32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  const std::int64_t f0 = static_cast<std::int64_t>(blockIdx.y) * 32;
  const std::uint32_t i0 = blockIdx.x * gather_rows;
  const std::int64_t f = f0 + lane;
  const bool active = f < features && border_count[f] != 0;
  const column_view c = f < features ? columns[f] : column_view{};
  unsigned int my_nans = 0;
  for (unsigned r = warp; r < gather_rows; r += warps) {
    const std::uint32_t i = i0 + r;
    float v = 0.0f;
    if (active && i < m) {
      v = to_feature_float(c.value(subset != nullptr ? subset[i] : i));
      my_nans += is_nan(v) ? 1u : 0u;
    }
    tile[lane][r] = Key::make(f, v);
  }
  nans[warp][lane] = my_nans;
  __syncthreads();
  if (warp == 0 && active) {
    unsigned int total = 0;
    for (int w = 0; w < warps; ++w) total += nans[w][lane];
    if (total != 0) atomicAdd(&nan_counts[f], total);
  }
  for (unsigned j = warp; j < 32; j += warps) {
    if (f0 + j >= features) break;
    for (unsigned r = lane; r < gather_rows && i0 + r < m; r += 32) {
      keys[static_cast<std::size_t>(f0 + j) * m + i0 + r] = tile[j][r];
    }
  }
}

// values[i] = the value of sorted 64-bit key i (values may overlay the other key buffer).
__global__ __launch_bounds__(unpack_block) void unpack_kernel(const std::uint64_t* keys, std::size_t n, float* values) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(unpack_block) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * unpack_block) {
    values[i] = from_order_bits(static_cast<std::uint32_t>(keys[i]));
  }
}

// CUB's segmented radix sort with 8-bit digits (4 passes over 32 bits; CUB's own sm_90 tuning
// makes 6 passes of 6- and 5-bit digits): 11.6 ms against 12.8 ms for 2000 segments of 200 000
// floats (cbgpu-quantize-bench, H100, 2026-11-21, "segmented radix sort tunings"). The
// alternative digit width is never used for 32-bit keys.
struct segmented_tuning {
  template <int Bits>
  using pass = cub::AgentRadixSortDownsweepPolicy<128, 32, float, cub::BLOCK_LOAD_TRANSPOSE, cub::LOAD_DEFAULT,
                                                  cub::RADIX_RANK_MATCH, cub::BLOCK_SCAN_WARP_SCANS, Bits>;
  struct Policy900 : cub::ChainedPolicy<900, Policy900, Policy900> {
    using SegmentedPolicy = pass<8>;
    using AltSegmentedPolicy = pass<7>;
  };
  using MaxPolicy = Policy900;
};

cudaError_t segmented_sort(void* temp, std::size_t& temp_bytes, cub::DoubleBuffer<float>& keys, int n, int segments,
                           const int* offsets, cudaStream_t stream) {
  using dispatch = cub::DispatchSegmentedRadixSort<cub::SortOrder::Ascending, float, cub::NullType, const int*,
                                                   const int*, int, segmented_tuning>;
  cub::DoubleBuffer<cub::NullType> no_values;
  const int* ends = offsets != nullptr ? offsets + 1 : nullptr;  // null while sizing
  return dispatch::Dispatch(temp, temp_bytes, keys, no_values, n, segments, offsets, ends, 0, 32,
                            /*is_overwrite_okay=*/true, stream);
}

std::size_t count_of(const subset_plan& plan) noexcept { return static_cast<std::size_t>(plan.features) * plan.m; }

}  // namespace

std::size_t subset_plan::bytes() const noexcept { return 2 * aligned(key_bytes) + aligned(temp_bytes); }

subset_plan plan_subsets(sort_method method, std::int64_t features, std::uint32_t m) {
  subset_plan plan;
  plan.method = method;
  plan.features = features;
  plan.m = m;
  const std::size_t n = count_of(plan);
  if (n == 0) return plan;
  if (method == sort_method::device_wide) {
    plan.key_bytes = n * sizeof(std::uint64_t);
    cub::DoubleBuffer<std::uint64_t> keys(nullptr, nullptr);
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, plan.temp_bytes, keys, n, 0, 32 + bits_for(features)));
  } else {
    plan.key_bytes = n * sizeof(float);
    cub::DoubleBuffer<float> keys(nullptr, nullptr);
    CBG_CUDA_TRY(segmented_sort(nullptr, plan.temp_bytes, keys, static_cast<int>(n), static_cast<int>(features),
                                nullptr, nullptr));
  }
  return plan;
}

void gather_subsets(const subset_plan& plan, void* scratch, const column_view* columns, const std::uint32_t* subset,
                    const std::int32_t* border_count, unsigned int* nan_counts, cudaStream_t stream) {
  if (count_of(plan) == 0) return;
  const auto gx = static_cast<unsigned>((plan.m + gather_rows - 1) / gather_rows);
  const std::int64_t feature_tiles = (plan.features + 31) / 32;
  CBG_EXPECTS(feature_tiles <= 65535, status::unsupported, "too many features for the subset gather");
  const auto gy = static_cast<unsigned>(feature_tiles);
  if (plan.method == sort_method::device_wide) {
    gather_kernel<device_wide_key><<<dim3(gx, gy), gather_block, 0, stream>>>(
        columns, plan.features, subset, plan.m, border_count, static_cast<std::uint64_t*>(scratch), nan_counts);
  } else {
    gather_kernel<segmented_key><<<dim3(gx, gy), gather_block, 0, stream>>>(
        columns, plan.features, subset, plan.m, border_count, static_cast<float*>(scratch), nan_counts);
  }
  CBG_CHECK_CUDA(stream);
}

const float* sort_subsets(const subset_plan& plan, void* scratch, const int* offsets, cudaStream_t stream) {
  const std::size_t n = count_of(plan);
  auto* base = static_cast<unsigned char*>(scratch);
  unsigned char* other = base + aligned(plan.key_bytes);
  void* temp = other + aligned(plan.key_bytes);
  std::size_t temp_bytes = plan.temp_bytes;
  if (n == 0) return reinterpret_cast<const float*>(base);
  if (plan.method == sort_method::device_wide) {
    cub::DoubleBuffer<std::uint64_t> keys(reinterpret_cast<std::uint64_t*>(base),
                                          reinterpret_cast<std::uint64_t*>(other));
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys, n, 0, 32 + bits_for(plan.features), stream));
    // The values go to the front of the buffer that does not hold the result.
    auto* values = reinterpret_cast<float*>(keys.Alternate());
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + unpack_block - 1) / unpack_block, 8192));
    unpack_kernel<<<blocks, unpack_block, 0, stream>>>(keys.Current(), n, values);
    CBG_CHECK_CUDA(stream);
    return values;
  }
  cub::DoubleBuffer<float> keys(reinterpret_cast<float*>(base), reinterpret_cast<float*>(other));
  CBG_CUDA_TRY(
      segmented_sort(temp, temp_bytes, keys, static_cast<int>(n), static_cast<int>(plan.features), offsets, stream));
  return keys.Current();
}

}  // namespace cbg::quantize::detail
