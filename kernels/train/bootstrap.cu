// SPDX-License-Identifier: Apache-2.0
// MVS (boosting_math.hpp) on the GPU: the default lambda's ordered sum and the per-block sampling.
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/common/cccl.cuh"
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

// The ordered sum over rows of sum_k |der_k| (the default lambda).
__global__ void __launch_bounds__(lanes) mvs_l1_kernel(const float* der, std::int64_t n, int dims, double* partial) {
  __shared__ double shared[lanes];
  double acc[1] = {0.0};
  CBG_FOR_TILE_ROWS(r, n) {
    double s = 0;
    for (int k = 0; k < dims; ++k) s += fabs(static_cast<double>(der[k * n + r]));
    acc[0] += s;
  }
  fold_block<1>(acc, shared, partial + blockIdx.x);
}

constexpr int mvs_threads = 512;
constexpr int mvs_items = 16;
static_assert(static_cast<std::int64_t>(mvs_threads) * mvs_items == mvs_block_rows);

// One block of 8192 rows: sorted candidates (blocked ranks), exact prefix sums, the threshold, then
// every row's multiplier in place.
__global__ void __launch_bounds__(mvs_threads)
    mvs_kernel(float* der, float* weight, std::int64_t n, int dims, float lambda, double subsample, std::uint64_t key,
               std::int64_t first_row) {
  using sort_t = cub::BlockRadixSort<float, mvs_threads, mvs_items>;
  using scan_t = cub::BlockScan<long long, mvs_threads>;
  __shared__ union {
    typename sort_t::TempStorage sort;
    typename scan_t::TempStorage scan;
  } temp;
  __shared__ fixed_scale scale;
  __shared__ int best;
  __shared__ double mu;
  const std::int64_t start = static_cast<std::int64_t>(blockIdx.x) * mvs_block_rows;
  const std::int64_t m = min(mvs_block_rows, n - start);
  const int t = static_cast<int>(threadIdx.x);
  float c[mvs_items];
#pragma unroll
  for (int k = 0; k < mvs_items; ++k) {
    const std::int64_t j = static_cast<std::int64_t>(t) * mvs_items + k;
    c[k] = j < m ? mvs_candidate(der, n, dims, start + j, lambda) : __int_as_float(0x7f800000);
  }
  if (t == 0) {
    best = -1;
    mu = 0.0;
  }
  sort_t(temp.sort).Sort(c);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < mvs_items; ++k) {
    if (static_cast<std::int64_t>(t) * mvs_items + k == m - 1) scale = fixed_scale_for(c[k], m);
  }
  __syncthreads();
  long long fx[mvs_items];
#pragma unroll
  for (int k = 0; k < mvs_items; ++k) {
    fx[k] = static_cast<std::int64_t>(t) * mvs_items + k < m ? static_cast<long long>(to_fixed64(c[k], scale)) : 0ll;
  }
  scan_t(temp.scan).InclusiveSum(fx, fx);
  const double sample = static_cast<double>(m) * subsample;
  int mine = -1;
#pragma unroll
  for (int k = 0; k < mvs_items; ++k) {
    const std::int64_t i = static_cast<std::int64_t>(t) * mvs_items + k;
    if (i < m && mvs_rank_qualifies(from_fixed64(fx[k], scale), c[k], m, i, sample)) mine = static_cast<int>(i);
  }
  if (mine >= 0) atomicMax(&best, mine);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < mvs_items; ++k) {
    if (best >= 0 && t * mvs_items + k == best) mu = mvs_threshold(from_fixed64(fx[k], scale), m, best, sample);
  }
  __syncthreads();
  const double threshold = mu;
  for (std::int64_t j = t; j < m; j += mvs_threads) {
    const std::int64_t r = start + j;
    const double f = mvs_factor(mvs_candidate(der, n, dims, r, lambda), threshold, key, r + first_row);
    for (int k = 0; k < dims; ++k) der[k * n + r] = mvs_scaled(der[k * n + r], f);
    weight[r] = mvs_scaled(weight[r], f);
  }
}

}  // namespace

void mvs_l1(const float* der, std::int64_t n, int dims, double* partial, cudaStream_t stream) {
  mvs_l1_kernel<<<tiles_of(n), lanes, 0, stream>>>(der, n, dims, partial);
  CBG_CHECK_CUDA(stream);
}

void mvs(float* der, float* weight, std::int64_t n, int dims, float lambda, double subsample, std::uint64_t key,
         std::int64_t first_row, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((n + mvs_block_rows - 1) / mvs_block_rows);
  mvs_kernel<<<blocks, mvs_threads, 0, stream>>>(der, weight, n, dims, lambda, subsample, key, first_row);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
