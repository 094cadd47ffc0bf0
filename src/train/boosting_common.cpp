// SPDX-License-Identifier: Apache-2.0
#include "src/train/boosting_common.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/quantize/quantize_math.hpp"
#include "cbg/train/boosting_math.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::train {

namespace {

void require_host(const tensor_view& t, const char* what) {
  CBG_EXPECTS(!is_device_side(t.memory), status::device,
              fmt::format("the host trainer reads host memory only ({} is on a device)", what));
}

}  // namespace

std::vector<const std::uint8_t*> combination_bins(search_extension* extension, const std::vector<split>& splits,
                                                  std::int64_t pool_features) {
  std::vector<std::int32_t> combined;
  for (const split& s : splits) {
    CBG_EXPECTS(s.feature >= 0, status::internal, "use_tree: a split of no feature");
    if (s.feature >= pool_features) combined.push_back(s.feature);
  }
  std::vector<const std::uint8_t*> out(splits.size(), nullptr);
  if (combined.empty()) return out;
  CBG_EXPECTS(extension != nullptr, status::internal, "use_tree: a split of no pool feature and no extension");
  const std::vector<const std::uint8_t*> bins = extension->committed_bins(combined);
  for (std::size_t k = 0, at = 0; k < splits.size(); ++k) {
    if (splits[k].feature < pool_features) continue;
    out[k] = bins[at++];
    CBG_EXPECTS(out[k] != nullptr, status::internal, "use_tree: a split of no pool feature or combination");
  }
  return out;
}

label_facts host_label_facts(const pool& p) {
  CBG_EXPECTS(p.label().has_value(), status::bad_data, "the pool has no label");
  require_host(*p.label(), "the label");
  CBG_EXPECTS(pool::dims_of(p.label()) == 1, status::unsupported,
              fmt::format("labels of {} columns: the trainer takes one label column", pool::dims_of(p.label())));
  const column_view c = column_of(*p.label(), 0);
  label_facts f;
  for (std::int64_t r = 0; r < c.size; ++r) {
    const double v = c.value(r);
    if (r == 0) f.min = f.max = v;
    f.min = std::min(f.min, v);
    f.max = std::max(f.max, v);
    f.all_integer = f.all_integer && v == std::floor(v);
    f.constant = f.constant && v == f.min && v == f.max;
  }
  return f;
}

std::vector<float> read_weights(const pool& p) {
  std::vector<float> w(static_cast<std::size_t>(p.num_rows()), 1.0f);
  if (!p.weight()) return w;
  require_host(*p.weight(), "the weight");
  const column_view c = column_of(*p.weight(), 0);
  for (std::int64_t r = 0; r < c.size; ++r) w[static_cast<std::size_t>(r)] = static_cast<float>(c.value(r));
  return w;
}

void throw_target_problem(target_problem problem, const target_rule& r, const char* what, std::int64_t row,
                          double label) {
  const char* loss = loss_name(r.loss);
  switch (problem) {
    case target_problem::not_finite:
      CBG_FAIL(status::bad_data, fmt::format("{} label of row {} is not finite", what, row));
    case target_problem::not_binary:
      CBG_FAIL(status::bad_data, fmt::format("{} label {} of row {}: {} takes labels 0 and 1 (or set target_border)",
                                             what, label, row, loss));
    case target_problem::not_probability:
      CBG_FAIL(status::bad_data,
               fmt::format("{} label {} of row {}: {} takes labels in [0, 1]", what, label, row, loss));
    case target_problem::not_class:
      CBG_FAIL(status::bad_data, fmt::format("{} label {} of row {}: {} takes class indices 0..{}", what, label, row,
                                             loss, r.classes - 1));
    case target_problem::none:
      break;
  }
  CBG_FAIL(status::internal, "no target problem to report");
}

