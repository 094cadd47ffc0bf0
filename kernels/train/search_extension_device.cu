// SPDX-License-Identifier: Apache-2.0
// The GPU tree search's extra candidate columns (search_extension_device.hpp): kernels and launchers.
// Compiled with --fmad=false like split.cu, so the scores follow score_math.hpp expression for
// expression and equal the host reference's (src/train/tree_search_host.cpp) bit for bit.
#include "kernels/train/search_extension_device.hpp"

#include <algorithm>
#include <cstddef>

#include "cbg/core/cuda_check.hpp"
#include "cbg/train/score_math.hpp"
#include "kernels/train/choose_best.cuh"

namespace cbg::train::detail {

namespace {

// Histograms of every leaf of the level: [leaf][channel][total_bins] fixed-point sums (exact, so
// the order of the atomics does not matter).
__global__ void ext_histogram_kernel(search_view v, ext_columns e, int level, long long* hist) {
  const int k = blockIdx.y;
  const std::uint8_t* bins = e.bins[k];
  const std::int64_t off = e.offset[k];
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t leaf = level == 0 ? 0u : v.leaf[r];
    const std::int64_t col = off + bins[r];
    for (int c = 0; c < v.channels; ++c) {
      const float x = c < v.dims ? v.der[static_cast<std::int64_t>(c) * v.rows + r] : v.weight[r];
      const int fx = to_fixed(x, pow2(fixed_exponent(__uint_as_float(v.max_bits[c]))));
      if (fx != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(
                      hist + (static_cast<std::int64_t>(leaf) * v.channels + c) * e.total_bins + col),
                  static_cast<unsigned long long>(static_cast<long long>(fx)));
      }
    }
  }
}

// The channels (der dimensions + the weight) whose fixed-point values ext_histogram_group_kernel
// keeps in registers (the others are made again per column), and the most columns of a block.
constexpr int group_max_channels = 4;
constexpr int group_max_columns = 32;
constexpr int group_threads = 256;

__device__ inline int row_fixed(const search_view& v, int c, std::int64_t r, double scale) {
  const float x = c < v.dims ? v.der[static_cast<std::int64_t>(c) * v.rows + r] : v.weight[r];
  return to_fixed(x, scale);
}

__device__ inline double channel_scale(const search_view& v, int c) {
  return pow2(fixed_exponent(__uint_as_float(v.max_bits[c])));
}

// Adds fx to the shared sum at `cell` (see ext_histogram_group_kernel).
__device__ inline void add_shared(unsigned* lo, int* hi, int cell, int fx) {
  const auto u = static_cast<unsigned>(fx);
  const unsigned old = atomicAdd(lo + cell, u);
  const int h = (old + u < old ? 1 : 0) - (fx < 0 ? 1 : 0);
  if (h != 0) atomicAdd(hi + cell, h);
}

