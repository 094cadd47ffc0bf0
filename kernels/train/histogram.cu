// SPDX-License-Identifier: Apache-2.0
// One level's histograms: for every row of a computed child, its fixed-point channel values are
// added to the (child, feature, bin) cells of the features of one packed word group.
//
// A block owns a unit = (group of 4 features, a subset of them, a range of computed children) and
// a contiguous range of rows. The work space (row chunk, unit, row) is cut into equal contiguous
// ranges, one per block, so blocks are balanced and the blocks running together read the same rows'
// der/weight/leaf (served by L2 after the first). The block keeps 32-bit counters in shared memory,
// biased at 2^31: a shared atomicAdd returns the old value, so the rare add that wraps the counter
// adds the 2^32 it lost (or gained) to the 64-bit global cell right away; at the end of a range the
// counters minus the bias go to the global cells with 64-bit integer atomics. Every sum is exact, so
// the order of the adds does not matter: the histograms are deterministic.
//
// Two kernels: histogram_fast (one dimension: the four features of a group, counters bin-major so
// random bins spread over the banks, a row's eight atomics issued back to back with the wrap checks
// after them, and at levels >= 1 each warp packs its rows of computed children into a staging area
// so that all lanes work) and histogram_simple (any number of dimensions and features per block).
// With row lists (stages.hpp), histogram_fast's levels >= 1 walk the list of the computed children's
// rows that the leaf update wrote (row, parent) instead of every row (no leaf reads, no staging), and
// every level takes the rows' fixed-point der and weight from the per-tree array (no conversions).
#include <algorithm>

#include "kernels/train/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/train/score_math.hpp"

