// SPDX-License-Identifier: Apache-2.0
// Staging of pageable host columns for the GPU quantizer (see staging.hpp). Host code only.
#include "kernels/quantize/staging.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/quantize/quantize_math.hpp"
#include "cbg/runtime/stream.hpp"

namespace cbg::quantize::detail {

namespace {

constexpr std::size_t piece_bytes = std::size_t{32} << 20;          // each pinned buffer
constexpr std::size_t chunk_target_bytes = std::size_t{128} << 20;  // staged float32 per chunk
constexpr std::int64_t strided_min_features = 16;                   // 64 bytes of a row-major row per chunk
constexpr std::size_t parallel_min_bytes = std::size_t{4} << 20;    // pieces packed by threads
constexpr unsigned max_pack_threads = 8;
// Floats taken off each packed column of a piece: columns a power of two apart (2 MB for 16
// columns of a 32 MB piece) would share cache sets and evict each other (packing 3x slower on the
// host, measured here on an EPYC).
constexpr std::size_t piece_padding = 16;

bool is_pageable(const column_view& c) noexcept { return c.memory == memory_kind::host; }

// A page-locked buffer. Allocating one costs milliseconds and may stall the device, so a stager's
// buffers are kept on its context between quantizations (context::keep, under pinned_key) and
// freed with the context: no process-wide cache, nothing left allocated at exit.
struct pinned_block {
  void* data = nullptr;
  std::size_t bytes = 0;
  explicit pinned_block(std::size_t n) : bytes(n) { CBG_CUDA_TRY(cudaHostAlloc(&data, n, cudaHostAllocPortable)); }
  ~pinned_block() { (void)cudaFreeHost(data); }
  pinned_block(const pinned_block&) = delete;
  pinned_block& operator=(const pinned_block&) = delete;
};

constexpr const char* pinned_key = "quantize.pinned";

// A kept buffer of at least `bytes` (a smaller one is freed), or a new one.
std::shared_ptr<pinned_block> acquire_pinned(const context& ctx, std::size_t bytes) {
  if (auto kept = std::static_pointer_cast<pinned_block>(ctx.take(pinned_key)); kept && kept->bytes >= bytes) {
    return kept;
  }
  return std::make_shared<pinned_block>(bytes);
}

// Runs fn(a, b) over [first, last) split among threads when the work is large.
template <class Fn>
void parallel_rows(std::int64_t first, std::int64_t last, std::size_t bytes, unsigned threads, Fn fn) {
  if (threads <= 1 || bytes < parallel_min_bytes || last - first < 2 * threads) {
    fn(first, last);
    return;
  }
  const std::int64_t step = (last - first + threads - 1) / threads;
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) {
    const std::int64_t a = first + t * step;
    if (a >= last) break;
    workers.emplace_back(fn, a, std::min(last, a + step));
  }
  fn(first, std::min(last, first + step));
  for (std::thread& w : workers) w.join();
}

}  // namespace

void pack_rows(const column_view* columns, const std::int64_t* staged, std::size_t count, std::int64_t r0,
               std::int64_t r1, float* out, std::size_t out_stride, unsigned threads) {
  const std::int64_t len = r1 - r0;
  if (len <= 0 || count == 0) return;
  // Contiguous float32 columns are copied whole; strided float32 ones (rows of a row-major
  // matrix) read row by row with their pointers and strides hoisted (one pass over each row; a
  // run of adjacent columns of one row-major matrix as one block); other dtypes converted.
  std::vector<std::size_t> copied, strided, converted;
  for (std::size_t q = 0; q < count; ++q) {
    const column_view& c = columns[staged[q]];
    if (c.type != dtype::float32) {
      converted.push_back(q);
    } else if (c.stride == 1) {
      copied.push_back(q);
    } else {
      strided.push_back(q);
    }
  }
  const std::size_t ns = strided.size();
  std::vector<const float*> src(ns);
  std::vector<std::int64_t> step(ns);
  std::vector<float*> dst(ns);
  bool one_block = ns != 0;
  for (std::size_t i = 0; i < ns; ++i) {
    const column_view& c = columns[staged[strided[i]]];
    src[i] = static_cast<const float*>(c.data);
    step[i] = c.stride;
    dst[i] = out + strided[i] * out_stride;
    one_block = one_block && step[i] == step[0] && src[i] == src[0] + i;
  }
  const std::size_t bytes = static_cast<std::size_t>(len) * count * sizeof(float);
  parallel_rows(r0, r1, bytes, threads, [&](std::int64_t a, std::int64_t b) {
    for (const std::size_t q : copied) {
      std::memcpy(out + q * out_stride + (a - r0), static_cast<const float*>(columns[staged[q]].data) + a,
                  static_cast<std::size_t>(b - a) * sizeof(float));
    }
    if (one_block) {
      float* const* d = dst.data();
      for (std::int64_t r = a; r < b; ++r) {
        const float* row = src[0] + r * step[0];
        for (std::size_t i = 0; i < ns; ++i) d[i][r - r0] = row[i];
      }
    } else {
      for (std::int64_t r = a; r < b; ++r) {
        for (std::size_t i = 0; i < ns; ++i) dst[i][r - r0] = src[i][r * step[i]];
      }
    }
    for (const std::size_t q : converted) {
      const column_view& c = columns[staged[q]];
      float* o = out + q * out_stride;
      for (std::int64_t r = a; r < b; ++r) o[r - r0] = to_feature_float(c.value(r));
    }
  });
}

bool needs_staging(const std::vector<column_view>& columns) noexcept {
  return std::any_of(columns.begin(), columns.end(), is_pageable);
}

