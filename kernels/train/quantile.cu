// SPDX-License-Identifier: Apache-2.0
// The weighted quantile of the targets on the GPU (the start value of Quantile/MAE): targets sorted with
// their weights (CUB radix sort), the fixed-point cumulative weight, the first row reaching the goal.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "kernels/common/cccl.cuh"
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"
#include "cbg/memory/device_buffer.hpp"

namespace cbg::train::launch {

namespace {

__global__ void fixed_weights_kernel(const float* w, std::int64_t n, fixed_scale s, long long* out) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = to_fixed64(w == nullptr ? 1.0 : static_cast<double>(w[r]), s);
  }
}

__global__ void quantile_kernel(const long long* cum, std::int64_t n, fixed_scale s, double goal,
                                unsigned long long* first) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (from_fixed64(cum[r], s) >= goal) atomicMin(first, static_cast<unsigned long long>(r));
  }
}

// Temporary device memory of a launcher (at least one element, as the backend's buffers).
template <class T>
device_buffer<T> scratch(std::size_t count, cudaStream_t stream, const std::shared_ptr<device_memory_resource>& mr) {
  return device_buffer<T>(std::max<std::size_t>(count, 1), stream, mr);
}

}  // namespace

void sort_by_target(const float* targets, float* keys_out, const float* w_in, float* w_out, std::int64_t n,
                    cudaStream_t stream, const std::shared_ptr<device_memory_resource>& mr) {
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, targets, keys_out, w_in, w_out, n, 0, 32, stream));
  auto temp = scratch<unsigned char>(bytes, stream, mr);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, targets, keys_out, w_in, w_out, n, 0, 32, stream));
}

void cumulative_fixed_weights(const float* w, std::int64_t n, const fixed_scale& s, long long* cum, cudaStream_t stream,
                              const std::shared_ptr<device_memory_resource>& mr) {
  fixed_weights_kernel<<<grid_of(n), 256, 0, stream>>>(w, n, s, cum);
  CBG_CHECK_CUDA(stream);
  std::size_t scan_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, cum, cum, n, stream));
  auto scan_temp = scratch<unsigned char>(scan_bytes, stream, mr);
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(scan_temp.data(), scan_bytes, cum, cum, n, stream));
}

void first_reaching(const long long* cum, std::int64_t n, const fixed_scale& s, double goal, unsigned long long* first,
                    cudaStream_t stream) {
  quantile_kernel<<<grid_of(n), 256, 0, stream>>>(cum, n, s, goal, first);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
