// SPDX-License-Identifier: Apache-2.0
// CatBoost's fast exponent (NCB::FastExpWithInfInplace: fmath's expd with a 2^11-entry table), which
// its Probability (softmax), Exponent and RMSEWithUncertainty outputs use instead of std::exp. The
// same operations in the same order, each rounded on its own, on the host and on a GPU, so the
// outputs equal CatBoost's bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/model/fast_exp_table.hpp"
#include "cbg/model/rounded.hpp"

namespace cbg::model {

inline constexpr std::uint64_t fast_exp_mantissas[2048] = {CBG_FAST_EXP_TABLE_VALUES};
#if defined(__CUDACC__)
[[maybe_unused]] static __device__ const std::uint64_t fast_exp_mantissas_device[2048] = {CBG_FAST_EXP_TABLE_VALUES};
#endif

namespace fast_exp_detail {

// fmath's constants: a = 2048 / log(2), ra = 1 / a, the polynomial's C2 and C3, the rounding shift 3 * 2^51.
inline constexpr double a = 0x1.71547652b82fep+11;
inline constexpr double ra = 0x1.62e42fefa39efp-12;
inline constexpr double c2 = 0x1.5555555bb5fdbp-3;
inline constexpr double c3 = 0x1.8000000600dd3p+1;
inline constexpr double shift = 6755399441055744.0;
inline constexpr std::uint64_t adj = (std::uint64_t{1} << 21) - (std::uint64_t{1} << 11);

// e^x = 2^(k/2048) (1 + p(t)) with k = round(x * 2048 / log 2) and t the remainder.
CBG_HOST_DEVICE inline double core(double x) {
  const double d = add_rounded(mul_rounded(x, a), shift);
  const std::uint64_t di = bits_of(d);
#if defined(__CUDA_ARCH__)
  const std::uint64_t mantissa = fast_exp_mantissas_device[di & 2047u];
#else
  const std::uint64_t mantissa = fast_exp_mantissas[di & 2047u];
#endif
  const double t = sub_rounded(mul_rounded(sub_rounded(d, shift), ra), x);
  const std::uint64_t u = (((di + adj) >> 11) << 52) | mantissa;
  const double y =
      add_rounded(sub_rounded(mul_rounded(mul_rounded(sub_rounded(c3, t), mul_rounded(t, t)), c2), t), 1.0);
  return mul_rounded(y, double_of(u));
}

}  // namespace fast_exp_detail

// fmath expd, the one-value form (the elements past the last whole AVX2 vector of an array).
CBG_HOST_DEVICE inline double fast_exp(double x) {
  if (x <= -708.39641853226408) return 0.0;
  if (x >= 709.78271289338397) return INFINITY;
  return fast_exp_detail::core(x);
}

// One lane of fmath expd_v's AVX2 loop: the argument clamped (min, then max, as _mm256_min_pd and
// _mm256_max_pd do: NaN becomes the upper bound) instead of the one-value form's 0 / inf.
CBG_HOST_DEVICE inline double fast_exp_vector_lane(double x) {
  x = x < 709.78272569338397 ? x : 709.78272569338397;
  x = x > -708.39641853226408 ? x : -708.39641853226408;
  return fast_exp_detail::core(x);
}

// Element i of FastExpWithInfInplace over an array of n (x86-64 with AVX2): whole groups of four go
// through the vector loop, the rest through the one-value form.
CBG_HOST_DEVICE inline double fast_exp_at(double x, int i, int n) {
  return i < (n & ~3) ? fast_exp_vector_lane(x) : fast_exp(x);
}

}  // namespace cbg::model