std::vector<float> read_targets(const pool& p, const target_rule& r, const char* what) {
  CBG_EXPECTS(p.label().has_value(), status::bad_data, fmt::format("the {} pool has no label", what));
  require_host(*p.label(), "the label");
  const column_view c = column_of(*p.label(), 0);
  std::vector<float> t(static_cast<std::size_t>(c.size));
  for (std::int64_t row = 0; row < c.size; ++row) {
    const double label = c.value(row);
    const target_problem problem = target_of(r, label, t[static_cast<std::size_t>(row)]);
    if (problem != target_problem::none) throw_target_problem(problem, r, what, row, label);
  }
  return t;
}

void check_baseline(const pool& p, const loss_spec& l) {
  const std::int64_t k = pool::dims_of(p.baseline());
  CBG_EXPECTS(k == l.dims, status::bad_data,
              fmt::format("the baseline has {} columns; {} trains {} dimensions", k, loss_name(l.kind), l.dims));
}

std::vector<double> start_approx(const pool& p, const loss_spec& l, const std::vector<double>& bias) {
  const std::int64_t n = p.num_rows();
  std::vector<double> a(static_cast<std::size_t>(l.dims * n));
  for (int k = 0; k < l.dims; ++k) {
    std::fill_n(a.begin() + k * n, n, bias[static_cast<std::size_t>(k)]);
  }
  if (!p.baseline()) return a;
  require_host(*p.baseline(), "the baseline");
  check_baseline(p, l);
  for (int k = 0; k < l.dims; ++k) {
    const column_view c = column_of(*p.baseline(), k);
    for (std::int64_t r = 0; r < n; ++r) a[static_cast<std::size_t>(k * n + r)] += c.value(r);
  }
  return a;
}

double quantile_of_sorted(const std::vector<float>& target, const std::vector<float>& weight, double alpha) {
  if (target.empty()) return 0.0;
  const float wmax = *std::max_element(weight.begin(), weight.end());
  const fixed_scale s = fixed_scale_for(wmax, static_cast<std::int64_t>(weight.size()));
  std::int64_t total = 0;
  for (float w : weight) total += to_fixed64(w, s);
  const double goal = alpha * from_fixed64(total, s);
  std::int64_t cum = 0;
  for (std::size_t i = 0; i < target.size(); ++i) {
    cum += to_fixed64(weight[i], s);
    if (from_fixed64(cum, s) >= goal) return target[i];
  }
  return target.back();
}

double auc_from_counts(std::uint64_t twice_wins, std::uint64_t positives, std::uint64_t negatives) {
  if (positives == 0 || negatives == 0) return 0.5;
  return static_cast<double>(twice_wins) / (2.0 * static_cast<double>(positives) * static_cast<double>(negatives));
}

double auc_of_sorted(const std::vector<double>& scores, const std::vector<std::uint8_t>& positive) {
  std::uint64_t wins = 0, negatives_below = 0, positives = 0, negatives = 0;
  std::size_t i = 0;
  while (i < scores.size()) {
    std::size_t j = i;
    std::uint64_t pos = 0, neg = 0;
    while (j < scores.size() && scores[j] == scores[i]) {
      (positive[j] ? pos : neg) += 1;
      ++j;
    }
    wins += pos * (2 * negatives_below + neg);
    negatives_below += neg;
    positives += pos;
    negatives += neg;
    i = j;
  }
  return auc_from_counts(wins, positives, negatives);
}

const char* const non_finite_derivative_message =
    "a derivative is not finite (the approx overflowed; try a smaller learning_rate)";