staging_plan plan_staging(const std::vector<column_view>& columns, std::int64_t padded_rows,
                          std::int64_t chunk_features, std::size_t piece) {
  staging_plan plan;
  const auto features = static_cast<std::int64_t>(columns.size());
  plan.pitch = static_cast<std::size_t>(std::max<std::int64_t>(padded_rows, 32)) * sizeof(float);
  bool strided = false;
  for (const column_view& c : columns) strided = strided || (is_pageable(c) && c.stride != 1);
  std::int64_t cf = static_cast<std::int64_t>(chunk_target_bytes / plan.pitch) / 4 * 4;
  cf = std::max<std::int64_t>(cf, strided ? strided_min_features : 4);
  if (chunk_features != 0) {
    CBG_EXPECTS(chunk_features > 0 && chunk_features % 4 == 0, status::invalid_argument,
                "staging chunks hold a positive multiple of 4 features");
    cf = chunk_features;
  }
  plan.chunk_features = std::min<std::int64_t>(cf, (features + 3) / 4 * 4);
  plan.piece_bytes = std::max(piece != 0 ? std::max<std::size_t>(piece, 4096) : piece_bytes,
                              static_cast<std::size_t>(plan.chunk_features) * (piece_padding + 1) * sizeof(float));
  plan.buffer_bytes = static_cast<std::size_t>(plan.chunk_features) * plan.pitch;
  return plan;
}

column_view staged_view(const column_view& c, int slot, const unsigned char* buffer, std::size_t pitch) noexcept {
  if (!is_pageable(c)) return c;
  column_view v = c;
  v.data = buffer + static_cast<std::size_t>(slot) * pitch;
  v.type = dtype::float32;
  v.memory = memory_kind::device;
  v.stride = 1;
  return v;
}

struct stager::impl {
  const context& ctx;
  staging_plan plan;
  std::int64_t rows;
  cudaStream_t copy = nullptr;
  std::shared_ptr<pinned_block> pinned[2];
  event piece_done[2];
  bool pending[2] = {false, false};
  event chunk_done;
  int next = 0;
  unsigned threads = 1;

  impl(const context& c, const staging_plan& p, std::int64_t r) : ctx(c), plan(p), rows(r) {}
  ~impl() {
    // Nothing may still read the pinned buffers when they go back to the context.
    if (copy != nullptr) {
      (void)cudaStreamSynchronize(copy);
      (void)cudaStreamDestroy(copy);
    }
    try {
      for (auto& p : pinned) ctx.keep(pinned_key, std::move(p));
    } catch (...) {  // not kept (no memory for the entry): freed here instead
    }
  }
};

stager::stager(const context& ctx, const staging_plan& plan, std::int64_t rows)
    : impl_(std::make_unique<impl>(ctx, plan, rows)) {
  CBG_CUDA_TRY(cudaStreamCreateWithFlags(&impl_->copy, cudaStreamNonBlocking));
  // The device buffers were allocated on the main stream: copies into them come after that.
  stream_wait_for(impl_->copy, ctx.stream());
  for (auto& p : impl_->pinned) p = acquire_pinned(ctx, plan.piece_bytes);
  impl_->threads = std::clamp(std::thread::hardware_concurrency(), 1u, max_pack_threads);
}

stager::~stager() = default;

void stager::stage(const column_view* columns, std::int64_t count, unsigned char* dst, cudaEvent_t dst_free,
                   cudaStream_t main) {
  impl& s = *impl_;
  std::vector<std::int64_t> staged;
  for (std::int64_t j = 0; j < count; ++j) {
    if (is_pageable(columns[j])) staged.push_back(j);
  }
  if (staged.empty() || s.rows == 0) return;
  if (dst_free != nullptr) CBG_CUDA_TRY(cudaStreamWaitEvent(s.copy, dst_free, 0));
  // Floats per packed column, and rows per piece.
  const std::size_t stride = s.plan.piece_bytes / (staged.size() * sizeof(float)) - piece_padding;
  const auto piece_rows = static_cast<std::int64_t>(stride);
  for (std::int64_t r0 = 0; r0 < s.rows; r0 += piece_rows) {
    const std::int64_t r1 = std::min(s.rows, r0 + piece_rows);
    const int b = s.next;
    s.next ^= 1;
    if (s.pending[b]) CBG_CUDA_TRY(cudaEventSynchronize(s.piece_done[b].get()));
    auto* piece = static_cast<float*>(s.pinned[b]->data);
    pack_rows(columns, staged.data(), staged.size(), r0, r1, piece, stride, s.threads);
    s.ctx.copies().add(copy_direction::h2h,  // pageable columns packed into pinned memory
                       static_cast<std::size_t>(r1 - r0) * staged.size() * sizeof(float));
    const auto row_bytes = static_cast<std::size_t>(r1 - r0) * sizeof(float);
    copy_bytes_2d(dst + static_cast<std::size_t>(r0) * sizeof(float), s.plan.pitch, memory_kind::device, piece,
                  stride * sizeof(float), memory_kind::pinned_host, row_bytes, staged.size(), s.copy, s.ctx.copies(),
                  s.ctx.rules(), CBG_COPY_SITE("quantizer: staged pageable columns"));
    s.piece_done[b].record(s.copy);
    s.pending[b] = true;
  }
  s.chunk_done.record(s.copy);
  CBG_CUDA_TRY(cudaStreamWaitEvent(main, s.chunk_done.get(), 0));
}

}  // namespace cbg::quantize::detail
