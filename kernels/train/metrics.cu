// SPDX-License-Identifier: Apache-2.0
// Metric terms per row (metric.hpp) in the ordered sums' tile order.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

template <int D, int K = -1>
__global__ void __launch_bounds__(lanes) metric_kernel(rows_view v, loss_spec loss, metric_spec m, double* partial) {
  __shared__ double shared[metric_terms * lanes];
  const loss_spec l = fixed_loss<D, K>(loss);
  constexpr int U = D > 0 ? row_batch : 1;
  double acc[metric_terms] = {0.0, 0.0, 0.0, 0.0};
  for (int j0 = 0; j0 < sum_rows_per_lane; j0 += U) {
    std::int64_t rows[row_batch];
    batch_rows(j0, v.n, rows);
    double t[U][metric_terms];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (rows[u] < 0) continue;
      double ap[D > 0 ? D : max_dims];
      gather_approx(v.approx, v.n, l.dims, rows[u], ap);
      metric_row_terms(m, l, ap, v.target[rows[u]], weight_of(v.weight, rows[u]), t[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (rows[u] < 0) continue;
      for (int c = 0; c < metric_terms; ++c) acc[c] += t[u][c];
    }
  }
  fold_block<metric_terms>(acc, shared, partial + static_cast<std::int64_t>(blockIdx.x) * metric_terms);
}

}  // namespace

void metric_sums(const rows_view& v, const loss_spec& loss, const metric_spec& m, double* partial,
                 cudaStream_t stream) {
  const int tiles = tiles_of(v.n);
  if (loss.dims == 1 && loss.kind == loss_kind::logloss) {
    metric_kernel<1, logloss_kind><<<tiles, lanes, 0, stream>>>(v, loss, m, partial);
  } else if (loss.dims == 1) {
    metric_kernel<1><<<tiles, lanes, 0, stream>>>(v, loss, m, partial);
  } else {
    metric_kernel<0><<<tiles, lanes, 0, stream>>>(v, loss, m, partial);
  }
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
