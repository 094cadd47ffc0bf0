// SPDX-License-Identifier: Apache-2.0
// Float bits mapped so that unsigned order is float order (-0.0 just below +0.0), and back: the
// subset sort's keys (subsets.cu) and the subset's least and greatest values (subset_columns.cu).
#pragma once

#include <cstdint>

namespace cbg::quantize::detail {

__device__ inline std::uint32_t order_bits(float v) {
  const auto b = static_cast<std::uint32_t>(__float_as_int(v));
  return b ^ ((b >> 31) != 0 ? 0xffffffffu : 0x80000000u);
}
__device__ inline float from_order_bits(std::uint32_t k) {
  return __int_as_float(static_cast<int>(k ^ ((k >> 31) != 0 ? 0x80000000u : 0xffffffffu)));
}

}  // namespace cbg::quantize::detail
