// SPDX-License-Identifier: Apache-2.0
// Small host tables to the device as kernel parameters: one launch per param_chunk_bytes, each
// block copying its parameter bytes into place. Unlike a copy from pageable memory this needs no
// host buffer to stay alive and is legal inside CUDA graph capture.
#include <algorithm>
#include <cstring>

#include "kernels/apply/stages.hpp"
#include "kernels/apply/tuning_apply.hpp"

#include "cbg/core/cuda_check.hpp"

namespace cbg::apply::detail {

namespace {

struct param_chunk {
  unsigned char bytes[param_chunk_bytes];
};

__global__ void write_chunk(const param_chunk chunk, unsigned int n, unsigned char* dst) {
  for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = chunk.bytes[i];
}

}  // namespace

void upload_through_parameters(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  const auto* from = static_cast<const unsigned char*>(src);
  auto* to = static_cast<unsigned char*>(dst);
  for (std::size_t at = 0; at < bytes; at += param_chunk_bytes) {
    param_chunk chunk;
    const std::size_t n = std::min(param_chunk_bytes, bytes - at);
    std::memcpy(chunk.bytes, from + at, n);
    write_chunk<<<1, apply_block, 0, stream>>>(chunk, static_cast<unsigned int>(n), to + at);
    CBG_CUDA_TRY(cudaGetLastError());
  }
}

}  // namespace cbg::apply::detail
