// SPDX-License-Identifier: Apache-2.0
// Ranked metrics (AUC, NormalizedGini, PRAUC; multiclass AUC of type Mu): the rows are sorted by a
// score, rows of equal scores form one group, and each group adds a term computed from the weights
// (64-bit fixed point, reduce_math.hpp) of its positives and negatives and of those ranked below it.
// The terms are summed in the ordered-sum order of reduce_math.hpp over the groups in ascending
// score order, so the host and the GPU produce the same bits.
#pragma once

#include <cstdint>

#include "cbg/train/metric.hpp"
#include "cbg/train/reduce_math.hpp"

namespace cbg::train {

// A group of tied scores: fixed-point weights of its positives and negatives, and of the positives
// and negatives with lower scores.
struct ranked_group {
  std::int64_t pos = 0, neg = 0, pos_below = 0, neg_below = 0;
};

// The score a row is ranked by: the approx (binary), or a_i - a_j for the class pair (i, j) of AUC
// type Mu. -0 and +0 are one score.
CBG_HOST_DEVICE inline double ranked_score(const double* a, int pair_i, int pair_j) noexcept {
  const double s = pair_j < 0 ? a[0] : a[pair_i] - a[pair_j];
  return s == 0.0 ? 0.0 : s;
}

// The term of a group. AUC (and Gini): positives times twice the negatives below plus the tied ones
// (ties count one half). PRAUC: the trapezoid of the precision-recall curve (thresholds descending,
// starting at recall 0, precision 1) between the rows above the group and the group included.
CBG_HOST_DEVICE inline double ranked_term(metric_kind k, const ranked_group& g, std::int64_t positives,
                                          std::int64_t negatives) noexcept {
  if (k == metric_kind::prauc) {
    const std::int64_t tp0 = positives - g.pos_below - g.pos, fp0 = negatives - g.neg_below - g.neg;
    const std::int64_t tp1 = tp0 + g.pos, fp1 = fp0 + g.neg;
    const double p0 = tp0 + fp0 > 0 ? static_cast<double>(tp0) / static_cast<double>(tp0 + fp0) : 1.0;
    const double p1 = tp1 + fp1 > 0 ? static_cast<double>(tp1) / static_cast<double>(tp1 + fp1) : 1.0;
    return static_cast<double>(g.pos) / static_cast<double>(positives) * (p0 + p1) * 0.5;
  }
  return static_cast<double>(g.pos) * static_cast<double>(2 * g.neg_below + g.neg);
}

// The metric from the summed terms and the totals (0.5 AUC when a class is missing).
CBG_HOST_DEVICE inline double ranked_final(metric_kind k, double term_sum, std::int64_t positives,
                                           std::int64_t negatives) noexcept {
  if (k == metric_kind::prauc) return positives > 0 ? term_sum : 0.0;
  const double auc = positives > 0 && negatives > 0
                         ? term_sum / (2.0 * static_cast<double>(positives) * static_cast<double>(negatives))
                         : 0.5;
  return k == metric_kind::normalized_gini ? 2.0 * auc - 1.0 : auc;
}

// Whether a row is a positive of the ranking: class 1 (binary), class i (the pair (i, j) of Mu);
// rows of other classes take part with weight 0.
CBG_HOST_DEVICE inline bool ranked_positive(int target_class_of_row, int pair_i, int pair_j) noexcept {
  return pair_j < 0 ? target_class_of_row == 1 : target_class_of_row == pair_i;
}
CBG_HOST_DEVICE inline bool ranked_member(int target_class_of_row, int pair_i, int pair_j) noexcept {
  return pair_j < 0 || target_class_of_row == pair_i || target_class_of_row == pair_j;
}

}  // namespace cbg::train
