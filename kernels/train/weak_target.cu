// SPDX-License-Identifier: Apache-2.0
// The weak target pass (derivatives, bootstrap draws, the search der and weights) and the target moments.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

template <int D>
__global__ void __launch_bounds__(lanes) moments_kernel(rows_view v, double* partial, unsigned* max_key) {
  __shared__ double shared[3 * lanes];
  double acc[3] = {0.0, 0.0, 0.0};
  unsigned top = 0;
  CBG_FOR_TILE_ROWS(r, v.n) {
    const double w = weight_of(v.weight, r);
    const double t = v.target[r];
    acc[0] += w;
    acc[1] += w * t;
    acc[2] += w * (t * t);
    top = max(top, abs_float_key(static_cast<float>(w)));
  }
  atomicMax(max_key, top);
  fold_block<3>(acc, shared, partial + static_cast<std::int64_t>(blockIdx.x) * 3);
}

// The weak pass's ordered sums per row: sigma and the value, then (M) the learn metric's row terms at
// the same approx, added in metric_kernel's row order so that their sums are the metric pass's bits.
template <int D, int K = -1, bool M = false>
__global__ void __launch_bounds__(lanes) weak_kernel(weak_args a) {
  constexpr int S = M ? weak_sums_with_metric : weak_sums;
  __shared__ double shared[S * lanes];
  __shared__ unsigned block_max[max_channels];
  constexpr int CH = D > 0 ? D + D + 1 : max_channels;
  constexpr int U = D > 0 ? row_batch : 1;
  const loss_spec l = fixed_loss<D, K>(a.loss);
  const int channels = l.dims + a.req.hess_channels + 1;
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) block_max[c] = 0;
  __syncthreads();
  double acc[S] = {};
  for (int j0 = 0; j0 < sum_rows_per_lane; j0 += U) {
    std::int64_t rows[row_batch];
    batch_rows(j0, a.v.n, rows);
    double sigma[U], value[U], ch[U][CH];
    double terms[U][M ? metric_terms : 1];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t r = rows[u];
      if (r < 0) continue;
      double ap[D > 0 ? D : max_dims], der[D > 0 ? D : max_dims];
      double hess[D > 0 ? D : max_hessian];
      gather_approx(a.v.approx, a.v.n, l.dims, r, ap);
      const double w = weight_of(a.v.weight, r);
      const float t = a.v.target[r];
      value[u] = a.req.want_value ? -w * point_loss_and_derivatives(l, ap, t, w, der, hess) : 0.0;
      if (!a.req.want_value) point_derivatives(l, ap, t, w, der, hess);
      if constexpr (M) {
        if (a.metric_from_value) {  // {w * loss, w}: the value negated, exactly
          terms[u][0] = -value[u];
          terms[u][1] = w;
          terms[u][2] = terms[u][3] = 0.0;
        } else {
          metric_row_terms(a.metric, l, ap, t, w, terms[u]);
        }
      }
      const weak_row row = weak_row_values(l, a.req, der, hess, w, bootstrap_factor(a.req.bootstrap, r + a.first_row));
      for (int k = 0; k < l.dims; ++k) a.der[k * a.v.n + r] = row.der[k];
      a.weight[r] = row.weight;
      if constexpr (D == 1) {
        if (a.saved != nullptr) a.saved[r] = make_double2(der[0], hess[0]);
      }
      sigma[u] = row.sigma;
      if constexpr (D > 0) {
        fixed_leaf_channels<D>(a.req.hess_channels, der, hess, w, ch[u]);
      } else {
        leaf_channels(l, a.req.hess_channels, der, hess, w, ch[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (rows[u] < 0) continue;
      acc[0] += sigma[u];
      acc[1] += value[u];
      if constexpr (M) {
        for (int c = 0; c < metric_terms; ++c) acc[weak_sums + c] += terms[u][c];
      }
      for_each_channel<D, CH>(channels,
                              [&](int c) { atomicMax(&block_max[c], abs_float_key(static_cast<float>(ch[u][c]))); });
    }
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) atomicMax(&a.max_key[c], block_max[c]);
  fold_block<S>(acc, shared, a.partial + static_cast<std::int64_t>(blockIdx.x) * S);
}

template <bool M>
void launch_weak(const weak_args& a, cudaStream_t stream) {
  const int tiles = tiles_of(a.v.n);
  if (a.loss.dims == 1 && a.loss.kind == loss_kind::logloss)
    weak_kernel<1, logloss_kind, M><<<tiles, lanes, 0, stream>>>(a);
  else if (a.loss.dims == 1)
    weak_kernel<1, -1, M><<<tiles, lanes, 0, stream>>>(a);
  else
    weak_kernel<0, -1, M><<<tiles, lanes, 0, stream>>>(a);
}

}  // namespace

void target_moments(const rows_view& v, double* partial, unsigned* max_key, cudaStream_t stream) {
  moments_kernel<1><<<tiles_of(v.n), lanes, 0, stream>>>(v, partial, max_key);
  CBG_CHECK_CUDA(stream);
}

void weak_target(const weak_args& a, cudaStream_t stream) {
  if (a.with_metric)
    launch_weak<true>(a, stream);
  else
    launch_weak<false>(a, stream);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
