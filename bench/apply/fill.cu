// SPDX-License-Identifier: Apache-2.0
// Input generators of cbgpu-apply-bench (apply_bench.cpp), on the device.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "bench/common/bench_util.hpp"

namespace {

// Roughly normal values (sum of four uniforms, centred), 2 % NaN.
__global__ void fill_floats(float* x, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = cbg_bench::mix64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + seed);
    const float u =
        static_cast<float>((h & 0xffff) + ((h >> 16) & 0xffff) + ((h >> 32) & 0xffff) + (h >> 48)) * (1.0f / 65536.0f);
    x[i] = (h % 50 == 0) ? __int_as_float(0x7fc00000) : (u - 2.0f) * 1.7f;
  }
}

__global__ void fill_ints(std::int64_t* x, std::int64_t n, std::uint64_t seed, int values) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    x[i] = static_cast<std::int64_t>(cbg_bench::mix64(static_cast<std::uint64_t>(i) + seed) %
                                     static_cast<std::uint64_t>(values));
  }
}

}  // namespace

void bench_fill_floats(float* x, std::int64_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_floats<<<1024, 256, 0, stream>>>(x, n, seed);
}

void bench_fill_ints(std::int64_t* x, std::int64_t n, std::uint64_t seed, int values, cudaStream_t stream) {
  fill_ints<<<1024, 256, 0, stream>>>(x, n, seed, values);
}
