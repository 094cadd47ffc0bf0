// SPDX-License-Identifier: Apache-2.0
// The natural log as CatBoost gets it from the C library: std::log on the host (the same libm as
// CatBoost's own process), and on a GPU the algorithm of glibc's log (2.28 and later, from Arm's
// optimized-routines, as its x86-64 FMA build evaluates it), which returns glibc's bits where
// CUDA's log() may differ by an ulp. A host test holds libm_log_portable equal to std::log (on an
// x86-64 host with FMA, where glibc runs that build).
#pragma once

#include <cmath>
#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/model/log_table.hpp"
#include "cbg/model/rounded.hpp"

namespace cbg::model {

inline constexpr double libm_log_table[256] = {CBG_LOG_TABLE_VALUES};  // {1/c, log c} per subinterval
#if defined(__CUDACC__)
[[maybe_unused]] static __device__ const double libm_log_table_device[256] = {CBG_LOG_TABLE_VALUES};
#endif

namespace libm_log_detail {
CBG_HOST_DEVICE inline double m(double a, double b) { return mul_rounded(a, b); }
CBG_HOST_DEVICE inline double f(double a, double b, double c) { return fused_multiply_add(a, b, c); }
}  // namespace libm_log_detail

// glibc's log for finite x > 0 (else CUDA's or the host's log, whose special values are the same),
// operation for operation as x86-64 glibc's FMA build evaluates it: every product that feeds one
// addition is fused with it (the compiler's contraction there), the others rounded on their own.
CBG_HOST_DEVICE inline double libm_log_portable(double x) {
  constexpr double ln2hi = CBG_LOG_LN2HI, ln2lo = CBG_LOG_LN2LO;
  constexpr double a[5] = {CBG_LOG_POLY};
  constexpr double b[11] = {CBG_LOG_POLY1};
  using libm_log_detail::f;
  using libm_log_detail::m;
  const std::uint64_t ix = bits_of(x);
  const std::uint64_t lo_bound = bits_of(1.0 - 0x1p-4), hi_bound = bits_of(1.0 + 0x1.09p-4);
  if (ix - lo_bound < hi_bound - lo_bound) {  // near 1: a polynomial in r = x - 1
    if (x == 1.0) return 0.0;
    const double r = sub_rounded(x, 1.0);
    const double r2 = m(r, r);
    const double r3 = m(r, r2);
    const double p3 = f(r3, b[10], f(r2, b[9], f(r, b[8], b[7])));
    const double p2 = f(r3, p3, f(r2, b[6], f(r, b[5], b[4])));
    const double p1 = f(r3, p2, f(r2, b[3], f(r, b[2], b[1])));
    // r split into rhi (27 bits) and rlo so that rhi * rhi is exact.
    const double w = m(r, 0x1p27);
    const double rhi = sub_rounded(f(r, 0x1p27, r), w);
    const double rlo = sub_rounded(r, rhi);
    const double t = m(rhi, rhi);
    const double hi = f(t, b[0], r);
    double lo = f(t, b[0], sub_rounded(r, hi));
    lo = f(m(b[0], rlo), add_rounded(rhi, r), lo);
    return add_rounded(f(r3, p1, lo), hi);
  }
  const auto top = static_cast<std::uint32_t>(ix >> 48);
  if (top - 0x0010u >= 0x7ff0u - 0x0010u) return std::log(x);  // subnormal, zero, negative, inf, NaN
  // x = 2^k z with z in [0x1.6p-1, 0x1.6p0) exact; c is near the centre of z's subinterval.
  constexpr std::uint64_t off = 0x3fe6000000000000ull;
  const std::uint64_t tmp = ix - off;
  const auto i = static_cast<int>((tmp >> (52 - 7)) % 128);
  const auto k = static_cast<std::int64_t>(tmp) >> 52;
  const std::uint64_t iz = ix - (tmp & (std::uint64_t{0xfff} << 52));
#if defined(__CUDA_ARCH__)
  const double invc = libm_log_table_device[2 * i], logc = libm_log_table_device[2 * i + 1];
#else
  const double invc = libm_log_table[2 * i], logc = libm_log_table[2 * i + 1];
#endif
  const double z = double_of(iz);
  const double r = f(z, invc, -1.0);
  const auto kd = static_cast<double>(k);
  const double w = f(kd, ln2hi, logc);
  const double hi = add_rounded(w, r);
  const double lo = f(kd, ln2lo, add_rounded(sub_rounded(w, hi), r));
  const double r2 = m(r, r);
  const double poly = f(r2, f(r, a[4], a[3]), f(r, a[2], a[1]));
  return add_rounded(f(m(r, r2), poly, f(r2, a[0], lo)), hi);
}

CBG_HOST_DEVICE inline double libm_log(double x) {
#if defined(__CUDA_ARCH__)
  return libm_log_portable(x);
#else
  return std::log(x);
#endif
}

}  // namespace cbg::model
