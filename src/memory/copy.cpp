// SPDX-License-Identifier: Apache-2.0
#include "cbg/memory/copy.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"

namespace cbg {

copy_totals copy_counters::totals() const noexcept {
  copy_totals t;
  for (int i = 0; i < 4; ++i) {
    t.bytes[i] = bytes_[i].load(std::memory_order_relaxed);
    t.calls[i] = calls_[i].load(std::memory_order_relaxed);
  }
  return t;
}

void copy_counters::reset() noexcept {
  for (int i = 0; i < 4; ++i) {
    bytes_[i].store(0, std::memory_order_relaxed);
    calls_[i].store(0, std::memory_order_relaxed);
  }
}

bool strict_no_d2h_from_environment() noexcept {
  const char* v = std::getenv("CBGPU_STRICT_NO_D2H");
  return v != nullptr && std::string_view(v) != "" && std::string_view(v) != "0";
}

namespace {

// Counts the copy and applies strict mode; returns the direction.
copy_direction account(memory_kind dst_kind, memory_kind src_kind, std::size_t bytes, copy_counters& counters,
                       const copy_rules& rules, const copy_site& site) {
  const copy_direction d = direction_of(src_kind, dst_kind);
  if (d == copy_direction::d2h && rules.strict_no_d2h && bytes > strict_d2h_metadata_limit) {
    throw error(status::strict_d2h, fmt::format("strict mode (CBGPU_STRICT_NO_D2H) refused a {}-byte device-to-host "
                                                "copy (limit {} bytes per call) for {} at {}:{}",
                                                bytes, strict_d2h_metadata_limit, site.what, site.file, site.line));
  }
  counters.add(d, bytes);
  return d;
}

cudaMemcpyKind cuda_kind(copy_direction d) noexcept {
  switch (d) {
    case copy_direction::h2h:
      return cudaMemcpyHostToHost;
    case copy_direction::h2d:
      return cudaMemcpyHostToDevice;
    case copy_direction::d2h:
      return cudaMemcpyDeviceToHost;
    case copy_direction::d2d:
      return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

}  // namespace

void copy_bytes(void* dst, memory_kind dst_kind, const void* src, memory_kind src_kind, std::size_t bytes,
                cudaStream_t stream, copy_counters& counters, const copy_rules& rules, const copy_site& site) {
  if (bytes == 0) return;
  const copy_direction d = account(dst_kind, src_kind, bytes, counters, rules, site);
  if (d == copy_direction::h2h) {
    std::memcpy(dst, src, bytes);
    return;
  }
  CBG_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cuda_kind(d), stream));
}

void copy_bytes_2d(void* dst, std::size_t dst_pitch, memory_kind dst_kind, const void* src, std::size_t src_pitch,
                   memory_kind src_kind, std::size_t row_bytes, std::size_t rows, cudaStream_t stream,
                   copy_counters& counters, const copy_rules& rules, const copy_site& site) {
  if (row_bytes == 0 || rows == 0) return;
  const copy_direction d = account(dst_kind, src_kind, row_bytes * rows, counters, rules, site);
  if (d == copy_direction::h2h) {
    for (std::size_t r = 0; r < rows; ++r) {
      std::memcpy(static_cast<unsigned char*>(dst) + r * dst_pitch,
                  static_cast<const unsigned char*>(src) + r * src_pitch, row_bytes);
    }
    return;
  }
  CBG_CUDA_TRY(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, cuda_kind(d), stream));
}

}  // namespace cbg
