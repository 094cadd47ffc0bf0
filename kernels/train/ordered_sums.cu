// SPDX-License-Identifier: Apache-2.0
// The levels of the ordered sums (reduce_math.hpp) over tile partials.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

template <int C>
__global__ void __launch_bounds__(lanes) reduce_tiles_kernel(const double* in, std::int64_t n, double* out) {
  __shared__ double shared[C * lanes];
  double acc[C];
  for (int c = 0; c < C; ++c) acc[c] = 0.0;
  CBG_FOR_TILE_ROWS(r, n) {
    for (int c = 0; c < C; ++c) acc[c] += in[r * C + c];
  }
  fold_block<C>(acc, shared, out + static_cast<std::int64_t>(blockIdx.x) * C);
}

}  // namespace

void reduce_tiles(int C, const double* in, std::int64_t count, double* out, cudaStream_t stream) {
  const int t = tiles_of(count);
  switch (C) {
    case 1:
      reduce_tiles_kernel<1><<<t, lanes, 0, stream>>>(in, count, out);
      break;
    case 2:
      reduce_tiles_kernel<2><<<t, lanes, 0, stream>>>(in, count, out);
      break;
    case 3:
      reduce_tiles_kernel<3><<<t, lanes, 0, stream>>>(in, count, out);
      break;
    case weak_sums_with_metric:
      reduce_tiles_kernel<weak_sums_with_metric><<<t, lanes, 0, stream>>>(in, count, out);
      break;
    default:
      reduce_tiles_kernel<metric_terms><<<t, lanes, 0, stream>>>(in, count, out);
      break;
  }
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
