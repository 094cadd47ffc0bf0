// SPDX-License-Identifier: Apache-2.0
// Exact leaves (MAE/Quantile) on the GPU: rows sorted by residual, then (stably) by leaf; fixed-point
// weight sums per leaf segment and the first row reaching alpha of its leaf's weight.
#include <cub/device/device_radix_sort.cuh>
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

// Rows sorted by residual, then (stably) by leaf; fixed-point weight sums per leaf segment.
__global__ void exact_keys_kernel(const double* approx, const float* target, const float* w, const std::uint32_t* leaf,
                                  std::int64_t n, unsigned long long* key, uint2* value) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    key[r] = order_key(exact_residual(target[r], approx[r]));
    value[r] = make_uint2(leaf[r], __float_as_uint(w == nullptr ? 1.0f : w[r]));
  }
}

__global__ void exact_regroup_kernel(const unsigned long long* key, const uint2* value, std::int64_t n,
                                     std::uint32_t* leaf, ulonglong2* residual_weight) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    leaf[i] = value[i].x;
    residual_weight[i] = make_ulonglong2(key[i], value[i].y);
  }
}

__global__ void exact_fixed_kernel(const ulonglong2* residual_weight, std::int64_t n, fixed_scale s, long long* out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = to_fixed64(static_cast<double>(__uint_as_float(static_cast<unsigned>(residual_weight[i].y))), s);
  }
}

// Per leaf: the segment's total (its last cumulative sum) and last index.
__global__ void exact_totals_kernel(const std::uint32_t* leaf, const long long* cum, std::int64_t n, long long* total,
                                    unsigned long long* last) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (i + 1 == n || leaf[i + 1] != leaf[i]) {
      total[leaf[i]] = cum[i];
      last[leaf[i]] = static_cast<unsigned long long>(i);
    }
  }
}

__global__ void exact_first_kernel(const std::uint32_t* leaf, const long long* cum, const long long* total,
                                   std::int64_t n, fixed_scale s, double alpha, unsigned long long* first) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t l = leaf[i];
    if (from_fixed64(cum[i], s) >= alpha * from_fixed64(total[l], s))
      atomicMin(&first[l], static_cast<unsigned long long>(i));
  }
}

// out: [leaves] values then [leaves] weights.
__global__ void exact_values_kernel(const ulonglong2* residual_weight, const long long* total,
                                    const unsigned long long* first, const unsigned long long* last, int leaves,
                                    fixed_scale s, double* out) {
  for (int l = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); l < leaves;
       l += static_cast<int>(gridDim.x * blockDim.x)) {
    double value = 0.0;
    if (last[l] != ~0ull) value = key_value(residual_weight[first[l] != ~0ull ? first[l] : last[l]].x);
    out[l] = value;
    out[leaves + l] = from_fixed64(total[l], s);
  }
}

// Temporary device memory of a launcher (at least one element, as the backend's buffers).
template <class T>
device_buffer<T> scratch(std::size_t count, cudaStream_t stream, const std::shared_ptr<device_memory_resource>& mr) {
  return device_buffer<T>(std::max<std::size_t>(count, 1), stream, mr);
}

}  // namespace

void exact_leaves(const double* approx, const float* target, const float* w, const std::uint32_t* leaf_in,
                  std::int64_t n, int leaves, double alpha, const fixed_scale& ws, double* out, cudaStream_t stream,
                  const std::shared_ptr<device_memory_resource>& mr) {
  const auto un = static_cast<std::size_t>(n);
  auto key = scratch<unsigned long long>(un, stream, mr), key_sorted = scratch<unsigned long long>(un, stream, mr);
  auto value = scratch<uint2>(un, stream, mr), value_sorted = scratch<uint2>(un, stream, mr);
  auto leaf = scratch<std::uint32_t>(un, stream, mr), leaf_sorted = scratch<std::uint32_t>(un, stream, mr);
  auto rw = scratch<ulonglong2>(un, stream, mr), rw_sorted = scratch<ulonglong2>(un, stream, mr);
  auto fixed = scratch<long long>(un, stream, mr), cum = scratch<long long>(un, stream, mr);
  const auto ul = static_cast<std::size_t>(leaves);
  auto total = scratch<long long>(ul, stream, mr);
  auto first = scratch<unsigned long long>(ul, stream, mr), last = scratch<unsigned long long>(ul, stream, mr);
  int leaf_bits = 1;
  while ((1 << leaf_bits) < leaves) ++leaf_bits;
  exact_keys_kernel<<<grid_of(n), 256, 0, stream>>>(approx, target, w, leaf_in, n, key.data(), value.data());
  CBG_CHECK_CUDA(stream);
  std::size_t sort_bytes = 0, sort2_bytes = 0, scan_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, key.data(), key_sorted.data(), value.data(),
                                               value_sorted.data(), n, 0, 64, stream));
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort2_bytes, leaf.data(), leaf_sorted.data(), rw.data(),
                                               rw_sorted.data(), n, 0, leaf_bits, stream));
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSumByKey(nullptr, scan_bytes, leaf_sorted.data(), fixed.data(), cum.data(), n,
                                                  cuda::std::equal_to<std::uint32_t>{}, stream));
  auto temp = scratch<unsigned char>(std::max({sort_bytes, sort2_bytes, scan_bytes}), stream, mr);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), sort_bytes, key.data(), key_sorted.data(), value.data(),
                                               value_sorted.data(), n, 0, 64, stream));
  exact_regroup_kernel<<<grid_of(n), 256, 0, stream>>>(key_sorted.data(), value_sorted.data(), n, leaf.data(),
                                                       rw.data());
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), sort2_bytes, leaf.data(), leaf_sorted.data(), rw.data(),
                                               rw_sorted.data(), n, 0, leaf_bits, stream));
  exact_fixed_kernel<<<grid_of(n), 256, 0, stream>>>(rw_sorted.data(), n, ws, fixed.data());
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSumByKey(temp.data(), scan_bytes, leaf_sorted.data(), fixed.data(), cum.data(),
                                                  n, cuda::std::equal_to<std::uint32_t>{}, stream));
  CBG_CUDA_TRY(cudaMemsetAsync(total.data(), 0, ul * sizeof(long long), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, ul * sizeof(unsigned long long), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(last.data(), 0xff, ul * sizeof(unsigned long long), stream));
  exact_totals_kernel<<<grid_of(n), 256, 0, stream>>>(leaf_sorted.data(), cum.data(), n, total.data(), last.data());
  CBG_CHECK_CUDA(stream);
  exact_first_kernel<<<grid_of(n), 256, 0, stream>>>(leaf_sorted.data(), cum.data(), total.data(), n, ws, alpha,
                                                     first.data());
  CBG_CHECK_CUDA(stream);
  exact_values_kernel<<<grid_of(leaves), 256, 0, stream>>>(rw_sorted.data(), total.data(), first.data(), last.data(),
                                                           leaves, ws, out);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
