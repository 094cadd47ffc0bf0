// SPDX-License-Identifier: Apache-2.0
// One rank of a sharded training: what its GPU boosting backend (src/train/device_backend.cpp)
// needs to agree with the other ranks, and the gathers it uses (src/dist/rank_link.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cbg/dist/dist.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::dist {

struct rank_inputs {
  reducer* red = nullptr;  // borrowed
  row_split learn;         // learn rows per rank
  row_split eval;          // eval rows per rank (empty without an eval set)
  // This rank's bins under the borders of the whole learn set (moved from by the backend); null:
  // the backend quantizes its learn pool (which must then be the whole set: one rank).
  quantize::device_quantized* quantized = nullptr;
};

class rank_link {
 public:
  rank_link(const rank_inputs& in, const context& ctx);

  [[nodiscard]] reducer& red() const noexcept { return *in_.red; }
  [[nodiscard]] int rank() const noexcept { return in_.red->rank(); }
  [[nodiscard]] const row_split& split(bool eval) const noexcept { return eval ? in_.eval : in_.learn; }
  [[nodiscard]] std::int64_t first_row(bool eval) const noexcept { return split(eval).first(rank()); }
  [[nodiscard]] std::int64_t total_rows(bool eval) const noexcept { return split(eval).total(); }

  // The tile sums (C doubles per tile of reduce_math.hpp) of every rank, in row order, into `out`
  // (grown as needed); `local` holds this rank's. Returns the number of tiles gathered.
  std::int64_t gather_tiles(const double* local, int C, bool eval, device_buffer<double>& out);
  // Every rank's values of a per-row array (`elem` bytes per row) in row order, into `out`
  // (total_rows(eval) * elem bytes).
  void gather_rows(const void* local, std::size_t elem, bool eval, void* out);
  // Blocks of bytes[r] bytes from every rank r, in rank order, into `out`; `local` holds this rank's
  // local_bytes (== bytes[rank()]).
  void gather_blocks(const void* local, std::size_t local_bytes, const std::vector<std::size_t>& bytes, void* out);

 private:
  const context& ctx_;
  rank_inputs in_;
  device_buffer<unsigned char> send_, recv_;
};

}  // namespace cbg::dist
