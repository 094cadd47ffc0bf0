// SPDX-License-Identifier: Apache-2.0
// Per-row steps of the boosting loop shared by the host reference and the kernels: the bootstrap
// draw of a row, the weak target the tree search sees, the leaf channels leaf estimation sums.
#pragma once

#include <cstdint>

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

#include "cbg/train/boosting.hpp"
#include "cbg/train/det_math.hpp"
#include "cbg/train/loss.hpp"

namespace cbg::train {

inline constexpr int max_hessian = max_dims * (max_dims + 1) / 2;
inline constexpr int max_channels = max_dims + max_hessian + 1;

// The `dims` approxes of row r from a [dims][n] array.
CBG_HOST_DEVICE inline void gather_approx(const double* approx, std::int64_t n, int dims, std::int64_t r,
                                          double* a) noexcept {
  for (int k = 0; k < dims; ++k) a[k] = approx[k * n + r];
}

// The bootstrap multiplier of row r (catboost-training.md §3.2, drawn from a counter-based stream):
// Bayesian (-ln(U + 1e-20))^T, Bernoulli [U < subsample], Poisson(-ln(1 - subsample)), No 1 (MVS
// is applied after the pass, per block of rows: mvs_* below).
CBG_HOST_DEVICE inline double bootstrap_factor(const bootstrap_spec& b, std::int64_t r) noexcept {
  switch (b.kind) {
    case bootstrap_kind::bayesian: {
      if (b.bagging_temperature == 0) return 1.0;
      const double x = -det_log(draw_uniform(b.key, static_cast<std::uint64_t>(r)) + 1e-20);
      return b.bagging_temperature == 1.0 ? x : det_pow(x, b.bagging_temperature);
    }
    case bootstrap_kind::bernoulli:
      return draw_uniform(b.key, static_cast<std::uint64_t>(r)) < b.subsample ? 1.0 : 0.0;
    case bootstrap_kind::poisson: {
      // CatBoost's GPU Poisson: lambda = -ln(1 - subsample), so a row is left out with probability
      // 1 - subsample; drawn by inversion (at most 64 steps); subsample 1: every weight 1.
      if (!(b.subsample < 1.0)) return 1.0;
      const double lambda = -det_log(1.0 - b.subsample);
      const double u = draw_uniform(b.key, static_cast<std::uint64_t>(r));
      double p = det_exp(-lambda);
      double cdf = p;
      int k = 0;
      while (u >= cdf && k < 64) {
        ++k;
        p *= lambda / k;
        cdf += p;
      }
      return static_cast<double>(k);
    }
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

CBG_HOST_DEVICE inline weak_row weak_row_values(const loss_spec& l, const weak_request& req, const double* der,
                                                const double* hess, double w, double factor) noexcept {
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
CBG_HOST_DEVICE inline void leaf_channels(const loss_spec& l, int hess_channels, const double* der, const double* hess,
                                          double w, double* ch) noexcept {
  for (int k = 0; k < l.dims; ++k) ch[k] = der[k];
  for (int k = 0; k < hess_channels; ++k) ch[l.dims + k] = hess[k];
  ch[l.dims + hess_channels] = w;
}

// The residual of Exact leaf estimation (one dimension); -0 and +0 are one value.
CBG_HOST_DEVICE inline double exact_residual(float target, double approx) noexcept {
  const double r = static_cast<double>(target) - approx;
  return r == 0 ? 0.0 : r;
}

// ---- MVS (minimal variance sampling; CatBoost's GPU scheme, deterministic) -------------------------
// The rows fall into blocks of 8192. In a block of m rows each row has a candidate
// c = sqrt(lambda + sum_k der_k^2) (float, fused multiply-adds, as CatBoost's GPU kernel). With the
// candidates sorted ascending and S_i the sum of the i + 1 smallest (exact, fixed point), the
// threshold comes from the largest rank i with S_i / c_i + (m - 1 - i) >= sample = m * subsample:
// mu = S_i / (sample - (m - 1 - i)), so that the rows above rank i are taken for sure and the others
// with probability c / mu, and the expected count is the sample. A row with probability p > float
// epsilon is kept when its uniform draw is below p, with weight 1 / p (der and weight are scaled).
// lambda: mvs_reg when given, else the square of the mean over rows of sum_k |der_k|.
inline constexpr std::int64_t mvs_block_rows = 8192;

CBG_HOST_DEVICE inline float mvs_fma(float a, float b, float c) noexcept {
#if defined(__CUDA_ARCH__)
  return fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
CBG_HOST_DEVICE inline float mvs_sqrt(float v) noexcept {
#if defined(__CUDA_ARCH__)
  return sqrtf(v);
#else
  return std::sqrt(v);
#endif
}

// The candidate of row r of the search der ([dims][n]).
CBG_HOST_DEVICE inline float mvs_candidate(const float* der, std::int64_t n, int dims, std::int64_t r,
                                           float lambda) noexcept {
  float acc = lambda;
  for (int k = 0; k < dims; ++k) {
    const float d = der[k * n + r];
    acc = mvs_fma(d, d, acc);
  }
  return mvs_sqrt(acc);
}

// Whether rank i (candidate c, prefix sum s_i) of a block of m rows can be the threshold's rank.
CBG_HOST_DEVICE inline bool mvs_rank_qualifies(double s_i, float c, std::int64_t m, std::int64_t i,
                                               double sample) noexcept {
  return s_i / static_cast<double>(c) + static_cast<double>(m - 1 - i) >= sample;
}
CBG_HOST_DEVICE inline double mvs_threshold(double s_i, std::int64_t m, std::int64_t i, double sample) noexcept {
  return s_i / (sample - static_cast<double>(m - 1 - i));
}

// The multiplier of row r with candidate c under threshold mu (mu <= 0: no rank qualified, 1).
CBG_HOST_DEVICE inline double mvs_factor(float c, double mu, std::uint64_t key, std::int64_t r) noexcept {
  if (!(mu > 0)) return 1.0;
  const double p = static_cast<double>(c) > mu ? 1.0 : static_cast<double>(c) / mu;
  if (!(p > 1.1920928955078125e-07)) return 0.0;
  return draw_uniform(key, static_cast<std::uint64_t>(r)) < p ? 1.0 / p : 0.0;
}

// A scaled search value (der or weight) of an MVS row.
CBG_HOST_DEVICE inline float mvs_scaled(float v, double factor) noexcept {
  return static_cast<float>(static_cast<double>(v) * factor);
}

}  // namespace cbg::train