// The same histograms, each block adding its rows of a group of columns (blockIdx.y) into shared
// memory ([column][leaf][channel][stride], stride >= every column's bin count, a column's part
// `per_column` words: odd, so that the same cell of different columns lies in different banks) and
// then into `hist`: the sums are exact integers, so they equal ext_histogram_kernel's. A row's
// leaf and fixed-point values are read and made once for the group's columns, and the lanes of a
// warp start on different columns, so that few of a warp's atomics hit one address. Each shared
// sum is kept as two 32-bit words added with native 32-bit atomics (sm_90 has no 64-bit shared
// atomic add; the compiler would make it a compare-and-swap loop): the low word, and the high word
// counting the low word's carries minus the negative values (a value is its low 32 bits minus 2^32
// when negative).
__global__ void __launch_bounds__(group_threads)
    ext_histogram_group_kernel(search_view v, ext_columns e, int level, int stride, int per_column, int group,
                               long long* hist) {
  extern __shared__ unsigned sh32[];
  __shared__ const std::uint8_t* bins[group_max_columns];
  const int first = static_cast<int>(blockIdx.y) * group;
  const int G = min(group, e.count - first);
  const int cells = (1 << level) * v.channels * stride;  // one column's
  unsigned* lo = sh32;
  int* hi = reinterpret_cast<int*>(sh32 + static_cast<std::size_t>(group) * per_column);
  for (int i = threadIdx.x; i < 2 * group * per_column; i += blockDim.x) sh32[i] = 0u;
  if (static_cast<int>(threadIdx.x) < G) bins[threadIdx.x] = e.bins[first + static_cast<int>(threadIdx.x)];
  double scale[group_max_channels];
#pragma unroll
  for (int c = 0; c < group_max_channels; ++c) {
    scale[c] = c < v.channels ? channel_scale(v, c) : 0.0;
  }
  __syncthreads();
  const int start = static_cast<int>(threadIdx.x % 32u) % G;
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int leaf_cell = (level == 0 ? 0 : static_cast<int>(v.leaf[r])) * v.channels * stride;
    int fx[group_max_channels];
#pragma unroll
    for (int c = 0; c < group_max_channels; ++c) {
      fx[c] = c < v.channels ? row_fixed(v, c, r, scale[c]) : 0;
    }
    int g = start;
    for (int j = 0; j < G; ++j) {
      const int base = g * per_column + leaf_cell + bins[g][r];
#pragma unroll
      for (int c = 0; c < group_max_channels; ++c) {
        if (fx[c] != 0) add_shared(lo, hi, base + c * stride, fx[c]);
      }
      for (int c = group_max_channels; c < v.channels; ++c) {
        const int f = row_fixed(v, c, r, channel_scale(v, c));
        if (f != 0) add_shared(lo, hi, base + c * stride, f);
      }
      g = g + 1 == G ? 0 : g + 1;
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * per_column; i += blockDim.x) {
    const int g = i / per_column;
    const int cell = i - g * per_column;
    const int b = cell % stride;
    const int lc = cell / stride;  // leaf * channels + channel
    const unsigned long long sum =
        (static_cast<unsigned long long>(static_cast<long long>(hi[i])) << 32) + static_cast<unsigned long long>(lo[i]);
    if (cell < cells && b < e.nb[first + g] && sum != 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(hist + static_cast<std::int64_t>(lc) * e.total_bins +
                                                      e.offset[first + g] + b),
                sum);
    }
  }
}

// One thread per (leaf, channel, column): the column's bins turned into their running sums, in
// place (exact integers, so a border's left side, one read, equals the bins added up).
__global__ void ext_prefix_kernel(search_view v, ext_columns e, int level, long long* hist) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t lanes = (std::int64_t{1} << level) * v.channels;  // leaf * channels + channel
  if (i >= lanes * e.count) return;
  const int k = static_cast<int>(i % e.count);
  long long* h = hist + (i / e.count) * e.total_bins + e.offset[k];
  long long sum = 0;
  for (int x = 0; x < e.nb[k]; ++x) {
    sum += h[x];
    h[x] = sum;
  }
}

// One thread per (column, border): the border's score as search_tree_host adds it up, from the
// running sums of ext_prefix_kernel.
__global__ void ext_score_kernel(search_view v, ext_columns e, const long long* hist, int level, score_function fn,
                                 double lambda, double* scores) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const int k = static_cast<int>(i / e.max_borders);
  const int b = static_cast<int>(i % e.max_borders);
  if (k >= e.count) return;
  const int nb = e.nb[k];
  if (b >= nb - 1) return;
  const std::int64_t off = e.offset[k];
  const double inv_w = pow2(-fixed_exponent(__uint_as_float(v.max_bits[v.dims])));
  const std::uint32_t leaves = 1u << level;
  double num = 0.0;
  double den = cosine_den0;
  for (std::uint32_t li = 0; li < leaves; ++li) {
    const std::uint32_t p = visit_leaf(level, li);
    const long long* wh = hist + (static_cast<std::int64_t>(p) * v.channels + v.dims) * e.total_bins + off;
    const long long total_w = wh[nb - 1];
    const long long prefix = wh[b];
    const double w_left = from_fixed(prefix, inv_w);
    const double w_right = from_fixed(total_w - prefix, inv_w);
    double pn = 0.0;
    double pd = 0.0;
    for (int j = 0; j < v.dims; ++j) {
      const long long* sh = hist + (static_cast<std::int64_t>(p) * v.channels + j) * e.total_bins + off;
      const double inv_s = pow2(-fixed_exponent(__uint_as_float(v.max_bits[j])));
      const long long total_s = sh[nb - 1];
      const long long prefix_s = sh[b];
      add_child(fn, lambda, from_fixed(prefix_s, inv_s), w_left, pn, pd);
      add_child(fn, lambda, from_fixed(total_s - prefix_s, inv_s), w_right, pn, pd);
    }
    num += pn;
    den += pd;
  }
  double score = size_weighted_score(finish_score(fn, num, den), e.weight, k, nullptr, 0);
  if (fn == score_function::cosine && e.noise != nullptr) score += e.noise[k];
  scores[i] = score;
}

