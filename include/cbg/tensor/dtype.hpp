// SPDX-License-Identifier: Apache-2.0
// Element types the library reads, and loading any of them as double (shared host/device math).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "cbg/config.hpp"

namespace cbg {

enum class dtype : std::uint8_t {
  float16,
  float32,
  float64,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  boolean,
};

[[nodiscard]] constexpr std::size_t size_of(dtype t) noexcept {
  switch (t) {
    case dtype::int8:
    case dtype::uint8:
    case dtype::boolean:
      return 1;
    case dtype::float16:
    case dtype::int16:
    case dtype::uint16:
      return 2;
    case dtype::float32:
    case dtype::int32:
    case dtype::uint32:
      return 4;
    case dtype::float64:
    case dtype::int64:
    case dtype::uint64:
      return 8;
  }
  return 0;
}

[[nodiscard]] constexpr std::string_view name_of(dtype t) noexcept {
  switch (t) {
    case dtype::float16:
      return "float16";
    case dtype::float32:
      return "float32";
    case dtype::float64:
      return "float64";
    case dtype::int8:
      return "int8";
    case dtype::int16:
      return "int16";
    case dtype::int32:
      return "int32";
    case dtype::int64:
      return "int64";
    case dtype::uint8:
      return "uint8";
    case dtype::uint16:
      return "uint16";
    case dtype::uint32:
      return "uint32";
    case dtype::uint64:
      return "uint64";
    case dtype::boolean:
      return "bool";
  }
  return "?";
}

[[nodiscard]] constexpr bool is_floating(dtype t) noexcept {
  return t == dtype::float16 || t == dtype::float32 || t == dtype::float64;
}
[[nodiscard]] constexpr bool is_integral(dtype t) noexcept { return !is_floating(t) && t != dtype::boolean; }

// IEEE binary16 bits to float, exactly (subnormals, infinities and NaN included).
CBG_HOST_DEVICE inline float half_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);  // normal: rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise the mantissa into a normal float.
    std::uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float out;
  memcpy(&out, &bits, sizeof(out));
  return out;
}

// Element `index` of a column of type `t` starting at `base`, with `stride` elements between values,
// converted to double (exact for every type but 64-bit integers beyond 2^53).
CBG_HOST_DEVICE inline double load_as_double(const void* base, dtype t, std::int64_t index,
                                             std::int64_t stride) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(base);
  const std::int64_t offset = index * stride * static_cast<std::int64_t>(size_of(t));
  const unsigned char* p = bytes + offset;
  switch (t) {
    case dtype::float16:
      return half_bits_to_float(*reinterpret_cast<const std::uint16_t*>(p));
    case dtype::float32:
      return *reinterpret_cast<const float*>(p);
    case dtype::float64:
      return *reinterpret_cast<const double*>(p);
    case dtype::int8:
      return *reinterpret_cast<const std::int8_t*>(p);
    case dtype::int16:
      return *reinterpret_cast<const std::int16_t*>(p);
    case dtype::int32:
      return *reinterpret_cast<const std::int32_t*>(p);
    case dtype::int64:
      return static_cast<double>(*reinterpret_cast<const std::int64_t*>(p));
    case dtype::uint8:
      return *p;
    case dtype::uint16:
      return *reinterpret_cast<const std::uint16_t*>(p);
    case dtype::uint32:
      return *reinterpret_cast<const std::uint32_t*>(p);
    case dtype::uint64:
      return static_cast<double>(*reinterpret_cast<const std::uint64_t*>(p));
    case dtype::boolean:
      return *p != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

}  // namespace cbg
