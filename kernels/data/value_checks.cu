// SPDX-License-Identifier: Apache-2.0
// GPU value checks: one pass over a column, per-block reduction with CUB, integer atomics for the
// block totals (deterministic: integer sums do not depend on order).
#include <cub/block/block_reduce.cuh>

#include "kernels/common/cccl.cuh"

#include "cbg/core/cuda_check.hpp"
#include "cbg/data/value_checks.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg {

namespace {

constexpr int value_check_block = 256;  // one block per 256 threads; occupancy is not the limit here

__global__ __launch_bounds__(value_check_block) void count_values_kernel(column_view column,
                                                                         unsigned long long* totals) {
  unsigned long long nan = 0, inf = 0, neg = 0, pos = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < column.size;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const unsigned bits = classify_value(column.value(i));
    nan += bits & 1u;
    inf += (bits >> 1) & 1u;
    neg += (bits >> 2) & 1u;
    pos += (bits >> 3) & 1u;
  }
  using reduce = cub::BlockReduce<unsigned long long, value_check_block>;
  __shared__ typename reduce::TempStorage temp;
  const unsigned long long block_nan = reduce(temp).Sum(nan);
  __syncthreads();
  const unsigned long long block_inf = reduce(temp).Sum(inf);
  __syncthreads();
  const unsigned long long block_neg = reduce(temp).Sum(neg);
  __syncthreads();
  const unsigned long long block_pos = reduce(temp).Sum(pos);
  if (threadIdx.x == 0) {
    if (block_nan != 0) atomicAdd(&totals[0], block_nan);
    if (block_inf != 0) atomicAdd(&totals[1], block_inf);
    if (block_neg != 0) atomicAdd(&totals[2], block_neg);
    if (block_pos != 0) atomicAdd(&totals[3], block_pos);
  }
}

}  // namespace

value_counts count_values_device(const column_view& column, const context& ctx) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "count_values_device needs a GPU context");
  CBG_EXPECTS(column.memory != memory_kind::host, status::device,
              "count_values_device cannot read pageable host memory; use count_values_host");
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  device_buffer<unsigned long long> totals(4, stream, ctx.resource());
  CBG_CUDA_TRY(cudaMemsetAsync(totals.data(), 0, totals.size_bytes(), stream));
  if (column.size > 0) {
    int sms = 0;
    CBG_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device()));
    const std::int64_t needed = (column.size + value_check_block - 1) / value_check_block;
    const int blocks = static_cast<int>(std::min<std::int64_t>(needed, 8LL * sms));
    count_values_kernel<<<blocks, value_check_block, 0, stream>>>(column, totals.data());
    CBG_CHECK_CUDA(stream);
  }
  unsigned long long host[4] = {0, 0, 0, 0};
  copy_bytes(host, memory_kind::host, totals.data(), memory_kind::device, sizeof(host), stream, ctx.copies(),
             ctx.rules(), CBG_COPY_SITE("value check totals"));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  return value_counts{host[0], host[1], host[2], host[3]};
}

}  // namespace cbg