// Thread 0 of a block writes the record whole (every word, reserved ones included).
__device__ inline void write_record(const search_view& v, const float* borders, int column, int bin, ext_record* out) {
  ext_record r;
  r.column = column;
  r.bin = bin;
  r.state = *v.state;
  for (int i = 0; i < max_depth; ++i) {
    const split sp = r.state.splits[i];
    const bool pool_split = i < r.state.count && sp.feature >= 0 && sp.feature < v.features && sp.bin >= 0 &&
                            sp.bin < quantize::border_stride;
    r.borders[i] =
        pool_split ? borders[static_cast<std::int64_t>(sp.feature) * quantize::border_stride + sp.bin] : 0.0f;
  }
  *out = r;
}

// The record without a choice (a level whose previous one read nothing back).
__global__ void ext_state_kernel(search_view v, const float* borders, ext_record* out) {
  write_record(v, borders, -1, -1, out);
}

constexpr int choose_threads = 256;

// The best of the pool's features (v.best) and the columns (feature v.features + k), as the host
// scans them: a total order, so a reduction gives the same answer. No choice when the derivatives
// hold a NaN or infinity (state.status: the search fails after the tree).
__global__ void __launch_bounds__(choose_threads)
    ext_choose_kernel(search_view v, ext_columns e, const double* scores, const float* borders, ext_record* out) {
  block_best mine = thread_best_feature<choose_threads>(v, 0, v.features);
  const std::int64_t cells = static_cast<std::int64_t>(e.count) * e.max_borders;
  for (std::int64_t i = threadIdx.x; i < cells; i += choose_threads) {
    const int k = static_cast<int>(i / e.max_borders);
    const int b = static_cast<int>(i % e.max_borders);
    if (b < e.nb[k] - 1) keep_better(mine, scores[i], static_cast<std::int32_t>(v.features + k), b);
  }
  const block_best best = block_best_of<choose_threads>(mine);
  if (threadIdx.x == 0) {
    const bool ext = best.feature >= v.features && v.state->status == 0;
    write_record(v, borders, ext ? static_cast<int>(best.feature - v.features) : -1, ext ? best.bin : -1, out);
  }
}

__global__ void ext_take_kernel(search_state* s, int level, split sp, int stop) {
  take_split(*s, level, sp, stop != 0);
}

// The next level computes the lighter child of each leaf (as choose_kernel), from the running sums
// of ext_prefix_kernel.
__global__ void ext_compute_bit_kernel(search_view v, ext_columns e, const long long* hist, int level, int k, int bin) {
  const std::uint32_t p = blockIdx.x * static_cast<std::uint32_t>(blockDim.x) + threadIdx.x;
  if (p >= (1u << level)) return;
  const long long* w = hist + (static_cast<std::int64_t>(p) * v.channels + v.dims) * e.total_bins + e.offset[k];
  const long long left = w[bin];
  const long long right = w[e.nb[k] - 1] - left;
  v.compute_bit[p] = right < left ? 1 : 0;
}

__global__ void ext_leaves_kernel(search_view v, const std::uint8_t* bins, int level, int bin) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t leaf = level == 0 ? 0u : v.leaf[r];
    if (static_cast<int>(bins[r]) > bin) leaf |= 1u << level;
    v.leaf[r] = leaf;
  }
}

unsigned grid_for(std::int64_t n, int threads, int cap) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(cap, (n + threads - 1) / threads)));
}

}  // namespace

void ext_state(const search_view& v, const float* borders, ext_record* out, cudaStream_t stream) {
  ext_state_kernel<<<1, 1, 0, stream>>>(v, borders, out);
  CBG_CHECK_CUDA(stream);
}

