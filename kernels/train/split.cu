// SPDX-License-Identifier: Apache-2.0
// The channel scales, the split scores, the level's best split and the leaf index update (see
// stages.hpp). Scores follow score_math.hpp expression for expression (this file is compiled with
// --fmad=false), so they equal the host reference's bit for bit.
#include <algorithm>
#include <climits>

#include "kernels/train/choose_best.cuh"
#include "kernels/train/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/train/score_math.hpp"

namespace cbg::train::detail {

namespace {

constexpr unsigned full_mask = 0xffffffffu;

// ---- channel scales --------------------------------------------------------------------------------
__global__ void scales_kernel(search_view v) {
  const int c = blockIdx.y;
  const float* x = c < v.dims ? v.der + static_cast<std::int64_t>(c) * v.rows : v.weight;
  unsigned m = 0;
  bool finite = true;
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float a = fabsf(x[r]);
    finite = finite && a <= 3.402823466e38f;  // false for NaN and infinity
    m = max(m, __float_as_uint(a));
  }
  m = __reduce_max_sync(full_mask, m);
  const bool all_finite = __all_sync(full_mask, finite);
  if ((threadIdx.x & 31) == 0) {
    if (m != 0) atomicMax(v.max_bits + c, m);
    if (!all_finite) atomicMax(&v.state->status, v.channels - c);
  }
}

// ---- scores ----------------------------------------------------------------------------------------
constexpr int score_threads = 256;
constexpr int score_warps = score_threads / 32;
// LB: bins per lane; 32 x LB covers the largest feature (instances for 64, 128, 160 and 256 bins).

struct score_args {
  search_view v;
  int level;
  bool last_level;
  score_function fn;
  double lambda;
  bool choose;  // the last block to finish also takes the level's split (choose_level)
};

// Inclusive prefix sums of the lane's bins (registers) over the warp; returns the warp's total.
template <int lane_bins>
__device__ __forceinline__ long long warp_prefix(long long (&x)[lane_bins], int lane) {
  long long run = 0;
#pragma unroll
  for (int k = 0; k < lane_bins; ++k) {
    run += x[k];
    x[k] = run;
  }
  long long inclusive = run;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const long long y = __shfl_up_sync(full_mask, inclusive, o);
    if (lane >= o) inclusive += y;
  }
  const long long before = inclusive - run;
#pragma unroll
  for (int k = 0; k < lane_bins; ++k) x[k] += before;
  return __shfl_sync(full_mask, inclusive, 31);
}

