// SPDX-License-Identifier: Apache-2.0
// The GPU data passes of the boosting loop (boosting.hpp): targets, weak target and bootstrap,
// leaf sums, approx updates and metrics as kernels on the context's stream, reproducing the host
// reference (src/train/boosting_host.cpp) bit for bit:
//  * per-row math from loss.hpp / metric.hpp / boosting_math.hpp (compiled with --fmad=false);
//  * ordered sums in the tile order of reduce_math.hpp (256 lanes x 16 rows per block, then the
//    pairwise fold in shared memory, then the same over the tile sums);
//  * leaf sums in 64-bit fixed point with integer atomics (order-free), maxima with integer atomics;
//  * AUC and the weighted quantile through CUB's (stable, deterministic) radix sort, scans and
//    reductions over integers.
// Only scalars, per-leaf sums (leaves x channels) and per-split border values come back to the host.
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "kernels/common/cccl.cuh"
#include "kernels/train/metric_tables.hpp"
#include "kernels/train/search_tuning.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/search_extension_device.hpp"
#include "src/train/boosting_common.hpp"

namespace cbg::train {

namespace {

constexpr int lanes = sum_lanes;  // threads per block of every row kernel

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
#define CBG_FOR_TILE_ROWS(r, n)                                                               \
  for (std::int64_t j_ = 0, r = static_cast<std::int64_t>(blockIdx.x) * sum_tile + threadIdx.x; \
       j_ < sum_rows_per_lane && r < (n); ++j_, r += lanes)

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

// ---- small device helpers -------------------------------------------------------------------------
__device__ inline std::uint64_t order_key(double v) {
  const std::uint64_t b = double_bits(v);
  return (b >> 63) != 0 ? ~b : b | 0x8000000000000000ull;
}
__host__ __device__ inline double key_value(std::uint64_t k) {
  return double_from_bits((k >> 63) != 0 ? k & 0x7fffffffffffffffull : ~k);
}

struct label_facts_dev {
  unsigned long long min_key;
  unsigned long long max_key;
  unsigned non_integer;
  unsigned non_constant;
};

__global__ void label_facts_kernel(column_view c, std::int64_t n, label_facts_dev* out) {
  const double first = c.value(0);
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double v = c.value(r);
    atomicMin(&out->min_key, static_cast<unsigned long long>(order_key(v)));
    atomicMax(&out->max_key, static_cast<unsigned long long>(order_key(v)));
    if (v != floor(v)) atomicOr(&out->non_integer, 1u);
    if (v != first) atomicOr(&out->non_constant, 1u);
  }
}

__global__ void targets_kernel(column_view c, target_rule rule, std::int64_t n, std::int64_t first_row, float* out,
                               unsigned long long* first_bad) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float t = 0.f;
    const target_problem p = target_of(rule, c.value(r), t);
    out[r] = t;
    if (p != target_problem::none) {
      atomicMin(first_bad, (static_cast<unsigned long long>(r + first_row) << 8) | static_cast<unsigned>(p));
    }
  }
}

__global__ void value_at_kernel(column_view c, std::int64_t r, double* out) { *out = c.value(r); }

__global__ void to_float_kernel(column_view c, std::int64_t n, float* out) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = static_cast<float>(c.value(r));
  }
}

__global__ void fill_kernel(float* out, std::int64_t n, float v) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = v;
  }
}

struct start_args {
  column_view baseline[max_dims];
  double bias[max_dims];
  int dims = 1;
  bool has_baseline = false;
};

__global__ void start_kernel(start_args a, std::int64_t n, double* approx) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    for (int k = 0; k < a.dims; ++k) {
      double v = a.bias[k];
      if (a.has_baseline) v += a.baseline[k].value(r);
      approx[k * n + r] = v;
    }
  }
}

// The sample weight of a row (1 without weights).
__device__ inline double weight_of(const float* w, std::int64_t r) { return w == nullptr ? 1.0 : w[r]; }

// ---- learn-set passes -------------------------------------------------------------------------------
struct rows_view {
  const double* approx = nullptr;  // [dims][n]
  const float* target = nullptr;
  const float* weight = nullptr;   // null: 1
  std::int64_t n = 0;
};

// The loss with its dimension count fixed at compile time where it is 1 (the fast path), and its kind
// where K >= 0 (Logloss: the compiler drops the other losses' code; the same expressions run).
template <int D, int K = -1>
__device__ inline loss_spec fixed_loss(loss_spec l) {
  if constexpr (D > 0) l.dims = D;
  if constexpr (K >= 0) l.kind = static_cast<loss_kind>(K);
  return l;
}
constexpr int logloss_kind = static_cast<int>(loss_kind::logloss);

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

struct weak_args {
  rows_view v;
  loss_spec loss;
  weak_request req;
  float* der = nullptr;     // [dims][n], bootstrapped
  float* weight = nullptr;  // [n], bootstrapped
  unsigned* max_key = nullptr;
  double* partial = nullptr;  // [tiles][2]
  double2* saved = nullptr;   // one dimension: (der, hess) of each row at the approx, or null
  std::int64_t first_row = 0;  // of this shard (draws are keyed by the global row)
};

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

template <int D, int K = -1>
__global__ void __launch_bounds__(lanes) weak_kernel(weak_args a) {
  __shared__ double shared[2 * lanes];
  __shared__ unsigned block_max[max_channels];
  constexpr int CH = D > 0 ? D + D + 1 : max_channels;
  constexpr int U = D > 0 ? row_batch : 1;
  const loss_spec l = fixed_loss<D, K>(a.loss);
  const int channels = l.dims + a.req.hess_channels + 1;
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) block_max[c] = 0;
  __syncthreads();
  double acc[2] = {0.0, 0.0};
  for (int j0 = 0; j0 < sum_rows_per_lane; j0 += U) {
    std::int64_t rows[row_batch];
    batch_rows(j0, a.v.n, rows);
    double sigma[U], value[U], ch[U][CH];
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
      for_each_channel<D, CH>(channels, [&](int c) {
        atomicMax(&block_max[c], abs_float_key(static_cast<float>(ch[u][c])));
      });
    }
  }
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.x); c < channels; c += lanes) atomicMax(&a.max_key[c], block_max[c]);
  fold_block<2>(acc, shared, a.partial + static_cast<std::int64_t>(blockIdx.x) * 2);
}

// Leaf sums in shared memory when they fit.
constexpr int shared_sum_slots = 2048;

struct point_args {
  rows_view v;
  loss_spec loss;
  const std::uint32_t* leaf = nullptr;
  const double* point = nullptr;  // [leaves][dims], or null
  int leaves = 1;
  int hess_channels = 0;
  bool want_value = false;
  bool want_max = false;
  const fixed_scale* scales = nullptr;      // [channels], or null: no sums
  unsigned long long* sums = nullptr;       // [leaves][channels]
  unsigned* max_key = nullptr;
  double* partial = nullptr;                // [tiles]
  // Leaf estimation on the device: when set, the pass is the one the search's mode asks for (and
  // none once it is done); point, scales and the wants above are taken from here.
  const leaf_search_status* search = nullptr;
  const double* search_candidate = nullptr;
  const double* search_point = nullptr;
  const fixed_scale* candidate_scales = nullptr;  // bounded losses: the static scales; else null
  const fixed_scale* sums_scales = nullptr;       // mode sums: the scales from the maxima
  bool candidate_value = false;                   // backtracking: the candidate's function value
  const double2* saved = nullptr;  // one dimension, no point: der and hess at the approx (weak pass)
};

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

// ---- MVS (boosting_math.hpp) ------------------------------------------------------------------------------
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
__global__ void __launch_bounds__(mvs_threads) mvs_kernel(float* der, float* weight, std::int64_t n, int dims,
                                                          float lambda, double subsample, std::uint64_t key,
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

// ---- Exact leaves (MAE/Quantile) -------------------------------------------------------------------------
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
    if (from_fixed64(cum[i], s) >= alpha * from_fixed64(total[l], s)) atomicMin(&first[l], static_cast<unsigned long long>(i));
  }
}

// out: [leaves] values then [leaves] weights.
__global__ void exact_values_kernel(const ulonglong2* residual_weight, const long long* total,
                                    const unsigned long long* first, const unsigned long long* last, int leaves,
                                    fixed_scale s, double* out) {
  for (int l = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); l < leaves; l += static_cast<int>(gridDim.x * blockDim.x)) {
    double value = 0.0;
    if (last[l] != ~0ull) value = key_value(residual_weight[first[l] != ~0ull ? first[l] : last[l]].x);
    out[l] = value;
    out[leaves + l] = from_fixed64(total[l], s);
  }
}

// ---- leaf estimation on the device (leaf_math.hpp) ----------------------------------------------------
// Zeroes what the next pass adds into: the leaf sums and the channel maxima (when the search goes on).
__device__ inline void clear_for_next_pass(const leaf_search_config& c, const leaf_search_view& v,
                                           unsigned long long* sums, unsigned* max_key) {
  if (v.status->mode == leaf_mode_done) return;
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t slots = static_cast<std::int64_t>(c.leaves) * c.channels();
  for (std::int64_t i = t; i < slots; i += lanes) sums[i] = 0;
  for (int i = t; i < c.channels(); i += lanes) max_key[i] = 0;
}

