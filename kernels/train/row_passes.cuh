// SPDX-License-Identifier: Apache-2.0
// Device helpers shared by the boosting loop's row kernels (boosting_launch.hpp): the ordered sums'
// block fold and tile walk, order keys, and the per-row batching of the weak, leaf and metric passes.
#pragma once

#include <cstdint>

#include "kernels/train/boosting_launch.hpp"

namespace cbg::train::launch {

// ---- ordered sums -------------------------------------------------------------------------------
// Folds the C per-lane sums of a block pairwise (lane i += lane i + s, s = 128 .. 1) and writes
// lane 0's to out[C]. `shared` holds C * lanes doubles.
template <int C>
__device__ void fold_block(const double (&acc)[C], double* shared, double* out) {
  const int t = static_cast<int>(threadIdx.x);
  for (int c = 0; c < C; ++c) shared[c * lanes + t] = acc[c];
  __syncthreads();
  for (int s = lanes / 2; s > 0; s >>= 1) {
    if (t < s) {
      for (int c = 0; c < C; ++c) shared[c * lanes + t] += shared[c * lanes + t + s];
    }
    __syncthreads();
  }
  if (t == 0) {
    for (int c = 0; c < C; ++c) out[c] = shared[c * lanes];
  }
}

// Rows of tile blockIdx.x as lane threadIdx.x visits them: r = tile * 4096 + j * 256 + lane.
#define CBG_FOR_TILE_ROWS(r, n)                                                                 \
  for (std::int64_t j_ = 0, r = static_cast<std::int64_t>(blockIdx.x) * sum_tile + threadIdx.x; \
       j_ < sum_rows_per_lane && r < (n); ++j_, r += lanes)

// ---- small device helpers -------------------------------------------------------------------------
__device__ inline std::uint64_t order_key(double v) {
  const std::uint64_t b = double_bits(v);
  return (b >> 63) != 0 ? ~b : b | 0x8000000000000000ull;
}

// The sample weight of a row (1 without weights).
__device__ inline double weight_of(const float* w, std::int64_t r) { return w == nullptr ? 1.0 : w[r]; }

// The loss with its dimension count fixed at compile time where it is 1 (the fast path), and its kind
// where K >= 0 (Logloss: the compiler drops the other losses' code; the same expressions run).
template <int D, int K = -1>
__device__ inline loss_spec fixed_loss(loss_spec l) {
  if constexpr (D > 0) l.dims = D;
  if constexpr (K >= 0) l.kind = static_cast<loss_kind>(K);
  return l;
}
constexpr int logloss_kind = static_cast<int>(loss_kind::logloss);

// Rows a lane works on at once (independent FP64 chains in flight); their results are added in row
// order, so the ordered sums are those of the one-row loop.
constexpr int row_batch = 2;

// Rows j0 .. j0 + B - 1 of the lane in its tile (r = tile * 4096 + j * 256 + lane), or -1.
template <int B>
__device__ inline void batch_rows(int j0, std::int64_t n, std::int64_t (&r)[B]) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * sum_tile + threadIdx.x;
#pragma unroll
  for (int u = 0; u < B; ++u) {
    const std::int64_t row = first + static_cast<std::int64_t>(j0 + u) * lanes;
    r[u] = j0 + u < sum_rows_per_lane && row < n ? row : -1;
  }
}

// The leaf channels of a row (leaf_channels' layout: [der (D), hess (hess_channels), w]) for a fixed
// dimension count D, written with compile-time indices only, so that they stay in registers.
template <int D, int CH>
__device__ inline void fixed_leaf_channels(int hess_channels, const double* der, const double* hess, double w,
                                           double (&ch)[CH]) {
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int k = c - D;  // the hessian channel c would be
    ch[c] = c < D ? der[c < D ? c : 0] : (k < hess_channels && k < D ? hess[k >= 0 && k < D ? k : 0] : w);
  }
}

// Calls f(c) for a row's channels c < channels: unrolled to the compile-time bound CH for a fixed
// dimension count (the channels then stay in registers), a plain loop for the generic kernel (its
// channels are indexed at run time anyway; the compiler's own partial unrolling cost it 24 registers:
// 64 against 40).
template <int D, int CH, class F>
__device__ inline void for_each_channel(int channels, F&& f) {
  if constexpr (D > 0) {
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      if (c >= channels) break;
      f(c);
    }
  } else {
#pragma unroll 1
    for (int c = 0; c < channels; ++c) f(c);
  }
}

}  // namespace cbg::train::launch
