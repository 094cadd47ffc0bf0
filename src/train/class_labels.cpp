// SPDX-License-Identifier: Apache-2.0
#include "cbg/train/class_labels.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "kernels/train/class_labels.hpp"

#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::train {

class_lookup make_class_lookup(const std::vector<double>& class_names) {
  std::vector<std::size_t> order(class_names.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return class_names[a] < class_names[b]; });
  class_lookup l;
  for (const std::size_t k : order) {
    l.sorted_names.push_back(class_names[k]);
    l.class_of.push_back(static_cast<float>(k));
  }
  return l;
}

std::int64_t relabel_host(const column_view& labels, const class_lookup& lookup, float* out) {
  const int count = static_cast<int>(lookup.sorted_names.size());
  for (std::int64_t i = 0; i < labels.size; ++i) {
    const float k = class_index_of(labels.value(i), lookup.sorted_names.data(), lookup.class_of.data(), count);
    if (k < 0) return i;
    out[i] = k;
  }
  return -1;
}

std::int64_t relabel_device(const context& ctx, const column_view& labels, const class_lookup& lookup, float* out) {
  scoped_device guard(ctx.device());
  const cudaStream_t s = ctx.stream();
  const std::size_t count = lookup.sorted_names.size();
  device_buffer<double> names(count, s, ctx.resource());
  device_buffer<float> classes(count, s, ctx.resource());
  device_buffer<unsigned long long> first_bad(1, s, ctx.resource());
  const unsigned long long none = std::numeric_limits<unsigned long long>::max();
  const auto h2d = [&](void* dst, const void* src, std::size_t bytes) {
    copy_bytes(dst, memory_kind::device, src, memory_kind::host, bytes, s, ctx.copies(), ctx.rules(),
               CBG_COPY_SITE("trainer: class_names lookup"));
  };
  h2d(names.data(), lookup.sorted_names.data(), count * sizeof(double));
  h2d(classes.data(), lookup.class_of.data(), count * sizeof(float));
  h2d(first_bad.data(), &none, sizeof(none));
  launch::relabel(labels, names.data(), classes.data(), static_cast<int>(count), out, first_bad.data(), s);
  unsigned long long bad = none;
  copy_bytes(&bad, memory_kind::host, first_bad.data(), memory_kind::device, sizeof(bad), s, ctx.copies(), ctx.rules(),
             CBG_COPY_SITE("trainer: class_names first unknown row"));
  return bad == none ? -1 : static_cast<std::int64_t>(bad);
}

}  // namespace cbg::train
