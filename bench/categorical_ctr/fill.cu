// SPDX-License-Identifier: Apache-2.0
// cbgpu-ctr-bench's data: skewed integer categorical columns and a binary label, on the GPU.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "bench/common/bench_util.hpp"

namespace {

// Column c: values 0..card-1, skewed (the square of a uniform draw puts more rows on small values).
__global__ void fill(std::int32_t* x, std::int64_t rows, int c, std::int32_t card, float* label) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = cbg_bench::mix64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 977 * (c + 1));
    const double u = static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
    x[i] = static_cast<std::int32_t>(u * u * card);
    if (c == 0) label[i] = (h & 0x100) != 0 ? 1.f : 0.f;
  }
}

}  // namespace

void ctr_bench_fill(std::int32_t* x, std::int64_t rows, int c, std::int32_t card, float* label) {
  fill<<<1024, 256>>>(x, rows, c, card, label);
}