// leaf_begin_direction on a block (block-uniform result): the one-iteration copy leaf-parallel; else
// gdir's terms leaf-parallel into shared memory, added by thread 0 in leaf_gdir's order (the same
// bits as one thread: each term is the same product, the additions the same sequence). The serial
// loop of one thread over the leaves' sums in global memory cost ~15 us per pass.
constexpr int gdir_chunk = 1024;
__device__ inline bool begin_direction_block(const leaf_search_config& c, const leaf_search_view& v,
                                             const std::int64_t* sums, const fixed_scale* scales) {
  __shared__ double terms[gdir_chunk];
  const int t = static_cast<int>(threadIdx.x);
  const int values = c.values();
  if (c.iterations <= 1) {
    for (int i = t; i < values; i += lanes) v.point[i] = v.direction[i];
    if (t == 0) v.status->mode = leaf_mode_done;
    return false;
  }
  double total = 0;  // thread 0's
  for (int at = 0; at < values; at += gdir_chunk) {
    const int n = min(gdir_chunk, values - at);
    for (int i = t; i < n; i += lanes) terms[i] = leaf_gdir_term(c, v, sums, scales, at + i);
    __syncthreads();
    if (t == 0) {
      for (int i = 0; i < n; ++i) total += terms[i];
    }
    __syncthreads();
  }
  if (t == 0) {
    leaf_search_status& st = *v.status;
    st.gdir = total;
    st.step = 1.0;
    st.mode = leaf_mode_candidate;
  }
  return true;
}

// After the pass at the approx: point 0, leaf weights, the first direction, gdir, the candidate.
__global__ void __launch_bounds__(lanes) leaf_start_kernel(leaf_search_config c, leaf_search_view v,
                                                           unsigned long long* sums, const fixed_scale* scales,
                                                           double value, unsigned* max_key) {
  __shared__ int go;
  const int t = static_cast<int>(threadIdx.x);
  const auto* s = reinterpret_cast<const std::int64_t*>(sums);
  leaf_zero_point(c, v, t, lanes);
  leaf_directions(c, v, s, scales, true, t, lanes);
  __syncthreads();
  if (t == 0) leaf_start(v, value);
  const bool begin = begin_direction_block(c, v, s, scales);
  if (t == 0) go = begin ? 1 : 0;
  __syncthreads();
  if (go != 0) leaf_candidate(c, v, v.status->step, t, lanes);
  __syncthreads();
  clear_for_next_pass(c, v, sums, max_key);
}

// After a pass of the search: the decision, the next direction and candidate (one block). The next
// pass adds into next_sums / next_keys (zeroed here): the result buffer's sums and maxima on one GPU,
// the all-gather's send block in a fused sharded pass.
__device__ inline void leaf_decide_block(const leaf_search_config& c, const leaf_search_view& v,
                                         const unsigned long long* sums, const double* value,
                                         const fixed_scale* bound_scales, const unsigned* max_key,
                                         unsigned long long* next_sums, unsigned* next_keys) {
  __shared__ int prev;
  __shared__ int go;
  __shared__ int accept;
  __shared__ int directions;
  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) prev = v.status->mode;
  __syncthreads();
  if (prev == leaf_mode_done) return;
  const auto* s = reinterpret_cast<const std::int64_t*>(sums);
  if (prev == leaf_mode_candidate) {
    if (t == 0) {
      const leaf_next next = leaf_after_candidate(c, v, c.backtracking != 0 ? *value : 0.0);
      if (v.status->mode == leaf_mode_sums) leaf_scales_from_max(c, v, max_key);
      accept = next.accept ? 1 : 0;
      directions = next.directions ? 1 : 0;
      go = next.candidate ? 1 : 0;
    }
    __syncthreads();
    if (accept != 0) leaf_accept(c, v, t, lanes);
    if (directions != 0) leaf_directions(c, v, s, bound_scales, false, t, lanes);
    __syncthreads();
    if (directions != 0) {  // block-uniform
      const bool begin = begin_direction_block(c, v, s, bound_scales);
      if (t == 0) go = begin ? 1 : 0;
    }
  } else {
    leaf_directions(c, v, s, v.scales, false, t, lanes);
    __syncthreads();
    const bool begin = begin_direction_block(c, v, s, v.scales);
    if (t == 0) go = begin ? 1 : 0;
  }
  __syncthreads();
  if (go != 0) leaf_candidate(c, v, v.status->step, t, lanes);
  __syncthreads();
  clear_for_next_pass(c, v, next_sums, next_keys);
}

__global__ void __launch_bounds__(lanes) leaf_decide_kernel(leaf_search_config c, leaf_search_view v,
                                                            unsigned long long* sums, const double* value,
                                                            const fixed_scale* bound_scales, unsigned* max_key) {
  leaf_decide_block(c, v, sums, value, bound_scales, max_key, sums, max_key);
}

__global__ void apply_learn_kernel(double* approx, std::int64_t n, int dims, const std::uint32_t* leaf,
                                   const double* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t at = static_cast<std::int64_t>(leaf[r]) * dims;
    for (int k = 0; k < dims; ++k) approx[k * n + r] += delta[at + k];
  }
}

struct eval_tree {
  column_view column[max_depth];
  value_split split[max_depth];
  int count = 0;
};

__global__ void apply_eval_kernel(double* approx, std::int64_t n, int dims, eval_tree tree, const double* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t leaf = 0;
    for (int s = 0; s < tree.count; ++s) {
      const float v = quantize::to_feature_float(tree.column[s].value(r));
      leaf |= (split_is_one(tree.split[s], v) ? 1u : 0u) << s;
    }
    for (int k = 0; k < dims; ++k) approx[k * n + r] += delta[static_cast<std::int64_t>(leaf) * dims + k];
  }
}

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

// ---- AUC and the weighted quantile (sorts) -----------------------------------------------------------
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

__global__ void fixed_weights_kernel(const float* w, std::int64_t n, fixed_scale s, long long* out) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = to_fixed64(w == nullptr ? 1.0 : static_cast<double>(w[r]), s);
  }
}

__global__ void quantile_kernel(const long long* cum, std::int64_t n, fixed_scale s, double goal,
                                unsigned long long* first) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (from_fixed64(cum[r], s) >= goal) atomicMin(first, static_cast<unsigned long long>(r));
  }
}

struct border_gather {
  std::int64_t index[max_depth];
  int count = 0;
};

__global__ void gather_borders_kernel(const float* borders, border_gather g, float* out) {
  const int i = static_cast<int>(threadIdx.x);
  if (i < g.count) out[i] = borders[g.index[i]];
}

// One device buffer holds everything a pass hands back, so that it comes back in one copy:
// ordered sums (up to metric_terms doubles), channel maxima, then per-leaf fixed-point sums.
constexpr std::size_t result_sums_at = 0;
constexpr std::size_t result_max_at = metric_terms * sizeof(double);
constexpr std::size_t result_leaf_at =
    (result_max_at + max_channels * sizeof(unsigned) + 63) / 64 * 64;

int grid_of(std::int64_t n, int threads = 256) {
  return static_cast<int>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 8192));
}
int tiles_of(std::int64_t n) { return static_cast<int>(std::max<std::int64_t>(1, sum_tiles_of(n))); }

// Sharded leaf passes (issue 9): one all-gather per pass carries every rank's fixed-point leaf sums,
// channel maxima and value tile partials in one block of `block` bytes: the sums at 0, the maxima at
// keys_at, the tiles at tiles_at. The fold sums the leaf sums (integers: any order is exact), takes
// the maxima and lays the tiles out in row order, so the ordered sum is the single-GPU one.
constexpr int max_fold_ranks = 16;
struct pass_pack {
  std::size_t slots = 0;
  int channels = 0;
  std::int64_t tiles = 0;  // this rank's, in the send block
  std::size_t keys_at = 0, tiles_at = 0, block = 0;
};
struct pass_fold {
  pass_pack p;
  int ranks = 0;
  std::int64_t first_tile[max_fold_ranks + 1] = {};  // rank r's tiles are [first_tile[r], first_tile[r + 1])
};

__global__ void pass_pack_kernel(pass_pack p, const unsigned long long* sums, const unsigned* keys,
                                 const double* tiles, unsigned char* send) {
  const std::int64_t total = static_cast<std::int64_t>(p.slots) + p.channels + p.tiles;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t j = i;
    if (j < static_cast<std::int64_t>(p.slots)) {
      reinterpret_cast<unsigned long long*>(send)[j] = sums[j];
      continue;
    }
    j -= static_cast<std::int64_t>(p.slots);
    if (j < p.channels) {
      reinterpret_cast<unsigned*>(send + p.keys_at)[j] = keys[j];
      continue;
    }
    j -= p.channels;
    reinterpret_cast<double*>(send + p.tiles_at)[j] = tiles[j];
  }
}

__global__ void pass_fold_kernel(pass_fold f, const unsigned char* recv, unsigned long long* sums, unsigned* keys,
                                 double* tiles) {
  const std::int64_t all_tiles = f.first_tile[f.ranks];
  const std::int64_t total = static_cast<std::int64_t>(f.p.slots) + f.p.channels + all_tiles;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t j = i;
    if (j < static_cast<std::int64_t>(f.p.slots)) {
      unsigned long long s = 0;  // two's complement: the same bits as NCCL's int64 sum
      for (int r = 0; r < f.ranks; ++r) s += reinterpret_cast<const unsigned long long*>(recv + r * f.p.block)[j];
      sums[j] = s;
      continue;
    }
    j -= static_cast<std::int64_t>(f.p.slots);
    if (j < f.p.channels) {
      unsigned m = 0;
      for (int r = 0; r < f.ranks; ++r) m = max(m, reinterpret_cast<const unsigned*>(recv + r * f.p.block + f.p.keys_at)[j]);
      keys[j] = m;
      continue;
    }
    j -= f.p.channels;
    int r = 0;
    while (r + 1 < f.ranks && f.first_tile[r + 1] <= j) ++r;
    tiles[j] = reinterpret_cast<const double*>(recv + r * f.p.block + f.p.tiles_at)[j - f.first_tile[r]];
  }
}

