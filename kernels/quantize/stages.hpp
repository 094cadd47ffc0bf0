// SPDX-License-Identifier: Apache-2.0
// The stages of the GPU quantizer (kernels/quantize/quantize.cu runs them in order on one stream):
//   subsets.cu  gather every feature's border subset as sort keys, sort them per feature
//   search.cu   GreedyLogSum per feature (one warp each), then the NaN border
//   binarize.cu every value to its bin, into the packed index (layout: quantizer.hpp)
// Each launcher only enqueues work on `stream`; none synchronises.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cbg/data/column_view.hpp"
#include "cbg/quantize/quantizer.hpp"

namespace cbg::quantize::detail {

// Scratch of the subset sort: two key buffers (CUB double buffer) and CUB's temporary storage.
struct subset_plan {
  sort_method method = sort_method::device_wide;  // resolved: never automatic
  std::int64_t features = 0;
  std::uint32_t m = 0;           // subset size
  std::size_t key_bytes = 0;     // each of the two key buffers
  std::size_t temp_bytes = 0;    // CUB
  [[nodiscard]] std::size_t bytes() const noexcept;
};
// Sizes the scratch (asks CUB; enqueues nothing).
subset_plan plan_subsets(sort_method method, std::int64_t features, std::uint32_t m);

// keys <- the subset of every feature (subset == nullptr: rows 0..m-1), as sort keys;
// nan_counts[f] += the NaNs of feature f (zeroed by the caller). Features with border_count 0
// are not read.
void gather_subsets(const subset_plan& plan, void* scratch, const column_view* columns,
                    const std::uint32_t* subset, const std::int32_t* border_count,
                    unsigned int* nan_counts, cudaStream_t stream);

// Sorts the gathered keys; returns the sorted values, sorted[f * m + i], ascending, NaNs last
// (inside `scratch`). `offsets` (features + 1 ints, f * m) is read by the segmented sort only.
const float* sort_subsets(const subset_plan& plan, void* scratch, const int* offsets,
                          cudaStream_t stream);

// Borders of every feature from its sorted subset: borders[f * border_stride + i], counts, the
// effective NaN modes; atomicMin(error_feature, f) for a NaN under Forbidden.
void search_borders(const float* sorted, std::uint32_t m, std::int64_t features,
                    const std::int32_t* requested_count, const std::uint8_t* requested_mode,
                    const unsigned int* nan_counts, const double* log_table, float* borders,
                    std::int32_t* border_count, std::uint8_t* mode, int* error_feature,
                    cudaStream_t stream);

// Whether the four columns of a group can be read as one float4 per row: float32, same stride,
// adjacent, 16-byte aligned rows (a row-major float32 matrix whose width is a multiple of 4).
bool group_is_float4(const column_view* group, std::int64_t lanes) noexcept;

// index[g * padded_rows + r] for every group and row (padding rows 0).
void binarize(const column_view* columns, const std::uint8_t* group_float4, std::int64_t features,
              std::int64_t rows, std::int64_t padded_rows, const float* borders,
              const std::int32_t* border_count, const std::uint8_t* mode, std::uint32_t* index,
              cudaStream_t stream);

}  // namespace cbg::quantize::detail
