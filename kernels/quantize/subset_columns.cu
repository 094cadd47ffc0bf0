// SPDX-License-Identifier: Apache-2.0
// The stages of subset_columns.hpp. The per-element math is the quantizer's (border_types.hpp,
// bin_search.hpp), shared with the host reference.
#include <algorithm>

#include "kernels/quantize/order_bits.cuh"
#include "kernels/quantize/subset_columns.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/quantize/bin_search.hpp"
#include "cbg/quantize/border_types.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::quantize::detail {

namespace {

constexpr int block = 256;
constexpr unsigned full_mask = 0xffffffffu;

// Per column: scratch[3f] the greatest complement of a value's order bits (the least value),
// scratch[3f + 1] the greatest order bits, scratch[3f + 2] the NaNs. Grid: (blocks, columns).
__global__ __launch_bounds__(block) void subset_ends_kernel(const float* const* columns, const std::uint32_t* subset,
                                                            std::uint32_t m, std::uint32_t* scratch) {
  const float* col = columns[blockIdx.y];
  std::uint32_t low = 0, high = 0, nans = 0;
  for (std::uint32_t i = blockIdx.x * block + threadIdx.x; i < m; i += gridDim.x * block) {
    const float v = to_feature_float(col[subset != nullptr ? subset[i] : i]);
    if (is_nan(v)) {
      ++nans;
    } else {
      const std::uint32_t b = order_bits(v);
      low = max(low, ~b);
      high = max(high, b);
    }
  }
  low = __reduce_max_sync(full_mask, low);
  high = __reduce_max_sync(full_mask, high);
  nans = __reduce_add_sync(full_mask, nans);
  if (threadIdx.x % 32 == 0) {
    std::uint32_t* s = scratch + 3 * static_cast<std::size_t>(blockIdx.y);
    if (low != 0) atomicMax(s, low);
    if (high != 0) atomicMax(s + 1, high);
    if (nans != 0) atomicAdd(s + 2, nans);
  }
}

__global__ __launch_bounds__(block) void stand_in_kernel(const std::uint32_t* scratch, std::int64_t features,
                                                         std::uint32_t m, float* ends, unsigned int* nan_counts) {
  const std::int64_t f = static_cast<std::int64_t>(blockIdx.x) * block + threadIdx.x;
  if (f >= features) return;
  const std::uint32_t* s = scratch + 3 * f;
  const std::uint32_t nans = s[2];
  const uniform_stand_in in = make_uniform_stand_in(from_order_bits(~s[0]), from_order_bits(s[1]), m - nans, nans);
  for (int i = 0; i < 3; ++i) ends[3 * f + i] = in.sorted[i];
  nan_counts[f] = in.nan_count;
}

// One column per blockIdx.y; its border tree in shared memory (as the quantizer's binarization);
// four rows per step where the column and its bins allow vector access.
__global__ __launch_bounds__(block) void byte_bins_kernel(const float* const* columns, std::uint8_t* const* bins,
                                                          std::int64_t rows, const float* borders,
                                                          const std::int32_t* border_count, const std::uint8_t* modes) {
  __shared__ float tree[tree_slots];
  const std::int64_t f = blockIdx.y;
  const int count = border_count[f];
  const auto mode = static_cast<nan_mode>(modes[f]);
  for (int t = static_cast<int>(threadIdx.x); t < tree_slots; t += block) {
    tree[t] = tree_slot_value(borders + f * border_stride, count, t);
  }
  __syncthreads();
  const float* v = columns[f];
  std::uint8_t* out = bins[f];
  const auto bin = [&](float x) {
    return static_cast<std::uint32_t>(bin_of_tree(to_feature_float(x), tree, count, mode));
  };
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * block;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * block + threadIdx.x;
  std::int64_t done = 0;
  if (((reinterpret_cast<std::uintptr_t>(v) | reinterpret_cast<std::uintptr_t>(out)) & 15u) == 0) {
    const std::int64_t quads = rows / 4;
    const auto* v4 = reinterpret_cast<const float4*>(v);
    auto* o4 = reinterpret_cast<std::uint32_t*>(out);
    for (std::int64_t q = first; q < quads; q += step) {
      const float4 x = v4[q];
      o4[q] = bin(x.x) | bin(x.y) << 8 | bin(x.z) << 16 | bin(x.w) << 24;
    }
    done = quads * 4;
  }
  for (std::int64_t r = done + first; r < rows; r += step) out[r] = static_cast<std::uint8_t>(bin(v[r]));
}

__global__ __launch_bounds__(block) void pack_kernel(const std::uint32_t* slot, std::size_t stride,
                                                     const float* borders, const std::int32_t* border_count,
                                                     std::uint32_t* results) {
  const std::int64_t f = blockIdx.x;
  const int count = border_count[f];
  std::uint32_t* out = results + 1 + static_cast<std::size_t>(slot[f]) * stride;
  for (int i = static_cast<int>(threadIdx.x); i <= count; i += block) {
    out[i] = i == 0 ? static_cast<std::uint32_t>(count) : __float_as_uint(borders[f * border_stride + i - 1]);
  }
}

unsigned grid_of(std::int64_t items, std::int64_t cap) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((items + block - 1) / block, 1, cap));
}

}  // namespace

void uniform_stand_ins(const float* const* columns, std::int64_t features, const std::uint32_t* subset, std::uint32_t m,
                       std::uint32_t* scratch, float* ends, unsigned int* nan_counts, cudaStream_t stream) {
  if (features == 0) return;
  CBG_EXPECTS(m > 0 && features <= 65535, status::internal, "uniform stand-ins: no subset, or too many columns");
  CBG_CUDA_TRY(cudaMemsetAsync(scratch, 0, 3 * static_cast<std::size_t>(features) * sizeof(std::uint32_t), stream));
  // Eight values a thread: enough blocks to fill the GPU with a few columns, few atomics.
  const dim3 grid(grid_of((static_cast<std::int64_t>(m) + 7) / 8, 256), static_cast<unsigned>(features));
  subset_ends_kernel<<<grid, block, 0, stream>>>(columns, subset, m, scratch);
  CBG_CHECK_CUDA(stream);
  stand_in_kernel<<<grid_of(features, 1 << 20), block, 0, stream>>>(scratch, features, m, ends, nan_counts);
  CBG_CHECK_CUDA(stream);
}

void byte_bins(const float* const* columns, std::uint8_t* const* bins, std::int64_t features, std::int64_t rows,
               const float* borders, const std::int32_t* border_count, const std::uint8_t* mode, cudaStream_t stream) {
  if (features == 0 || rows == 0) return;
  CBG_EXPECTS(features <= 65535, status::internal, "byte bins: too many columns");
  // About 16 rows a thread.
  const dim3 grid(grid_of((rows + 15) / 16, 1024), static_cast<unsigned>(features));
  byte_bins_kernel<<<grid, block, 0, stream>>>(columns, bins, rows, borders, border_count, mode);
  CBG_CHECK_CUDA(stream);
}

void pack_borders(std::int64_t features, const std::uint32_t* slot, std::size_t stride, const float* borders,
                  const std::int32_t* border_count, std::uint32_t* results, cudaStream_t stream) {
  if (features == 0) return;
  pack_kernel<<<static_cast<unsigned>(features), block, 0, stream>>>(slot, stride, borders, border_count, results);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::quantize::detail
