// SPDX-License-Identifier: Apache-2.0
// The bin of a value found in an implicit search tree of the borders (Eytzinger order), for the GPU
// binarizer: node i (1..255) has children 2i and 2i + 1, and tree level d is the run of nodes
// [2^d, 2^(d+1)). Threads of a warp that look up different values read one level at a time; the
// first five levels lie in 31 consecutive shared-memory words, so they cost one access each,
// where a binary search over the sorted borders probes positions a power of two apart, which
// fall in the same bank (8-way conflicts from the fourth step on).
//
// The result equals bin_of (quantize_math.hpp) for borders that are sorted ascending and hold no
// NaN, which every border list the quantizer makes is (midpoints of distinct sorted values, and
// +-FLT_MAX): both count the borders strictly below the value. Unused nodes hold +inf, which no
// value is below.
#pragma once

#include <cstdint>

#include "cbg/quantize/quantize_math.hpp"

namespace cbg::quantize {

inline constexpr int tree_levels = 8;                // 2^8 - 1 = 255 = max_border_count nodes
inline constexpr int tree_slots = 1 << tree_levels;  // slot 0 is unused

// Position in the sorted borders of tree node i (1 <= i < tree_slots).
CBG_HOST_DEVICE constexpr int tree_node_position(int i) noexcept {
  int depth = 0;
  while ((i >> (depth + 1)) != 0) ++depth;
  const int index_in_level = i - (1 << depth);
  return (2 * index_in_level + 1) * (1 << (tree_levels - 1 - depth)) - 1;
}

// Tree slot i for `count` sorted borders: the border at its position, else +inf (slot 0: +inf).
CBG_HOST_DEVICE inline float tree_slot_value(const float* borders, int count, int i) noexcept {
  const int pos = i == 0 ? count : tree_node_position(i);
  return pos < count ? borders[pos] : static_cast<float>(INFINITY);
}

// The number of tree values strictly below v (v not NaN): eight steps, no branch.
CBG_HOST_DEVICE inline std::uint32_t tree_count_below(const float* tree, float v) noexcept {
  std::uint32_t i = 1;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int level = 0; level < tree_levels; ++level) i = 2 * i + (tree[i] < v ? 1u : 0u);
  return i - static_cast<std::uint32_t>(tree_slots);
}

// bin_of over the tree of the same borders.
CBG_HOST_DEVICE inline std::uint32_t bin_of_tree(float v, const float* tree, int count, nan_mode mode) noexcept {
  if (is_nan(v)) return mode == nan_mode::max ? static_cast<std::uint32_t>(count) : 0u;
  return tree_count_below(tree, v);
}

}  // namespace cbg::quantize
