// SPDX-License-Identifier: Apache-2.0
// Deterministic reductions of the boosting loop, defined once so that the host reference and the
// GPU produce the same bits (design rule 6):
//
//  * Fixed-point sums (leaf sums of derivatives and weights): every value becomes a 64-bit integer
//    at a power-of-two scale chosen from the exact max |value| and the row count, so a sum of any
//    subset cannot overflow; integer sums do not depend on the order (integer atomics on the GPU).
//  * Ordered sums (metrics, the score noise's spread, line-search function values): doubles added
//    in one fixed order that a GPU block reproduces: rows fall into tiles of 4096; lane l of a tile
//    (256 lanes) adds rows l, l + 256, ..., l + 15 * 256 in that order; the 256 lane sums are
//    folded pairwise (lane i += lane i + s for s = 128, 64, ..., 1); the tile sums are then summed
//    the same way, until one value is left.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/train/det_math.hpp"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace cbg::train {

// ---- fixed point ------------------------------------------------------------------------------------
// Scale 2^k for values with |v| <= max_abs summed over at most n rows: |sum| < 2^61, with room for
// the rounding of each value. max_abs must be finite (0: any scale works; 1 is used).
struct fixed_scale {
  double to_fixed = 1.0;    // 2^k
  double from_fixed = 1.0;  // 2^-k
};

CBG_HOST_DEVICE inline fixed_scale fixed_scale_for(double max_abs, std::int64_t n) noexcept {
  fixed_scale s;
  if (!(max_abs > 0) || n <= 0) return s;
  // max_abs < 2^(E + 1) where E is its binary exponent; n < 2^b.
  const int exponent = static_cast<int>((double_bits(max_abs) >> 52) & 0x7ff) - 1023;
  int b = 0;
  while (b < 63 && (std::int64_t{1} << b) <= n) ++b;
  int k = 60 - b - (exponent + 1);
  if (k > 1000) k = 1000;
  if (k < -1000) k = -1000;
  s.to_fixed = exact_pow2(k);
  s.from_fixed = exact_pow2(-k);
  return s;
}

// v * 2^k rounded to the nearest integer, ties to even (as __double2ll_rn).
CBG_HOST_DEVICE inline std::int64_t to_fixed64(double v, const fixed_scale& s) noexcept {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(v * s.to_fixed);
#else
  return static_cast<std::int64_t>(std::nearbyint(v * s.to_fixed));
#endif
}

CBG_HOST_DEVICE inline double from_fixed64(std::int64_t sum, const fixed_scale& s) noexcept {
  return static_cast<double>(sum) * s.from_fixed;
}

// |v| of a float as the ordered bits an integer max can combine (non-negative floats order like
// their bit patterns); NaN becomes +inf's pattern so that it cannot hide.
CBG_HOST_DEVICE inline std::uint32_t abs_float_key(float v) noexcept {
  std::uint32_t u;
  memcpy(&u, &v, sizeof(u));
  u &= 0x7fffffffu;
  return u > 0x7f800000u ? 0x7f800000u : u;
}
CBG_HOST_DEVICE inline float float_of_key(std::uint32_t key) noexcept {
  float v;
  memcpy(&v, &key, sizeof(v));
  return v;
}

// ---- ordered sums -----------------------------------------------------------------------------------
inline constexpr int sum_lanes = 256;
inline constexpr int sum_rows_per_lane = 16;
inline constexpr std::int64_t sum_tile = std::int64_t{sum_lanes} * sum_rows_per_lane;

[[nodiscard]] constexpr std::int64_t sum_tiles_of(std::int64_t n) noexcept { return (n + sum_tile - 1) / sum_tile; }

// One level of the order above on the host: the C sums of each tile of n rows.
template <int C, class ValueFn>
std::vector<double> tile_sums_host(std::int64_t n, ValueFn&& value) {
  const std::int64_t tiles = sum_tiles_of(n);
  std::vector<double> out(static_cast<std::size_t>(tiles * C), 0.0);
  std::vector<double> lane(static_cast<std::size_t>(sum_lanes * C));
  double v[C];
  for (std::int64_t t = 0; t < tiles; ++t) {
    for (int l = 0; l < sum_lanes; ++l) {
      double* acc = lane.data() + l * C;
      for (int c = 0; c < C; ++c) acc[c] = 0.0;
      for (int j = 0; j < sum_rows_per_lane; ++j) {
        const std::int64_t r = t * sum_tile + std::int64_t{j} * sum_lanes + l;
        if (r >= n) break;
        value(r, v);
        for (int c = 0; c < C; ++c) acc[c] += v[c];
      }
    }
    for (int s = sum_lanes / 2; s > 0; s /= 2) {
      for (int l = 0; l < s; ++l) {
        for (int c = 0; c < C; ++c) {
          lane[static_cast<std::size_t>(l * C + c)] += lane[static_cast<std::size_t>((l + s) * C + c)];
        }
      }
    }
    for (int c = 0; c < C; ++c) out[static_cast<std::size_t>(t * C + c)] = lane[static_cast<std::size_t>(c)];
  }
  return out;
}

// The host side of the order above for C channels at once: value(row, out) writes C doubles.
// Writes the C sums to `out` (zeros for n == 0).
template <int C, class ValueFn>
void ordered_sum_host(std::int64_t n, ValueFn&& value, double* out) {
  std::vector<double> level = tile_sums_host<C>(n, value);
  std::int64_t count = sum_tiles_of(n);
  // The tile sums, summed the same way until one is left.
  while (count > 1) {
    level = tile_sums_host<C>(count, [&level](std::int64_t r, double* o) {
      for (int c = 0; c < C; ++c) o[c] = level[static_cast<std::size_t>(r * C + c)];
    });
    count = sum_tiles_of(count);
  }
  for (int c = 0; c < C; ++c) out[c] = count == 1 ? level[static_cast<std::size_t>(c)] : 0.0;
}

}  // namespace cbg::train
