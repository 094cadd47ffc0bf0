// SPDX-License-Identifier: Apache-2.0
// The leaf pass: per-leaf fixed-point sums of the leaf channels, their maxima and the loss value at a point.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

// Leaf sums in shared memory when they fit.
constexpr int shared_sum_slots = 2048;

// The pass a leaf search asks for (block-uniform); false when it is done.
__device__ inline bool resolve_search_pass(point_args& a) {
  if (a.search == nullptr) return true;
  const std::int32_t mode = a.search->mode;
  if (mode == leaf_mode_candidate) {
    a.point = a.search_candidate;
    a.want_value = a.candidate_value;
    a.scales = a.candidate_scales;
    a.want_max = a.candidate_scales == nullptr;
    return true;
  }
  if (mode == leaf_mode_sums) {
    a.point = a.search_point;
    a.want_value = false;
    a.want_max = false;
    a.scales = a.sums_scales;
    return true;
  }
  return false;
}

// A lane's rows in batches of U: the batch's loads are issued first, then each row's math (independent
// FP64 chains the compiler may interleave), then the value is added and the leaf sums taken in row
// order, so that the ordered value sum is the one-row loop's (the leaf sums are integers: any order).
// U = 1: on the Higgs shape (Logloss, H100, 2026-11-22) a pass took 207 us with U = 1, 213 with 2,
// 250 with 3 and 319 with 4 (U = 1, 2, 4: 40, 62 and 94 registers; the fewer resident warps cost more
// than the overlap gains: the kernel is not bound by load latency). The loop keeps the batch's shape
// for U = 1 on purpose: written as a plain one-row loop the same body took 46-48 registers (ptxas).
// The channel loops run to the compile-time bound CH with a guard, so that a row's channels stay in
// registers. The leaf sums go through a generic pointer (shared memory when they fit, else global)
// on purpose: sm_90 has no 64-bit shared-memory atomic add, so an atomicAdd the compiler knows to be
// on shared memory becomes a compare-and-swap loop (ATOMS.CAST.SPIN.64; the kernel took 2.7x as
// long, H100, 2026-11-22), while the generic ATOM.E.ADD.64 adds in place in either space.
// Earlier: two rows in flight with the sums split into two 32-bit counters took 3.11 ms for a
// Higgs-shape Logloss leaf estimation against 2.66 for one row (H200, 2026-11-21, bench/RESULTS.md).
template <int D, int K = -1>
__global__ void __launch_bounds__(lanes) point_kernel(point_args a) {
  constexpr int U = 1;  // rows of a lane in flight (above)
  if (!resolve_search_pass(a)) return;
  __shared__ double shared[lanes];
  __shared__ unsigned block_max[max_channels];
  __shared__ unsigned long long block_sums[shared_sum_slots];
  __shared__ fixed_scale scales[max_channels];
  constexpr int DA = D > 0 ? D : max_dims;
  constexpr int HA = D > 0 ? D : max_hessian;
  constexpr int CH = D > 0 ? D + D + 1 : max_channels;
  const loss_spec l = fixed_loss<D, K>(a.loss);
  const int channels = l.dims + a.hess_channels + 1;
  const int slots = a.leaves * channels;
  const bool shared_sums = a.scales != nullptr && slots <= shared_sum_slots;
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) {
    block_max[c] = 0;
    if (a.scales != nullptr) scales[c] = a.scales[c];
  }
  if (shared_sums) {
    for (int s = static_cast<int>(threadIdx.x); s < slots; s += lanes) block_sums[s] = 0;
  }
  __syncthreads();
  // What the pass computes (block-uniform): the sums at the approx from the weak pass's der and hess
  // (no math), the function value only, or the derivatives (and the value).
  bool from_saved = false;
  if constexpr (D == 1) from_saved = a.saved != nullptr && a.point == nullptr && !a.want_value;
  const bool value_only = !from_saved && a.scales == nullptr && !a.want_max;
  double acc[1] = {0.0};
  for (int j0 = 0; j0 < sum_rows_per_lane; j0 += U) {
    std::int64_t rows[U];
    batch_rows(j0, a.v.n, rows);
    if (rows[0] < 0) break;
    std::uint32_t leaf[U];
    double w[U], ap[U][DA], der[U][DA], hess[U][HA];
    float t[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t r = rows[u] < 0 ? rows[0] : rows[u];  // past the end: a valid row, unused
      leaf[u] = a.leaf[r];
      w[u] = weight_of(a.v.weight, r);
      t[u] = 0.f;
      if constexpr (D == 1) {
        if (from_saved) {
          const double2 dh = a.saved[r];
          der[u][0] = dh.x;
          hess[u][0] = dh.y;
          continue;
        }
      }
      gather_approx(a.v.approx, a.v.n, l.dims, r, ap[u]);
      t[u] = a.v.target[r];
    }
    if (!from_saved && a.point != nullptr) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        for (int k = 0; k < l.dims; ++k) ap[u][k] += a.point[static_cast<std::int64_t>(leaf[u]) * l.dims + k];
      }
    }
    double value[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      value[u] = 0.0;
      if (from_saved || rows[u] < 0) continue;
      if (value_only) {
        if (a.want_value) value[u] = -w[u] * point_loss(l, ap[u], t[u]);
      } else if (a.want_value) {
        value[u] = -w[u] * point_loss_and_derivatives(l, ap[u], t[u], w[u], der[u], hess[u]);
      } else {
        point_derivatives(l, ap[u], t[u], w[u], der[u], hess[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (rows[u] < 0) break;
      if (a.want_value) acc[0] += value[u];
      if (value_only) continue;
      double ch[CH];
      if constexpr (D > 0) {
        fixed_leaf_channels<D>(a.hess_channels, der[u], hess[u], w[u], ch);
      } else {
        leaf_channels(l, a.hess_channels, der[u], hess[u], w[u], ch);
      }
      for_each_channel<D, CH>(channels, [&](int c) {
        if (a.want_max) atomicMax(&block_max[c], abs_float_key(static_cast<float>(ch[c])));
        if (a.scales == nullptr) return;
        const auto v = static_cast<unsigned long long>(to_fixed64(ch[c], scales[c]));
        atomicAdd(shared_sums ? &block_sums[leaf[u] * channels + c]
                              : &a.sums[static_cast<std::int64_t>(leaf[u]) * channels + c],
                  v);
      });
    }
  }
  __syncthreads();
  if (a.want_max) {
    for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) atomicMax(&a.max_key[c], block_max[c]);
  }
  if (shared_sums) {
    for (int s = static_cast<int>(threadIdx.x); s < slots; s += lanes) {
      if (block_sums[s] != 0) atomicAdd(&a.sums[s], block_sums[s]);
    }
  }
  if (a.want_value) fold_block<1>(acc, shared, a.partial + blockIdx.x);
}

}  // namespace

void leaf_pass(const point_args& a, cudaStream_t stream) {
  const int tiles = tiles_of(a.v.n);
  if (a.loss.dims == 1 && a.loss.kind == loss_kind::logloss)
    point_kernel<1, logloss_kind><<<tiles, lanes, 0, stream>>>(a);
  else if (a.loss.dims == 1)
    point_kernel<1><<<tiles, lanes, 0, stream>>>(a);
  else
    point_kernel<0><<<tiles, lanes, 0, stream>>>(a);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
