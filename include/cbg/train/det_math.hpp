// SPDX-License-Identifier: Apache-2.0
// Deterministic elementary functions and random draws for the trainer, written once for the host
// reference (src/train/) and the kernels (kernels/train/).
//
// Why not std::exp / ::exp: CUDA's exp and log may differ from glibc's by an ulp, and one ulp in a
// gradient changes the fixed-point sums that decide splits and leaves, so the host and GPU trainers
// would drift apart. These versions use only +, -, *, / and exact bit manipulation, in a fixed
// order; the train kernels are compiled with --fmad=false and the host compiler does not contract
// in ISO C++ mode, so both sides compute the very same doubles.
//
// Random draws are counter based: draw(seed, stream, index) is a pure function, so the value a row
// gets does not depend on the launch geometry (CatBoost's GPU generator does; see
// catboost-training.md §3.2): the host and the GPU bootstrap the same rows the same way.
#pragma once

#include <cstdint>
#include <cstring>

#include "cbg/config.hpp"

namespace cbg::train {

// ---- bit helpers ------------------------------------------------------------------------------------
CBG_HOST_DEVICE inline std::uint64_t double_bits(double v) noexcept {
  std::uint64_t u;
  memcpy(&u, &v, sizeof(u));
  return u;
}
CBG_HOST_DEVICE inline double double_from_bits(std::uint64_t u) noexcept {
  double v;
  memcpy(&v, &u, sizeof(v));
  return v;
}
// 2^k as a double for -1022 <= k <= 1023 (exact).
CBG_HOST_DEVICE inline double exact_pow2(int k) noexcept {
  return double_from_bits(static_cast<std::uint64_t>(k + 1023) << 52);
}
CBG_HOST_DEVICE inline double det_inf() noexcept { return double_from_bits(0x7ff0000000000000ull); }
CBG_HOST_DEVICE inline double det_nan() noexcept { return double_from_bits(0x7ff8000000000000ull); }

// ln 2 split so that k * ln2_hi is exact for |k| < 2^11 (fdlibm's constants).
inline constexpr double ln2_hi = 6.93147180369123816490e-01;
inline constexpr double ln2_lo = 1.90821492927058770002e-10;
inline constexpr double inv_ln2 = 1.44269504088896338700e+00;

// e^x, within about 1 ulp; +inf above 709.78, 0 below -745.2, NaN for NaN.
CBG_HOST_DEVICE inline double det_exp(double x) noexcept {
  if (x != x) return x;
  if (x > 709.782712893384) return det_inf();
  if (x < -745.1332191019412) return 0.0;
  // x = k ln2 + r, |r| <= ln2 / 2 (plus rounding).
  double kd = x * inv_ln2;
  kd = kd >= 0 ? static_cast<double>(static_cast<std::int64_t>(kd + 0.5))
               : -static_cast<double>(static_cast<std::int64_t>(-kd + 0.5));
  const int k = static_cast<int>(kd);
  const double r = (x - kd * ln2_hi) - kd * ln2_lo;
  // Taylor series to r^14 / 14! (|r| < 0.35: the remainder is below 1e-17 relative).
  double p = 1.0 / 87178291200.0;
  p = p * r + 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // Scale by 2^k in at most two exact steps (the second rounds only for subnormal results).
  if (k > 1023) return p * exact_pow2(1023) * exact_pow2(k - 1023);
  if (k < -1021) return p * exact_pow2(k + 600) * exact_pow2(-600);
  return p * exact_pow2(k);
}

// log(m) for m in [sqrt(1/2), sqrt(2)]: 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716.
CBG_HOST_DEVICE inline double det_log_reduced(double s) noexcept {
  const double z = s * s;
  double p = 1.0 / 25.0;
  p = p * z + 1.0 / 23.0;
  p = p * z + 1.0 / 21.0;
  p = p * z + 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  p = p * z + 1.0;
  return 2.0 * s * p;
}

// Natural logarithm, within about 2 ulp: -inf at 0, NaN below 0, +inf at +inf.
CBG_HOST_DEVICE inline double det_log(double x) noexcept {
  if (x != x || x < 0) return det_nan();
  if (x == 0) return -det_inf();
  if (x == det_inf()) return x;
  int e = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: make it normal first
    x *= 18014398509481984.0;         // 2^54
    e = -54;
  }
  const std::uint64_t bits = double_bits(x);
  e += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  double m = double_from_bits((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double ed = static_cast<double>(e);
  return ed * ln2_hi + (ed * ln2_lo + det_log_reduced(s));
}

// log(1 + t) for t >= 0, accurate for tiny t too.
CBG_HOST_DEVICE inline double det_log1p(double t) noexcept {
  if (t <= 0.41421356237309503) return det_log_reduced(t / (2.0 + t));
  return det_log(1.0 + t);
}

// x^y for x > 0 (e^(y ln x)); x == 0 gives 0 for y > 0 and 1 for y == 0.
CBG_HOST_DEVICE inline double det_pow(double x, double y) noexcept {
  if (y == 0) return 1.0;
  if (x == 0) return y > 0 ? 0.0 : det_inf();
  return det_exp(y * det_log(x));
}

// 1 / (1 + e^-a), computed so that it never overflows.
CBG_HOST_DEVICE inline double det_sigmoid(double a) noexcept {
  if (a >= 0) return 1.0 / (1.0 + det_exp(-a));
  const double e = det_exp(a);
  return e / (1.0 + e);
}

// log(1 + e^a) without overflow (the softplus).
CBG_HOST_DEVICE inline double det_softplus(double a) noexcept {
  return a > 0 ? a + det_log1p(det_exp(-a)) : det_log1p(det_exp(a));
}

// ---- counter-based random draws ----------------------------------------------------------------------
// SplitMix64's finaliser: a bijective mix of 64 bits.
CBG_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The key of one stream of draws (e.g. the bootstrap of one iteration) under a seed.
CBG_HOST_DEVICE inline std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) noexcept {
  return mix64(mix64(seed) ^ (stream * 0xd1342543de82ef95ull + 0x632be59bd9b4e019ull));
}

// Draw `index` of a stream: 64 random bits.
CBG_HOST_DEVICE inline std::uint64_t draw_bits(std::uint64_t key, std::uint64_t index) noexcept {
  return mix64(key ^ mix64(index));
}

// Uniform in [0, 1) with 53 random bits.
CBG_HOST_DEVICE inline double draw_uniform(std::uint64_t key, std::uint64_t index) noexcept {
  return static_cast<double>(draw_bits(key, index) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace cbg::train
