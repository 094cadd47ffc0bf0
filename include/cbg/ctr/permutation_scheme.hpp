// SPDX-License-Identifier: Apache-2.0
// CatBoost's GPU scheme for several permutations of the ordered CTRs (permutation_count > 1, Plain
// boosting; catboost/cuda/methods/dynamic_boosting.h, TDynamicBoosting::Fit and CreateState):
//   * permutations 0 .. P-1 each have their own ordered CTR columns, binned with the borders of
//     permutation 0's (the first computed; TGpuBordersBuilder::GetOrComputeBorders);
//   * the last, P-1, is the estimation permutation: its approx gives the learn metrics, and its leaf
//     values go into the model and onto the eval set;
//   * permutations 0 .. P-2 (P > 1; the one permutation when P = 1) are the learn permutations, each
//     with its own approx and its own leaf values;
//   * each iteration searches the tree on one learn permutation, drawn as rand % (L - 1) for L > 1
//     learn permutations (0 otherwise): so 0 for P <= 3, and never the last learn permutation.
#pragma once

#include <cstdint>

#include "cbg/train/det_math.hpp"

namespace cbg::ctr {

// The estimation permutation of `count` permutations.
constexpr int estimation_permutation(int count) noexcept { return count - 1; }
// The learn permutations: count - 1, or the one permutation when count is 1.
constexpr int learn_permutation_count(int count) noexcept { return count > 1 ? count - 1 : 1; }

// The seed of permutation `k` of the ordered CTRs: permutation 0 keeps the training's seed (so one
// permutation trains as it always did), the others draw theirs from it.
inline std::uint64_t permutation_seed(std::uint64_t seed, int k) noexcept {
  return k == 0 ? seed : train::stream_key(seed ^ 0x5045524d55544154ULL, static_cast<std::uint64_t>(k));
}

// The learn permutation whose CTR columns search iteration `iteration`'s tree (CatBoost's
// Random.NextUniformL() % (L - 1); ours is a draw of (seed, iteration)).
inline int search_permutation(std::uint64_t seed, int iteration, int count) noexcept {
  const int learn = learn_permutation_count(count);
  if (learn <= 1) return 0;
  const std::uint64_t draw = train::stream_key(seed ^ 0x5345415243485045ULL, static_cast<std::uint64_t>(iteration));
  return static_cast<int>(draw % static_cast<std::uint64_t>(learn - 1));
}

}  // namespace cbg::ctr
