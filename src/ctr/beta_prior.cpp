// SPDX-License-Identifier: Apache-2.0
// CatBoost's beta-prior estimator (beta_prior.hpp), step for step: the same start, derivatives,
// damped Newton step and stopping rule, the sums over the categories in their order. The digamma
// and trigamma values of an iteration are computed once per distinct count (the counts are integers:
// a category's terms depend on its counts alone), which leaves every sum as CatBoost adds it.
#include "cbg/ctr/beta_prior.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cbg/core/error.hpp"

namespace cbg::ctr {

namespace {

struct derivatives {
  double der_alpha = 0;
  double der_beta = 0;
  double der2_alpha = 0;
  double der2_beta = 0;
  double der2_alpha_beta = 0;
};

// The distinct values of `v` (sorted) and each entry's index among them.
struct distinct_values {
  std::vector<double> values;
  std::vector<std::uint32_t> index;
};

distinct_values distinct_of(const std::vector<double>& v) {
  distinct_values d;
  d.values = v;
  std::sort(d.values.begin(), d.values.end());
  d.values.erase(std::unique(d.values.begin(), d.values.end()), d.values.end());
  d.index.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    d.index[i] =
        static_cast<std::uint32_t>(std::lower_bound(d.values.begin(), d.values.end(), v[i]) - d.values.begin());
  }
  return d;
}

// TBetaPriorEstimator::OptimizationStep with step 1 and l2 0.01.
beta_prior optimization_step(const beta_prior& point, const derivatives& d) {
  double step = 1.0;
  const double l2 = 0.01;
  double alpha = point.alpha;
  double beta = point.beta;
  CBG_EXPECTS(alpha > 0 && beta > 0, status::bad_data,
              "PriorEstimation BetaPrior: the estimate left the model's domain (CatBoost: 'illegal point')");
  // CatBoost's safety adjustment for degenerate solutions.
  while (alpha < 1e-8 || beta < 1e-8) {
    alpha *= 10;
    beta *= 10;
  }
  beta_prior next = point;
  const double det = ((d.der2_alpha - l2) * (d.der2_beta - l2) - d.der2_alpha_beta * d.der2_alpha_beta);
  double direction_alpha = -d.der_alpha;
  double direction_beta = -d.der_beta;
  if (det > 0) {
    const double mult = 1.0 / det;
    direction_alpha = mult * ((d.der2_beta - l2) * d.der_alpha - d.der2_alpha_beta * d.der_beta);
    direction_beta = mult * ((d.der2_alpha - l2) * d.der_beta - d.der2_alpha_beta * d.der_alpha);
  }
  do {
    next.alpha = alpha - step * direction_alpha;
    next.beta = beta - step * direction_beta;
    step /= 2;
  } while (next.alpha < 1e-9 || next.beta < 1e-9);
  return next;
}

}  // namespace

beta_prior estimate_beta_prior(const std::int32_t* counts, std::size_t keys, int iterations) {
  std::vector<double> first(keys), second(keys), total(keys);
  double sum = 0;
  double length = 0;
  for (std::size_t i = 0; i < keys; ++i) {
    first[i] = static_cast<double>(counts[2 * i + 1]);
    total[i] = static_cast<double>(counts[2 * i]) + first[i];
    second[i] = total[i] - first[i];
    sum += first[i];
    length += total[i];
  }
  CBG_EXPECTS(length > 0 && sum > 0 && sum < length, status::bad_data,
              "PriorEstimation BetaPrior: the binarized target is constant over the feature's rows, no Beta prior "
              "fits (CatBoost refuses it too: 'illegal point')");
  beta_prior cursor;
  cursor.alpha = sum / length;
  cursor.beta = 1.0 - cursor.alpha;

  const distinct_values df = distinct_of(first), ds = distinct_of(second), dn = distinct_of(total);
  std::vector<double> dg_first(df.values.size()), tg_first(df.values.size());
  std::vector<double> dg_second(ds.values.size()), tg_second(ds.values.size());
  std::vector<double> dg_total(dn.values.size()), tg_total(dn.values.size());
  const double k = static_cast<double>(static_cast<int>(keys));

  for (int it = 0; it < iterations; ++it) {
    const double a = cursor.alpha, b = cursor.beta;
    for (std::size_t v = 0; v < df.values.size(); ++v) {
      dg_first[v] = catboost_digamma(df.values[v] + a);
      tg_first[v] = catboost_trigamma(df.values[v] + a);
    }
    for (std::size_t v = 0; v < ds.values.size(); ++v) {
      dg_second[v] = catboost_digamma(ds.values[v] + b);
      tg_second[v] = catboost_trigamma(ds.values[v] + b);
    }
    for (std::size_t v = 0; v < dn.values.size(); ++v) {
      dg_total[v] = catboost_digamma(dn.values[v] + a + b);
      tg_total[v] = catboost_trigamma(dn.values[v] + a + b);
    }
    // TBetaPriorEstimator::DerAndDer2, term by term in its order.
    derivatives d;
    for (std::size_t i = 0; i < keys; ++i) {
      d.der_alpha += dg_first[df.index[i]];
      d.der2_alpha += tg_first[df.index[i]];
      d.der_beta += dg_second[ds.index[i]];
      d.der2_beta += tg_second[ds.index[i]];
      const double dg = dg_total[dn.index[i]];
      d.der_alpha -= dg;
      d.der_beta -= dg;
      const double tg = tg_total[dn.index[i]];
      d.der2_alpha -= tg;
      d.der2_beta -= tg;
      d.der2_alpha_beta -= tg;
    }
    {
      const double tmp = catboost_digamma(a + b);
      d.der_alpha += (tmp - catboost_digamma(a)) * k;
      d.der_beta += (tmp - catboost_digamma(b)) * k;
    }
    {
      const double tmp = catboost_trigamma(a + b) * k;
      d.der2_alpha_beta += tmp;
      d.der2_alpha += tmp - catboost_trigamma(a) * k;
      d.der2_beta += tmp - catboost_trigamma(b) * k;
    }
    cursor = optimization_step(cursor, d);
    if (std::sqrt(d.der_alpha * d.der_alpha + d.der_beta * d.der_beta) < 1e-9) break;
  }
  return cursor;
}

}  // namespace cbg::ctr
