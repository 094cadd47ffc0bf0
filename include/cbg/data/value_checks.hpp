// SPDX-License-Identifier: Apache-2.0
// Counting values that are invalid for their role (NaN/inf labels, negative or all-zero weights).
// The per-element rule is here once; the host reference and the GPU kernel both use it.
#pragma once

#include <cmath>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cbg/config.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg {

struct value_counts {
  std::uint64_t nan = 0;
  std::uint64_t infinite = 0;
  std::uint64_t negative = 0;  // finite values below zero (-0.0 is not negative)
  std::uint64_t positive = 0;  // finite values above zero

  friend bool operator==(const value_counts&, const value_counts&) = default;
};

// The per-element rule: which counters value `v` adds to, as bits (1: nan, 2: infinite, 4: negative,
// 8: positive).
CBG_HOST_DEVICE inline unsigned classify_value(double v) noexcept {
  if (v != v) return 1u;
  if (v == INFINITY || v == -INFINITY) return 2u;
  return v < 0.0 ? 4u : v > 0.0 ? 8u : 0u;
}

// Host reference: reads the column on the CPU (host or pinned memory only).
value_counts count_values_host(const column_view& column);

// GPU: reads the column on the context's device (device, managed or pinned memory) and returns the
// counts; blocks, and copies back only the 32-byte result (accounted as a device-to-host copy).
value_counts count_values_device(const column_view& column, const context& ctx);

}  // namespace cbg
