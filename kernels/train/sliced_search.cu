// SPDX-License-Identifier: Apache-2.0
// Feature-parallel scoring in the sharded tree search: the slices' exchange kernels, the slice's
// candidate and the pick of the level's split, with their launchers (sliced_search.hpp; the
// collectives between them: src/train/sliced_search.cpp).
#include "kernels/train/sliced_search.hpp"

#include "kernels/train/choose_best.cuh"

#include <algorithm>

#include "cbg/core/cuda_check.hpp"
#include "cbg/train/score_math.hpp"

namespace cbg::train::detail {

namespace {

constexpr int exchange_threads = 256;
constexpr int choose_threads = 256;

// A candidate in the all-gather: the head, then the compute bits of its split (bit p: leaf p's
// next-level computed child is child 1), as many 32-bit words as the level's leaves need.
struct candidate_head {
  double score;
  std::int32_t feature;  // -1: the slice has no candidate
  std::int32_t bin;
};
static_assert(sizeof(candidate_head) == 16);

std::size_t candidate_words(int level) { return std::max<std::size_t>(1, ((std::size_t{1} << level) + 31) / 32); }

int grid_for(std::int64_t n, int threads, int cap) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(cap, (n + threads - 1) / threads)));
}

// send[r][s][c][i] = column column[r] + i of slot first_slot + s, channel c (0 past the slice).
__global__ void pack_kernel(const long long* __restrict__ hist, long long* __restrict__ send,
                            const std::int64_t* __restrict__ column, int ranks, exchange_shape x) {
  const std::int64_t n = static_cast<std::int64_t>(ranks) * x.slots * x.channels * x.width;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = k % x.width;
    std::int64_t t = k / x.width;
    const std::int64_t c = t % x.channels;
    t /= x.channels;
    const std::int64_t s = t % x.slots;
    const std::int64_t r = t / x.slots;
    const std::int64_t first = column[r];
    const std::int64_t width = column[r + 1] - first;
    send[k] = i < width ? hist[((x.first_slot + s) * x.channels + c) * x.total_bins + first + i] : 0;
  }
}

// The rank's summed columns [first, first + width) back into their slots.
__global__ void unpack_kernel(long long* __restrict__ hist, const long long* __restrict__ recv, std::int64_t first,
                              std::int64_t width, exchange_shape x) {
  const std::int64_t n = x.slots * x.channels * width;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = k % width;
    const std::int64_t t = k / width;  // slot * channels + channel
    hist[((x.first_slot + t / x.channels) * x.channels + t % x.channels) * x.total_bins + first + i] =
        recv[t * x.width + i];
  }
}

// The slice's best (feature, bin) over v.best[begin, end), found as choose_kernel finds the best of
// all features, and its split's compute bits for the level's leaves (choose_kernel's rule).
__global__ void __launch_bounds__(choose_threads)
    slice_candidate_kernel(search_view v, int level, bool last_level, std::int64_t begin, std::int64_t end,
                           unsigned char* out) {
  if (v.state->stopped != 0) return;
  const int t = threadIdx.x;
  const block_best best = best_feature_of_block<choose_threads>(v, begin, end);
  const std::int32_t feature = best.feature;
  const std::int32_t bin = best.bin;
  if (t == 0) *reinterpret_cast<candidate_head*>(out) = candidate_head{best.score, feature, bin};
  // One leaf per thread (as choose_kernel); a warp's 32 consecutive leaves make one word.
  auto* bits = reinterpret_cast<std::uint32_t*>(out + sizeof(candidate_head));
  const std::uint32_t leaves = 1u << level;
  const bool with_bits = feature >= 0 && !last_level;
  for (std::uint32_t base = 0; base < leaves; base += choose_threads) {
    const std::uint32_t p = base + static_cast<std::uint32_t>(t);
    const bool bit = with_bits && p < leaves && right_is_lighter(v, p, feature, bin);
    const unsigned word = __ballot_sync(0xffffffffu, bit);
    if ((t & 31) == 0 && p < leaves) bits[p / 32] = word;
  }
}

// Every rank's candidate in rank order: the best by better_candidate, choose_kernel's stop rule, the
// search state and the winner's compute bits.
__global__ void __launch_bounds__(choose_threads)
    pick_kernel(search_view v, int level, bool last_level, const unsigned char* all, int ranks, std::size_t stride) {
  __shared__ int s_winner;
  __shared__ int s_stop;
  if (v.state->stopped != 0) return;
  const int t = threadIdx.x;
  if (t == 0) {
    int winner = -1;
    candidate_head best{0.0, -1, -1};
    for (int r = 0; r < ranks; ++r) {
      const candidate_head c = *reinterpret_cast<const candidate_head*>(all + static_cast<std::size_t>(r) * stride);
      if (c.feature < 0) continue;
      if (winner < 0 || better_candidate(c.score, c.feature, c.bin, best.score, best.feature, best.bin)) {
        winner = r;
        best = c;
      }
    }
    bool stop = winner < 0;
    for (int d = 0; d < level && !stop; ++d) {
      stop = v.state->splits[d].feature == best.feature && v.state->splits[d].bin == best.bin;
    }
    if (stop) {
      v.state->stopped = 1;
    } else {
      v.state->splits[level] = split{best.feature, best.bin};
      v.state->count = level + 1;
    }
    s_winner = winner;
    s_stop = stop ? 1 : 0;
  }
  __syncthreads();
  if (s_stop != 0 || last_level) return;
  const auto* bits = reinterpret_cast<const std::uint32_t*>(all + static_cast<std::size_t>(s_winner) * stride +
                                                            sizeof(candidate_head));
  const std::uint32_t leaves = 1u << level;
  for (std::uint32_t p = t; p < leaves; p += choose_threads) v.compute_bit[p] = (bits[p / 32] >> (p % 32)) & 1u;
}

}  // namespace

std::size_t candidate_bytes(int level) {
  return (sizeof(candidate_head) + candidate_words(level) * sizeof(std::uint32_t) + 7) / 8 * 8;
}

void pack_slices(const long long* hist, long long* send, const std::int64_t* column, int ranks, const exchange_shape& x,
                 cudaStream_t stream) {
  const std::int64_t packed = x.slots * x.channels * x.width * ranks;
  pack_kernel<<<grid_for(packed, exchange_threads, 2048), exchange_threads, 0, stream>>>(hist, send, column, ranks, x);
  CBG_CHECK_CUDA(stream);
}

void unpack_slice(long long* hist, const long long* recv, std::int64_t first, std::int64_t width,
                  const exchange_shape& x, cudaStream_t stream) {
  unpack_kernel<<<grid_for(x.slots * x.channels * width, exchange_threads, 2048), exchange_threads, 0, stream>>>(
      hist, recv, first, width, x);
  CBG_CHECK_CUDA(stream);
}

void slice_candidate(const search_view& v, int level, bool last_level, std::int64_t begin, std::int64_t end,
                     unsigned char* out, cudaStream_t stream) {
  slice_candidate_kernel<<<1, choose_threads, 0, stream>>>(v, level, last_level, begin, end, out);
  CBG_CHECK_CUDA(stream);
}

void pick_candidate(const search_view& v, int level, bool last_level, const unsigned char* all, int ranks,
                    std::size_t stride, cudaStream_t stream) {
  pick_kernel<<<1, choose_threads, 0, stream>>>(v, level, last_level, all, ranks, stride);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::detail