// A fused sharded leaf pass (one block; every rank's value tiles fit one tile of tiles, so the ordered
// sum is one reduce_tiles_kernel<1> block): the fold of pass_fold_kernel read straight from the
// all-gather's receive block, the value's ordered sum in the order of reduce_tiles_kernel<1> (the
// single-GPU bits), then the decision of leaf_decide_kernel; the next pass adds into the send block
// (next_sums / next_keys), which the decision zeroes. Nothing runs once the search is done.
__global__ void __launch_bounds__(lanes) pass_fold_decide_kernel(pass_fold f, const unsigned char* recv,
                                                                 bool want_value, leaf_search_config c,
                                                                 leaf_search_view v, unsigned long long* sums,
                                                                 unsigned* keys, double* value,
                                                                 const fixed_scale* bound_scales,
                                                                 unsigned long long* next_sums, unsigned* next_keys) {
  __shared__ double shared[lanes];
  __shared__ int mode;
  const int t = static_cast<int>(threadIdx.x);
  if (t == 0) mode = v.status->mode;
  __syncthreads();
  if (mode == leaf_mode_done) return;
  for (std::int64_t j = t; j < static_cast<std::int64_t>(f.p.slots); j += lanes) {
    unsigned long long s = 0;  // two's complement: the same bits as NCCL's int64 sum
    for (int r = 0; r < f.ranks; ++r) s += reinterpret_cast<const unsigned long long*>(recv + r * f.p.block)[j];
    sums[j] = s;
  }
  for (int j = t; j < f.p.channels; j += lanes) {
    unsigned m = 0;
    for (int r = 0; r < f.ranks; ++r) m = max(m, reinterpret_cast<const unsigned*>(recv + r * f.p.block + f.p.keys_at)[j]);
    keys[j] = m;
  }
  if (want_value) {
    const std::int64_t all = f.first_tile[f.ranks];
    double acc[1] = {0.0};
    CBG_FOR_TILE_ROWS(i, all) {
      int r = 0;
      while (r + 1 < f.ranks && f.first_tile[r + 1] <= i) ++r;
      acc[0] += reinterpret_cast<const double*>(recv + r * f.p.block + f.p.tiles_at)[i - f.first_tile[r]];
    }
    fold_block<1>(acc, shared, value);
  }
  __syncthreads();
  leaf_decide_block(c, v, sums, value, bound_scales, keys, next_sums, next_keys);
}

// Benchmark aid: with CBGPU_BOOSTING_PROFILE=<file>, every backend call waits for its work and adds
// its wall time to a per-call total; the totals are appended to <file> as one JSON line when the
// backend goes away (training is then slower by the waits; off by default).
class call_profile {
 public:
  call_profile() {
    const char* path = std::getenv("CBGPU_BOOSTING_PROFILE");
    if (path != nullptr && *path != 0) path_ = path;
  }
  ~call_profile() {
    if (path_.empty() || totals_.empty()) return;
    std::FILE* f = std::fopen(path_.c_str(), "a");
    if (f == nullptr) return;
    std::fprintf(f, "{\"boosting_profile\": {");
    bool first = true;
    for (const auto& [name, t] : totals_) {
      std::fprintf(f, "%s\"%s\": {\"ms\": %.4f, \"calls\": %d}", first ? "" : ", ", name.c_str(), t.first, t.second);
      first = false;
    }
    std::fprintf(f, "}}\n");
    std::fclose(f);
  }
  call_profile(const call_profile&) = delete;
  call_profile& operator=(const call_profile&) = delete;
  [[nodiscard]] bool on() const { return !path_.empty(); }
  void add(const char* name, double ms) {
    auto& t = totals_[name];
    t.first += ms;
    t.second += 1;
  }

 private:
  std::string path_;
  std::map<std::string, std::pair<double, int>> totals_;
};

// Times one backend call when profiling (waits for the stream at the end).
class call_timer {
 public:
  call_timer(call_profile& p, cudaStream_t s, const char* name)
      : p_(p), s_(s), name_(name), start_(std::chrono::steady_clock::now()) {}
  ~call_timer() {
    if (!p_.on()) return;
    if (cudaStreamSynchronize(s_) != cudaSuccess) return;
    p_.add(name_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
  }
  call_timer(const call_timer&) = delete;
  call_timer& operator=(const call_timer&) = delete;

 private:
  call_profile& p_;
  cudaStream_t s_;
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

// With CBGPU_BOOSTING_PROFILE: the device time of each leaf pass's stages (point kernel; the exchange:
// collectives, folds and the value's tile sums; the decision), from events recorded between them.
class pass_clock {
 public:
  explicit pass_clock(bool on) : on_(on) {}
  ~pass_clock() {
    for (cudaEvent_t e : events_) CBG_ASSERT_CUDA_SUCCESS(cudaEventDestroy(e));
  }
  pass_clock(const pass_clock&) = delete;
  pass_clock& operator=(const pass_clock&) = delete;
  // Mark i of a batch of passes: 0 before the first, 3k + 1, 3k + 2, 3k + 3 after pass k's stages.
  void mark(std::size_t i, cudaStream_t s) {
    if (!on_) return;
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      CBG_CUDA_TRY(cudaEventCreate(&e));
      events_.push_back(e);
    }
    CBG_CUDA_TRY(cudaEventRecord(events_[i], s));
  }
  // The stages of a batch of `passes` passes (after its marks) into the profile.
  void add(call_profile& p, int passes) const {
    if (!on_ || passes <= 0) return;
    static const char* const names[3] = {"leaf pass (device): point kernel", "leaf pass (device): exchange",
                                          "leaf pass (device): decide"};
    CBG_CUDA_TRY(cudaEventSynchronize(events_[static_cast<std::size_t>(3 * passes)]));
    for (int k = 0; k < passes; ++k) {
      for (int st = 0; st < 3; ++st) {
        float ms = 0.0f;
        const auto at = static_cast<std::size_t>(3 * k + st);
        CBG_CUDA_TRY(cudaEventElapsedTime(&ms, events_[at], events_[at + 1]));
        p.add(names[st], static_cast<double>(ms));
      }
    }
  }

 private:
  bool on_;
  std::vector<cudaEvent_t> events_;
};

// ---- the backend -------------------------------------------------------------------------------------
class device_backend final : public boosting_backend {
 public:
  explicit device_backend(const backend_inputs& in, device_search_extension* extension = nullptr)
      : ctx_(*in.learn->ctx()), learn_(*in.learn), eval_(in.eval), guard_(ctx_.device()), ext_(extension) {
    for (const pool* p : {in.learn, in.eval}) {
      if (p == nullptr) continue;
      // The learn features go through the quantizer, which stages pageable columns; the trainer
      // (src/train/trainer.cpp) stages the other pageable inputs before it makes this backend.
      for (const column_view& c : p->features()) {
        CBG_EXPECTS(p == in.learn || c.memory != memory_kind::host, status::device,
                    "the GPU trainer reads device, managed or pinned memory; an eval feature column is in "
                    "pageable host memory");
      }
      for (const auto* t : {&p->label(), &p->weight(), &p->baseline()}) {
        CBG_EXPECTS(!t->has_value() || (*t)->memory != memory_kind::host, status::device,
                    "the GPU trainer reads device, managed or pinned memory; a label, weight or baseline is in "
                    "pageable host memory");
      }
    }
    if (in.rank != nullptr) link_ = std::make_unique<dist::rank_link>(*in.rank, ctx_);
    if (in.rank != nullptr && in.rank->quantized != nullptr) {
      q_ = std::move(*in.rank->quantized);  // a shard: its rows, the whole set's borders
    } else {
      q_ = quantize::quantize_device(learn_, in.quantize);
    }
    modes_.resize(static_cast<std::size_t>(q_.features));
    for (std::size_t at = 0; at < modes_.size(); at += strict_d2h_metadata_limit) {
      const std::size_t k = std::min(strict_d2h_metadata_limit, modes_.size() - at);
      d2h(modes_.data() + at, q_.mode.data() + at, k, "nan modes");
    }
    leaf_ = buffer<std::uint32_t>(static_cast<std::size_t>(q_.rows));
    weight_ = read_weights(learn_);
    if (eval_ != nullptr) eval_weight_ = read_weights(*eval_);
    scratch_a_ = buffer<double>(static_cast<std::size_t>(tiles_of(rows()) * metric_terms));
    scratch_b_ = buffer<double>(static_cast<std::size_t>(tiles_of(tiles_of(rows())) * metric_terms));
    result_ = buffer<unsigned char>(result_leaf_at);
    zero(result_.data(), result_.size());  // read back as whole records (see ensure)
  }

  [[nodiscard]] std::int64_t rows() const override { return q_.rows; }
  [[nodiscard]] std::int64_t eval_rows() const override { return eval_ == nullptr ? 0 : eval_->num_rows(); }
  [[nodiscard]] int features() const override { return static_cast<int>(q_.features); }
  [[nodiscard]] const std::vector<std::uint8_t>& nan_modes() const override { return modes_; }

