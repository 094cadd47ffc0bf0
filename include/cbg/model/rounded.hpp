// SPDX-License-Identifier: Apache-2.0
// Double arithmetic rounded operation by operation, the same on the host and on a GPU: nvcc would
// otherwise fuse `a * b + c` into an FMA, which rounds once and changes the last bit against the
// host (which never fuses: ISO C++ mode, x86-64). Also the bit casts both sides need.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cbg/config.hpp"

namespace cbg::model {

CBG_HOST_DEVICE inline double mul_rounded(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CBG_HOST_DEVICE inline double add_rounded(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CBG_HOST_DEVICE inline double sub_rounded(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
CBG_HOST_DEVICE inline std::uint64_t bits_of(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}
CBG_HOST_DEVICE inline double double_of(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}

}  // namespace cbg::model