namespace cbg::train::detail {

namespace {

constexpr unsigned bias = 0x80000000u;

struct hist_args {
  search_view v;
  histogram_plan plan;
  int level;
  std::uint32_t half;       // 2^(level-1), 0 at level 0
  std::uint32_t slot_base;  // global slot of computed child 0: half (level 0: 0)
  std::uint32_t n_slots;    // computed children: max(1, half)
};

__device__ __forceinline__ unsigned long long global_cell(const hist_args& a, std::uint32_t slot, int c,
                                                          std::int64_t column) {
  return (static_cast<unsigned long long>(slot) * a.v.channels + c) * a.v.total_bins + column;
}

// Adds x to a biased counter; a wrap goes to the global cell at once.
__device__ __forceinline__ void add_counter(unsigned* cell, int x, long long* global) {
  const unsigned old = atomicAdd(cell, static_cast<unsigned>(x));
  const unsigned now = old + static_cast<unsigned>(x);
  if (x > 0 && now < old) {
    atomicAdd(reinterpret_cast<unsigned long long*>(global), 1ull << 32);
  } else if (x < 0 && now > old) {
    atomicAdd(reinterpret_cast<unsigned long long*>(global), static_cast<unsigned long long>(-(1ll << 32)));
  }
}

// The block's equal share [begin, end) of the work space (row chunk, unit, row).
struct work_share {
  std::int64_t begin;
  std::int64_t end;
};
__device__ __forceinline__ work_share block_share(const histogram_plan& p) {
  const std::int64_t total = static_cast<std::int64_t>(p.row_chunks) * p.units * p.row_chunk;
  return {total * blockIdx.x / gridDim.x, total * (blockIdx.x + 1) / gridDim.x};
}

// The rows of one unit that the share holds from work position w on (possibly none, past the last
// row); moves w past them.
struct row_range {
  std::int64_t begin;
  std::int64_t end;
  int unit;
};
__device__ __forceinline__ row_range next_range(const histogram_plan& p, std::int64_t rows, std::int64_t& w,
                                                std::int64_t share_end) {
  const std::int64_t item = w / p.row_chunk;
  const std::int64_t item_end = min(share_end, (item + 1) * p.row_chunk);
  const std::int64_t first_row = (item / p.units) * p.row_chunk;
  const row_range r{first_row + (w - item * p.row_chunk), min(rows, first_row + (item_end - item * p.row_chunk)),
                    static_cast<int>(item % p.units)};
  w = item_end;
  return r;
}

// CT: the channel count when it is 2 (one dimension), else 0 (any; read at run time).
template <int CT>
__global__ void __launch_bounds__(histogram_threads) histogram_simple(const hist_args a) {
  extern __shared__ unsigned counters[];
  __shared__ double scales[max_channels];
  __shared__ std::int32_t bins_of[4];
  __shared__ std::int64_t offset_of[4];
  if (a.v.state->stopped != 0) return;
  const int channels = CT != 0 ? CT : a.v.channels;
  const histogram_plan& p = a.plan;
  const int fpb = p.features_per_block;
  const int subsets = 4 / fpb;
  const int chunks = static_cast<int>((a.n_slots + p.slots_per_pass - 1) / p.slots_per_pass);
  const std::int64_t cells = static_cast<std::int64_t>(p.slots_per_pass) * fpb * a.v.bin_stride * channels;

  for (int c = threadIdx.x; c < channels; c += blockDim.x) {
    scales[c] = pow2(fixed_exponent(__uint_as_float(a.v.max_bits[c])));
  }
  const work_share share = block_share(p);
  for (std::int64_t w = share.begin; w < share.end;) {
    const row_range range = next_range(p, a.v.rows, w, share.end);
    if (range.begin >= range.end) continue;
    const std::int64_t r_begin = range.begin;
    const std::int64_t r_end = range.end;
    const int unit = range.unit;
    const int chunk = unit % chunks;
    const int subset = (unit / chunks) % subsets;
    const int group = unit / (chunks * subsets);
    const std::uint32_t s0 = static_cast<std::uint32_t>(chunk) * p.slots_per_pass;
    const std::uint32_t s_count = min(static_cast<std::uint32_t>(p.slots_per_pass), a.n_slots - s0);
    const int j0 = subset * fpb;
    __syncthreads();  // the previous range's flush is done
    if (threadIdx.x < 4) {
      const std::int64_t f = 4 * static_cast<std::int64_t>(group) + j0 + threadIdx.x;
      const bool in = static_cast<int>(threadIdx.x) < fpb && f < a.v.features;
      bins_of[threadIdx.x] = in ? a.v.bins[f] : 0;
      offset_of[threadIdx.x] = in ? a.v.offset[f] : 0;
    }
    for (std::int64_t i = threadIdx.x; i < cells; i += blockDim.x) counters[i] = bias;
    __syncthreads();

    const std::uint32_t* words = a.v.index + static_cast<std::int64_t>(group) * a.v.padded_rows;
    const int level = a.level;
    // Four rows per thread at a time: their loads are all in flight before the first add.
    constexpr int unroll = 4;
    for (std::int64_t base = r_begin + threadIdx.x; base < r_end; base += unroll * blockDim.x) {
      std::uint32_t word[unroll];
      std::uint32_t slot[unroll];
      float dv[unroll];
      float wv[unroll];
#pragma unroll
      for (int k = 0; k < unroll; ++k) {
        const std::int64_t r = base + static_cast<std::int64_t>(k) * blockDim.x;
        slot[k] = ~0u;
        if (r < r_end) {
          slot[k] = level > 0 ? a.v.leaf[r] : 0u;
          word[k] = words[r];
          if constexpr (CT != 0) {
            dv[k] = a.v.der[r];
            wv[k] = a.v.weight[r];
          }
        }
      }
      if (level > 0) {
#pragma unroll
        for (int k = 0; k < unroll; ++k) {
          if (slot[k] == ~0u) continue;
          const std::uint32_t leaf = slot[k];
          const std::uint32_t q = leaf & (a.half - 1);
          const std::uint32_t bit = (leaf >> (level - 1)) & 1u;
          slot[k] = (bit == a.v.compute_bit[q] && q >= s0 && q < s0 + s_count) ? q - s0 : ~0u;
        }
      }
#pragma unroll
      for (int k = 0; k < unroll; ++k) {
        if (slot[k] == ~0u) continue;
        const std::int64_t r = base + static_cast<std::int64_t>(k) * blockDim.x;
        const std::uint32_t ls = slot[k];
        int fixed[CT != 0 ? CT : 1];
        if constexpr (CT != 0) {
          fixed[0] = to_fixed(dv[k], scales[0]);
          fixed[1] = to_fixed(wv[k], scales[1]);
        }
        for (int jj = 0; jj < fpb; ++jj) {
          const std::int32_t nb = bins_of[jj];
          if (nb == 0) continue;
          const std::uint32_t bin = (word[k] >> (8 * (j0 + jj))) & 0xffu;
          const std::int64_t cell = ((static_cast<std::int64_t>(ls) * fpb + jj) * a.v.bin_stride + bin) * channels;
          for (int c = 0; c < channels; ++c) {
            int x;
            if constexpr (CT != 0) {
              x = fixed[c];
            } else {
              const float* src = c < a.v.dims ? a.v.der + static_cast<std::int64_t>(c) * a.v.rows : a.v.weight;
              x = to_fixed(src[r], scales[c]);
            }
            if (x == 0) continue;
            add_counter(&counters[cell + c], x,
                        a.v.hist + global_cell(a, a.slot_base + s0 + ls, c, offset_of[jj] + bin));
          }
        }
      }
    }
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < cells; i += blockDim.x) {
      const long long sum = static_cast<long long>(counters[i]) - static_cast<long long>(bias);
      if (sum == 0) continue;
      std::int64_t rest = i;
      const int c = static_cast<int>(rest % channels);
      rest /= channels;
      const int bin = static_cast<int>(rest % a.v.bin_stride);
      rest /= a.v.bin_stride;
      const int jj = static_cast<int>(rest % fpb);
      const auto ls = static_cast<std::uint32_t>(rest / fpb);
      atomicAdd(reinterpret_cast<unsigned long long*>(a.v.hist +
                                                      global_cell(a, a.slot_base + s0 + ls, c, offset_of[jj] + bin)),
                static_cast<unsigned long long>(sum));
    }
  }
}

// ---- histogram_fast ----------------------------------------------------------------------------------
constexpr int stage_rows = 4 * 32;  // a warp's rows per round: 4 per lane
constexpr std::size_t stage_bytes = static_cast<std::size_t>(histogram_threads / 32) * stage_rows * sizeof(uint4);
constexpr int max_groups_per_block = 4;

__device__ __forceinline__ std::size_t fast_counter_words(const histogram_plan& p, int bin_stride) {
  return (static_cast<std::size_t>(p.slots_per_pass) * p.groups_per_block * 8 * bin_stride + 3) / 4 *
         4;  // 16-byte aligned
}

__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// G: packed word groups (4 features each) a block adds per row it reads, so that the row's der,
// weight and leaf are read once for 4G features (G = 1: one group per block).
template <int G>
__global__ void __launch_bounds__(histogram_threads, 2) histogram_fast(const hist_args a) {
  extern __shared__ unsigned counters[];  // [slot][group of G][feature of 4][der, weight][bin]; then staging
  __shared__ double scales[2];
  __shared__ std::int32_t bins_of[4 * G];
  __shared__ std::int64_t offset_of[4 * G];
  if (a.v.state->stopped != 0) return;
  const int level = a.level;
  // Levels >= 1 with a row list: the work space is the list's entries (rows of computed children only).
  const bool from_list = level > 0 && a.v.row_list != nullptr;
  // Level 0 with the rows' fixed-point values computed once per tree: every row, no conversions.
  const bool fixed_rows = level == 0 && a.v.fixed != nullptr;
  histogram_plan p = a.plan;
  const std::int64_t items = from_list ? static_cast<std::int64_t>(a.v.row_count[level]) : a.v.rows;
  if (from_list) p.row_chunk = max(std::int64_t{1}, (items + p.row_chunks - 1) / p.row_chunks);
  const int bs = a.v.bin_stride;
  const int chunks = static_cast<int>((a.n_slots + p.slots_per_pass - 1) / p.slots_per_pass);
  const std::int64_t cells = static_cast<std::int64_t>(p.slots_per_pass) * G * 8 * bs;
  const std::int64_t groups = (a.v.features + 3) / 4;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const unsigned below = (1u << lane) - 1u;
  uint4* stage = reinterpret_cast<uint4*>(counters + fast_counter_words(p, bs)) + (threadIdx.x >> 5) * stage_rows;

  if (threadIdx.x < 2) scales[threadIdx.x] = pow2(fixed_exponent(__uint_as_float(a.v.max_bits[threadIdx.x])));
  const work_share share = block_share(p);
  for (std::int64_t w = share.begin; w < share.end;) {
    const row_range range = next_range(p, items, w, share.end);
    if (range.begin >= range.end) continue;
    const std::int64_t r_begin = range.begin;
    const std::int64_t r_end = range.end;
    const int unit = range.unit;
    const int chunk = unit % chunks;
    const std::int64_t group0 = static_cast<std::int64_t>(unit / chunks) * G;
    const std::uint32_t s0 = static_cast<std::uint32_t>(chunk) * p.slots_per_pass;
    const std::uint32_t s_count = min(static_cast<std::uint32_t>(p.slots_per_pass), a.n_slots - s0);
    __syncthreads();  // the previous range's flush is done
    if (threadIdx.x < 4 * G) {
      const std::int64_t f = 4 * group0 + threadIdx.x;
      const bool in = f < a.v.features;
      bins_of[threadIdx.x] = in ? a.v.bins[f] : 0;
      offset_of[threadIdx.x] = in ? a.v.offset[f] : 0;
    }
    for (std::int64_t i = threadIdx.x; i < cells; i += blockDim.x) counters[i] = bias;
    __syncthreads();
    const std::uint32_t* words[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      words[g] = a.v.index + min(group0 + g, groups - 1) * a.v.padded_rows;
    }

    // One row's eight adds for group g (4 features x der, weight), then the rare wraps. A feature
    // without bins (bins_of 0: padding, no borders) gets adds too, to counters that are never flushed,
    // and no wrap adjustment. A counter can only wrap when it was within 2^24 (the largest |x|,
    // score_math.hpp) of 0 / 2^32, so one cheap test per add finds the candidates for the exact check.
    const auto accumulate = [&](std::uint32_t word, int xd, int xw, std::uint32_t ls, int g) {
      unsigned* cells = counters + (ls * G + static_cast<unsigned>(g)) * 8u * static_cast<unsigned>(bs);
      unsigned old[8];
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
        unsigned* cell = cells + 2 * jj * bs + ((word >> (8 * jj)) & 0xffu);
        old[2 * jj] = atomicAdd(cell, static_cast<unsigned>(xd));
        old[2 * jj + 1] = atomicAdd(cell + bs, static_cast<unsigned>(xw));
      }
      unsigned near = 0;
#pragma unroll
      for (int i = 0; i < 8; ++i) near |= old[i] + 0x01000000u < 0x02000000u ? 1u : 0u;
      if (near != 0) {
        for (int i = 0; i < 8; ++i) {
          const int jj = i / 2;
          const int x = (i & 1) != 0 ? xw : xd;
          const unsigned now = old[i] + static_cast<unsigned>(x);
          if (!((x > 0 && now < old[i]) || (x < 0 && now > old[i])) || bins_of[4 * g + jj] == 0) continue;
          const std::uint32_t bin = (word >> (8 * jj)) & 0xffu;
          const long long adjust = x > 0 ? (1ll << 32) : -(1ll << 32);
          atomicAdd(reinterpret_cast<unsigned long long*>(
                        a.v.hist + global_cell(a, a.slot_base + s0 + ls, i & 1, offset_of[4 * g + jj] + bin)),
                    static_cast<unsigned long long>(adjust));
        }
      }
    };

    if (from_list || fixed_rows) {
      // Level 0: every row of the range; levels >= 1: the list's entries (rows of computed children
      // and their parents). Each lane adds its own rows (no staging): the group words and the row's
      // fixed-point values gathered by row.
      constexpr int list_unroll = G >= 4 ? 2 : 4;
      for (std::int64_t base = r_begin + threadIdx.x; base < r_end; base += list_unroll * blockDim.x) {
        uint2 e[list_unroll];  // row, parent
        bool ok[list_unroll];
        int2 x[list_unroll];
        std::uint32_t wg[list_unroll][G];
#pragma unroll
        for (int k = 0; k < list_unroll; ++k) {
          const std::int64_t i = base + static_cast<std::int64_t>(k) * blockDim.x;
          ok[k] = i < r_end;
          e[k] = make_uint2(static_cast<unsigned>(i), 0u);
          if (from_list && ok[k]) e[k] = a.v.row_list[i];
        }
#pragma unroll
        for (int k = 0; k < list_unroll; ++k) {
          ok[k] = ok[k] && e[k].y >= s0 && e[k].y < s0 + s_count;
          if (ok[k]) {
            x[k] = a.v.fixed[e[k].x];
#pragma unroll
            for (int g = 0; g < G; ++g) wg[k][g] = words[g][e[k].x];
          }
        }
#pragma unroll
        for (int k = 0; k < list_unroll; ++k) {
          if (!ok[k]) continue;
#pragma unroll
          for (int g = 0; g < G; ++g) {
            if (group0 + g < groups) accumulate(wg[k][g], x[k].x, x[k].y, e[k].y - s0, g);
          }
        }
      }
    }
    constexpr int unroll = 4;
    // Warp-uniform loop: the warp's first row decides, so every lane takes part in the ballots.
    for (std::int64_t base = r_begin + (threadIdx.x & ~31u); !from_list && !fixed_rows && base < r_end;
         base += unroll * blockDim.x) {
      if (p.prefetch) {
        // The next round's rows into L2 while this round's adds run (no registers held).
#pragma unroll
        for (int k = 0; k < unroll; ++k) {
          const std::int64_t r = base + unroll * blockDim.x + lane + static_cast<std::int64_t>(k) * blockDim.x;
          if (r < r_end) {
#pragma unroll
            for (int g = 0; g < G; ++g) prefetch_l2(words[g] + r);
            prefetch_l2(a.v.der + r);
            prefetch_l2(a.v.weight + r);
            if (level > 0) prefetch_l2(a.v.leaf + r);
          }
        }
      }
      std::uint32_t word[unroll][G];
      std::uint32_t slot[unroll];
      float dv[unroll];
      float wv[unroll];
#pragma unroll
      for (int k = 0; k < unroll; ++k) {
        const std::int64_t r = base + lane + static_cast<std::int64_t>(k) * blockDim.x;
        slot[k] = ~0u;
        if (r < r_end) {
          slot[k] = level > 0 ? a.v.leaf[r] : 0u;
#pragma unroll
          for (int g = 0; g < G; ++g) word[k][g] = words[g][r];
          dv[k] = a.v.der[r];
          wv[k] = a.v.weight[r];
        }
      }
      if (level == 0) {
#pragma unroll
        for (int k = 0; k < unroll; ++k) {
          if (slot[k] == ~0u) continue;
          const int xd = to_fixed(dv[k], scales[0]);
          const int xw = to_fixed(wv[k], scales[1]);
#pragma unroll
          for (int g = 0; g < G; ++g) {
            if (group0 + g < groups) accumulate(word[k][g], xd, xw, 0u, g);
          }
        }
        continue;
      }
      // Rows of computed children only, packed into the warp's staging area (G = 1: the word; else
      // the row, whose G words are read again from L1/L2 when added).
      int n = 0;
#pragma unroll
      for (int k = 0; k < unroll; ++k) {
        bool valid = false;
        std::uint32_t ls = 0;
        if (slot[k] != ~0u) {
          const std::uint32_t leaf = slot[k];
          const std::uint32_t q = leaf & (a.half - 1);
          const std::uint32_t bit = (leaf >> (level - 1)) & 1u;
          valid = bit == a.v.compute_bit[q] && q >= s0 && q < s0 + s_count;
          ls = q - s0;
        }
        const unsigned ballot = __ballot_sync(0xffffffffu, valid);
        if (valid) {
          const std::uint32_t first =
              G == 1 ? word[k][0]
                     : static_cast<std::uint32_t>(base + lane + static_cast<std::int64_t>(k) * blockDim.x - r_begin);
          stage[n + __popc(ballot & below)] = make_uint4(first, static_cast<unsigned>(to_fixed(dv[k], scales[0])),
                                                         static_cast<unsigned>(to_fixed(wv[k], scales[1])), ls);
        }
        n += __popc(ballot);
      }
      __syncwarp();
      for (int i = lane; i < n; i += 32) {
        const uint4 e = stage[i];
        if constexpr (G == 1) {
          accumulate(e.x, static_cast<int>(e.y), static_cast<int>(e.z), e.w, 0);
        } else {
          std::uint32_t wg[G];
#pragma unroll
          for (int g = 0; g < G; ++g) wg[g] = words[g][r_begin + e.x];
#pragma unroll
          for (int g = 0; g < G; ++g) {
            if (group0 + g < groups) accumulate(wg[g], static_cast<int>(e.y), static_cast<int>(e.z), e.w, g);
          }
        }
      }
      __syncwarp();
    }
    __syncthreads();
    for (std::int64_t i = threadIdx.x; i < cells; i += blockDim.x) {
      const long long sum = static_cast<long long>(counters[i]) - static_cast<long long>(bias);
      if (sum == 0) continue;
      const int bin = static_cast<int>(i % bs);
      const std::int64_t rest = i / bs;
      const int c = static_cast<int>(rest & 1);
      const int jj = static_cast<int>((rest >> 1) & 3);
      const int g = static_cast<int>((rest >> 3) % G);
      const auto ls = static_cast<std::uint32_t>((rest >> 3) / G);
      if (bin >= bins_of[4 * g + jj]) continue;
      atomicAdd(reinterpret_cast<unsigned long long*>(
                    a.v.hist + global_cell(a, a.slot_base + s0 + ls, c, offset_of[4 * g + jj] + bin)),
                static_cast<unsigned long long>(sum));
    }
  }
}

