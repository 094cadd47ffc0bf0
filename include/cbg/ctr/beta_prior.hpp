// SPDX-License-Identifier: Apache-2.0
// PriorEstimation=BetaPrior (CatBoost's GPU trainer, catboost/cuda/ctrs/prior_estimator.h): the prior
// of a Borders CTR estimated from the data as the maximum-likelihood Beta(alpha, beta) of a
// beta-binomial model over the categories' (rows in class 1, rows) counts, by CatBoost's damped
// Newton iterations, then used as the single prior alpha / (alpha + beta).
//
// CatBoost runs the estimator on the host in its GPU trainer too (train.cpp EstimatePriors, over the
// whole learn set before boosting); here it reads the Borders table's class counts, which the host
// reference and the GPU build equal bit for bit, so both contexts get the same prior. The terms are
// summed in the categories' perfect-hash order, CatBoost's; CatBoost also counts categories that
// only the eval set has (no rows: their terms cancel, up to the last bits of the sums).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cbg/config.hpp"

namespace cbg::ctr {

// Digamma and trigamma as CatBoost computes them (contrib/libs/gamma_function_apache_math_port, a
// port of Apache Commons Math): the asymptotic series from x >= 49, recurrence x -> x + 1 below,
// the pole terms for 0 < x <= 1e-5. Defined for x > 0 (the estimator's arguments).
CBG_HOST_DEVICE inline double catboost_digamma_asymptotic(double x) {
  const double inv = 1.0 / (x * x);
  return std::log(x) - 0.5 / x - inv * (0.08333333333333333 + inv * (0.008333333333333333 - inv / 252.0));
}

CBG_HOST_DEVICE inline double catboost_trigamma_asymptotic(double x) {
  const double inv = 1.0 / (x * x);
  return 1.0 / x + inv / 2.0 + inv / x * (0.16666666666666666 - inv * (0.03333333333333333 + inv / 42.0));
}

// The arguments CatBoost's recursions (Digamma(x) = Digamma(x + 1) - 1 / x, and Trigamma's) visit:
// x, x + 1, ... into chain until x is tiny or at least 49 (for x > 0 within 49 steps); returns their
// count, x left at the argument the recursion starts from. Both functions then add the terms back
// innermost first, in CatBoost's order of operations.
CBG_HOST_DEVICE inline int catboost_recursion_arguments(double& x, double (&chain)[50]) {
  int m = 0;
  while (!(x > 0.0 && x <= 1.0E-5) && !(x >= 49.0) && m < 50) {
    chain[m++] = x;
    x = x + 1.0;
  }
  return m;
}

CBG_HOST_DEVICE inline double catboost_digamma(double x) {
  double chain[50];
  int m = catboost_recursion_arguments(x, chain);
  double r = x >= 49.0 ? catboost_digamma_asymptotic(x) : -0.5772156649015329 - 1.0 / x;
  while (m > 0) r = r - 1.0 / chain[--m];
  return r;
}

CBG_HOST_DEVICE inline double catboost_trigamma(double x) {
  double chain[50];
  int m = catboost_recursion_arguments(x, chain);
  double r = x >= 49.0 ? catboost_trigamma_asymptotic(x) : 1.0 / (x * x);
  while (m > 0) {
    const double y = chain[--m];
    r = r + 1.0 / (y * y);
  }
  return r;
}

struct beta_prior {
  double alpha = 0.0;
  double beta = 0.0;
};

// CatBoost's TBetaPriorEstimator::EstimateBetaPrior (50 iterations, step 1, l2 0.01) over `keys`
// categories' class counts `counts` ([key][2]: rows in class 0, rows in class 1; every key has a
// row). Starts at alpha = the share of class 1, beta = 1 - alpha. Throws bad_data when the start is
// not a point of the model (no row or every row in class 1: CatBoost's "illegal point").
beta_prior estimate_beta_prior(const std::int32_t* counts, std::size_t keys, int iterations = 50);

}  // namespace cbg::ctr
