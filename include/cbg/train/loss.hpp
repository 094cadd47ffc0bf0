// SPDX-License-Identifier: Apache-2.0
// The losses of the trainer: per-row derivatives and values, written once for the host reference
// and the kernels (catboost-training.md §3.7 for the formulas).
//
// Conventions (CatBoost's GPU code): `der` is the weighted NEGATIVE gradient, `hess` the weighted
// second derivative of the loss (>= 0 for the convex losses), so a Newton step is sum(der) /
// (sum(hess) + l2). Approxes are doubles; targets are prepared before training (Logloss: 0 or 1;
// CrossEntropy: a probability; MultiClass and MultiClassOneVsAll: the class index).
//
// MultiClass trains K dimensions, softmax over all of them, as CatBoost's CPU mode does (its GPU
// mode fixes the last class at 0 and trains K - 1; with all K the split scores see every class's
// gradient, and held-out quality matches the catboost package's). Its Hessian is full (the upper
// triangle, row by row); every other loss has a diagonal one.
#pragma once

#include <cstdint>

#include "cbg/train/det_math.hpp"

namespace cbg::train {

enum class loss_kind : std::uint8_t {
  rmse,
  logloss,
  cross_entropy,
  multiclass,
  multiclass_one_vs_all,
  mae,
  quantile,
  poisson,
  tweedie,
  rmse_with_uncertainty,
};

// Largest number of trained approx dimensions (MultiClass: classes - 1).
inline constexpr int max_dims = 16;  // MultiClass: classes
inline constexpr double half_log_2pi = 0.91893853320467274178;

struct loss_spec {
  loss_kind kind = loss_kind::rmse;
  int dims = 1;                 // trained approx dimensions
  double alpha = 0.5;           // Quantile (MAE: 0.5)
  double variance_power = 1.5;  // Tweedie
};

CBG_HOST_DEVICE constexpr bool full_hessian(const loss_spec& l) noexcept {
  return l.kind == loss_kind::multiclass && l.dims > 1;
}
// Number of second-derivative values per row.
CBG_HOST_DEVICE constexpr int hessian_size(const loss_spec& l) noexcept {
  return full_hessian(l) ? l.dims * (l.dims + 1) / 2 : l.dims;
}
// Index of H[i][j] (i <= j) in the upper-triangle layout.
CBG_HOST_DEVICE constexpr int triangle_index(int dims, int i, int j) noexcept {
  return i * dims - i * (i - 1) / 2 + (j - i);
}

// Softmax probabilities over [a_0, ..., a_{d-1}].
CBG_HOST_DEVICE inline void multiclass_probabilities(int d, const double* a, double* p) noexcept {
  double top = a[0];
  for (int k = 1; k < d; ++k) top = a[k] > top ? a[k] : top;
  double total = 0.0;
  for (int k = 0; k < d; ++k) {
    p[k] = det_exp(a[k] - top);
    total += p[k];
  }
  for (int k = 0; k < d; ++k) p[k] /= total;
}

// der and hess of one row with weight w at approx a (l.dims values).
CBG_HOST_DEVICE inline void point_derivatives(const loss_spec& l, const double* a, float target, double w, double* der,
                                              double* hess) noexcept {
  const double y = target;
  switch (l.kind) {
    case loss_kind::rmse:
      der[0] = w * (y - a[0]);
      hess[0] = w;
      return;
    case loss_kind::logloss:
    case loss_kind::cross_entropy: {
      const double p = det_sigmoid(a[0]);
      der[0] = w * (y - p);
      hess[0] = w * (p * (1.0 - p));
      return;
    }
    case loss_kind::multiclass: {
      double p[max_dims];
      multiclass_probabilities(l.dims, a, p);
      const int cls = static_cast<int>(target);
      for (int i = 0; i < l.dims; ++i) {
        der[i] = w * ((i == cls ? 1.0 : 0.0) - p[i]);
        for (int j = i; j < l.dims; ++j) {
          hess[triangle_index(l.dims, i, j)] = w * (p[i] * ((i == j ? 1.0 : 0.0) - p[j]));
        }
      }
      return;
    }
    case loss_kind::multiclass_one_vs_all: {
      const int cls = static_cast<int>(target);
      for (int k = 0; k < l.dims; ++k) {
        const double p = det_sigmoid(a[k]);
        der[k] = w * ((k == cls ? 1.0 : 0.0) - p);
        hess[k] = w * (p * (1.0 - p));
      }
      return;
    }
    case loss_kind::mae:
    case loss_kind::quantile:
      der[0] = w * (y - a[0] > 0 ? l.alpha : -(1.0 - l.alpha));
      hess[0] = 0.0;
      return;
    case loss_kind::poisson: {
      const double e = det_exp(a[0]);
      der[0] = w * (y - e);
      hess[0] = w * e;
      return;
    }
    case loss_kind::tweedie: {
      const double rho = l.variance_power;
      const double e1 = det_exp((1.0 - rho) * a[0]);
      const double e2 = det_exp((2.0 - rho) * a[0]);
      der[0] = w * (y * e1 - e2);
      hess[0] = w * ((2.0 - rho) * e2 - (1.0 - rho) * y * e1);
      return;
    }
    case loss_kind::rmse_with_uncertainty: {
      const double r = y - a[0];
      const double inv_var = det_exp(-2.0 * a[1]);
      der[0] = w * (inv_var * r);
      hess[0] = w * inv_var;
      der[1] = w * (inv_var * (r * r) - 1.0);
      hess[1] = w * (2.0 * inv_var * (r * r));
      return;
    }
  }
}

// The loss of one row (unweighted) at approx a: the function whose negative gradient is `der`.
CBG_HOST_DEVICE inline double point_loss(const loss_spec& l, const double* a, float target) noexcept {
  const double y = target;
  switch (l.kind) {
    case loss_kind::rmse: {
      const double r = y - a[0];
      return 0.5 * (r * r);
    }
    case loss_kind::logloss:
    case loss_kind::cross_entropy:
      return det_softplus(a[0]) - y * a[0];
    case loss_kind::multiclass: {
      double top = a[0];
      for (int k = 1; k < l.dims; ++k) top = a[k] > top ? a[k] : top;
      double total = 0.0;
      for (int k = 0; k < l.dims; ++k) total += det_exp(a[k] - top);
      return top + det_log(total) - a[static_cast<int>(target)];
    }
    case loss_kind::multiclass_one_vs_all: {
      const int cls = static_cast<int>(target);
      double s = 0.0;
      for (int k = 0; k < l.dims; ++k) s += det_softplus(a[k]) - (k == cls ? a[k] : 0.0);
      return s;
    }
    case loss_kind::mae:
    case loss_kind::quantile: {
      const double r = y - a[0];
      return r > 0 ? l.alpha * r : -(1.0 - l.alpha) * r;
    }
    case loss_kind::poisson:
      return det_exp(a[0]) - y * a[0];
    case loss_kind::tweedie: {
      const double rho = l.variance_power;
      return -y * det_exp((1.0 - rho) * a[0]) / (1.0 - rho) + det_exp((2.0 - rho) * a[0]) / (2.0 - rho);
    }
    case loss_kind::rmse_with_uncertainty: {
      const double r = y - a[0];
      return half_log_2pi + a[1] + 0.5 * det_exp(-2.0 * a[1]) * (r * r);
    }
  }
  return 0.0;
}

// point_loss and point_derivatives of one row at once, bit for bit the same values, sharing work
// where the formulas allow (Logloss/CrossEntropy: softplus and sigmoid need the same exponential,
// e^-|a|, also at a = +-0 where both give 1).
CBG_HOST_DEVICE inline double point_loss_and_derivatives(const loss_spec& l, const double* a, float target, double w,
                                                         double* der, double* hess) noexcept {
  if (l.kind == loss_kind::logloss || l.kind == loss_kind::cross_entropy) {
    const double x = a[0];
    const double y = target;
    const double e = det_exp(x > 0 ? -x : x);
    const double softplus = x > 0 ? x + det_log1p(e) : det_log1p(e);
    const double p = x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    der[0] = w * (y - p);
    hess[0] = w * (p * (1.0 - p));
    return softplus - y * x;
  }
  point_derivatives(l, a, target, w, der, hess);
  return point_loss(l, a, target);
}

}  // namespace cbg::train
