// SPDX-License-Identifier: Apache-2.0
// Device pieces shared by the CTR kernels (ctr_device.cu: simple CTRs and the ordered statistics;
// combinations_device.cu: feature combinations). Internal to kernels/ctr.
#pragma once

#include <cstdint>

namespace cbg::ctr::detail {

__device__ inline std::int64_t thread_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

// Per-row values (ids, slots) in permutation order, and the positions 0..n-1: what a stable sort of
// the rows by them in permutation order starts from (static: each including file has its copy).
static __global__ void ids_in_order_kernel(const std::uint32_t* order, const std::uint32_t* ids, std::int64_t n,
                                           std::uint32_t* out, std::uint32_t* positions) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  out[i] = ids[order[i]];
  positions[i] = static_cast<std::uint32_t>(i);
}

}  // namespace cbg::ctr::detail
