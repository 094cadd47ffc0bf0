// SPDX-License-Identifier: Apache-2.0
// The exponential as CatBoost gets it from the C library (its sigmoid: Probability of Logloss and
// of one-vs-all losses, LogProbability): std::exp on the host (the same libm as CatBoost's own
// process), and on a GPU the algorithm of glibc's exp (2.28 and later, from Arm's
// optimized-routines, as its x86-64 FMA build evaluates it), which returns glibc's bits where
// CUDA's exp() may differ by an ulp. A host test holds libm_exp_portable equal to std::exp (on an
// x86-64 host with FMA, where glibc runs that build).
#pragma once

#include <cmath>
#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/model/exp_table.hpp"
#include "cbg/model/rounded.hpp"

namespace cbg::model {

// {bits of tail, bits of 2^(k/128)} for k = 0..127.
inline constexpr std::uint64_t libm_exp_table[256] = {CBG_EXP_TABLE_VALUES};
#if defined(__CUDACC__)
[[maybe_unused]] static __device__ const std::uint64_t libm_exp_table_device[256] = {CBG_EXP_TABLE_VALUES};
#endif

// glibc's exp, operation for operation as its x86-64 FMA build evaluates it: products that feed
// one addition are fused with it, except in the underflow branch (there the product has two uses).
CBG_HOST_DEVICE inline double libm_exp_portable(double x) {
  constexpr double inv_ln2_n = CBG_EXP_INVLN2N, neg_ln2_hi_n = CBG_EXP_NEGLN2HIN, neg_ln2_lo_n = CBG_EXP_NEGLN2LON;
  constexpr double shift = CBG_EXP_SHIFT;
  constexpr double c[4] = {CBG_EXP_POLY};
  std::uint32_t abstop = static_cast<std::uint32_t>(bits_of(x) >> 52) & 0x7ffu;
  const std::uint32_t tiny = 0x3c9u;  // top12(0x1p-54)
  const std::uint32_t big = 0x408u;   // top12(512.0)
  if (abstop - tiny >= big - tiny) {
    if (abstop - tiny >= 0x80000000u) return add_rounded(1.0, x);  // |x| < 2^-54
    if (abstop >= 0x409u) {                                        // |x| >= 1024, inf, NaN
      if (x == -INFINITY) return 0.0;
      if (abstop >= 0x7ffu) return add_rounded(1.0, x);
      return x < 0 ? 0.0 : INFINITY;
    }
    abstop = 0;  // 512 <= |x| < 1024: scaled below
  }
  // x = k ln2/128 + r, exp(x) = 2^(k/128) exp(r).
  double kd = fused_multiply_add(inv_ln2_n, x, shift);
  const std::uint64_t ki = bits_of(kd);
  kd = sub_rounded(kd, shift);
  const double r = fused_multiply_add(kd, neg_ln2_lo_n, fused_multiply_add(kd, neg_ln2_hi_n, x));
  const auto idx = static_cast<int>(2 * (ki % 128));
  const std::uint64_t top = ki << (52 - 7);
#if defined(__CUDA_ARCH__)
  const double tail = double_of(libm_exp_table_device[idx]);
  std::uint64_t sbits = libm_exp_table_device[idx + 1] + top;
#else
  const double tail = double_of(libm_exp_table[idx]);
  std::uint64_t sbits = libm_exp_table[idx + 1] + top;
#endif
  const double r2 = mul_rounded(r, r);
  const double tmp =
      fused_multiply_add(mul_rounded(r2, r2), fused_multiply_add(r, c[3], c[2]),
                         fused_multiply_add(r2, fused_multiply_add(r, c[1], c[0]), add_rounded(tail, r)));
  if (abstop == 0) {
    if ((ki & 0x80000000u) == 0) {  // k > 0: the scale's exponent may have overflowed
      sbits -= std::uint64_t{1009} << 52;
      const double scale = double_of(sbits);
      return mul_rounded(0x1p1009, fused_multiply_add(scale, tmp, scale));
    }
    sbits += std::uint64_t{1022} << 52;  // k < 0: care in the subnormal range
    const double scale = double_of(sbits);
    double y = add_rounded(scale, mul_rounded(scale, tmp));
    if (y < 1.0) {
      double lo = add_rounded(sub_rounded(scale, y), mul_rounded(scale, tmp));
      const double hi = add_rounded(1.0, y);
      lo = add_rounded(add_rounded(sub_rounded(1.0, hi), y), lo);
      y = sub_rounded(add_rounded(hi, lo), 1.0);
      if (y == 0.0) y = 0.0;
    }
    return mul_rounded(0x1p-1022, y);
  }
  const double scale = double_of(sbits);
  return fused_multiply_add(scale, tmp, scale);
}

CBG_HOST_DEVICE inline double libm_exp(double x) {
#if defined(__CUDA_ARCH__)
  return libm_exp_portable(x);
#else
  return std::exp(x);
#endif
}

}  // namespace cbg::model
