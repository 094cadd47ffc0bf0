// SPDX-License-Identifier: Apache-2.0
// The strided gather of sharding (kernels/dist/gather.hpp).
#include "kernels/dist/gather.hpp"

#include <algorithm>
#include <cstdint>

#include "cbg/core/cuda_check.hpp"

namespace cbg::dist {

namespace {

template <class T>
__global__ void gather_kernel(const T* src, std::int64_t stride, std::int64_t n, T* dst) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i * stride];
  }
}

template <class T>
__global__ void gather_rows_kernel(const T* src, std::int64_t stride, const std::int64_t* rows, std::int64_t n,
                                   T* dst) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[rows[i] * stride];
  }
}

template <class T>
void launch_rows(const void* src, std::int64_t stride, const std::int64_t* rows, std::int64_t n, void* dst,
                 cudaStream_t stream) {
  const int blocks = static_cast<int>(std::clamp<std::int64_t>((n + 255) / 256, 1, 4096));
  gather_rows_kernel<<<blocks, 256, 0, stream>>>(static_cast<const T*>(src), stride, rows, n, static_cast<T*>(dst));
}

}  // namespace

void gather_rows(const void* src, std::int64_t stride, const std::int64_t* rows, std::size_t elem, std::int64_t n,
                 void* dst, cudaStream_t stream) {
  if (n == 0) return;
  switch (elem) {
    case 1:
      launch_rows<std::uint8_t>(src, stride, rows, n, dst, stream);
      break;
    case 2:
      launch_rows<std::uint16_t>(src, stride, rows, n, dst, stream);
      break;
    case 4:
      launch_rows<std::uint32_t>(src, stride, rows, n, dst, stream);
      break;
    default:
      launch_rows<std::uint64_t>(src, stride, rows, n, dst, stream);
      break;
  }
  CBG_CHECK_CUDA(stream);
}

// n values of `elem` bytes, `stride` elements apart from `src`, made contiguous at `dst` (same device).
void gather(const void* src, std::int64_t stride, std::size_t elem, std::int64_t n, void* dst, cudaStream_t stream) {
  if (n == 0) return;
  const int blocks = static_cast<int>(std::clamp<std::int64_t>((n + 255) / 256, 1, 4096));
  switch (elem) {
    case 1:
      gather_kernel<<<blocks, 256, 0, stream>>>(static_cast<const std::uint8_t*>(src), stride, n,
                                                static_cast<std::uint8_t*>(dst));
      break;
    case 2:
      gather_kernel<<<blocks, 256, 0, stream>>>(static_cast<const std::uint16_t*>(src), stride, n,
                                                static_cast<std::uint16_t*>(dst));
      break;
    case 4:
      gather_kernel<<<blocks, 256, 0, stream>>>(static_cast<const std::uint32_t*>(src), stride, n,
                                                static_cast<std::uint32_t*>(dst));
      break;
    default:
      gather_kernel<<<blocks, 256, 0, stream>>>(static_cast<const std::uint64_t*>(src), stride, n,
                                                static_cast<std::uint64_t*>(dst));
      break;
  }
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::dist
