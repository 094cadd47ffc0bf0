// SPDX-License-Identifier: Apache-2.0
// Float columns in device memory quantized as quantize_device quantizes each column alone (its
// border count and type, nan_mode Forbidden), for a caller that quantizes new columns of the same
// rows again and again (feature combinations: a tree level's candidate CTR columns):
//  - the border subset (sampling.hpp) is drawn once, at construction, not at every call;
//  - Uniform borders come from the subset's least and greatest values (a reduction; the border
//    search over make_uniform_stand_in), Median and UniformAndQuantiles from the subset sorted (the
//    quantizer's gather, sort and search stages); other types are not taken (handles);
//  - every column's bins are bytes from one kernel, and the borders stay on the device, packed
//    for a read-back that the caller merges with its own (nothing here synchronises).
// The borders equal quantize_device's and quantize_host's bit for bit: the same subset, the same
// search functions. Internal (not installed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::quantize {

class subset_quantizer {
 public:
  // Columns of `rows` values (rows > 0) on the context's device; the border subset is the one
  // quantize_device draws for such columns under `o` (its max_subset_size and subset rule) with
  // the context's seed. The context must outlive the quantizer.
  subset_quantizer(const context& ctx, std::int64_t rows, const options& o = {});

  // Whether columns of border type t are quantized here.
  [[nodiscard]] static bool handles(border_type t) noexcept;

  struct column {
    const float* values = nullptr;  // `rows` values (device)
    std::uint8_t* bins = nullptr;   // `rows` bins, written (device)
    int border_count = 0;           // 1..max_border_count
    border_type type = border_type::uniform;
  };

  // A call's results: `words()` 32-bit words of device memory: a status word, then per column
  // its border count followed by `stride - 1` slots for its borders.
  struct layout {
    std::size_t columns = 0;
    std::size_t stride = 0;
    [[nodiscard]] std::size_t words() const noexcept { return columns == 0 ? 0 : 1 + columns * stride; }
  };
  [[nodiscard]] static layout layout_of(const std::vector<column>& cols) noexcept;

  // Enqueues the quantization of `cols` (types that handles() takes) on the context's stream;
  // `results` (device, layout_of(cols).words() words) receives their borders. The values must
  // stay until the stream has run it; the bins are written by then.
  void enqueue(const std::vector<column>& cols, std::uint32_t* results) const;

  // On the results read back: throws bad_data when a column's subset had a NaN (nan_mode
  // Forbidden, as quantize_device); column k's borders.
  static void check(const std::uint32_t* results, const layout& l);
  [[nodiscard]] static std::vector<float> borders_of(const std::uint32_t* results, const layout& l, std::size_t k);

 private:
  const context& ctx_;
  std::int64_t rows_ = 0;
  std::uint32_t m_ = 0;                  // subset size
  device_buffer<std::uint32_t> subset_;  // ascending rows; empty: rows 0..m_-1
};

}  // namespace cbg::quantize
