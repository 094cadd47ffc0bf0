// SPDX-License-Identifier: Apache-2.0
// Host reference of the value checks (the GPU version is kernels/data/value_checks.cu).
#include "cbg/data/value_checks.hpp"

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg {

value_counts count_values_host(const column_view& column) {
  CBG_EXPECTS(!is_device_side(column.memory), status::device, "count_values_host reads host or pinned memory only");
  value_counts counts;
  for (std::int64_t i = 0; i < column.size; ++i) {
    const unsigned bits = classify_value(column.value(i));
    counts.nan += bits & 1u;
    counts.infinite += (bits >> 1) & 1u;
    counts.negative += (bits >> 2) & 1u;
    counts.positive += (bits >> 3) & 1u;
  }
  return counts;
}

}  // namespace cbg
