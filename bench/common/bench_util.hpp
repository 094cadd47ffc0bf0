// SPDX-License-Identifier: Apache-2.0
// Shared by the benchmark programs: a CUDA error check that ends the program (benchmarks are
// programs, not library code) and the 64-bit mixer their data generators use.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

#include "cbg/config.hpp"

#define BENCH_CHECK(call)                                                              \
  do {                                                                                 \
    const cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

namespace cbg_bench {

// SplitMix64's finaliser: a well-spread 64-bit hash of x, the same on host and device.
CBG_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace cbg_bench
