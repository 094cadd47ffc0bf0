// SPDX-License-Identifier: Apache-2.0
// Binarization: every value to its bin, four features to a word (layout: quantizer.hpp).
// A block owns up to binarize_groups feature groups and a run of rows: the groups' border trees
// (bin_search.hpp) sit in shared memory, and each thread does whole rows, reading a row's groups
// before it computes any bin so that the loads are in flight together. A row-major float32
// matrix (width a multiple of 4) is read one float4 per group and row; anything else through
// column_view::value. Each word is written whole, and a warp writes 32 consecutive words.
#include <algorithm>

#include "kernels/quantize/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/quantize/bin_search.hpp"

namespace cbg::quantize::detail {

namespace {

constexpr int binarize_block = 256;
// Groups per block: 32 trees of 1 KB in shared memory; a float4 per group and row in flight.
constexpr int binarize_groups = 8;
// Rows per thread: amortises building the trees (each block builds its own). A grid sized to fill
// the GPU once instead (fewer, longer blocks) was slower: 0.98 against 0.91 ms (10.5M x 28) and
// 3.4 against 2.7 ms (400K x 2000), cbgpu-quantize-bench, H100, 2026-11-21.
constexpr int binarize_rows_per_thread = 16;

__global__ __launch_bounds__(binarize_block) void binarize_kernel(const column_view* columns,
                                                                  const std::uint8_t* group_float4,
                                                                  std::int64_t features, std::int64_t rows,
                                                                  std::int64_t padded_rows, const float* borders,
                                                                  const std::int32_t* border_count,
                                                                  const std::uint8_t* modes, std::uint32_t* index) {
  __shared__ float trees[4 * binarize_groups][tree_slots];
  __shared__ int s_count[4 * binarize_groups];
  __shared__ std::uint8_t s_mode[4 * binarize_groups];
  __shared__ column_view s_cols[4 * binarize_groups];
  __shared__ bool s_float4[binarize_groups];

  const std::int64_t groups = groups_of(features);
  const std::int64_t g0 = static_cast<std::int64_t>(blockIdx.x) * binarize_groups;
  const int ng = static_cast<int>(std::min<std::int64_t>(binarize_groups, groups - g0));
  const std::int64_t f0 = 4 * g0;
  for (int j = static_cast<int>(threadIdx.x); j < 4 * binarize_groups; j += binarize_block) {
    const std::int64_t f = f0 + j;
    const bool present = j < 4 * ng && f < features;
    s_count[j] = present ? border_count[f] : 0;
    s_mode[j] = present ? modes[f] : 0;
    if (present) s_cols[j] = columns[f];
    if (j < binarize_groups) s_float4[j] = j < ng && group_float4[g0 + j] != 0;
  }
  for (int t = static_cast<int>(threadIdx.x); t < 4 * ng * tree_slots; t += binarize_block) {
    const int j = t / tree_slots;
    const std::int64_t f = f0 + j;
    const int count = f < features ? border_count[f] : 0;
    trees[j][t % tree_slots] = tree_slot_value(borders + f * border_stride, count, t % tree_slots);
  }
  __syncthreads();

  const std::int64_t tile = static_cast<std::int64_t>(binarize_block) * binarize_rows_per_thread;
  for (std::int64_t base = blockIdx.y * tile; base < padded_rows; base += static_cast<std::int64_t>(gridDim.y) * tile) {
    for (int k = 0; k < binarize_rows_per_thread; ++k) {
      const std::int64_t r = base + k * binarize_block + threadIdx.x;
      if (r >= padded_rows) break;
      float v[binarize_groups][4] = {};
#pragma unroll
      for (int gi = 0; gi < binarize_groups; ++gi) {
        if (gi >= ng || r >= rows) continue;
        if (s_float4[gi]) {
          const column_view& c = s_cols[4 * gi];
          const float4 q = *reinterpret_cast<const float4*>(static_cast<const float*>(c.data) + r * c.stride);
          v[gi][0] = q.x;
          v[gi][1] = q.y;
          v[gi][2] = q.z;
          v[gi][3] = q.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int fj = 4 * gi + j;
            v[gi][j] = s_count[fj] != 0 ? to_feature_float(s_cols[fj].value(r)) : 0.0f;
          }
        }
      }
#pragma unroll
      for (int gi = 0; gi < binarize_groups; ++gi) {
        if (gi >= ng) continue;
        std::uint32_t word = 0;
        if (r < rows) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int fj = 4 * gi + j;
            word |= bin_of_tree(v[gi][j], trees[fj], s_count[fj], static_cast<nan_mode>(s_mode[fj])) << (8 * j);
          }
        }
        index[(g0 + gi) * padded_rows + r] = word;
      }
    }
  }
}

}  // namespace

bool group_is_float4(const column_view* group, std::int64_t lanes) noexcept {
  if (lanes != 4) return false;
  const auto* first = static_cast<const unsigned char*>(group[0].data);
  if (reinterpret_cast<std::uintptr_t>(first) % 16 != 0 || group[0].stride % 4 != 0) return false;
  for (int j = 0; j < 4; ++j) {
    if (group[j].type != dtype::float32 || group[j].stride != group[0].stride ||
        static_cast<const unsigned char*>(group[j].data) != first + 4 * j) {
      return false;
    }
  }
  return true;
}

void binarize(const column_view* columns, const std::uint8_t* group_float4, std::int64_t features, std::int64_t rows,
              std::int64_t padded_rows, const float* borders, const std::int32_t* border_count,
              const std::uint8_t* mode, std::uint32_t* index, cudaStream_t stream) {
  if (features == 0 || padded_rows == 0) return;
  const std::int64_t chunks = (groups_of(features) + binarize_groups - 1) / binarize_groups;
  CBG_EXPECTS(chunks <= 0x7fffffff, status::unsupported, "too many feature groups");
  const std::int64_t tile = static_cast<std::int64_t>(binarize_block) * binarize_rows_per_thread;
  const auto gy = static_cast<unsigned>(std::min<std::int64_t>((padded_rows + tile - 1) / tile, 65535));
  binarize_kernel<<<dim3(static_cast<unsigned>(chunks), gy), binarize_block, 0, stream>>>(
      columns, group_float4, features, rows, padded_rows, borders, border_count, mode, index);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::quantize::detail