// One warp: the children of parent q (level 0: leaf 0 alone), channel by channel: rebuilds them from
// the parent and the computed child (written back for the next level unless this is the last), and
// adds their terms for every border of the lane's bins into the shared part arrays of `pos`.
template <int lane_bins>
__device__ void score_parent(const score_args& a, std::int64_t f, int nb, std::uint32_t q, int pos, double* part_num,
                             double* part_den, int lane) {
  const search_view& v = a.v;
  const int level = a.level;
  const int children = level == 0 ? 1 : 2;
  const std::uint32_t half = level == 0 ? 0u : (1u << (level - 1));
  const std::int64_t off = v.offset[f];
  const int first = lane * lane_bins;
  const bool write_back = level > 0 && !a.last_level;
  const std::uint8_t cbit = level > 0 ? v.compute_bit[q] : 0;
  // Slot of child 0 (leaf q) and child 1 (leaf q + half).
  const auto column = [&](std::uint32_t slot, int c) {
    return v.hist + (static_cast<std::int64_t>(slot) * v.channels + c) * v.total_bins + off;
  };
  // Loads channel c of both children into x0/x1 (prefix sums after warp_prefix).
  long long x0[lane_bins];
  long long x1[lane_bins];
  const auto load = [&](int c) {
    long long* h0 = column(q, c);
    long long* h1 = column(q + half, c);
#pragma unroll
    for (int k = 0; k < lane_bins; ++k) {
      const int b = first + k;
      x0[k] = 0;
      x1[k] = 0;
      if (b < nb) {
        if (level == 0) {
          x0[k] = h0[b];
        } else {
          const long long parent = h0[b];
          const long long computed = h1[b];
          const long long other = parent - computed;
          x0[k] = cbit != 0 ? other : computed;
          x1[k] = cbit != 0 ? computed : other;
          if (write_back) {
            h0[b] = x0[k];
            if (cbit == 0) h1[b] = x1[k];
          }
        }
      }
    }
  };
  // The weight channel first: left/right weights per border.
  double wl[2][lane_bins];
  double wr[2][lane_bins];
  double pn[2][lane_bins];
  double pd[2][lane_bins];
  const double inv_w = pow2(-fixed_exponent(__uint_as_float(v.max_bits[v.dims])));
  load(v.dims);
  long long t0 = warp_prefix(x0, lane);
  long long t1 = children > 1 ? warp_prefix(x1, lane) : 0;
#pragma unroll
  for (int k = 0; k < lane_bins; ++k) {
    wl[0][k] = from_fixed(x0[k], inv_w);
    wr[0][k] = from_fixed(t0 - x0[k], inv_w);
    wl[1][k] = from_fixed(x1[k], inv_w);
    wr[1][k] = from_fixed(t1 - x1[k], inv_w);
    pn[0][k] = pn[1][k] = pd[0][k] = pd[1][k] = 0.0;
  }
  for (int j = 0; j < v.dims; ++j) {
    const double inv_s = pow2(-fixed_exponent(__uint_as_float(v.max_bits[j])));
    load(j);
    t0 = warp_prefix(x0, lane);
    t1 = children > 1 ? warp_prefix(x1, lane) : 0;
#pragma unroll
    for (int k = 0; k < lane_bins; ++k) {
      add_child(a.fn, a.lambda, from_fixed(x0[k], inv_s), wl[0][k], pn[0][k], pd[0][k]);
      add_child(a.fn, a.lambda, from_fixed(t0 - x0[k], inv_s), wr[0][k], pn[0][k], pd[0][k]);
      if (children > 1) {
        add_child(a.fn, a.lambda, from_fixed(x1[k], inv_s), wl[1][k], pn[1][k], pd[1][k]);
        add_child(a.fn, a.lambda, from_fixed(t1 - x1[k], inv_s), wr[1][k], pn[1][k], pd[1][k]);
      }
    }
  }
  const int stride = v.bin_stride;
#pragma unroll
  for (int k = 0; k < lane_bins; ++k) {
    const int b = first + k;
    if (b < nb - 1) {
      for (int ch = 0; ch < children; ++ch) {
        part_num[(pos * 2 + ch) * stride + b] = pn[ch][k];
        part_den[(pos * 2 + ch) * stride + b] = pd[ch][k];
      }
    }
  }
}

// ---- the level's split -------------------------------------------------------------------------------
// The level's best split into the search state (by the thread with `write`): the tree stops where
// there is none or it repeats an earlier level's split. Returns whether it stopped.
__device__ inline bool take_best(const search_view& v, int level, const block_best& best, bool write) {
  bool stop = best.feature < 0;
  for (int d = 0; d < level && !stop; ++d) {
    stop = v.state->splits[d].feature == best.feature && v.state->splits[d].bin == best.bin;
  }
  if (write) {
    if (stop) {
      v.state->stopped = 1;
    } else {
      v.state->splits[level] = split{best.feature, best.bin};
      v.state->count = level + 1;
    }
  }
  return stop;
}

