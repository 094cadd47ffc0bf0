// SPDX-License-Identifier: Apache-2.0
// The per-element math of the tree search (tree_search.hpp), shared by the host reference
// (src/train/tree_search_host.cpp) and the kernels (kernels/train/). One definition, so host and
// GPU choose the same splits bit for bit:
//
// 1. Fixed point. Every channel (each der dimension, and the weight) gets a per-tree power-of-two
//    scale 2^k chosen from the channel's max |value| (an exact reduction), so that every row's
//    value rounds to an integer of magnitude <= 2^24 (to_fixed). Histogram sums are exact 64-bit
//    integer sums of those (order-independent: the GPU may add them in any order), and a partial
//    sum converts back to double as from_fixed(sum, 2^-k).
// 2. Scores. A candidate split (feature f, border b) of level d sends each leaf p's rows to the
//    left child (bin <= b) or the right child (bin > b). Each leaf contributes
//        part(p) = sum over dims j of [ add_child(left_j) then add_child(right_j) ]
//    to two accumulators (num, den) that start at 0, and the candidate's score is
//        num = sum_i part_num(visit_leaf(d, i)), den = cosine_den0 + sum_i part_den(...)
//    (i ascending: parent by parent, each parent's two children in turn)
//        cosine: -num / sqrt(den)          l2: num
//    (CatBoost's GPU score calcers, in double). Lower wins; score noise is added per (level,
//    feature) for Cosine. The expressions below are evaluated in exactly this order on both sides;
//    the train kernels are compiled with --fmad=false so no multiply-add is fused.
// 3. Ties and NaN: better_candidate is a total order (NaN scores lose to any number; equal scores
//    go to the lowest (feature, bin)), so any reduction order picks the same winner.
#pragma once

#include <cmath>
#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

// |fixed value| <= 2^fixed_value_bits for every row.
inline constexpr int fixed_value_bits = 24;

// The exponent k of a channel's scale 2^k: max_abs * 2^k < 2^fixed_value_bits. max_abs must be
// finite and >= 0 (0 gives 0).
CBG_HOST_DEVICE inline int fixed_exponent(float max_abs) noexcept {
  if (!(max_abs > 0.0f)) return 0;
  int e = 0;
#if defined(__CUDA_ARCH__)
  (void)frexpf(max_abs, &e);
#else
  (void)std::frexp(max_abs, &e);
#endif
  return fixed_value_bits - e;  // max_abs < 2^e
}

CBG_HOST_DEVICE inline double pow2(int k) noexcept {
#if defined(__CUDA_ARCH__)
  return ldexp(1.0, k);
#else
  return std::ldexp(1.0, k);
#endif
}

// Rounds v * scale (exact: scale is a power of two) to the nearest integer, halves away from 0.
CBG_HOST_DEVICE inline std::int32_t to_fixed(float v, double scale) noexcept {
  const double x = static_cast<double>(v) * scale;
  const double r = x + (x < 0.0 ? -0.5 : 0.5);
  return static_cast<std::int32_t>(static_cast<long long>(r));
}

CBG_HOST_DEVICE inline double from_fixed(long long sum, double inv_scale) noexcept {
  return static_cast<double>(sum) * inv_scale;
}

// The i-th leaf (0 <= i < 2^level) in the order a candidate's score adds up the leaves of level
// `level`: parent q = i / 2 of the level before, then its child without bit level-1 (leaf q) and
// the one with it (leaf q + 2^(level-1)): 0, h, 1, h + 1, ... The GPU scores leaves in pairs.
CBG_HOST_DEVICE inline std::uint32_t visit_leaf(int level, std::uint32_t i) noexcept {
  return level == 0 ? 0u : (i >> 1) + ((i & 1u) << (level - 1));
}

// The Cosine denominator's start (CatBoost: DenumSqr = 1e-10f, kept in double).
inline constexpr double cosine_den0 = static_cast<double>(1e-10f);
// L2 skips children whose weight is not above this (CatBoost: weight > 1e-20f).
inline constexpr double l2_min_weight = static_cast<double>(1e-20f);

// Adds one child's term for one dimension: s = sum of der, w = sum of weight.
CBG_HOST_DEVICE inline void add_child(score_function fn, double lambda, double s, double w, double& num,
                                      double& den) noexcept {
  if (fn == score_function::cosine) {
    if (w > 0.0) {
      const double mu = s / (w + lambda);
      num += s * mu;
      den += w * mu * mu;
    }
  } else {
    if (w > l2_min_weight) num += (-s * s) / (w + lambda);
  }
}

// The score of a candidate from its accumulators (before noise).
CBG_HOST_DEVICE inline double finish_score(score_function fn, double num, double den) noexcept {
#if defined(__CUDA_ARCH__)
  return fn == score_function::cosine ? -num / sqrt(den) : num;
#else
  return fn == score_function::cosine ? -num / std::sqrt(den) : num;
#endif
}

// CatBoost's model-size regularization (model_size_reg, catboost-training.md §2.7): the scores of a
// CTR feature not yet in the model are multiplied by its weight (1 + u / u_max)^-model_size_reg <= 1
// before the noise is added (scores are negative, so toward 0 is worse). `weight` holds the
// multiplier of every feature for this tree (null: none); a feature split on at an earlier level
// of the tree is in the model by then and scores unweighted.
CBG_HOST_DEVICE inline double size_weighted_score(double score, const float* weight, std::int32_t feature,
                                                  const split* splits, int level) noexcept {
  if (weight == nullptr) return score;
  for (int d = 0; d < level; ++d) {
    if (splits[d].feature == feature) return score;
  }
  return score * static_cast<double>(weight[feature]);
}

CBG_HOST_DEVICE inline bool is_nan_score(double s) noexcept { return s != s; }

// Whether candidate a = (sa, fa, ba) beats b = (sb, fb, bb): a lower score, NaN last, ties to the
// lowest (feature, bin). A total order.
CBG_HOST_DEVICE inline bool better_candidate(double sa, std::int32_t fa, std::int32_t ba, double sb, std::int32_t fb,
                                             std::int32_t bb) noexcept {
  const bool na = is_nan_score(sa);
  const bool nb = is_nan_score(sb);
  if (na != nb) return nb;
  if (!na) {
    if (sa < sb) return true;
    if (sb < sa) return false;
  }
  if (fa != fb) return fa < fb;
  return ba < bb;
}

}  // namespace cbg::train
