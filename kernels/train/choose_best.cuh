// SPDX-License-Identifier: Apache-2.0
// The best (feature, bin) of a level over a range of features, found by one block: choose_kernel
// (split.cu) over all features, and the sharded search's slice candidate (sliced_search.cu) over a
// rank's slice. CUDA only.
#pragma once

#include <cstdint>

#include "kernels/train/stages.hpp"

#include "cbg/train/score_math.hpp"

namespace cbg::train::detail {

struct block_best {
  double score;
  std::int32_t feature;  // -1: no feature of the range has a candidate
  std::int32_t bin;
};

// Every thread of the block (`threads` of them) calls it and gets the block's answer: each thread
// scans features begin + t, begin + t + threads, ... of v.best, then a tree reduction; better_candidate
// is a total order (score, then the lower feature and bin), so the answer does not depend on the order.
template <int threads>
__device__ inline block_best best_feature_of_block(const search_view& v, std::int64_t begin, std::int64_t end) {
  __shared__ double s_score[threads];
  __shared__ std::int32_t s_feature[threads];
  __shared__ std::int32_t s_bin[threads];
  const int t = static_cast<int>(threadIdx.x);
  double score = 0.0;
  std::int32_t feature = -1;
  std::int32_t bin = -1;
  for (std::int64_t f = begin + t; f < end; f += threads) {
    const feature_best b = v.best[f];
    if (b.bin < 0) continue;
    if (feature < 0 || better_candidate(b.score, static_cast<std::int32_t>(f), b.bin, score, feature, bin)) {
      score = b.score;
      feature = static_cast<std::int32_t>(f);
      bin = b.bin;
    }
  }
  s_score[t] = score;
  s_feature[t] = feature;
  s_bin[t] = bin;
  __syncthreads();
  for (int s = threads / 2; s > 0; s >>= 1) {
    if (t < s && s_feature[t + s] >= 0 &&
        (s_feature[t] < 0 ||
         better_candidate(s_score[t + s], s_feature[t + s], s_bin[t + s], s_score[t], s_feature[t], s_bin[t]))) {
      s_score[t] = s_score[t + s];
      s_feature[t] = s_feature[t + s];
      s_bin[t] = s_bin[t + s];
    }
    __syncthreads();
  }
  const block_best out{s_score[0], s_feature[0], s_bin[0]};
  __syncthreads();  // the arrays may be reused
  return out;
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