// The best feature of v.best over all features (a total order: the same answer however the features
// fall on the threads), the search state's update, and which child of each leaf the next level
// computes (the lighter one: right_is_lighter's rule, one warp per leaf; the weights are 64-bit
// integer sums, exact in any order). Run by the score kernel's last block, after every block's
// v.best and histogram write-backs: those are read through L2 (__ldcg), never a stale L1 line.
__device__ void choose_level(const search_view& v, int level, bool last_level) {
  const int t = static_cast<int>(threadIdx.x);
  block_best mine{0.0, -1, -1};
  for (std::int64_t f = t; f < v.features; f += score_threads) {
    const std::int32_t bin = __ldcg(&v.best[f].bin);
    if (bin >= 0) keep_better(mine, __ldcg(&v.best[f].score), static_cast<std::int32_t>(f), bin);
  }
  const block_best best = block_best_of<score_threads>(mine);
  const std::int32_t feature = best.feature;
  const std::int32_t bin = best.bin;
  if (take_best(v, level, best, t == 0) || last_level) return;
  const std::uint32_t leaves = 1u << level;
  const int lane = t & 31;
  const int nb = v.bins[feature];
  for (std::uint32_t p = static_cast<std::uint32_t>(t >> 5); p < leaves; p += score_warps) {
    const long long* w =
        v.hist + (static_cast<std::int64_t>(p) * v.channels + v.dims) * v.total_bins + v.offset[feature];
    unsigned long long left = 0;  // two's complement: any order gives the same bits
    unsigned long long right = 0;
    for (int b = lane; b < nb; b += 32) {
      const auto x = static_cast<unsigned long long>(__ldcg(w + b));
      if (b <= bin) {
        left += x;
      } else {
        right += x;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      left += __shfl_xor_sync(full_mask, left, o);
      right += __shfl_xor_sync(full_mask, right, o);
    }
    if (lane == 0) v.compute_bit[p] = static_cast<long long>(right) < static_cast<long long>(left) ? 1 : 0;
  }
}

// One feature's scores (nb >= 2) and its best border into v.best[f].
template <int lane_bins>
__device__ void score_feature(const score_args& a, std::int64_t f, int nb, double* parts, double* best_score,
                              int* best_bin) {
  const search_view& v = a.v;
  double* part_num = parts;
  double* part_den = parts + score_warps * 2 * v.bin_stride;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int t = threadIdx.x;
  const std::uint32_t parents = a.level == 0 ? 1u : (1u << (a.level - 1));
  const int children = a.level == 0 ? 1 : 2;
  double num = 0.0;
  double den = cosine_den0;
  for (std::uint32_t q0 = 0; q0 < parents; q0 += score_warps) {
    const std::uint32_t q = q0 + warp;
    if (q < parents) score_parent<lane_bins>(a, f, nb, q, warp, part_num, part_den, lane);
    __syncthreads();
    if (t < nb - 1) {
      const int n = static_cast<int>(min(static_cast<std::uint32_t>(score_warps), parents - q0));
      for (int pos = 0; pos < n; ++pos) {
        for (int ch = 0; ch < children; ++ch) {
          num += part_num[(pos * 2 + ch) * v.bin_stride + t];
          den += part_den[(pos * 2 + ch) * v.bin_stride + t];
        }
      }
    }
    __syncthreads();
  }
  double score = 0.0;
  int bin = -1;
  if (t < nb - 1) {
    score = size_weighted_score(finish_score(a.fn, num, den), v.feature_weight, static_cast<std::int32_t>(f),
                                v.state->splits, a.level);
    if (a.fn == score_function::cosine && v.noise != nullptr) score += v.noise[a.level * v.features + f];
    bin = t;
  }
  best_score[t] = score;
  best_bin[t] = bin;
  __syncthreads();
  for (int s = score_threads / 2; s > 0; s >>= 1) {
    if (t < s) {
      const int ob = best_bin[t + s];
      if (ob >= 0 && (best_bin[t] < 0 || better_candidate(best_score[t + s], static_cast<std::int32_t>(f), ob,
                                                          best_score[t], static_cast<std::int32_t>(f), best_bin[t]))) {
        best_score[t] = best_score[t + s];
        best_bin[t] = ob;
      }
    }
    __syncthreads();
  }
  if (t == 0) v.best[f] = feature_best{best_score[0], best_bin[0], 0};
}

// One block per feature: every border's score over all leaves, then the feature's best border;
// with a.choose, the last block to finish then takes the level's split (choose_level).
template <int lane_bins>
__global__ void __launch_bounds__(score_threads, lane_bins <= 5 ? 2 : 1) score_kernel(const score_args a) {
  extern __shared__ double parts[];
  __shared__ double best_score[score_threads];
  __shared__ int best_bin[score_threads];
  const search_view& v = a.v;
  const std::int64_t f = v.score_begin + blockIdx.x;
  const int nb = v.bins[f];
  if (v.state->stopped != 0) return;  // every block (the last block sets it only after all have read it)
  if (nb < 2) {
    if (threadIdx.x == 0) v.best[f] = feature_best{0.0, -1, 0};
  } else {
    score_feature<lane_bins>(a, f, nb, parts, best_score, best_bin);
  }
  if (!a.choose) return;
  // The last block to finish chooses: each thread's writes made visible, then one ticket per block.
  __shared__ int is_last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(&v.state->scored, 1) == static_cast<int>(gridDim.x) - 1 ? 1 : 0;
  __syncthreads();
  if (is_last == 0) return;
  __threadfence();
  choose_level(v, a.level, a.last_level);
  if (threadIdx.x == 0) v.state->scored = 0;  // for the next level
}

// ---- the level's split, deep levels ------------------------------------------------------------------
constexpr int choose_threads = 256;

// Every block finds the best feature (the same answer); block 0 records it, and each block sets
// compute_bit for its range of leaves: the next level computes the lighter child of each leaf.
__global__ void __launch_bounds__(choose_threads) choose_kernel(search_view v, int level, bool last_level) {
  if (v.state->stopped != 0) return;
  const int t = threadIdx.x;
  const block_best best = best_feature_of_block<choose_threads>(v, 0, v.features);
  const std::int32_t feature = best.feature;
  const std::int32_t bin = best.bin;
  if (take_best(v, level, best, blockIdx.x == 0 && t == 0) || last_level) return;
  const std::uint32_t leaves = 1u << level;
  const std::uint32_t p = blockIdx.x * choose_threads + t;
  if (p >= leaves) return;
  v.compute_bit[p] = right_is_lighter(v, p, feature, bin) ? 1 : 0;
}

// ---- fixed-point der and weight (row lists) ----------------------------------------------------------------
__global__ void fixed_kernel(search_view v) {
  const double scale_der = pow2(fixed_exponent(__uint_as_float(v.max_bits[0])));
  const double scale_weight = pow2(fixed_exponent(__uint_as_float(v.max_bits[1])));
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    v.fixed[r] = make_int2(to_fixed(v.der[r], scale_der), to_fixed(v.weight[r], scale_weight));
  }
}

