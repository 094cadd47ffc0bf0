// SPDX-License-Identifier: Apache-2.0
// The best candidate split of a block (block_best_of), and the best (feature, bin) of a level over a
// range of features found with it: choose_kernel (split.cu) over all features, the sharded search's
// slice candidate (sliced_search.cu) over a rank's slice, and the extension's choice over the pool's
// features and its columns (search_extension_device.cu). CUDA only.
#pragma once

#include <cstdint>

#include "kernels/train/stages.hpp"

#include "cbg/train/score_math.hpp"

namespace cbg::train::detail {

// A candidate split; feature -1: none.
struct block_best {
  double score;
  std::int32_t feature;  // -1: no candidate
  std::int32_t bin;
};

// `cur` becomes (score, feature, bin) when it has no candidate yet or that one is better
// (better_candidate: a total order, score, then the lower feature and bin).
__device__ inline void keep_better(block_best& cur, double score, std::int32_t feature, std::int32_t bin) {
  if (cur.feature < 0 || better_candidate(score, feature, bin, cur.score, cur.feature, cur.bin)) {
    cur = block_best{score, feature, bin};
  }
}

// The block's best candidate: every thread of the block (`threads` of them, a power of two) passes
// its own best (feature -1: none) and gets the block's. A tree reduction with keep_better's rule; the
// rule is a total order, so the answer does not depend on which thread held which candidate. Used by
// choose_kernel (split.cu), the sliced search (sliced_search.cu) and the extension's choice
// (search_extension_device.cu).
template <int threads>
__device__ inline block_best block_best_of(block_best mine) {
  __shared__ double s_score[threads];
  __shared__ std::int32_t s_feature[threads];
  __shared__ std::int32_t s_bin[threads];
  const int t = static_cast<int>(threadIdx.x);
  s_score[t] = mine.score;
  s_feature[t] = mine.feature;
  s_bin[t] = mine.bin;
  __syncthreads();
  for (int s = threads / 2; s > 0; s >>= 1) {
    if (t < s && s_feature[t + s] >= 0) {
      block_best cur{s_score[t], s_feature[t], s_bin[t]};
      keep_better(cur, s_score[t + s], s_feature[t + s], s_bin[t + s]);
      s_score[t] = cur.score;
      s_feature[t] = cur.feature;
      s_bin[t] = cur.bin;
    }
    __syncthreads();
  }
  const block_best out{s_score[0], s_feature[0], s_bin[0]};
  __syncthreads();  // the arrays may be reused
  return out;
}

// This thread's best of features begin + t, begin + t + threads, ... below end of v.best.
template <int threads>
__device__ inline block_best thread_best_feature(const search_view& v, std::int64_t begin, std::int64_t end) {
  block_best mine{0.0, -1, -1};
  for (std::int64_t f = begin + static_cast<std::int64_t>(threadIdx.x); f < end; f += threads) {
    const feature_best b = v.best[f];
    if (b.bin >= 0) keep_better(mine, b.score, static_cast<std::int32_t>(f), b.bin);
  }
  return mine;
}

// The best (feature, bin) of v.best over [begin, end); every thread of the block calls it and gets
// the block's answer.
template <int threads>
__device__ inline block_best best_feature_of_block(const search_view& v, std::int64_t begin, std::int64_t end) {
  return block_best_of<threads>(thread_best_feature<threads>(v, begin, end));
}

// Whether leaf p's weight right of split (feature, bin) is below its weight left of it: the next level
// computes the lighter child (compute_bit[p] = 1: child 1, the right side).
__device__ inline bool right_is_lighter(const search_view& v, std::uint32_t p, std::int32_t feature, std::int32_t bin) {
  const int nb = v.bins[feature];
  const long long* w = v.hist + (static_cast<std::int64_t>(p) * v.channels + v.dims) * v.total_bins + v.offset[feature];
  long long left = 0;
  long long right = 0;
  for (int b = 0; b < nb; ++b) {
    if (b <= bin) {
      left += w[b];
    } else {
      right += w[b];
    }
  }
  return right < left;
}

}  // namespace cbg::train::detail
