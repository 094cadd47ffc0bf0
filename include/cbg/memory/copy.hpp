// SPDX-License-Identifier: Apache-2.0
// Copy accounting (design rule 4): every memcpy of the library goes through copy_bytes(), which
// counts bytes and calls per direction and enforces strict mode (no device-to-host copies above a
// small metadata limit).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace cbg {

// Where a pointer's memory lives. Pinned host memory is host memory; managed memory counts as device.
enum class memory_kind : std::uint8_t { host, pinned_host, device, managed };

[[nodiscard]] constexpr bool is_device_side(memory_kind k) noexcept {
  return k == memory_kind::device || k == memory_kind::managed;
}

enum class copy_direction : std::uint8_t { h2h = 0, h2d = 1, d2h = 2, d2d = 3 };

[[nodiscard]] constexpr copy_direction direction_of(memory_kind src, memory_kind dst) noexcept {
  const bool from_device = is_device_side(src);
  const bool to_device = is_device_side(dst);
  if (from_device) return to_device ? copy_direction::d2d : copy_direction::d2h;
  return to_device ? copy_direction::h2d : copy_direction::h2h;
}

// Snapshot of the counters.
struct copy_totals {
  std::array<std::uint64_t, 4> bytes{};
  std::array<std::uint64_t, 4> calls{};
  [[nodiscard]] std::uint64_t bytes_in(copy_direction d) const noexcept { return bytes[static_cast<int>(d)]; }
  [[nodiscard]] std::uint64_t calls_in(copy_direction d) const noexcept { return calls[static_cast<int>(d)]; }
};

// Thread-safe counters (one set per context).
class copy_counters {
 public:
  void add(copy_direction d, std::uint64_t bytes) noexcept {
    bytes_[static_cast<int>(d)].fetch_add(bytes, std::memory_order_relaxed);
    calls_[static_cast<int>(d)].fetch_add(1, std::memory_order_relaxed);
  }
  [[nodiscard]] copy_totals totals() const noexcept;
  void reset() noexcept;

 private:
  std::array<std::atomic<std::uint64_t>, 4> bytes_{};
  std::array<std::atomic<std::uint64_t>, 4> calls_{};
};

// Strict mode refuses device-to-host copies larger than this (small metadata is allowed).
inline constexpr std::size_t strict_d2h_metadata_limit = 64 * 1024;

struct copy_rules {
  bool strict_no_d2h = false;
};

// Names the code that asked for a copy, for strict-mode messages.
struct copy_site {
  const char* file;
  int line;
  const char* what;
};
#define CBG_COPY_SITE(what) (::cbg::copy_site{__FILE__, __LINE__, (what)})

// Copies `bytes` from `src` to `dst`, counted in `counters`, refused per `rules`.
// Host-to-host copies run synchronously on the calling thread; others are enqueued on `stream`
// (cudaMemcpyAsync), so a device-to-pageable-host copy returns only once done, as CUDA specifies.
// Throws cbg::error(strict_d2h) naming `site`, or cbg::cuda_error.
void copy_bytes(void* dst, memory_kind dst_kind, const void* src, memory_kind src_kind, std::size_t bytes,
                cudaStream_t stream, copy_counters& counters, const copy_rules& rules, const copy_site& site);

// The 2-D form (cudaMemcpy2DAsync): `rows` rows of `row_bytes` each, at the given pitches in bytes.
void copy_bytes_2d(void* dst, std::size_t dst_pitch, memory_kind dst_kind, const void* src, std::size_t src_pitch,
                   memory_kind src_kind, std::size_t row_bytes, std::size_t rows, cudaStream_t stream,
                   copy_counters& counters, const copy_rules& rules, const copy_site& site);

// Whether strict mode is asked for by the environment (CBGPU_STRICT_NO_D2H=1); read at context
// creation, so changing the variable later affects new contexts only.
[[nodiscard]] bool strict_no_d2h_from_environment() noexcept;

}  // namespace cbg
