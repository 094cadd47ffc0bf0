// SPDX-License-Identifier: Apache-2.0
// Sizes computed from caller input (shapes, strides, item sizes, counts, lengths, offsets) go through
// these: a product or sum that does not fit in its type is refused with CBG_ERR_SHAPE naming what was
// being sized, instead of wrapping to a small (or zero) size that an allocation or a loop then uses.
#pragma once

#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg {

template <class T>
[[nodiscard]] T checked_mul(T a, T b, std::string_view what) {
  static_assert(std::is_integral_v<T>);
  T r{};
  CBG_EXPECTS(!__builtin_mul_overflow(a, b, &r), status::shape,
              fmt::format("{}: the size {} x {} does not fit in {} bits", what, a, b, 8 * sizeof(T)));
  return r;
}

template <class T>
[[nodiscard]] T checked_add(T a, T b, std::string_view what) {
  static_assert(std::is_integral_v<T>);
  T r{};
  CBG_EXPECTS(!__builtin_add_overflow(a, b, &r), status::shape,
              fmt::format("{}: the size {} + {} does not fit in {} bits", what, a, b, 8 * sizeof(T)));
  return r;
}

}  // namespace cbg