// ---- leaf index ----------------------------------------------------------------------------------------
constexpr int leaves_threads = 512;

// The new leaf of every row; with `list`, also the entries of the rows that the next level computes
// (stages.hpp): each block appends its rows' entries at an offset from one atomic on the count.
__global__ void __launch_bounds__(leaves_threads) leaves_kernel(search_view v, int level, bool list) {
  __shared__ unsigned warp_offset[leaves_threads / 32];
  __shared__ unsigned block_base;
  const search_state& s = *v.state;
  if (s.count <= level && level > 0) return;  // stopped before this split: the index stays
  const bool taken = s.count > level;
  const split sp = taken ? s.splits[level] : split{0, 0};
  const std::uint32_t* words = v.index + static_cast<std::int64_t>(sp.feature / 4) * v.padded_rows;
  const int shift = 8 * (sp.feature % 4);
  const bool emit = list && taken;  // block-uniform
  const std::uint32_t low = (1u << level) - 1u;
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  for (std::int64_t r0 = blockIdx.x * static_cast<std::int64_t>(blockDim.x); r0 < v.rows;
       r0 += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = r0 + threadIdx.x;
    bool in = false;
    std::uint32_t leaf = 0;
    if (r < v.rows) {
      leaf = level == 0 ? 0u : v.leaf[r];
      if (taken && static_cast<std::int32_t>((words[r] >> shift) & 0xffu) > sp.bin) leaf |= 1u << level;
      v.leaf[r] = leaf;
      // The next level computes child (leaf >> level) & 1 of parent leaf & low when compute_bit says so.
      in = emit && ((leaf >> level) & 1u) == v.compute_bit[leaf & low];
    }
    if (!emit) continue;
    const unsigned ballot = __ballot_sync(0xffffffffu, in);
    if (lane == 0) warp_offset[warp] = static_cast<unsigned>(__popc(ballot));
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned total = 0;
      for (int w = 0; w < leaves_threads / 32; ++w) {
        const unsigned n = warp_offset[w];
        warp_offset[w] = total;
        total += n;
      }
      block_base = total > 0 ? atomicAdd(v.row_count + level + 1, total) : 0u;
    }
    __syncthreads();
    if (in) {
      const unsigned at = block_base + warp_offset[warp] + static_cast<unsigned>(__popc(ballot & ((1u << lane) - 1u)));
      v.row_list[at] = make_uint2(static_cast<unsigned>(r), leaf & low);
    }
    __syncthreads();  // warp_offset and block_base are reused
  }
}

