// SPDX-License-Identifier: Apache-2.0
// Per-row steps of the boosting loop shared by the host reference and the kernels: the bootstrap
// draw of a row, the weak target the tree search sees, the leaf channels leaf estimation sums.
#pragma once

#include <cstdint>

#include "cbg/train/boosting.hpp"
#include "cbg/train/det_math.hpp"
#include "cbg/train/loss.hpp"

namespace cbg::train {

inline constexpr int max_hessian = max_dims * (max_dims + 1) / 2;
inline constexpr int max_channels = max_dims + max_hessian + 1;

// The `dims` approxes of row r from a [dims][n] array.
CBG_HOST_DEVICE inline void gather_approx(const double* approx, std::int64_t n, int dims,
                                          std::int64_t r, double* a) noexcept {
  for (int k = 0; k < dims; ++k) a[k] = approx[k * n + r];
}

// The bootstrap multiplier of row r (catboost-training.md §3.2, drawn from a counter-based stream):
// Bayesian (-ln(U + 1e-20))^T, Bernoulli [U < subsample], No 1.
CBG_HOST_DEVICE inline double bootstrap_factor(const bootstrap_spec& b, std::int64_t r) noexcept {
  switch (b.kind) {
    case bootstrap_kind::bayesian: {
      if (b.bagging_temperature == 0) return 1.0;
      const double x = -det_log(draw_uniform(b.key, static_cast<std::uint64_t>(r)) + 1e-20);
      return b.bagging_temperature == 1.0 ? x : det_pow(x, b.bagging_temperature);
    }
    case bootstrap_kind::bernoulli:
      return draw_uniform(b.key, static_cast<std::uint64_t>(r)) < b.subsample ? 1.0 : 0.0;
    case bootstrap_kind::mvs:
    case bootstrap_kind::no:
      break;
  }
  return 1.0;
}

// What the tree search sees of one row, and the row's part of the noise spread.
struct weak_row {
  float der[max_dims];
  float weight = 0.f;
  double sigma = 0.0;  // sum over dims of der^2 / weight (before the bootstrap)
};

CBG_HOST_DEVICE inline weak_row weak_row_values(const loss_spec& l, const weak_request& req,
                                                const double* der, const double* hess, double w,
                                                double factor) noexcept {
  weak_row out;
  const double wt = req.newton_weights ? hess[0] : w;
  for (int k = 0; k < l.dims; ++k) {
    if (wt > 0) out.sigma += der[k] * der[k] / wt;
    out.der[k] = static_cast<float>(der[k] * factor);
  }
  out.weight = static_cast<float>(wt * factor);
  return out;
}

// The leaf channels of one row: [der (dims), hess (hess_channels), w].
CBG_HOST_DEVICE inline void leaf_channels(const loss_spec& l, int hess_channels, const double* der,
                                          const double* hess, double w, double* ch) noexcept {
  for (int k = 0; k < l.dims; ++k) ch[k] = der[k];
  for (int k = 0; k < hess_channels; ++k) ch[l.dims + k] = hess[k];
  ch[l.dims + hess_channels] = w;
}

}  // namespace cbg::train
