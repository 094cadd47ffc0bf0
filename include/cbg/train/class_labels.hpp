// SPDX-License-Identifier: Apache-2.0
// Labels given as `class_names` values become class indices (label == names[k] -> k), on the host
// or on the GPU with the same per-element lookup, so device labels never travel to the host.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/config.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::train {

// The class names sorted ascending, each with its class index (its position in class_names).
struct class_lookup {
  std::vector<double> sorted_names;
  std::vector<float> class_of;
};
class_lookup make_class_lookup(const std::vector<double>& class_names);

// Class index of `value` (a binary search of `count` sorted names), or -1 when it is not a name.
CBG_HOST_DEVICE inline float class_index_of(double value, const double* sorted_names, const float* class_of,
                                            int count) {
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (sorted_names[mid] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < count && sorted_names[lo] == value ? class_of[lo] : -1.0f;
}

// Writes the class index of every row of `labels` into `out` (host memory for host labels, device
// memory of the context's device for device labels). Returns the first row whose label is not a
// class name, or -1. The GPU version enqueues on ctx.stream() and reads back 8 bytes (blocking).
std::int64_t relabel_host(const column_view& labels, const class_lookup& lookup, float* out);
std::int64_t relabel_device(const context& ctx, const column_view& labels, const class_lookup& lookup, float* out);

}  // namespace cbg::train
