// SPDX-License-Identifier: Apache-2.0
#include "src/train/metric_host.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/metric_names.hpp"
#include "cbg/train/metric_ranked.hpp"
#include "cbg/train/metric_tables.hpp"

namespace cbg::train {

namespace {

float max_weight_of(const std::vector<float>& weight) {
  float top = 0.f;
  for (const float w : weight) top = std::max(top, w);
  return top;
}

// One ranking: rows sorted by score, ties grouped, group terms summed in the ordered-sum order.
double rank_rows(const metric_spec& m, const loss_spec& l, const std::vector<double>& approx,
                 const std::vector<float>& target, const std::vector<float>& weight, int pair_i, int pair_j) {
  const auto n = static_cast<std::int64_t>(target.size());
  const fixed_scale scale = table_scale(m, max_weight_of(weight), n);
  std::vector<double> score(static_cast<std::size_t>(n));
  std::vector<std::int64_t> pos(static_cast<std::size_t>(n)), neg(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) {
    double a[max_dims];
    gather_approx(approx.data(), n, l.dims, r, a);
    const auto i = static_cast<std::size_t>(r);
    const int c = target_class(l, target[i]);
    const std::int64_t w = ranked_member(c, pair_i, pair_j) ? to_fixed64(table_weight(m, weight[i]), scale) : 0;
    score[i] = ranked_score(a, pair_i, pair_j);
    (ranked_positive(c, pair_i, pair_j) ? pos[i] : neg[i]) = w;
  }
  std::vector<std::uint32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return score[a] < score[b]; });
  std::vector<ranked_group> groups;
  std::int64_t positives = 0, negatives = 0;
  for (std::size_t k = 0; k < order.size();) {
    ranked_group g;
    g.pos_below = positives;
    g.neg_below = negatives;
    const double s = score[order[k]];
    for (; k < order.size() && score[order[k]] == s; ++k) {
      g.pos += pos[order[k]];
      g.neg += neg[order[k]];
    }
    positives += g.pos;
    negatives += g.neg;
    groups.push_back(g);
  }
  double sum = 0;
  ordered_sum_host<1>(
      static_cast<std::int64_t>(groups.size()),
      [&](std::int64_t g, double* v) {
        v[0] = ranked_term(m.kind, groups[static_cast<std::size_t>(g)], positives, negatives);
      },
      &sum);
  return ranked_final(m.kind, sum, positives, negatives);
}

}  // namespace

std::vector<double> confusion_table_host(const metric_spec& m, const loss_spec& l, const std::vector<double>& approx,
                                         const std::vector<float>& target, const std::vector<float>& weight,
                                         int classes) {
  const auto n = static_cast<std::int64_t>(target.size());
  const fixed_scale scale = table_scale(m, max_weight_of(weight), n);
  std::vector<std::int64_t> cell(static_cast<std::size_t>(classes * classes), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    double a[max_dims];
    gather_approx(approx.data(), n, l.dims, r, a);
    const auto i = static_cast<std::size_t>(r);
    cell[static_cast<std::size_t>(confusion_cell(l, a, target[i], classes))] +=
        to_fixed64(table_weight(m, weight[i]), scale);
  }
  std::vector<double> out(cell.size());
  for (std::size_t k = 0; k < cell.size(); ++k) out[k] = from_fixed64(cell[k], scale);
  return out;
}

double ranked_metric_host(const metric_spec& m, const loss_spec& l, const std::vector<double>& approx,
                          const std::vector<float>& target, const std::vector<float>& weight) {
  if (m.auc != auc_type::mu || l.dims == 1) return rank_rows(m, l, approx, target, weight, 0, -1);
  // Mu: the mean over class pairs i < j of the AUC of a_i - a_j on the rows of classes i and j.
  double sum = 0;
  int pairs = 0;
  for (int i = 0; i < l.dims; ++i) {
    for (int j = i + 1; j < l.dims; ++j) {
      sum += rank_rows(m, l, approx, target, weight, i, j);
      ++pairs;
    }
  }
  return sum / pairs;
}

void boosting_backend::use_tree(const std::vector<split>&) {
  CBG_FAIL(status::not_implemented,
           "several permutations of the ordered CTRs (permutation_count > 1) are not implemented for this training "
           "(several GPUs or processes)");
}

std::vector<double> boosting_backend::confusion_table(const metric_spec& m, bool, int) {
  CBG_FAIL(status::not_implemented,
           fmt::format("metric {} is not implemented for this training (multi-GPU)", metric_kind_name(m.kind)));
}

double boosting_backend::ranked_metric(const metric_spec& m, bool) {
  CBG_FAIL(status::not_implemented,
           fmt::format("metric {} is not implemented for this training (multi-GPU)", metric_kind_name(m.kind)));
}

}  // namespace cbg::train
