// SPDX-License-Identifier: Apache-2.0
// AUC on the GPU from exact counts: scores sorted (CUB radix sort), ties grouped, negatives below each group
// by a scan, the terms summed as integers.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <algorithm>

#include "kernels/common/cccl.cuh"
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"
#include "cbg/memory/device_buffer.hpp"

namespace cbg::train::launch {

namespace {

__global__ void auc_keys_kernel(const double* approx, const float* target, std::int64_t n, double* keys,
                                std::uint32_t* positive) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double a = approx[r];
    keys[r] = a == 0.0 ? 0.0 : a;  // -0 and +0 tie, as on the host
    positive[r] = target[r] > 0.5f ? 1u : 0u;
  }
}

__global__ void auc_terms_kernel(const std::uint32_t* pos, const std::uint32_t* count, const std::uint64_t* neg_below,
                                 std::int64_t groups, std::uint64_t* term) {
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t neg = count[g] - pos[g];
    term[g] = static_cast<std::uint64_t>(pos[g]) * (2 * neg_below[g] + neg);
  }
}

__global__ void negatives_kernel(const std::uint32_t* pos, const std::uint32_t* count, std::int64_t groups,
                                 std::uint64_t* neg) {
  for (std::int64_t g = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    neg[g] = count[g] - pos[g];
  }
}

// Temporary device memory of a launcher (at least one element, as the backend's buffers).
template <class T>
device_buffer<T> scratch(std::size_t count, cudaStream_t stream, const std::shared_ptr<device_memory_resource>& mr) {
  return device_buffer<T>(std::max<std::size_t>(count, 1), stream, mr);
}

}  // namespace

void auc_counts(const double* approx, const float* target, std::int64_t n, std::uint64_t* result, cudaStream_t stream,
                const std::shared_ptr<device_memory_resource>& mr) {
  const auto un = static_cast<std::size_t>(n);
  const auto items = static_cast<int>(n);  // Encode counts items in an int
  auto keys = scratch<double>(un, stream, mr);
  auto keys_sorted = scratch<double>(un, stream, mr);
  auto pos = scratch<std::uint32_t>(un, stream, mr);
  auto pos_sorted = scratch<std::uint32_t>(un, stream, mr);
  auc_keys_kernel<<<grid_of(n), 256, 0, stream>>>(approx, target, n, keys.data(), pos.data());
  CBG_CHECK_CUDA(stream);
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), keys_sorted.data(), pos.data(),
                                               pos_sorted.data(), n, 0, 64, stream));
  std::size_t rle_bytes = 0, reduce_bytes = 0, scan_bytes = 0, sum_bytes = 0;
  auto unique = scratch<double>(un, stream, mr);
  auto counts = scratch<std::uint32_t>(un, stream, mr);
  auto group_pos = scratch<std::uint32_t>(un, stream, mr);
  auto groups = scratch<std::int64_t>(2, stream, mr);
  auto neg = scratch<std::uint64_t>(un, stream, mr);
  auto term = scratch<std::uint64_t>(un, stream, mr);
  CBG_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_sorted.data(), unique.data(), counts.data(),
                                                  groups.data(), items, stream));
  CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, keys_sorted.data(), unique.data(),
                                              pos_sorted.data(), group_pos.data(), groups.data() + 1,
                                              cuda::std::plus<std::uint32_t>{}, n, stream));
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, neg.data(), neg.data(), n, stream));
  std::size_t count_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, term.data(), result, n, stream));
  CBG_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, count_bytes, pos.data(), result + 1, n, stream));
  auto temp = scratch<unsigned char>(std::max({bytes, rle_bytes, reduce_bytes, scan_bytes, sum_bytes, count_bytes}),
                                     stream, mr);
  CBG_CUDA_TRY(cudaMemsetAsync(counts.data(), 0, un * sizeof(std::uint32_t), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(group_pos.data(), 0, un * sizeof(std::uint32_t), stream));
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), keys_sorted.data(), pos.data(),
                                               pos_sorted.data(), n, 0, 64, stream));
  CBG_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.data(), rle_bytes, keys_sorted.data(), unique.data(),
                                                  counts.data(), groups.data(), items, stream));
  CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp.data(), reduce_bytes, keys_sorted.data(), unique.data(),
                                              pos_sorted.data(), group_pos.data(), groups.data() + 1,
                                              cuda::std::plus<std::uint32_t>{}, n, stream));
  negatives_kernel<<<grid_of(n), 256, 0, stream>>>(group_pos.data(), counts.data(), n, neg.data());
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), scan_bytes, neg.data(), neg.data(), n, stream));
  auc_terms_kernel<<<grid_of(n), 256, 0, stream>>>(group_pos.data(), counts.data(), neg.data(), n, term.data());
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(cub::DeviceReduce::Sum(temp.data(), sum_bytes, term.data(), result, n, stream));
  CBG_CUDA_TRY(cub::DeviceReduce::Sum(temp.data(), count_bytes, pos.data(), result + 1, n, stream));
}

}  // namespace cbg::train::launch
