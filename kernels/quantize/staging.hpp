// SPDX-License-Identifier: Apache-2.0
// Pageable host columns staged to the device for the GPU quantizer (staging.cu; host code).
//
// The quantizer works on chunks of whole feature groups (kernels/quantize/quantize.cu): the
// pageable columns of chunk c are packed by host threads into one of two pinned buffers, piece by
// piece (a run of rows of every staged column of the chunk), and each piece is copied on a second
// stream into device buffer c % 2 while the host packs the next piece into the other pinned
// buffer. The main stream waits for a chunk's last piece with an event and then quantizes the
// chunk, while the host and the copy stream go on with chunk c + 1; before the copy stream
// overwrites device buffer c % 2 it waits for the event the main stream records after chunk c - 2.
// The host only ever waits for the copy of the piece before last (to refill its pinned buffer).
//
// A staged column is float32 in the device buffer, column-major with a pitch of padded rows:
// float32 columns are copied as they are, others converted with to_feature_float (which the
// kernels apply to every value anyway), so the result is the same as reading the columns in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbg/data/column_view.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::quantize::detail {

struct staging_plan {
  std::int64_t chunk_features = 0;  // a multiple of 4 (the last chunk may have fewer)
  std::size_t pitch = 0;            // bytes between staged columns in a device buffer
  std::size_t buffer_bytes = 0;     // of each of the two device buffers
  std::size_t piece_bytes = 0;      // of each of the two pinned buffers
};

// Whether any feature column is in pageable host memory (and so must be staged).
bool needs_staging(const std::vector<column_view>& columns) noexcept;

// Chunks of about 128 MB of staged float32 (at least 16 features when the staged columns are
// strided, i.e. rows of a row-major matrix, so that each row is read in whole cache lines), and
// 32 MB pinned buffers; a nonzero `chunk_features` (a multiple of 4) or `piece_bytes` is taken.
staging_plan plan_staging(const std::vector<column_view>& columns, std::int64_t padded_rows,
                          std::int64_t chunk_features = 0, std::size_t piece_bytes = 0);

// The view of column `c` for the kernels: in place when it is not staged, else staged column
// `slot` of the device buffer at `buffer`.
column_view staged_view(const column_view& c, int slot, const unsigned char* buffer, std::size_t pitch) noexcept;

// Packs rows [r0, r1) of columns[staged[q]] (q < count) as float32 into
// out[q * out_stride + r - r0] (float32 values as they are, other dtypes through
// to_feature_float), split among up to `threads` threads when the piece is large. Host memory only.
void pack_rows(const column_view* columns, const std::int64_t* staged, std::size_t count, std::int64_t r0,
               std::int64_t r1, float* out, std::size_t out_stride, unsigned threads);

class stager {
 public:
  // Copies start after the work queued on the context's stream so far (the device buffers'
  // allocation).
  stager(const context& ctx, const staging_plan& plan, std::int64_t rows);
  ~stager();
  stager(const stager&) = delete;
  stager& operator=(const stager&) = delete;

  // Enqueues the copy of the pageable columns among columns[0..count) (features of one chunk)
  // into the device buffer `dst` (staged columns in order, plan.pitch apart), after the main
  // stream's work recorded in `dst_free` (nullptr: none); then makes the main stream wait for it.
  // Blocks only while a pinned buffer is still being copied from.
  void stage(const column_view* columns, std::int64_t count, unsigned char* dst, cudaEvent_t dst_free,
             cudaStream_t main);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace cbg::quantize::detail