int grid_for(std::int64_t n, int threads, int cap) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(cap, (n + threads - 1) / threads)));
}

}  // namespace

void reduce_scales(const search_view& v, cudaStream_t stream) {
  if (v.rows == 0) return;
  const dim3 grid(static_cast<unsigned>(grid_for(v.rows, 512, 1024)), static_cast<unsigned>(v.channels));
  scales_kernel<<<grid, 512, 0, stream>>>(v);
  CBG_CHECK_CUDA(stream);
}

void fixed_values(const search_view& v, cudaStream_t stream) {
  if (v.rows == 0 || v.fixed == nullptr) return;
  fixed_kernel<<<grid_for(v.rows, 512, 4096), 512, 0, stream>>>(v);
  CBG_CHECK_CUDA(stream);
}

std::size_t score_shared_bytes(const search_view& v) {
  return 2 * static_cast<std::size_t>(score_warps) * 2 * v.bin_stride * sizeof(double);
}

void prepare_split_kernels(const search_view& v) {
  const int limit = static_cast<int>(2 * static_cast<std::size_t>(score_warps) * 2 * 256 * sizeof(double));
  CBG_CUDA_TRY(cudaFuncSetAttribute(score_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  CBG_CUDA_TRY(cudaFuncSetAttribute(score_kernel<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  CBG_CUDA_TRY(cudaFuncSetAttribute(score_kernel<5>, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  CBG_CUDA_TRY(cudaFuncSetAttribute(score_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  (void)v;
}

namespace {

void launch_score(const score_args& a, cudaStream_t stream) {
  const search_view& v = a.v;
  const std::int64_t scored = (v.score_end < 0 ? v.features : v.score_end) - v.score_begin;
  if (scored <= 0) return;
  const std::size_t shared = score_shared_bytes(v);
  const auto grid = static_cast<unsigned>(scored);
  if (v.bin_stride <= 64) {
    score_kernel<2><<<grid, score_threads, shared, stream>>>(a);
  } else if (v.bin_stride <= 128) {
    score_kernel<4><<<grid, score_threads, shared, stream>>>(a);
  } else if (v.bin_stride <= 160) {
    score_kernel<5><<<grid, score_threads, shared, stream>>>(a);
  } else {
    score_kernel<8><<<grid, score_threads, shared, stream>>>(a);
  }
  CBG_CHECK_CUDA(stream);
}

}  // namespace

void score_splits(const search_view& v, int level, bool last_level, score_function fn, double lambda,
                  cudaStream_t stream) {
  launch_score(score_args{v, level, last_level, fn, lambda, false}, stream);
}

int score_and_choose(const search_view& v, int level, bool last_level, score_function fn, double lambda, bool fuse,
                     cudaStream_t stream) {
  CBG_EXPECTS(v.score_begin == 0 && v.score_end < 0, status::internal, "score_and_choose: a slice of the features");
  // The score kernel's last block chooses where its warps set the compute bits quickly (a warp per
  // leaf); deeper levels take the choose kernel's thread per leaf over several blocks.
  const std::int64_t leaves = std::int64_t{1} << level;
  const bool fused = fuse && v.features > 0 && (last_level || leaves <= fused_choose_leaves);
  if (v.features > 0) launch_score(score_args{v, level, last_level, fn, lambda, fused}, stream);
  if (fused) return 1;
  const int blocks = last_level ? 1 : grid_for(leaves, choose_threads, 1 << 16);
  choose_kernel<<<blocks, choose_threads, 0, stream>>>(v, level, last_level);
  CBG_CHECK_CUDA(stream);
  return v.features > 0 ? 2 : 1;
}

void update_leaves(const search_view& v, int level, bool list, cudaStream_t stream) {
  if (v.rows == 0) return;
  const bool with_list = list && v.row_list != nullptr && v.row_count != nullptr && v.channels == 2;
  leaves_kernel<<<grid_for(v.rows, leaves_threads, 4096), leaves_threads, 0, stream>>>(v, level, with_list);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::detail
