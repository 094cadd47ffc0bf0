// SPDX-License-Identifier: Apache-2.0
// Reading model inputs from pool columns and writing outputs, per element, shared by the GPU
// evaluator's kernels and its host path (a CPU context): float features as float32, categorical
// features as CatBoost's hash of their decimal text, outputs in the caller's dtype.
#pragma once

#include <cstdint>
#include <cstring>

#include "cbg/categorical/cat_hash.hpp"
#include "cbg/config.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/tensor/dtype.hpp"

namespace cbg::apply {

// Element `i` of a numeric column as float32, converted straight from its dtype (as NumPy's
// astype(np.float32), which CatBoost applies to numeric input): one rounding, also for int64.
CBG_HOST_DEVICE inline float load_as_float(const column_view& c, std::int64_t i) noexcept {
  const unsigned char* p =
      static_cast<const unsigned char*>(c.data) + i * c.stride * static_cast<std::int64_t>(size_of(c.type));
  switch (c.type) {
    case dtype::float16:
      return half_bits_to_float(*reinterpret_cast<const std::uint16_t*>(p));
    case dtype::float32:
      return *reinterpret_cast<const float*>(p);
    case dtype::float64:
      return static_cast<float>(*reinterpret_cast<const double*>(p));
    case dtype::int8:
      return static_cast<float>(*reinterpret_cast<const std::int8_t*>(p));
    case dtype::int16:
      return static_cast<float>(*reinterpret_cast<const std::int16_t*>(p));
    case dtype::int32:
      return static_cast<float>(*reinterpret_cast<const std::int32_t*>(p));
    case dtype::int64:
      return static_cast<float>(*reinterpret_cast<const std::int64_t*>(p));
    case dtype::uint8:
      return static_cast<float>(*p);
    case dtype::uint16:
      return static_cast<float>(*reinterpret_cast<const std::uint16_t*>(p));
    case dtype::uint32:
      return static_cast<float>(*reinterpret_cast<const std::uint32_t*>(p));
    case dtype::uint64:
      return static_cast<float>(*reinterpret_cast<const std::uint64_t*>(p));
    case dtype::boolean:
      return *p != 0 ? 1.0f : 0.0f;
  }
  return 0.0f;
}

// Whether a column of this dtype can be a categorical feature (hashed as decimal text).
[[nodiscard]] constexpr bool is_categorical_dtype(dtype t) noexcept { return is_integral(t) || t == dtype::boolean; }

// CatBoost's hash of element `i` of a categorical column: the decimal text of an integer (signed
// as int64, unsigned as uint64), or the stored hash of a column the pool hashed from strings
// (categorical/cat_hash.hpp holds the one definition).
CBG_HOST_DEVICE inline std::uint32_t load_cat_hash(const column_view& c, std::int64_t i) noexcept {
  return categorical::cat_hash_at(c, i);
}

// Whether predictions (float32/float64) or leaf indexes (those and the 32/64-bit integers) can be
// written as this dtype.
[[nodiscard]] constexpr bool is_output_dtype(dtype t, bool leaf_indexes) noexcept {
  if (t == dtype::float32 || t == dtype::float64) return true;
  return leaf_indexes && (t == dtype::int32 || t == dtype::uint32 || t == dtype::int64 || t == dtype::uint64);
}

// Writes `v` as element `offset` (in elements) of an output of dtype `t` (is_output_dtype).
CBG_HOST_DEVICE inline void store_output(void* base, dtype t, std::int64_t offset, double v) noexcept {
  switch (t) {
    case dtype::float32:
      static_cast<float*>(base)[offset] = static_cast<float>(v);
      break;
    case dtype::int32:
      static_cast<std::int32_t*>(base)[offset] = static_cast<std::int32_t>(v);
      break;
    case dtype::uint32:
      static_cast<std::uint32_t*>(base)[offset] = static_cast<std::uint32_t>(v);
      break;
    case dtype::int64:
      static_cast<std::int64_t*>(base)[offset] = static_cast<std::int64_t>(v);
      break;
    case dtype::uint64:
      static_cast<std::uint64_t*>(base)[offset] = static_cast<std::uint64_t>(v);
      break;
    default:
      static_cast<double*>(base)[offset] = v;
      break;
  }
}

}  // namespace cbg::apply