leaf_result estimate_leaves_by_points(boosting_backend& b, const leaf_request& r) {
  const leaf_search_config& c = r.config;
  const auto values = static_cast<std::size_t>(c.values());
  std::vector<double> point(values), direction(values), candidate(values);
  leaf_result out;
  out.leaf_weight.resize(static_cast<std::size_t>(c.leaves));
  std::vector<fixed_scale> scales(static_cast<std::size_t>(c.channels()));
  leaf_search_status st;
  const leaf_search_view v{&st,          point.data(), direction.data(), candidate.data(), out.leaf_weight.data(),
                           scales.data()};

  point_request q;
  q.leaves = c.leaves;
  q.hess_channels = c.hess_channels;
  q.scales = r.zero_scales;
  point_result at = b.at_point(q);
  leaf_zero_point(c, v, 0, 1);
  leaf_directions(c, v, at.sums.data(), r.zero_scales->data(), true, 0, 1);
  leaf_start(v, r.start_value);
  if (leaf_begin_direction(c, v, at.sums.data(), r.zero_scales->data())) leaf_candidate(c, v, st.step, 0, 1);
  while (st.mode != leaf_mode_done) {
    q = point_request{};
    q.leaves = c.leaves;
    q.hess_channels = c.hess_channels;
    if (st.mode == leaf_mode_candidate) {
      q.point = &candidate;
      q.want_value = c.backtracking != 0;
      q.want_max = c.bounded == 0;
      q.scales = c.bounded != 0 ? r.bound_scales : nullptr;
      at = b.at_point(q);
      const leaf_next next = leaf_after_candidate(c, v, at.value);
      if (next.accept) leaf_accept(c, v, 0, 1);
      if (st.mode == leaf_mode_sums) {
        std::vector<std::uint32_t> keys;
        for (float m : at.channel_max) keys.push_back(abs_float_key(m));
        const bool finite = leaf_scales_from_max(c, v, keys.data());
        CBG_EXPECTS(finite, status::bad_data, non_finite_derivative_message);
      }
      if (next.directions) {
        leaf_directions(c, v, at.sums.data(), r.bound_scales->data(), false, 0, 1);
        if (leaf_begin_direction(c, v, at.sums.data(), r.bound_scales->data())) leaf_candidate(c, v, st.step, 0, 1);
      }
      if (next.candidate) leaf_candidate(c, v, st.step, 0, 1);
    } else {
      q.point = &point;
      q.scales = &scales;
      at = b.at_point(q);
      leaf_directions(c, v, at.sums.data(), scales.data(), false, 0, 1);
      if (leaf_begin_direction(c, v, at.sums.data(), scales.data())) leaf_candidate(c, v, st.step, 0, 1);
    }
  }
  out.point = std::move(point);
  return out;
}

void mvs_bootstrap_host(std::vector<float>& der, std::vector<float>& weight, int dims, const bootstrap_spec& b) {
  const auto n = static_cast<std::int64_t>(weight.size());
  double lambda = b.mvs_reg;
  if (!(lambda >= 0)) {
    double l1 = 0;
    ordered_sum_host<1>(
        n,
        [&](std::int64_t r, double* v) {
          double s = 0;
          for (int k = 0; k < dims; ++k) s += std::fabs(static_cast<double>(der[static_cast<std::size_t>(k * n + r)]));
          v[0] = s;
        },
        &l1);
    const double mean = l1 / static_cast<double>(n);
    lambda = mean * mean;
  }
  const auto lam = static_cast<float>(lambda);
  std::vector<float> c, sorted;
  for (std::int64_t start = 0; start < n; start += mvs_block_rows) {
    const std::int64_t m = std::min(mvs_block_rows, n - start);
    c.resize(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j)
      c[static_cast<std::size_t>(j)] = mvs_candidate(der.data(), n, dims, start + j, lam);
    sorted = c;
    std::sort(sorted.begin(), sorted.end());
    const fixed_scale scale = fixed_scale_for(sorted.back(), m);
    const double sample = static_cast<double>(m) * b.subsample;
    std::int64_t fixed_sum = 0;
    double mu = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      const float ci = sorted[static_cast<std::size_t>(i)];
      fixed_sum += to_fixed64(ci, scale);
      const double s_i = from_fixed64(fixed_sum, scale);
      if (mvs_rank_qualifies(s_i, ci, m, i, sample)) mu = mvs_threshold(s_i, m, i, sample);
    }
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t r = start + j;
      const double f = mvs_factor(c[static_cast<std::size_t>(j)], mu, b.key, r);
      for (int k = 0; k < dims; ++k) {
        float& d = der[static_cast<std::size_t>(k * n + r)];
        d = mvs_scaled(d, f);
      }
      weight[static_cast<std::size_t>(r)] = mvs_scaled(weight[static_cast<std::size_t>(r)], f);
    }
  }
}

}  // namespace cbg::train
