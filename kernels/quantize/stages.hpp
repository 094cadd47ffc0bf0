// SPDX-License-Identifier: Apache-2.0
// The stages of the GPU quantizer (kernels/quantize/quantize.cu runs them in order on one stream):
//   draws.cu    the border subset, when CatBoost draws it by rejection into a set
//   subsets.cu  gather every feature's border subset as sort keys, sort them per feature
//   search.cu   the border search per feature (greedy: one warp each; Median, Uniform,
//               UniformAndQuantiles: one thread each), then the NaN border
//   exact_search.cu  MinEntropy/MaxLogSum per feature (one thread each, memory-bounded batches)
//   binarize.cu every value to its bin, into the packed index (layout: quantizer.hpp)
// Each launcher only enqueues work on `stream`; none synchronises.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cbg/data/column_view.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"

namespace cbg::quantize::detail {

// The status value that asks for the border subset to be drawn on the host (draws.cu), below
// every feature index that the border search reports.
inline constexpr int subset_short = -1;

// The border subset drawn on the GPU: subset[0..k) ascending, the same set as border_subset
// (both of CatBoost's ways). Scratch: bytes().
struct draw_plan {
  bool shuffle = false;        // partial Fisher-Yates (k draws), else rejection into a set
  std::uint32_t draws = 0;     // rejection: they hold k distinct rows but for a vanishing chance
  int draw_bits = 0;           // bits of a draw's number in a sort key
  int key_bits = 0;            // row and draw number; over 63: not usable, draw on the host
  std::size_t words = 0;       // of the row bitmap
  std::size_t temp_bytes = 0;  // CUB
  [[nodiscard]] bool usable() const noexcept { return key_bits <= 63; }
  [[nodiscard]] std::size_t bytes() const noexcept;
};
// draws == 0: the default margin (tests pass fewer to see the short case; rejection only).
draw_plan plan_subset_draws(std::uint64_t rows, std::uint32_t k, std::uint32_t draws = 0);
// atomicMin(status, subset_short) when the draws hold fewer than k distinct rows, or a shuffle
// draw would have been rejected.
void draw_subset(const draw_plan& plan, void* scratch, const rng64_streams& rng, std::uint64_t rows, std::uint32_t k,
                 std::uint32_t* subset, int* status, cudaStream_t stream);

// Scratch of the subset sort: two key buffers (CUB double buffer) and CUB's temporary storage.
struct subset_plan {
  sort_method method = sort_method::device_wide;  // resolved: never automatic
  std::int64_t features = 0;
  std::uint32_t m = 0;         // subset size
  std::size_t key_bytes = 0;   // each of the two key buffers
  std::size_t temp_bytes = 0;  // CUB
  [[nodiscard]] std::size_t bytes() const noexcept;
};
// Sizes the scratch (asks CUB; enqueues nothing).
subset_plan plan_subsets(sort_method method, std::int64_t features, std::uint32_t m);

// keys <- the subset of every feature (subset == nullptr: rows 0..m-1), as sort keys;
// nan_counts[f] += the NaNs of feature f (zeroed by the caller). Features with border_count 0
// are not read.
void gather_subsets(const subset_plan& plan, void* scratch, const column_view* columns, const std::uint32_t* subset,
                    const std::int32_t* border_count, unsigned int* nan_counts, cudaStream_t stream);

// Sorts the gathered keys; returns the sorted values, sorted[f * m + i], ascending, NaNs last
// (inside `scratch`). `offsets` (features + 1 ints, f * m) is read by the segmented sort only.
const float* sort_subsets(const subset_plan& plan, void* scratch, const int* offsets, cudaStream_t stream);

// What the border searches read and write, for `features` features starting at global feature
// `feature_base` (the pointers are offset to that feature; `sorted` holds sorted[f * m + i] for
// the local f, ascending, NaNs last).
struct search_args {
  const float* sorted = nullptr;
  std::uint32_t m = 0;
  std::int64_t features = 0;
  std::int64_t feature_base = 0;
  const std::int32_t* requested_count = nullptr;
  const std::uint8_t* requested_mode = nullptr;
  const std::uint8_t* requested_type = nullptr;
  const unsigned int* nan_counts = nullptr;
  const double* log_gains = nullptr;      // gain_table(log_sum), when a type uses it
  const double* entropy_gains = nullptr;  // gain_table(entropy), when a type uses it
  float* borders = nullptr;               // [f * border_stride + i]
  std::int32_t* border_count = nullptr;
  std::uint8_t* mode = nullptr;
  int* error_feature = nullptr;  // atomicMin of the global index of a NaN under Forbidden
};

// Borders, counts and effective NaN modes of every feature whose type is greedy (one warp each,
// search.cu) or Median/Uniform/UniformAndQuantiles (one thread each). `types_used` is a bit mask
// of the border types present (1 << type). The exact types are search_exact's.
void search_borders(const search_args& a, unsigned types_used, cudaStream_t stream);

// The exact types (MinEntropy, MaxLogSum): one thread per feature running the same DP as the host,
// in slots of scratch, `slots` features at a time (exact_search.cu).
struct exact_plan {
  std::uint32_t n = 0;  // values per feature (the subset size)
  int k = 0;            // the largest border budget of an exact feature
  std::size_t slot_bytes = 0;
  std::uint32_t slots = 0;  // features searched at once
  [[nodiscard]] std::size_t bytes() const noexcept { return slot_bytes * slots; }
};
// `features`: how many exact features there are; sized from the device's free memory.
exact_plan plan_exact(std::uint32_t m, int max_budget, std::size_t features);
// Searches the exact features list[0..count) (global indices, all within a's range).
void search_exact(const exact_plan& plan, void* scratch, const search_args& a, const std::uint32_t* list,
                  std::size_t count, cudaStream_t stream);

// Whether the four columns of a group can be read as one float4 per row: float32, same stride,
// adjacent, 16-byte aligned rows (a row-major float32 matrix whose width is a multiple of 4).
bool group_is_float4(const column_view* group, std::int64_t lanes) noexcept;

// index[g * padded_rows + r] for every group and row (padding rows 0).
void binarize(const column_view* columns, const std::uint8_t* group_float4, std::int64_t features, std::int64_t rows,
              std::int64_t padded_rows, const float* borders, const std::int32_t* border_count,
              const std::uint8_t* mode, std::uint32_t* index, cudaStream_t stream);

}  // namespace cbg::quantize::detail
