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

// CT: the channel count when it is 2 (one dimension), else 0 (any; read at run time).
template <int CT>
__global__ void __launch_bounds__(histogram_threads) histogram_kernel(const hist_args a) {
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

  const std::int64_t item_rows = p.row_chunk;
  const std::int64_t total = static_cast<std::int64_t>(p.row_chunks) * p.units * item_rows;
  const std::int64_t w_begin = total * blockIdx.x / gridDim.x;
  const std::int64_t w_end = total * (blockIdx.x + 1) / gridDim.x;
  for (int c = threadIdx.x; c < channels; c += blockDim.x) {
    scales[c] = pow2(fixed_exponent(__uint_as_float(a.v.max_bits[c])));
  }
  for (std::int64_t w = w_begin; w < w_end;) {
    const std::int64_t item = w / item_rows;
    const std::int64_t item_end = min(w_end, (item + 1) * item_rows);
    const int rc = static_cast<int>(item / p.units);
    const int unit = static_cast<int>(item % p.units);
    const std::int64_t r_begin = static_cast<std::int64_t>(rc) * item_rows + (w - item * item_rows);
    const std::int64_t r_end = min(a.v.rows, static_cast<std::int64_t>(rc) * item_rows + (item_end - item * item_rows));
    w = item_end;
    if (r_begin >= r_end) continue;
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
      atomicAdd(reinterpret_cast<unsigned long long*>(a.v.hist + global_cell(a, a.slot_base + s0 + ls, c, offset_of[jj] + bin)),
                static_cast<unsigned long long>(sum));
    }
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

histogram_plan plan_histogram(const search_view& v, int level, int device, int blocks_per_sm) {
  histogram_plan p;
  const std::int64_t groups = (v.features + 3) / 4;
  const std::uint32_t n_slots = level == 0 ? 1u : (1u << (level - 1));
  const std::size_t per_slot_feature = static_cast<std::size_t>(v.bin_stride) * v.channels * sizeof(unsigned);
  // Less the kernel's static shared memory (scales, per-feature bins and offsets).
  const std::size_t budget = static_cast<std::size_t>(max_shared(device)) - max_channels * sizeof(double) - 1024;
  // Fewest passes over the rows: all four features of a group per block when that fits.
  p.features_per_block = 4;
  while (p.features_per_block > 1 && per_slot_feature * p.features_per_block > budget) p.features_per_block /= 2;
  const std::size_t per_slot = per_slot_feature * p.features_per_block;
  CBG_EXPECTS(per_slot <= budget, status::unsupported,
              "tree search: one feature's histogram does not fit the GPU's shared memory (too many dimensions)");
  p.slots_per_pass = static_cast<int>(std::min<std::size_t>(n_slots, budget / per_slot));
  const int chunks = static_cast<int>((n_slots + p.slots_per_pass - 1) / p.slots_per_pass);
  p.units = static_cast<int>(groups * (4 / p.features_per_block) * chunks);
  p.shared_bytes = per_slot * p.slots_per_pass;

  const int sms = sm_count(device);
  int resident = 0;
  const auto kernel = v.channels == 2 ? histogram_kernel<2> : histogram_kernel<0>;
  CBG_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(budget)));
  CBG_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, histogram_threads,
                                                             p.shared_bytes));
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
  if (v.channels == 2) {
    histogram_kernel<2><<<plan.blocks, histogram_threads, plan.shared_bytes, stream>>>(a);
  } else {
    histogram_kernel<0><<<plan.blocks, histogram_threads, plan.shared_bytes, stream>>>(a);
  }
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::detail