  [[nodiscard]] std::vector<float> split_borders(const std::vector<split>& splits) override {
    const call_timer timer(profile_, stream(), "split_borders");
    std::vector<float> out(splits.size());
    if (splits.empty()) return out;
    border_gather g;
    g.count = static_cast<int>(splits.size());
    for (std::size_t k = 0; k < splits.size(); ++k) {
      // A feature of the search extension (feature combinations): its border comes from it (below).
      const bool pool_feature = splits[k].feature < q_.features;
      g.index[k] = pool_feature ? static_cast<std::int64_t>(splits[k].feature) * quantize::border_stride + splits[k].bin
                                : 0;
    }
    ensure(gathered_, static_cast<std::size_t>(max_depth));
    gather_borders_kernel<<<1, max_depth, 0, stream()>>>(q_.borders.data(), g, gathered_.data());
    CBG_CHECK_CUDA(stream());
    d2h(out.data(), gathered_.data(), out.size(), "split borders");
    for (std::size_t k = 0; k < splits.size(); ++k) {
      if (splits[k].feature >= q_.features) out[k] = ext_->border(splits[k].feature, splits[k].bin);
    }
    return out;
  }

  label_facts labels(bool eval) override {
    const pool& p = eval ? *eval_ : learn_;
    CBG_EXPECTS(p.label().has_value(), status::bad_data, "the pool has no label");
    CBG_EXPECTS(pool::dims_of(p.label()) == 1, status::unsupported,
                "labels of " + std::to_string(pool::dims_of(p.label())) + " columns: the trainer takes one label column");
    device_buffer<label_facts_dev> d = buffer<label_facts_dev>(1);
    label_facts_dev init{~0ull, 0ull, 0u, 0u};
    h2d(d.data(), &init, 1, "label facts");
    label_facts_kernel<<<grid_of(p.num_rows()), 256, 0, stream()>>>(column_of(*p.label(), 0), p.num_rows(), d.data());
    CBG_CHECK_CUDA(stream());
    if (link_ != nullptr) {  // sharded: every rank's facts
      auto* k = reinterpret_cast<unsigned long long*>(d.data());
      link_->red().min_u64(k, 1, stream());
      link_->red().max_u64(k + 1, 1, stream());
      link_->red().max_u32(reinterpret_cast<unsigned*>(k + 2), 2, stream());
    }
    label_facts_dev h{};
    d2h(&h, d.data(), 1, "label facts");
    label_facts f;
    f.min = key_value(h.min_key);
    f.max = key_value(h.max_key);
    f.all_integer = h.non_integer == 0;
    f.constant = h.non_constant == 0 && (link_ == nullptr || h.min_key == h.max_key);
    return f;
  }

  void prepare_targets(const target_rule& rule) override {
    target_ = read_targets(learn_, rule, "learn");
    if (eval_ != nullptr) eval_target_ = read_targets(*eval_, rule, "eval");
  }

  void target_moments(double out[4]) override {
    zero(max_keys(), 1);
    const int tiles = tiles_of(rows());
    moments_kernel<1><<<tiles, lanes, 0, stream()>>>(learn_view(), scratch_a_.data(), max_keys());
    CBG_CHECK_CUDA(stream());
    finish_sums<3>(tiles);
    const std::vector<unsigned char> r = read_result(1, 0);
    std::memcpy(out, r.data() + result_sums_at, 3 * sizeof(double));
    unsigned key = 0;
    std::memcpy(&key, r.data() + result_max_at, sizeof(key));
    out[3] = float_of_key(key);
  }

