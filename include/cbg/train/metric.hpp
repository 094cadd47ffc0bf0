// SPDX-License-Identifier: Apache-2.0
// Metrics of the trainer. Each additive metric is a few per-row terms, summed in the fixed order of
// reduce_math.hpp (the same on the host and the GPU), and a final formula over the sums. The class
// metrics (TotalF1, MCC, Kappa, ...) need a weighted confusion table instead (metric_tables.hpp),
// the ranked ones (AUC, PRAUC, NormalizedGini) a sort (metric_ranked.hpp).
#pragma once

#include <cmath>
#include <cstdint>

#include "cbg/train/loss.hpp"

namespace cbg::train {

enum class metric_kind : std::uint8_t {
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
  auc,
  accuracy,
  precision,
  recall,
  f1,
  r2,
  brier_score,
  log_likelihood_of_prediction,
  // from the confusion table
  total_f1,
  mcc,
  balanced_accuracy,
  kappa,
  wkappa,
  // ranked
  prauc,
  normalized_gini,
};

enum class metric_average : std::uint8_t { weighted, macro, micro };  // TotalF1
enum class auc_type : std::uint8_t { classic, mu, one_vs_all };

inline constexpr int metric_terms = 4;

// Plain data, passed to kernels by value.
struct metric_spec {
  metric_kind kind = metric_kind::rmse;
  double alpha = 0.5;           // Quantile
  double variance_power = 1.5;  // Tweedie
  bool use_weights = true;      // CatBoost's default: true except for AUC
  metric_average average = metric_average::weighted;
  auc_type auc = auc_type::classic;  // AUC of a multiclass loss: Mu unless told
};

// Metrics summed from per-row terms (metric_row_terms / metric_final).
CBG_HOST_DEVICE constexpr bool is_additive(metric_kind k) noexcept {
  return k != metric_kind::auc && k != metric_kind::prauc && k != metric_kind::normalized_gini &&
         !(k >= metric_kind::total_f1 && k <= metric_kind::wkappa);
}
// Metrics of classifiers added after the first set (binary or multiclass losses only).
CBG_HOST_DEVICE constexpr bool is_classification_metric(metric_kind k) noexcept {
  return k >= metric_kind::brier_score;
}
// Metrics implemented for binary classification (one approx dimension) only.
CBG_HOST_DEVICE constexpr bool is_binary_only(metric_kind k) noexcept {
  return k == metric_kind::precision || k == metric_kind::recall || k == metric_kind::f1 ||
         k == metric_kind::brier_score || k == metric_kind::log_likelihood_of_prediction ||
         k == metric_kind::balanced_accuracy || k == metric_kind::prauc || k == metric_kind::normalized_gini;
}
// Metrics of the weighted confusion table (metric_tables.hpp).
CBG_HOST_DEVICE constexpr bool is_table_metric(metric_kind k) noexcept {
  return k >= metric_kind::total_f1 && k <= metric_kind::wkappa;
}

CBG_HOST_DEVICE constexpr bool higher_is_better(metric_kind k) noexcept {
  return k == metric_kind::auc || k == metric_kind::accuracy || k == metric_kind::precision ||
         k == metric_kind::recall || k == metric_kind::f1 || k == metric_kind::r2 ||
         k == metric_kind::log_likelihood_of_prediction || k == metric_kind::total_f1 || k == metric_kind::mcc ||
         k == metric_kind::balanced_accuracy || k == metric_kind::kappa || k == metric_kind::wkappa ||
         k == metric_kind::prauc || k == metric_kind::normalized_gini;
}

// Predicted class of a row: binary losses (one dimension) compare the approx with 0; MultiClass
// and MultiClassOneVsAll take the argmax (the first on ties).
CBG_HOST_DEVICE inline int predicted_class(const loss_spec& l, const double* a) noexcept {
  if (l.dims == 1 && l.kind != loss_kind::multiclass_one_vs_all) return a[0] > 0 ? 1 : 0;
  int best = 0;
  double top = a[0];
  for (int k = 1; k < l.dims; ++k) {
    if (a[k] > top) {
      top = a[k];
      best = k;
    }
  }
  return best;
}

// The class a target means (binary targets: > 0.5).
CBG_HOST_DEVICE inline int target_class(const loss_spec& l, float target) noexcept {
  if (l.kind == loss_kind::multiclass || l.kind == loss_kind::multiclass_one_vs_all) {
    return static_cast<int>(target);
  }
  return target > 0.5f ? 1 : 0;
}

// True where the metric's row terms are {w * loss, w, 0, 0} for the point_loss of `l` (Logloss and
// CrossEntropy, weighted): a pass that has -w * loss of a row gives them without evaluating it again.
CBG_HOST_DEVICE constexpr bool metric_is_weighted_loss(const metric_spec& m, const loss_spec& l) noexcept {
  return m.use_weights && (m.kind == metric_kind::logloss || m.kind == metric_kind::cross_entropy) &&
         (l.kind == loss_kind::logloss || l.kind == loss_kind::cross_entropy);
}

// Per-row terms (weight w applied) of an additive metric; `l` tells how approxes are shaped.
CBG_HOST_DEVICE inline void metric_row_terms(const metric_spec& m, const loss_spec& l, const double* a, float target,
                                             double row_weight, double* t) noexcept {
  t[0] = t[1] = t[2] = t[3] = 0.0;
  const double y = target;
  const double w = m.use_weights ? row_weight : 1.0;
  switch (m.kind) {
    case metric_kind::rmse: {
      const double r = y - a[0];
      t[0] = w * (r * r);
      t[1] = w;
      return;
    }
    case metric_kind::r2: {
      const double r = y - a[0];
      t[0] = w * (r * r);
      t[1] = w * y;
      t[2] = w * (y * y);
      t[3] = w;
      return;
    }
    case metric_kind::mae:
    case metric_kind::quantile: {
      loss_spec q;
      q.kind = loss_kind::quantile;
      q.alpha = m.kind == metric_kind::mae ? 0.5 : m.alpha;
      // CatBoost's MAE is the mean |r|, i.e. twice the pinball loss at 0.5.
      t[0] = w * point_loss(q, a, target) * (m.kind == metric_kind::mae ? 2.0 : 1.0);
      t[1] = w;
      return;
    }
    case metric_kind::logloss:
    case metric_kind::cross_entropy: {
      loss_spec b;
      b.kind = loss_kind::logloss;
      t[0] = w * point_loss(b, a, target);
      t[1] = w;
      return;
    }
    case metric_kind::multiclass:
    case metric_kind::multiclass_one_vs_all:
    case metric_kind::rmse_with_uncertainty: {
      loss_spec s = l;
      s.kind = m.kind == metric_kind::multiclass              ? loss_kind::multiclass
               : m.kind == metric_kind::multiclass_one_vs_all ? loss_kind::multiclass_one_vs_all
                                                              : loss_kind::rmse_with_uncertainty;
      const double v = point_loss(s, a, target);
      t[0] = w * (m.kind == metric_kind::multiclass_one_vs_all ? v / l.dims : v);
      t[1] = w;
      return;
    }
    case metric_kind::poisson:
    case metric_kind::tweedie: {
      loss_spec s;
      s.kind = m.kind == metric_kind::poisson ? loss_kind::poisson : loss_kind::tweedie;
      s.variance_power = m.variance_power;
      t[0] = w * point_loss(s, a, target);
      t[1] = w;
      return;
    }
    case metric_kind::accuracy:
      t[0] = predicted_class(l, a) == target_class(l, target) ? w : 0.0;
      t[1] = w;
      return;
    case metric_kind::precision:
    case metric_kind::recall:
    case metric_kind::f1: {
      const int p = predicted_class(l, a);
      const int c = target_class(l, target);
      t[0] = p == 1 && c == 1 ? w : 0.0;  // true positives
      t[1] = p == 1 && c != 1 ? w : 0.0;  // false positives
      t[2] = p != 1 && c == 1 ? w : 0.0;  // false negatives
      return;
    }
    case metric_kind::brier_score: {
      const double r = det_sigmoid(a[0]) - y;
      t[0] = w * (r * r);
      t[1] = w;
      return;
    }
    case metric_kind::log_likelihood_of_prediction: {
      loss_spec b;
      b.kind = loss_kind::logloss;
      t[0] = -w * point_loss(b, a, target);  // the model's log likelihood
      t[1] = w * y;
      t[2] = w;
      return;
    }
    default:
      return;  // ranked or from the confusion table, not summed
  }
}

// The metric from the summed terms.
CBG_HOST_DEVICE inline double metric_final(const metric_spec& m, const double* s) noexcept {
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  switch (m.kind) {
    case metric_kind::rmse: {
      const double v = ratio(s[0], s[1]);
      return v > 0 ? sqrt(v) : 0.0;  // IEEE square root: the same bits on both sides
    }
    case metric_kind::r2: {
      const double total = s[2] - ratio(s[1] * s[1], s[3]);
      return total > 0 ? 1.0 - s[0] / total : 0.0;
    }
    case metric_kind::precision:
      return ratio(s[0], s[0] + s[1]);
    case metric_kind::recall:
      return ratio(s[0], s[0] + s[2]);
    case metric_kind::f1:
      return ratio(2.0 * s[0], 2.0 * s[0] + s[1] + s[2]);
    case metric_kind::log_likelihood_of_prediction: {
      // (log likelihood of the model - that of the weighted base rate) / weighted positives
      const double rate = ratio(s[1], s[2]);
      if (!(rate > 0 && rate < 1)) return 0.0;
      const double base = s[1] * det_log(rate) + (s[2] - s[1]) * det_log(1.0 - rate);
      return (s[0] - base) / s[1];
    }
    default:
      return ratio(s[0], s[1]);
  }
}

}  // namespace cbg::train
