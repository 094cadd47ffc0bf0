// SPDX-License-Identifier: Apache-2.0
// The quantizer: CatBoost-identical borders for every numeric feature of a pool, and the
// compressed bin index the tree learner reads. Two implementations share quantize_math.hpp:
// quantize_host (the reference; host memory) and quantize_device (the GPU; device memory).
//
// Bin index layout (what the histogram kernels read)
// ---------------------------------------------------
// One byte per (row, feature): bins are 0..border_count <= 255. Features are packed four to a
// 32-bit word, grouped by feature: group g = f / 4 holds features 4g..4g+3, feature f sits in byte
// f % 4 (bits 8*(f%4)..8*(f%4)+7). The words of a group are contiguous over rows (group-major,
// "column of words"): word(g, r) = index[g * padded_rows + r], with padded_rows = rows rounded up
// to a multiple of 32, so every group starts 128-byte aligned and a warp reading 32 consecutive
// rows of a group issues one fully used 128-byte transaction, bringing four features per load.
// Padding rows and the unused bytes of the last group are zero. For histograms this is 1 byte per
// value (the input's float32 is 4), and a block that owns a group of four features reads only that
// group's words. (CatBoost's GPU index also packs 4 one-byte features per ui32.)
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::quantize {

struct feature_override {
  std::int64_t feature = 0;
  int border_count = 0;  // 0: the common setting
  int mode = -1;         // -1: the common setting, else a nan_mode value
  int type = -1;         // -1: the common setting, else a border_type value
};

// Which objects the borders are built from when there are more than max_subset_size (values
// match the C ABI's CBG_SUBSET_*): `sampled` draws them as CatBoost does for data it has not
// shuffled (sampling.hpp); `first_rows` takes the first max_subset_size rows, as CatBoost does
// when it has shuffled the learn set (training with categorical features or Ordered boosting).
enum class subset_rule : std::uint8_t { sampled = 0, first_rows = 1 };

// How the GPU sorts the border subsets (the result is the same): one device-wide radix sort of
// (feature, value) keys, which fills the GPU when there are few features, or CUB's segmented
// sort, one block per feature, when there are many. Tests and benchmarks force one.
enum class sort_method : std::uint8_t { automatic, device_wide, segmented };

struct options {
  int border_count = default_border_count;  // 1..255
  nan_mode mode = nan_mode::min;
  border_type type = border_type::greedy_log_sum;
  std::uint32_t max_subset_size = default_max_subset_size;
  subset_rule subset = subset_rule::sampled;
  std::vector<feature_override> overrides;
  sort_method sort = sort_method::automatic;  // GPU only
  // GPU only, for tests and benchmarks (0: automatic). Features per chunk (a multiple of 4):
  // automatic is all features at once for columns the device reads in place and about 128 MB of
  // float32 when pageable columns are staged. Bytes per pinned staging buffer (automatic 32 MB).
  std::int64_t chunk_features = 0;
  std::size_t staging_piece_bytes = 0;
};

// Per-feature settings after overrides (validated). Categorical features get border_count 0.
struct feature_settings {
  std::vector<std::int32_t> border_count;
  std::vector<std::uint8_t> mode;
  std::vector<std::uint8_t> type;  // border_type values
  [[nodiscard]] bool uses(penalty pen) const noexcept;
  [[nodiscard]] bool uses_exact() const noexcept;
};
feature_settings resolve_settings(const pool& p, const options& o);

// The border subset's size for `rows` rows, and whether its rows are drawn (else rows 0..m-1).
// Throws unsupported when the subset is too large for an exact border type (MinEntropy and
// MaxLogSum sum counts in float as CatBoost does, exact up to 2^24) or rows exceed 32 bits.
struct subset_shape {
  std::uint32_t m = 0;
  bool drawn = false;
};
subset_shape border_subset_shape(std::uint64_t rows, const options& o, const feature_settings& s);

inline constexpr std::int64_t index_row_alignment = 32;
[[nodiscard]] constexpr std::int64_t padded_rows_of(std::int64_t rows) noexcept {
  return (rows + index_row_alignment - 1) / index_row_alignment * index_row_alignment;
}
[[nodiscard]] constexpr std::int64_t groups_of(std::int64_t features) noexcept { return (features + 3) / 4; }

// A trivially copyable view of quantized rows for kernels and host loops alike (as XGBoost's
// EllpackDeviceAccessor): the bin index (layout above) of rows [base_rowid, base_rowid + rows) of
// the whole set, for a shard or a batch that starts at base_rowid.
struct quantized_rows {
  const std::uint32_t* index = nullptr;
  std::int64_t rows = 0;
  std::int64_t padded_rows = 0;
  std::int64_t features = 0;
  std::int64_t base_rowid = 0;

  // The bin of local row `row` (0 .. rows - 1), feature `feature`.
  [[nodiscard]] CBG_HOST_DEVICE std::uint32_t bin(std::int64_t row, std::int64_t feature) const noexcept {
    return (index[(feature / 4) * padded_rows + row] >> (8 * (feature % 4))) & 0xffu;
  }
};
static_assert(std::is_trivially_copyable_v<quantized_rows>);

// Borders of every feature in slots of border_stride floats, their counts and effective NaN modes.
struct host_quantized {
  std::int64_t rows = 0;
  std::int64_t features = 0;
  std::int64_t padded_rows = 0;
  std::vector<float> borders;              // features * border_stride
  std::vector<std::int32_t> border_count;  // features
  std::vector<std::uint8_t> mode;          // effective nan_mode per feature
  std::vector<std::uint32_t> index;        // groups * padded_rows words (layout above)

  [[nodiscard]] quantized_rows view(std::int64_t base_rowid = 0) const noexcept {
    return {index.data(), rows, padded_rows, features, base_rowid};
  }
  [[nodiscard]] std::uint32_t bin(std::int64_t row, std::int64_t feature) const noexcept {
    return view().bin(row, feature);
  }
};

struct device_quantized {
  std::int64_t rows = 0;
  std::int64_t features = 0;
  std::int64_t padded_rows = 0;
  int device = -1;
  device_buffer<float> borders;              // features * border_stride
  device_buffer<std::int32_t> border_count;  // features
  device_buffer<std::uint8_t> mode;          // features
  device_buffer<std::uint32_t> index;        // groups * padded_rows

  [[nodiscard]] quantized_rows view(std::int64_t base_rowid = 0) const noexcept {
    return {index.data(), rows, padded_rows, features, base_rowid};
  }
};

// Host reference: the pool's columns must be in host or pinned memory. Throws bad_data for a NaN
// in the border subset of a Forbidden feature. Border types: all of CatBoost's (border_type).
host_quantized quantize_host(const pool& p, const options& o);
// The pool's features binned with the borders and NaN modes of `like` (the same features, e.g. the
// ordered CTR columns of another permutation): no border search.
host_quantized binarize_host(const pool& p, const host_quantized& like);

// Stage marks for benchmarks: events that quantize_device records on the context's stream as each
// stage is enqueued (cudaEventElapsedTime between neighbours gives the stage times on the GPU
// timeline, host gaps included). Null events are skipped.
struct stage_marks {
  cudaEvent_t start = nullptr;     // entry
  cudaEvent_t subset = nullptr;    // host work: the border subset planned (drawn, on the fallback)
  cudaEvent_t prepare = nullptr;   // host work: log table, settings, upload image
  cudaEvent_t allocate = nullptr;  // small outputs and the scratch allocated
  cudaEvent_t setup = nullptr;     // uploaded, zeroed
  cudaEvent_t gather = nullptr;    // border subset drawn (on the GPU), subsets gathered
  cudaEvent_t sort = nullptr;      // subsets sorted
  cudaEvent_t borders = nullptr;   // border search done
  cudaEvent_t binarize = nullptr;  // bin index allocated and written
};

// GPU: columns in device, managed or pinned memory are read where they are; columns in pageable
// host memory are staged to the device in chunks of feature groups through two pinned buffers
// (staging.cu), each chunk quantized while the next is copied. The border subset is drawn on the
// device (the same set as border_subset). Copies to the device only the settings, the column
// descriptors, the gain tables and (staged) the pageable columns; copies back only a 4-byte status
// (no feature data). Blocks until done.
device_quantized quantize_device(const pool& p, const options& o, const stage_marks* marks = nullptr);
// binarize_host on the GPU (the same bins): columns the device reads (pageable ones staged first).
// Blocks until done.
device_quantized binarize_device(const pool& p, const device_quantized& like);

// The gains of a penalty for bin weights k = 0..n at least (gain = -penalty, in double):
// log_sum: std::log(k + 1e-8); entropy: -(k * std::log(k + 1e-8)). Entries do not depend on n,
// so one table per penalty serves the process: computed once, grown when a larger n comes.
std::shared_ptr<const std::vector<double>> gain_table(penalty pen, std::uint32_t n);

}  // namespace cbg::quantize