  double weighted_quantile(double alpha) override {
    std::int64_t n = rows();
    const float* targets = target_.data();
    device_buffer<float> all_targets;
    if (link_ != nullptr) {  // sharded: the quantile of every rank's rows
      n = link_->total_rows(false);
      all_targets = buffer<float>(static_cast<std::size_t>(n));
      link_->gather_rows(target_.data(), sizeof(float), false, all_targets.data());
      targets = all_targets.data();
    }
    auto keys_out = buffer<float>(static_cast<std::size_t>(n));
    auto w_in = buffer<float>(static_cast<std::size_t>(n));
    auto w_out = buffer<float>(static_cast<std::size_t>(n));
    if (weight_.empty()) {
      fill_ones(w_in.data(), n);
    } else if (link_ != nullptr) {
      link_->gather_rows(weight_.data(), sizeof(float), false, w_in.data());
    } else {
      copy_d2d(w_in.data(), weight_.data(), n);
    }
    std::size_t bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, targets, keys_out.data(), w_in.data(),
                                                 w_out.data(), n, 0, 32, stream()));
    auto temp = buffer<unsigned char>(bytes);
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, targets, keys_out.data(), w_in.data(),
                                                 w_out.data(), n, 0, 32, stream()));
    double moments[4];
    target_moments(moments);
    const fixed_scale s = fixed_scale_for(moments[3], n);
    auto fixed = buffer<long long>(static_cast<std::size_t>(n));
    fixed_weights_kernel<<<grid_of(n), 256, 0, stream()>>>(w_out.data(), n, s, fixed.data());
    CBG_CHECK_CUDA(stream());
    std::size_t scan_bytes = 0;
    CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, fixed.data(), fixed.data(), n, stream()));
    auto scan_temp = buffer<unsigned char>(scan_bytes);
    CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(scan_temp.data(), scan_bytes, fixed.data(), fixed.data(), n, stream()));
    long long total = 0;
    d2h(&total, fixed.data() + (n - 1), 1, "quantile total");
    auto first = buffer<unsigned long long>(1);
    const unsigned long long none = static_cast<unsigned long long>(n - 1);
    h2d(first.data(), &none, 1, "quantile index");
    quantile_kernel<<<grid_of(n), 256, 0, stream()>>>(fixed.data(), n, s, alpha * from_fixed64(total, s), first.data());
    CBG_CHECK_CUDA(stream());
    unsigned long long at = 0;
    d2h(&at, first.data(), 1, "quantile index");
    float t = 0.f;
    d2h(&t, keys_out.data() + at, 1, "quantile value");
    return t;
  }

  void start(const loss_spec& loss, const std::vector<double>& bias) override {
    loss_ = loss;
    approx_ = start_approx(learn_, rows(), bias);
    if (eval_ != nullptr) eval_approx_ = start_approx(*eval_, eval_rows(), bias);
    der_ = buffer<float>(static_cast<std::size_t>(loss.dims * rows()));
    search_weight_ = buffer<float>(static_cast<std::size_t>(rows()));
  }

  weak_result weak_target(const weak_request& req) override {
    const call_timer timer(profile_, stream(), "weak_target");
    const int channels = loss_.dims + req.hess_channels + 1;
    zero(max_keys(), static_cast<std::size_t>(channels));
    weak_args a;
    a.v = learn_view();
    a.loss = loss_;
    a.req = req;
    a.der = der_.data();
    a.weight = search_weight_.data();
    a.max_key = max_keys();
    a.partial = scratch_a_.data();
    if (saves_derivatives()) {
      ensure(saved_, static_cast<std::size_t>(rows()));
      a.saved = saved_.data();
    }
    a.first_row = link_ != nullptr ? link_->first_row(false) : 0;
    const int tiles = tiles_of(rows());
    if (loss_.dims == 1 && loss_.kind == loss_kind::logloss) weak_kernel<1, logloss_kind><<<tiles, lanes, 0, stream()>>>(a);
    else if (loss_.dims == 1) weak_kernel<1><<<tiles, lanes, 0, stream()>>>(a);
    else weak_kernel<0><<<tiles, lanes, 0, stream()>>>(a);
    CBG_CHECK_CUDA(stream());
    // Sharded: the tile sums and the maxima in one all-gather (merged_pass), else a gather of the
    // tiles and an all-reduce of the maxima.
    const bool merged = fused_passes() && merged_pass<2>(channels, 0, true);
    if (!merged) finish_sums<2>(tiles);
    const std::vector<unsigned char> r = read_result(channels, 0, merged);
    weak_result out;
    std::memcpy(&out.sigma_sum, r.data() + result_sums_at, sizeof(double));
    std::memcpy(&out.value, r.data() + result_sums_at + sizeof(double), sizeof(double));
    out.channel_max = maxima_of(r, channels);
    if (req.bootstrap.kind == bootstrap_kind::mvs) mvs_bootstrap(req.bootstrap);
    return out;
  }

  tree_structure search(const tree_search_params& p, std::vector<double> noise) override {
    const call_timer timer(profile_, stream(), "search");
    if (!workspace_) {
      workspace_ = make_device_search_workspace(ctx_, q_, loss_.dims, p);
      // CBGPU_BOOSTING_PROFILE_SEARCH=1: also the search's stages (events between its stages; they
      // add ~0.1-0.15 ms to each search, so the per-call "search" time is then higher).
      const char* stages = std::getenv("CBGPU_BOOSTING_PROFILE_SEARCH");
      if (profile_.on() && stages != nullptr && std::string_view(stages) == "1") {
        detail::set_search_profiling(*workspace_, true);
      }
    }
    device_search_input in;
    in.q = &q_;
    in.dims = loss_.dims;
    in.der = der_.data();
    in.weight = search_weight_.data();
    in.noise = std::move(noise);
    in.reducer = link_ != nullptr ? &link_->red() : nullptr;
    in.extension = ext_;
    tree_structure tree = search_tree_device(ctx_, in, p, *workspace_, leaf_.data());
    if (profile_.on()) {  // the search's stages (device time between its events), when recorded
      for (const auto& [name, ms] : detail::last_search_stats(*workspace_).stages) {
        profile_.add(("search (device): " + name).c_str(), ms);
      }
    }
    return tree;
  }

  point_result at_point(const point_request& req) override {
    const call_timer timer(profile_, stream(), "at_point");
    const int channels = loss_.dims + req.hess_channels + 1;
    const int tiles = tiles_of(rows());
    const std::size_t slots =
        req.scales != nullptr ? static_cast<std::size_t>(req.leaves) * static_cast<std::size_t>(channels) : 0;
    ensure(result_, result_leaf_at + slots * sizeof(unsigned long long));
    point_args a = pass_args(req.leaves, req.hess_channels);
    a.want_value = req.want_value;
    a.want_max = req.want_max;
    if (req.point != nullptr && !req.point->empty()) {
      ensure(point_, req.point->size());
      h2d(point_.data(), req.point->data(), req.point->size(), "leaf point");
      a.point = point_.data();
    }
    if (req.scales != nullptr) {
      zero(leaf_sums(), slots);
      ensure(scales_, static_cast<std::size_t>(channels));
      h2d(scales_.data(), req.scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
      a.scales = scales_.data();
      a.sums = leaf_sums();
    }
    if (req.want_max) zero(max_keys(), static_cast<std::size_t>(channels));
    launch_point(a);
    if (req.want_value) finish_sums<1>(tiles);
    // Everything in one copy (per-leaf sums are model-sized: pieces that strict mode admits).
    const std::vector<unsigned char> r = read_result(req.want_max ? channels : 0, slots);
    point_result out;
    if (req.want_value) std::memcpy(&out.value, r.data() + result_sums_at, sizeof(double));
    if (req.want_max) out.channel_max = maxima_of(r, channels);
    if (slots > 0) {
      out.sums.resize(slots);
      std::memcpy(out.sums.data(), r.data() + result_leaf_at, slots * sizeof(std::int64_t));
    }
    return out;
  }

  // Leaf estimation with every decision on the device: the pass at the approx, a start kernel, then
  // rounds of (pass the search's mode asks for, its ordered value, a decide kernel) enqueued without
  // a host round trip; one read of the status, point and leaf weights at the end (more rounds only
  // when nothing was accepted yet: backtracking may try up to 100 candidates).
  // Sharded training (issue 9): after every pass the leaf sums (fixed point, exact) and maxima are
  // all-reduced over the ranks and the value's tile partials gathered in row order (finish_sums), so
  // every rank's state machine sees the single-GPU numbers and takes the same decisions.
  leaf_result estimate_leaves(const leaf_request& r) override {
    const call_timer timer(profile_, stream(), "estimate_leaves");
    const leaf_search_config& c = r.config;
    const int channels = c.channels();
    CBG_EXPECTS(channels <= max_channels && r.zero_scales != nullptr &&
                    r.zero_scales->size() >= static_cast<std::size_t>(channels) &&
                    (c.bounded == 0 || c.iterations <= 1 ||
                     (r.bound_scales != nullptr && r.bound_scales->size() >= static_cast<std::size_t>(channels))),
                status::internal, "estimate_leaves: bad request");
    const auto values = static_cast<std::size_t>(c.values());
    const auto leaves = static_cast<std::size_t>(c.leaves);
    const std::size_t slots = leaves * static_cast<std::size_t>(channels);
    constexpr std::size_t head = 8;  // doubles holding the status
    static_assert(sizeof(leaf_search_status) <= head * sizeof(double));
    ensure(result_, result_leaf_at + slots * sizeof(unsigned long long));
    ensure(leaf_block_, head + 3 * values + leaves);
    ensure(scales_, static_cast<std::size_t>(3 * max_channels));
    fixed_scale* zero_scales = scales_.data();
    fixed_scale* bound_scales = scales_.data() + max_channels;
    h2d(zero_scales, r.zero_scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
    const bool use_bound = c.bounded != 0 && c.iterations > 1;
    if (use_bound) h2d(bound_scales, r.bound_scales->data(), static_cast<std::size_t>(channels), "fixed-point scales");
    leaf_search_view v;
    v.status = reinterpret_cast<leaf_search_status*>(leaf_block_.data());
    v.point = leaf_block_.data() + head;
    v.leaf_weight = v.point + values;
    v.direction = v.leaf_weight + leaves;
    v.candidate = v.direction + values;
    v.scales = scales_.data() + 2 * max_channels;

    point_args a = pass_args(c.leaves, c.hess_channels);
    a.scales = zero_scales;
    a.sums = leaf_sums();
    if (saves_derivatives()) a.saved = saved_.data();  // the weak pass's, at the same approx
    zero(leaf_sums(), slots);
    launch_point(a);
    reduce_pass(0, slots);
    leaf_start_kernel<<<1, lanes, 0, stream()>>>(c, v, leaf_sums(), zero_scales, r.start_value, max_keys());
    CBG_CHECK_CUDA(stream());

    point_args ra = pass_args(c.leaves, c.hess_channels);
    ra.search = v.status;
    ra.search_candidate = v.candidate;
    ra.search_point = v.point;
    ra.candidate_scales = c.bounded != 0 ? bound_scales : nullptr;
    ra.sums_scales = v.scales;
    ra.candidate_value = c.backtracking != 0;
    ra.sums = leaf_sums();
    const double* value = reinterpret_cast<const double*>(result_.data() + result_sums_at);
    int rounds = c.iterations <= 1 ? 0 : (c.bounded != 0 ? c.iterations : 2 * c.iterations);
    // Sharded: as many passes as a search that accepts every candidate needs (a bounded one a pass per
    // iteration; else a candidate and a sums pass per iteration but the last), so that no collective
    // runs after the search is done; more rounds follow after the status read when needed.
    if (link_ != nullptr && c.bounded == 0 && rounds > 0) rounds = 2 * c.iterations - 1;
    int total = 0;
    std::vector<double> back(head + values + leaves);
    leaf_search_status st;
    pass_fold fused;
    const bool fuse = fused_layout(channels, slots, c.backtracking != 0, fused);
    if (fuse) {  // sharded: the passes add into the send block, zeroed once here, then by each decision
      zero(pass_send_.data(), fused.p.tiles_at);
      ra.sums = reinterpret_cast<unsigned long long*>(pass_send_.data());
      ra.max_key = reinterpret_cast<unsigned*>(pass_send_.data() + fused.p.keys_at);
      ra.partial = reinterpret_cast<double*>(pass_send_.data() + fused.p.tiles_at);
    }
    while (true) {
      pass_clock_.mark(0, stream());
      for (int i = 0; i < rounds; ++i) {
        const auto m = static_cast<std::size_t>(3 * i);
        launch_point(ra);
        pass_clock_.mark(m + 1, stream());
        if (fuse) {
          link_->red().all_gather(pass_send_.data(), pass_recv_.data(), fused.p.block, stream());
          pass_clock_.mark(m + 2, stream());
          pass_fold_decide_kernel<<<1, lanes, 0, stream()>>>(
              fused, pass_recv_.data(), c.backtracking != 0, c, v, leaf_sums(), max_keys(),
              reinterpret_cast<double*>(result_.data() + result_sums_at), bound_scales, ra.sums, ra.max_key);
          CBG_CHECK_CUDA(stream());
          pass_clock_.mark(m + 3, stream());
          continue;
        }
        if (!merged_pass(channels, slots, c.backtracking != 0)) {
          reduce_pass(channels, slots);
          if (c.backtracking != 0) finish_sums<1>(tiles_of(rows()));
        }
        pass_clock_.mark(m + 2, stream());
        leaf_decide_kernel<<<1, lanes, 0, stream()>>>(c, v, leaf_sums(), value, bound_scales, max_keys());
        CBG_CHECK_CUDA(stream());
        pass_clock_.mark(m + 3, stream());
      }
      total += rounds;
      const std::size_t bytes = back.size() * sizeof(double);
      const auto* src = reinterpret_cast<const unsigned char*>(leaf_block_.data());
      auto* dst = reinterpret_cast<unsigned char*>(back.data());
      for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
        d2h(dst + at, src + at, std::min(strict_d2h_metadata_limit, bytes - at), "leaf values");
      }
      pass_clock_.add(profile_, rounds);
      std::memcpy(static_cast<void*>(&st), back.data(), sizeof(st));
      CBG_EXPECTS(st.error == 0, status::bad_data, non_finite_derivative_message);
      if (st.mode == leaf_mode_done) break;
      CBG_EXPECTS(total < 400, status::internal, "leaf estimation did not finish");
      rounds = link_ != nullptr ? 4 : 16;  // sharded: every pass costs a collective, so smaller steps
    }
    leaf_result out;
    out.point.assign(back.begin() + head, back.begin() + static_cast<std::ptrdiff_t>(head + values));
    out.leaf_weight.assign(back.begin() + static_cast<std::ptrdiff_t>(head + values), back.end());
    return out;
  }

  leaf_result exact_leaves(int leaves, double alpha, const fixed_scale& ws) override {
    const call_timer timer(profile_, stream(), "exact_leaves");
    const std::int64_t n = rows();
    const auto un = static_cast<std::size_t>(n);
    auto key = buffer<unsigned long long>(un), key_sorted = buffer<unsigned long long>(un);
    auto value = buffer<uint2>(un), value_sorted = buffer<uint2>(un);
    auto leaf = buffer<std::uint32_t>(un), leaf_sorted = buffer<std::uint32_t>(un);
    auto rw = buffer<ulonglong2>(un), rw_sorted = buffer<ulonglong2>(un);
    auto fixed = buffer<long long>(un), cum = buffer<long long>(un);
    const auto ul = static_cast<std::size_t>(leaves);
    auto total = buffer<long long>(ul);
    auto first = buffer<unsigned long long>(ul), last = buffer<unsigned long long>(ul);
    auto out = buffer<double>(2 * ul);
    int leaf_bits = 1;
    while ((1 << leaf_bits) < leaves) ++leaf_bits;
    exact_keys_kernel<<<grid_of(n), 256, 0, stream()>>>(approx_.data(), target_.data(),
                                                         weight_.empty() ? nullptr : weight_.data(), leaf_.data(), n,
                                                         key.data(), value.data());
    CBG_CHECK_CUDA(stream());
    std::size_t sort_bytes = 0, sort2_bytes = 0, scan_bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, key.data(), key_sorted.data(), value.data(),
                                                 value_sorted.data(), n, 0, 64, stream()));
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort2_bytes, leaf.data(), leaf_sorted.data(), rw.data(),
                                                 rw_sorted.data(), n, 0, leaf_bits, stream()));
    CBG_CUDA_TRY(cub::DeviceScan::InclusiveSumByKey(nullptr, scan_bytes, leaf_sorted.data(), fixed.data(), cum.data(),
                                                    n, cuda::std::equal_to<std::uint32_t>{}, stream()));
    auto temp = buffer<unsigned char>(std::max({sort_bytes, sort2_bytes, scan_bytes}));
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), sort_bytes, key.data(), key_sorted.data(), value.data(),
                                                 value_sorted.data(), n, 0, 64, stream()));
    exact_regroup_kernel<<<grid_of(n), 256, 0, stream()>>>(key_sorted.data(), value_sorted.data(), n, leaf.data(),
                                                           rw.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), sort2_bytes, leaf.data(), leaf_sorted.data(), rw.data(),
                                                 rw_sorted.data(), n, 0, leaf_bits, stream()));
    exact_fixed_kernel<<<grid_of(n), 256, 0, stream()>>>(rw_sorted.data(), n, ws, fixed.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceScan::InclusiveSumByKey(temp.data(), scan_bytes, leaf_sorted.data(), fixed.data(),
                                                    cum.data(), n, cuda::std::equal_to<std::uint32_t>{}, stream()));
    zero(total.data(), ul);
    CBG_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, ul * sizeof(unsigned long long), stream()));
    CBG_CUDA_TRY(cudaMemsetAsync(last.data(), 0xff, ul * sizeof(unsigned long long), stream()));
    exact_totals_kernel<<<grid_of(n), 256, 0, stream()>>>(leaf_sorted.data(), cum.data(), n, total.data(), last.data());
    CBG_CHECK_CUDA(stream());
    exact_first_kernel<<<grid_of(n), 256, 0, stream()>>>(leaf_sorted.data(), cum.data(), total.data(), n, ws, alpha,
                                                         first.data());
    CBG_CHECK_CUDA(stream());
    exact_values_kernel<<<grid_of(leaves), 256, 0, stream()>>>(rw_sorted.data(), total.data(), first.data(), last.data(),
                                                               leaves, ws, out.data());
    CBG_CHECK_CUDA(stream());
    std::vector<double> back(2 * ul);
    const std::size_t bytes = back.size() * sizeof(double);
    const auto* src = reinterpret_cast<const unsigned char*>(out.data());
    auto* dst = reinterpret_cast<unsigned char*>(back.data());
    for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
      d2h(dst + at, src + at, std::min(strict_d2h_metadata_limit, bytes - at), "exact leaf values");
    }
    leaf_result r;
    r.point.assign(back.begin(), back.begin() + static_cast<std::ptrdiff_t>(ul));
    r.leaf_weight.assign(back.begin() + static_cast<std::ptrdiff_t>(ul), back.end());
    return r;
  }

  void apply(const std::vector<value_split>& splits, const std::vector<double>& delta) override {
    const call_timer timer(profile_, stream(), "apply");
    ensure(delta_, delta.size());
    h2d(delta_.data(), delta.data(), delta.size(), "leaf values");
    apply_learn_kernel<<<grid_of(rows()), 256, 0, stream()>>>(approx_.data(), rows(), loss_.dims, leaf_.data(),
                                                              delta_.data());
    CBG_CHECK_CUDA(stream());
    if (eval_ == nullptr) return;
    eval_tree t;
    t.count = static_cast<int>(splits.size());
    for (std::size_t s = 0; s < splits.size(); ++s) {
      t.split[s] = splits[s];
      t.column[s] = splits[s].feature < q_.features ? eval_->features()[static_cast<std::size_t>(splits[s].feature)]
                                                    : extension_eval_column(splits[s].feature);
    }
    apply_eval_kernel<<<grid_of(eval_rows()), 256, 0, stream()>>>(eval_approx_.data(), eval_rows(), loss_.dims, t,
                                                                  delta_.data());
    CBG_CHECK_CUDA(stream());
  }

  void metric_sums(const metric_spec& m, bool eval, double out[metric_terms]) override {
    const call_timer timer(profile_, stream(), "metric_sums");
    const rows_view v = eval ? eval_view() : learn_view();
    const int tiles = tiles_of(v.n);
    ensure(scratch_a_, static_cast<std::size_t>(tiles * metric_terms));
    ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles) * metric_terms));
    if (loss_.dims == 1 && loss_.kind == loss_kind::logloss) {
      metric_kernel<1, logloss_kind><<<tiles, lanes, 0, stream()>>>(v, loss_, m, scratch_a_.data());
    } else if (loss_.dims == 1) {
      metric_kernel<1><<<tiles, lanes, 0, stream()>>>(v, loss_, m, scratch_a_.data());
    } else {
      metric_kernel<0><<<tiles, lanes, 0, stream()>>>(v, loss_, m, scratch_a_.data());
    }
    CBG_CHECK_CUDA(stream());
    finish_sums<metric_terms>(tiles, eval);
    const std::vector<unsigned char> r = read_result(0, 0);
    std::memcpy(out, r.data() + result_sums_at, metric_terms * sizeof(double));
  }

  double auc(bool eval) override {
    const call_timer timer(profile_, stream(), "auc");
    rows_view v = eval ? eval_view() : learn_view();
    device_buffer<double> all_approx;
    device_buffer<float> all_targets;
    if (link_ != nullptr) {  // sharded: the AUC of every rank's rows
      v.n = link_->total_rows(eval);
      all_approx = buffer<double>(static_cast<std::size_t>(v.n));
      all_targets = buffer<float>(static_cast<std::size_t>(v.n));
      link_->gather_rows(v.approx, sizeof(double), eval, all_approx.data());
      link_->gather_rows(v.target, sizeof(float), eval, all_targets.data());
      v.approx = all_approx.data();
      v.target = all_targets.data();
    }
    const std::int64_t n = v.n;
    auto keys = buffer<double>(static_cast<std::size_t>(n));
    auto keys_sorted = buffer<double>(static_cast<std::size_t>(n));
    auto pos = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auto pos_sorted = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auc_keys_kernel<<<grid_of(n), 256, 0, stream()>>>(v.approx, v.target, n, keys.data(), pos.data());
    CBG_CHECK_CUDA(stream());
    std::size_t bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), keys_sorted.data(), pos.data(),
                                                 pos_sorted.data(), n, 0, 64, stream()));
    std::size_t rle_bytes = 0, reduce_bytes = 0, scan_bytes = 0, sum_bytes = 0;
    auto unique = buffer<double>(static_cast<std::size_t>(n));
    auto counts = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auto group_pos = buffer<std::uint32_t>(static_cast<std::size_t>(n));
    auto groups = buffer<std::int64_t>(2);
    auto neg = buffer<std::uint64_t>(static_cast<std::size_t>(n));
    auto term = buffer<std::uint64_t>(static_cast<std::size_t>(n));
    auto result = buffer<std::uint64_t>(2);
    CBG_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_sorted.data(), unique.data(),
                                                    counts.data(), groups.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, keys_sorted.data(), unique.data(),
                                                pos_sorted.data(), group_pos.data(), groups.data() + 1, cuda::std::plus<std::uint32_t>{}, n,
                                                stream()));
    CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, neg.data(), neg.data(), n, stream()));
    std::size_t count_bytes = 0;
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, term.data(), result.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, count_bytes, pos.data(), result.data() + 1, n, stream()));
    auto temp = buffer<unsigned char>(std::max({bytes, rle_bytes, reduce_bytes, scan_bytes, sum_bytes, count_bytes}));
    zero(counts.data(), static_cast<std::size_t>(n));
    zero(group_pos.data(), static_cast<std::size_t>(n));
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), keys_sorted.data(), pos.data(),
                                                 pos_sorted.data(), n, 0, 64, stream()));
    CBG_CUDA_TRY(cub::DeviceRunLengthEncode::Encode(temp.data(), rle_bytes, keys_sorted.data(), unique.data(),
                                                    counts.data(), groups.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp.data(), reduce_bytes, keys_sorted.data(), unique.data(),
                                                pos_sorted.data(), group_pos.data(), groups.data() + 1, cuda::std::plus<std::uint32_t>{}, n,
                                                stream()));
    negatives_kernel<<<grid_of(n), 256, 0, stream()>>>(group_pos.data(), counts.data(), n, neg.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp.data(), scan_bytes, neg.data(), neg.data(), n, stream()));
    auc_terms_kernel<<<grid_of(n), 256, 0, stream()>>>(group_pos.data(), counts.data(), neg.data(), n, term.data());
    CBG_CHECK_CUDA(stream());
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(temp.data(), sum_bytes, term.data(), result.data(), n, stream()));
    CBG_CUDA_TRY(cub::DeviceReduce::Sum(temp.data(), count_bytes, pos.data(), result.data() + 1, n, stream()));
    std::uint64_t r[2];
    d2h(r, result.data(), 2, "auc counts");
    return auc_from_counts(r[0], r[1], static_cast<std::uint64_t>(n) - r[1]);
  }

  std::vector<double> confusion_table(const metric_spec& m, bool eval, int classes) override {
    if (link_ != nullptr) return boosting_backend::confusion_table(m, eval, classes);  // refuses
    const rows_view v = eval ? eval_view() : learn_view();
    return confusion_table_device(ctx_, metric_rows{v.approx, v.target, v.weight, v.n}, loss_, m, classes);
  }

  double ranked_metric(const metric_spec& m, bool eval) override {
    if (link_ != nullptr) return boosting_backend::ranked_metric(m, eval);  // refuses
    const rows_view v = eval ? eval_view() : learn_view();
    return ranked_metric_device(ctx_, metric_rows{v.approx, v.target, v.weight, v.n}, loss_, m);
  }

 private:
  [[nodiscard]] cudaStream_t stream() const { return ctx_.stream(); }

  template <class T>
  device_buffer<T> buffer(std::size_t count) const {
    return device_buffer<T>(std::max<std::size_t>(count, 1), ctx_.stream(), ctx_.resource());
  }
  template <class T>
  void ensure(device_buffer<T>& b, std::size_t count) const {
    if (b.size() >= count) return;
    b = buffer<T>(count);
    zero(b.data(), b.size());  // read-backs copy whole records, fields a pass leaves unwritten included
  }
  template <class T>
  void zero(T* p, std::size_t count) const {
    CBG_CUDA_TRY(cudaMemsetAsync(p, 0, count * sizeof(T), stream()));
  }
  template <class T>
  void d2h(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::host, src, memory_kind::device, count * sizeof(T), stream(), ctx_.copies(), ctx_.rules(),
               CBG_COPY_SITE(what));
  }
  template <class T>
  void h2d(T* dst, const T* src, std::size_t count, const char* what) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::host, count * sizeof(T), stream(), ctx_.copies(), ctx_.rules(),
               CBG_COPY_SITE(what));
  }
  template <class T>
  void copy_d2d(T* dst, const T* src, std::int64_t count) const {
    copy_bytes(dst, memory_kind::device, src, memory_kind::device, static_cast<std::size_t>(count) * sizeof(T), stream(),
               ctx_.copies(), ctx_.rules(), CBG_COPY_SITE("device copy"));
  }
  void fill_ones(float* p, std::int64_t n) const {
    fill_kernel<<<grid_of(n), 256, 0, stream()>>>(p, n, 1.0f);
    CBG_CHECK_CUDA(stream());
  }

  // One-dimensional losses whose derivatives cost exponentials: the weak pass keeps each row's der
  // and hess (16 bytes a row) for the leaf sums at the approx, which then need no math.
  [[nodiscard]] bool saves_derivatives() const {
    return loss_.dims == 1 && (loss_.kind == loss_kind::logloss || loss_.kind == loss_kind::cross_entropy ||
                               loss_.kind == loss_kind::poisson || loss_.kind == loss_kind::tweedie);
  }

  // MVS on the search der and weights (the weak pass wrote them unscaled).
  // Sharded (issue 9): the default mvs_reg from the ordered sum over every rank's rows (finish_sums
  // gathers the tiles), blocks of mvs_block_rows and draws keyed by the global row; the sharded
  // backend checks that every rank starts at a block boundary.
  void mvs_bootstrap(const bootstrap_spec& b) {
    const std::int64_t n = rows();
    const std::int64_t first_row = link_ != nullptr ? link_->first_row(false) : 0;
    CBG_EXPECTS(first_row % mvs_block_rows == 0, status::internal, "MVS: a shard starts inside a block");
    double lambda = b.mvs_reg;
    if (!(lambda >= 0)) {
      const int tiles = tiles_of(n);
      mvs_l1_kernel<<<tiles, lanes, 0, stream()>>>(der_.data(), n, loss_.dims, scratch_a_.data());
      CBG_CHECK_CUDA(stream());
      finish_sums<1>(tiles);
      double l1 = 0;
      d2h(&l1, reinterpret_cast<const double*>(result_.data() + result_sums_at), 1, "mvs lambda");
      const double mean = l1 / static_cast<double>(link_ != nullptr ? link_->total_rows(false) : n);
      lambda = mean * mean;
    }
    const auto blocks = static_cast<unsigned>((n + mvs_block_rows - 1) / mvs_block_rows);
    mvs_kernel<<<blocks, mvs_threads, 0, stream()>>>(der_.data(), search_weight_.data(), n, loss_.dims,
                                                     static_cast<float>(lambda), b.subsample, b.key, first_row);
    CBG_CHECK_CUDA(stream());
  }

  // The arguments every learn-set pass shares.
  point_args pass_args(int leaves, int hess_channels) {
    point_args a;
    a.v = learn_view();
    a.loss = loss_;
    a.leaf = leaf_.data();
    a.leaves = leaves;
    a.hess_channels = hess_channels;
    a.partial = scratch_a_.data();
    a.max_key = max_keys();
    return a;
  }
  void launch_point(const point_args& a) {
    const int tiles = tiles_of(rows());
    if (loss_.dims == 1 && loss_.kind == loss_kind::logloss) point_kernel<1, logloss_kind><<<tiles, lanes, 0, stream()>>>(a);
    else if (loss_.dims == 1) point_kernel<1><<<tiles, lanes, 0, stream()>>>(a);
    else point_kernel<0><<<tiles, lanes, 0, stream()>>>(a);
    CBG_CHECK_CUDA(stream());
  }

  [[nodiscard]] unsigned* max_keys() { return reinterpret_cast<unsigned*>(result_.data() + result_max_at); }
  [[nodiscard]] unsigned long long* leaf_sums() {
    return reinterpret_cast<unsigned long long*>(result_.data() + result_leaf_at);
  }

  // Sums C channels of the tile partials in scratch_a_ (tiles of them) in the ordered scheme into
  // the result buffer's sums, on the device.
  template <int C>
  void finish_sums(int tiles, bool eval = false) {
    double* in = scratch_a_.data();
    std::int64_t count = tiles;
    if (link_ != nullptr) {  // sharded: every rank's tile sums in row order, then folded as on one GPU
      count = link_->gather_tiles(scratch_a_.data(), C, eval, all_tiles_);
      in = all_tiles_.data();
    }
    reduce_tile_levels<C>(in, count);
  }

  // The ordered sum of `count` tiles of C channels at `in` (scratch_a_ or all_tiles_) into the result
  // buffer's sums.
  template <int C>
  void reduce_tile_levels(double* in, std::int64_t count) {
    if (in != scratch_a_.data()) {
      ensure(scratch_a_, static_cast<std::size_t>(tiles_of(count)) * C);
      ensure(scratch_b_, static_cast<std::size_t>(tiles_of(tiles_of(count))) * C);
    }
    while (true) {
      const int t = tiles_of(count);
      double* out = t == 1 ? reinterpret_cast<double*>(result_.data() + result_sums_at)
                           : (in == scratch_a_.data() ? scratch_b_.data() : scratch_a_.data());
      reduce_tiles_kernel<C><<<t, lanes, 0, stream()>>>(in, count, out);
      CBG_CHECK_CUDA(stream());
      if (t == 1) return;
      in = out;
      count = t;
    }
  }

  // Sharded leaf pass in one collective (pass_pack): the `slots` leaf sums, `channels` maxima and, with
  // `value`, the value's tile partials of every rank, folded into the result buffer (and the value's
  // ordered sum) as reduce_pass and finish_sums<1> give them. False (nothing done) on one GPU or past
  // max_fold_ranks ranks: the caller takes the separate collectives.
  // The layout of a sharded pass's all-gather block (pass_send_ and pass_recv_ sized for it); false
  // on one GPU or past max_fold_ranks ranks.
  // C: doubles per value tile (the weak pass's two ordered sums; gather_tiles' layout).
  bool pass_layout(int channels, std::size_t slots, bool value, pass_fold& f, int C = 1) {
    if (link_ == nullptr) return false;
    const dist::row_split& split = link_->split(false);
    const int ranks = split.ranks();
    if (ranks > max_fold_ranks) return false;
    f.ranks = ranks;
    std::int64_t most = 0;
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t t = value ? sum_tiles_of(split.counts[static_cast<std::size_t>(r)]) * C : 0;
      f.first_tile[r + 1] = f.first_tile[r] + t;
      most = std::max(most, t);
    }
    pass_pack& p = f.p;
    p.slots = slots;
    p.channels = channels;
    p.tiles = f.first_tile[link_->rank() + 1] - f.first_tile[link_->rank()];
    p.keys_at = slots * sizeof(unsigned long long);
    p.tiles_at = (p.keys_at + static_cast<std::size_t>(channels) * sizeof(unsigned) + 7) / 8 * 8;
    p.block = std::max<std::size_t>(8, p.tiles_at + static_cast<std::size_t>(most) * sizeof(double));
    ensure(pass_send_, p.tiles_at + static_cast<std::size_t>(std::max<std::int64_t>(most, tiles_of(rows()))) *
                                        sizeof(double));  // a fused pass's kernel writes tiles_of(rows()) partials
    ensure(pass_recv_, p.block * static_cast<std::size_t>(ranks));
    return true;
  }

  // Fused sharded leaf passes (pass_fold_decide_kernel): the point kernel adds straight into the
  // all-gather's send block, one kernel folds and decides. False where the value's tiles of all ranks
  // exceed one tile of tiles, or with CBGPU_DIST_FUSED_PASS=0 (the A/B switch of the benchmark).
  // CBGPU_DIST_FUSED_PASS=0 also gives the weak pass its two collectives back.
  static bool fused_passes() {
    static const bool enabled = [] {
      const char* e = std::getenv("CBGPU_DIST_FUSED_PASS");
      return e == nullptr || std::string_view(e) != "0";
    }();
    return enabled;
  }
  bool fused_layout(int channels, std::size_t slots, bool value, pass_fold& f) {
    if (!fused_passes() || !pass_layout(channels, slots, value, f)) return false;
    return f.first_tile[f.ranks] <= sum_tile;
  }

  template <int C = 1>
  bool merged_pass(int channels, std::size_t slots, bool value) {
    pass_fold f;
    if (!pass_layout(channels, slots, value, f, C)) return false;
    const pass_pack& p = f.p;
    const int ranks = f.ranks;
    const std::int64_t all = f.first_tile[ranks];
    if (value) ensure(all_tiles_, static_cast<std::size_t>(std::max<std::int64_t>(all, C)));
    const auto packed = static_cast<std::int64_t>(slots) + channels + p.tiles;
    pass_pack_kernel<<<grid_of(packed), 256, 0, stream()>>>(p, leaf_sums(), max_keys(), scratch_a_.data(),
                                                           pass_send_.data());
    CBG_CHECK_CUDA(stream());
    link_->red().all_gather(pass_send_.data(), pass_recv_.data(), p.block, stream());
    const auto folded = static_cast<std::int64_t>(slots) + channels + all;
    pass_fold_kernel<<<grid_of(folded), 256, 0, stream()>>>(f, pass_recv_.data(), leaf_sums(), max_keys(),
                                                           all_tiles_.data());
    CBG_CHECK_CUDA(stream());
    if (!value) return true;
    if (all == 0) {  // no rows anywhere: one zero tile, as gather_tiles gives it
      zero(all_tiles_.data(), C);
      reduce_tile_levels<C>(all_tiles_.data(), 1);
    } else {
      reduce_tile_levels<C>(all_tiles_.data(), all / C);
    }
    return true;
  }

  // Sharded training: the first `channels` maxima and `slots` fixed-point leaf sums of the result
  // buffer over the ranks (no-op on one GPU).
  void reduce_pass(int channels, std::size_t slots) {
    if (link_ == nullptr) return;
    if (channels > 0) link_->red().max_u32(max_keys(), static_cast<std::size_t>(channels), stream());
    if (slots > 0) link_->red().sum_i64(reinterpret_cast<long long*>(leaf_sums()), slots, stream());
  }

  // The result buffer up to `channels` maxima, or with `slots` leaf sums: one copy (pieces of at
  // most the strict-mode limit where the leaf sums are large).
  // reduced: the caller already combined the ranks' maxima and sums (merged_pass).
  std::vector<unsigned char> read_result(int channels, std::size_t slots, bool reduced = false) {
    if (!reduced) reduce_pass(channels, slots);  // sharded: maxima and fixed-point leaf sums over the ranks
    const std::size_t bytes = slots > 0 ? result_leaf_at + slots * sizeof(unsigned long long)
                                        : result_max_at + static_cast<std::size_t>(channels) * sizeof(unsigned);
    std::vector<unsigned char> r(bytes);
    for (std::size_t at = 0; at < bytes; at += strict_d2h_metadata_limit) {
      d2h(r.data() + at, result_.data() + at, std::min(strict_d2h_metadata_limit, bytes - at), "pass results");
    }
    return r;
  }

  static std::vector<float> maxima_of(const std::vector<unsigned char>& r, int channels) {
    std::vector<float> out;
    for (int c = 0; c < channels; ++c) {
      unsigned key = 0;
      std::memcpy(&key, r.data() + result_max_at + static_cast<std::size_t>(c) * sizeof(unsigned), sizeof(key));
      out.push_back(float_of_key(key));
    }
    return out;
  }

  device_buffer<float> read_weights(const pool& p) {
    if (!p.weight()) return {};
    auto w = buffer<float>(static_cast<std::size_t>(p.num_rows()));
    to_float_kernel<<<grid_of(p.num_rows()), 256, 0, stream()>>>(column_of(*p.weight(), 0), p.num_rows(), w.data());
    CBG_CHECK_CUDA(stream());
    return w;
  }

  device_buffer<float> read_targets(const pool& p, const target_rule& rule, const char* what) {
    CBG_EXPECTS(p.label().has_value(), status::bad_data, std::string("the ") + what + " pool has no label");
    const std::int64_t n = p.num_rows();
    auto t = buffer<float>(static_cast<std::size_t>(n));
    auto bad = buffer<unsigned long long>(1);
    const unsigned long long none = ~0ull;
    h2d(bad.data(), &none, 1, "target check");
    const column_view c = column_of(*p.label(), 0);
    const bool eval = &p != &learn_;
    const std::int64_t first_row = link_ != nullptr ? link_->first_row(eval) : 0;
    targets_kernel<<<grid_of(n), 256, 0, stream()>>>(c, rule, n, first_row, t.data(), bad.data());
    CBG_CHECK_CUDA(stream());
    if (link_ != nullptr) link_->red().min_u64(bad.data(), 1, stream());  // sharded: the first bad row of all
    unsigned long long first = 0;
    d2h(&first, bad.data(), 1, "target check");
    if (first != ~0ull) {
      const auto row = static_cast<std::int64_t>(first >> 8);
      const int ranks = link_ != nullptr ? link_->red().size() : 1;
      auto value = buffer<double>(static_cast<std::size_t>(ranks) + 1);
      int owner = 0;
      if (link_ != nullptr) {
        while (owner + 1 < ranks && link_->split(eval).first(owner + 1) <= row) ++owner;
      }
      if (owner == (link_ != nullptr ? link_->rank() : 0)) {
        value_at_kernel<<<1, 1, 0, stream()>>>(c, row - first_row, value.data());
        CBG_CHECK_CUDA(stream());
      }
      if (link_ != nullptr) link_->red().all_gather(value.data(), value.data() + 1, sizeof(double), stream());
      double label = 0;
      d2h(&label, value.data() + (link_ != nullptr ? 1 + owner : 0), 1, "bad label");
      throw_target_problem(static_cast<target_problem>(first & 0xff), rule, what, row, label);
    }
    return t;
  }

  device_buffer<double> start_approx(const pool& p, std::int64_t n, const std::vector<double>& bias) {
    auto a = buffer<double>(static_cast<std::size_t>(loss_.dims * n));
    start_args s;
    s.dims = loss_.dims;
    for (int k = 0; k < loss_.dims; ++k) s.bias[k] = bias[static_cast<std::size_t>(k)];
    if (p.baseline()) {
      check_baseline(p, loss_);
      s.has_baseline = true;
      for (int k = 0; k < loss_.dims; ++k) s.baseline[k] = column_of(*p.baseline(), k);
    }
    start_kernel<<<grid_of(n), 256, 0, stream()>>>(s, n, a.data());
    CBG_CHECK_CUDA(stream());
    return a;
  }

  [[nodiscard]] rows_view learn_view() const {
    return {approx_.data(), target_.data(), weight_.empty() ? nullptr : weight_.data(), rows()};
  }
  // A feature of the search extension on the eval rows (its float values in device memory).
  [[nodiscard]] column_view extension_eval_column(std::int32_t feature) const {
    column_view c;
    c.data = ext_->eval_values(feature);
    c.type = dtype::float32;
    c.memory = memory_kind::device;
    c.device_id = ctx_.device();
    c.size = eval_rows();
    c.stride = 1;
    CBG_EXPECTS(c.data != nullptr || c.size == 0, status::internal, "feature combinations: no eval values");
    return c;
  }

  [[nodiscard]] rows_view eval_view() const {
    return {eval_approx_.data(), eval_target_.data(), eval_weight_.empty() ? nullptr : eval_weight_.data(), eval_rows()};
  }

  const context& ctx_;
  const pool& learn_;
  const pool* eval_;
  scoped_device guard_;
  quantize::device_quantized q_;
  std::vector<std::uint8_t> modes_;
  loss_spec loss_;
  device_buffer<float> target_, eval_target_, weight_, eval_weight_;
  device_buffer<double> approx_, eval_approx_;
  device_buffer<float> der_, search_weight_;
  device_buffer<std::uint32_t> leaf_;
  device_buffer<double> scratch_a_, scratch_b_, point_, delta_;
  device_buffer<double> leaf_block_;  // leaf estimation: status, point, leaf weights, direction, candidate
  device_buffer<double2> saved_;      // (der, hess) per row at the approx (saves_derivatives)
  device_buffer<unsigned char> result_;
  device_buffer<float> gathered_;
  device_buffer<fixed_scale> scales_;
  device_search_workspace_ptr workspace_;
  call_profile profile_;
  pass_clock pass_clock_{profile_.on()};
  device_search_extension* ext_ = nullptr;  // feature combinations (issue 5), or none
  std::unique_ptr<dist::rank_link> link_;  // sharded training (issue 9); null on one GPU
  device_buffer<double> all_tiles_;
  device_buffer<unsigned char> pass_send_, pass_recv_;  // merged_pass's blocks
};

}  // namespace

std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in) {
  if (in.rank == nullptr && dist::wants_sharding(in)) return dist::make_sharded_backend(in);
  return std::make_unique<device_backend>(in);
}

std::unique_ptr<boosting_backend> make_device_backend(const backend_inputs& in, device_search_extension* extension) {
  if (extension == nullptr) return make_device_backend(in);
  CBG_EXPECTS(in.rank == nullptr && !dist::wants_sharding(in), status::not_implemented,
              "parameter 'max_ctr_complexity': feature combinations (max_ctr_complexity > 1) are implemented on one "
              "GPU only; with several devices use max_ctr_complexity=1");
  return std::make_unique<device_backend>(in, extension);
}

}  // namespace cbg::train