void ext_histograms(const search_view& v, const ext_columns& e, int level, bool global_only, long long* hist,
                    cudaStream_t stream) {
  if (v.rows <= 0 || e.count <= 0) return;
  const int K = e.count;
  const std::int64_t leaves = std::int64_t{1} << level;
  const int stride = e.max_borders + 1;
  // A block's shared histograms: as many columns as fit 24 KiB (8 blocks of 256 threads share an
  // SM's 228 KiB), or one column up to the default 48 KiB less the column table.
  const std::int64_t cells = leaves * v.channels * stride;
  const std::int64_t per_column = cells | 1;
  const std::int64_t column_bytes = 2 * per_column * static_cast<std::int64_t>(sizeof(unsigned));
  constexpr std::int64_t group_bytes = 24 * 1024;
  constexpr std::int64_t most_bytes = 48 * 1024 - group_max_columns * static_cast<std::int64_t>(sizeof(void*));
  const bool shared = !global_only && column_bytes <= most_bytes;
  if (!shared) {
    const dim3 grid(grid_for(v.rows, 256, std::max(1, 2048 / K)), static_cast<unsigned>(K));
    ext_histogram_kernel<<<grid, 256, 0, stream>>>(v, e, level, hist);
    CBG_CHECK_CUDA(stream);
    return;
  }
  const int group = static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>({K, group_max_columns, group_bytes / column_bytes})));
  const int groups = (K + group - 1) / group;
  // About 2048 blocks in all, each over at least 8 rows per shared cell of a column (its flush adds
  // each of them to `hist`).
  const std::int64_t most_blocks = std::max<std::int64_t>(1, v.rows / (8 * leaves * stride));
  const auto x_blocks = static_cast<int>(std::min<std::int64_t>(std::max(1, 2048 / groups), most_blocks));
  const dim3 grid(grid_for(v.rows, group_threads, x_blocks), static_cast<unsigned>(groups));
  const auto bytes = static_cast<std::size_t>(group * column_bytes);
  ext_histogram_group_kernel<<<grid, group_threads, bytes, stream>>>(v, e, level, stride, static_cast<int>(per_column),
                                                                     group, hist);
  CBG_CHECK_CUDA(stream);
}

void ext_scores(const search_view& v, const ext_columns& e, long long* hist, int level, score_function fn,
                double lambda, double* scores, cudaStream_t stream) {
  const std::int64_t lanes = (std::int64_t{1} << level) * v.channels * e.count;
  ext_prefix_kernel<<<grid_for(lanes, 128, 1 << 20), 128, 0, stream>>>(v, e, level, hist);
  CBG_CHECK_CUDA(stream);
  const std::int64_t cells = static_cast<std::int64_t>(e.count) * e.max_borders;
  ext_score_kernel<<<grid_for(cells, 128, 1 << 20), 128, 0, stream>>>(v, e, hist, level, fn, lambda, scores);
  CBG_CHECK_CUDA(stream);
}

void ext_choose(const search_view& v, const ext_columns& e, const double* scores, const float* borders, ext_record* out,
                cudaStream_t stream) {
  ext_choose_kernel<<<1, choose_threads, 0, stream>>>(v, e, scores, borders, out);
  CBG_CHECK_CUDA(stream);
}

void ext_take(search_state* s, int level, split sp, bool stop, cudaStream_t stream) {
  ext_take_kernel<<<1, 1, 0, stream>>>(s, level, sp, stop ? 1 : 0);
  CBG_CHECK_CUDA(stream);
}

void ext_compute_bits(const search_view& v, const ext_columns& e, const long long* hist, int level, int k, int bin,
                      cudaStream_t stream) {
  const std::size_t leaves = std::size_t{1} << level;
  ext_compute_bit_kernel<<<grid_for(static_cast<std::int64_t>(leaves), 256, 1 << 16), 256, 0, stream>>>(v, e, hist,
                                                                                                        level, k, bin);
  CBG_CHECK_CUDA(stream);
}

void ext_leaves(const search_view& v, const std::uint8_t* bins, int level, int bin, cudaStream_t stream) {
  if (v.rows <= 0) return;
  ext_leaves_kernel<<<grid_for(v.rows, 512, 4096), 512, 0, stream>>>(v, bins, level, bin);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::detail
