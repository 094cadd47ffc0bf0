// SPDX-License-Identifier: Apache-2.0
#include "cbg/train/class_labels.hpp"

#include <algorithm>
#include <numeric>

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

}  // namespace cbg::train