using hist_kernel = void (*)(hist_args);
hist_kernel fast_kernel_of(int groups_per_block) {
  switch (groups_per_block) {
    case 2:
      return histogram_fast<2>;
    case 4:
      return histogram_fast<4>;
    default:
      return histogram_fast<1>;
  }
}

int sm_count(int device) {
  int n = 0;
  CBG_CUDA_TRY(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

int max_shared(int device) {
  int n = 0;
  CBG_CUDA_TRY(cudaDeviceGetAttribute(&n, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return n;
}

}  // namespace

histogram_plan plan_histogram(const search_view& v, int level, int device, int blocks_per_sm, bool fast,
                              int groups_per_block, bool prefetch) {
  histogram_plan p;
  p.fast = fast && v.channels == 2;
  p.prefetch = prefetch;
  const std::int64_t groups = (v.features + 3) / 4;
  const std::uint32_t n_slots = level == 0 ? 1u : (1u << (level - 1));
  const std::size_t per_slot_feature = static_cast<std::size_t>(v.bin_stride) * v.channels * sizeof(unsigned);
  // Less the kernel's static shared memory (scales, per-feature bins and offsets) and, for the fast
  // kernel, the warps' staging areas.
  const std::size_t budget = static_cast<std::size_t>(max_shared(device)) - max_channels * sizeof(double) - 1024 -
                             (p.fast ? stage_bytes + 16 : 0);
  // Fewest passes over the rows: all four features of a group per block when that fits.
  p.features_per_block = 4;
  while (!p.fast && p.features_per_block > 1 && per_slot_feature * p.features_per_block > budget) {
    p.features_per_block /= 2;
  }
  // Groups per block (fast kernel): as asked while every computed child of the level fits at once
  // and there are groups to share (else fewer).
  p.groups_per_block = 1;
  if (p.fast) {
    const int want_groups = std::clamp(groups_per_block, 1, max_groups_per_block);
    for (int g = want_groups; g > 1; g /= 2) {
      if (g <= groups && per_slot_feature * 4 * static_cast<std::size_t>(g) * n_slots <= budget) {
        p.groups_per_block = g;
        break;
      }
    }
  }
  const std::size_t per_slot = per_slot_feature * p.features_per_block * static_cast<std::size_t>(p.groups_per_block);
  CBG_EXPECTS(per_slot <= budget, status::unsupported,
              "tree search: one feature's histogram does not fit the GPU's shared memory (too many dimensions)");
  p.slots_per_pass = static_cast<int>(std::min<std::size_t>(n_slots, budget / per_slot));
  const int chunks = static_cast<int>((n_slots + p.slots_per_pass - 1) / p.slots_per_pass);
  const std::int64_t group_blocks = (groups + p.groups_per_block - 1) / p.groups_per_block;
  p.units = static_cast<int>(group_blocks * (4 / p.features_per_block) * chunks);
  p.shared_bytes = p.fast ? (per_slot * p.slots_per_pass + 15) / 16 * 16 + stage_bytes : per_slot * p.slots_per_pass;

  const int sms = sm_count(device);
  int resident = 0;
  const auto kernel = p.fast            ? fast_kernel_of(p.groups_per_block)
                      : v.channels == 2 ? histogram_simple<2>
                                        : histogram_simple<0>;
  // The same limit for every plan (the largest any takes), so plans of other workspaces never clash.
  const std::size_t limit = static_cast<std::size_t>(max_shared(device)) - max_channels * sizeof(double) - 1024;
  CBG_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(limit)));
  CBG_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, histogram_threads, p.shared_bytes));
  resident = std::max(1, std::min(resident, blocks_per_sm));
  const std::int64_t want = static_cast<std::int64_t>(resident) * sms;
  // Row chunks so that the blocks running together share rows: about one unit per block.
  p.row_chunks = static_cast<int>(std::max<std::int64_t>(1, want / std::max(1, p.units)));
  p.row_chunks = static_cast<int>(std::min<std::int64_t>(p.row_chunks, std::max<std::int64_t>(1, v.rows / 4096)));
  p.row_chunk = std::max<std::int64_t>(1, (v.rows + p.row_chunks - 1) / p.row_chunks);
  const std::int64_t work = static_cast<std::int64_t>(p.row_chunks) * p.units * p.row_chunk;
  p.blocks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(want, (work + 4095) / 4096)));
  return p;
}

void build_histograms(const search_view& v, const histogram_plan& plan, int level, cudaStream_t stream) {
  if (v.total_bins == 0 || v.rows == 0) return;
  hist_args a{v, plan, level, 0u, 0u, 1u};
  if (level > 0) {
    a.half = 1u << (level - 1);
    a.slot_base = a.half;
    a.n_slots = a.half;
  }
  if (plan.fast) {
    fast_kernel_of(plan.groups_per_block)<<<plan.blocks, histogram_threads, plan.shared_bytes, stream>>>(a);
  } else if (v.channels == 2) {
    histogram_simple<2><<<plan.blocks, histogram_threads, plan.shared_bytes, stream>>>(a);
  } else {
    histogram_simple<0><<<plan.blocks, histogram_threads, plan.shared_bytes, stream>>>(a);
  }
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::detail
