// SPDX-License-Identifier: Apache-2.0
// Metrics of the weighted confusion table: cell [true class * K + predicted class] holds the summed
// weights of its rows. The host and the GPU sum each cell in 64-bit fixed point (reduce_math.hpp),
// so the table, and every metric of it, has the same bits on both; the formulas run on the host.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "cbg/train/metric.hpp"
#include "cbg/train/reduce_math.hpp"

namespace cbg::train {

// The cell a row adds its weight to.
CBG_HOST_DEVICE inline int confusion_cell(const loss_spec& l, const double* a, float target, int classes) noexcept {
  return target_class(l, target) * classes + predicted_class(l, a);
}

// The weight a row adds (use_weights=false: 1).
CBG_HOST_DEVICE inline double table_weight(const metric_spec& m, float w) noexcept {
  return m.use_weights ? static_cast<double>(w) : 1.0;
}

// The fixed-point scale of a table of n rows whose largest weight is max_weight.
CBG_HOST_DEVICE inline fixed_scale table_scale(const metric_spec& m, float max_weight, std::int64_t n) noexcept {
  return fixed_scale_for(m.use_weights ? static_cast<double>(max_weight) : 1.0, n);
}

// The metric of a table (classes * classes cells, true class major), as CatBoost defines it:
//   TotalF1: per-class F1 averaged by support (Weighted), plainly (Macro), or accuracy (Micro);
//   MCC: Gorodkin's multiclass form; BalancedAccuracy: the mean recall of the classes present;
//   Kappa: Cohen's; WKappa: Cohen's with quadratic weights ((i - j) / (K - 1))^2.
inline double table_metric(const metric_spec& m, const std::vector<double>& cell, int classes) {
  const auto k_count = static_cast<std::size_t>(classes);
  std::vector<double> truth(k_count, 0.0), predicted(k_count, 0.0);
  double total = 0, correct = 0;
  for (std::size_t i = 0; i < k_count; ++i) {
    for (std::size_t j = 0; j < k_count; ++j) {
      const double c = cell[i * k_count + j];
      truth[i] += c;
      predicted[j] += c;
      total += c;
    }
    correct += cell[i * k_count + i];
  }
  if (!(total > 0)) return 0.0;
  switch (m.kind) {
    case metric_kind::total_f1: {
      if (m.average == metric_average::micro) return correct / total;
      double sum = 0;
      for (std::size_t i = 0; i < k_count; ++i) {
        const double denominator = truth[i] + predicted[i];
        const double f1 = denominator > 0 ? 2.0 * cell[i * k_count + i] / denominator : 0.0;
        sum += m.average == metric_average::macro ? f1 : f1 * truth[i];
      }
      return m.average == metric_average::macro ? sum / classes : sum / total;
    }
    case metric_kind::mcc: {
      double tp = 0, pp = 0;  // sum of truth[k] * predicted[k], of truth[k]^2, of predicted[k]^2
      double tt = 0;
      for (std::size_t i = 0; i < k_count; ++i) {
        tp += truth[i] * predicted[i];
        tt += truth[i] * truth[i];
        pp += predicted[i] * predicted[i];
      }
      const double cov_xy = total * correct - tp;
      const double cov_xx = total * total - pp;
      const double cov_yy = total * total - tt;
      const double d = cov_xx * cov_yy;
      return d > 0 ? cov_xy / std::sqrt(d) : 0.0;
    }
    case metric_kind::balanced_accuracy: {
      double sum = 0;
      int present = 0;
      for (std::size_t i = 0; i < k_count; ++i) {
        if (truth[i] > 0) {
          sum += cell[i * k_count + i] / truth[i];
          ++present;
        }
      }
      return present > 0 ? sum / present : 0.0;
    }
    case metric_kind::kappa:
    case metric_kind::wkappa: {
      // 1 - (weighted disagreement observed) / (weighted disagreement expected by chance)
      double observed = 0, expected = 0;
      for (std::size_t i = 0; i < k_count; ++i) {
        for (std::size_t j = 0; j < k_count; ++j) {
          double weight = i == j ? 0.0 : 1.0;
          if (m.kind == metric_kind::wkappa) {
            const double d = (static_cast<double>(i) - static_cast<double>(j)) / (classes - 1);
            weight = d * d;
          }
          observed += weight * cell[i * k_count + j];
          expected += weight * truth[i] * predicted[j] / total;
        }
      }
      return expected > 0 ? 1.0 - observed / expected : 0.0;
    }
    default:
      return 0.0;
  }
}

}  // namespace cbg::train
