// SPDX-License-Identifier: Apache-2.0
// Leaf estimation (catboost-training.md §3.7) as a small state machine, written once for the host
// reference and the GPU, so that both take the same decisions from the same numbers:
//
//   start         sums at the current approx -> leaf weights, the first direction; with one
//                 iteration the point is that direction and the search is done
//   candidate     point + step * direction: its function value (line search) and, for the bounded
//                 losses, its sums at static scales (else its channel maxima)
//   after a candidate: accepted (or no backtracking) -> it becomes the point; the next direction
//                 comes from its sums (bounded losses) or from a sums pass at scales from its maxima
//                 (mode sums); rejected -> half the step. Every candidate uses up one iteration;
//                 before anything is accepted the attempts go on up to 100.
//
// The GPU runs the steps in a one-block kernel between its row passes, with no host round trip
// (src/train/device_backend.cpp); the host reference drives the same functions through its
// passes (src/train/boosting_common.cpp). Leaf-parallel parts take (first, stride) so a block can
// share them; the ordered sums (the directional derivative) run on one thread in a fixed order.
#pragma once

#include <cstdint>

#include "cbg/train/loss.hpp"
#include "cbg/train/reduce_math.hpp"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace cbg::train {

// What the next row pass computes (leaf_search_status::mode).
enum leaf_mode : std::int32_t {
  leaf_mode_done = 0,
  leaf_mode_candidate = 1,  // at `candidate`: value (backtracking), sums (bounded) or maxima (unbounded)
  leaf_mode_sums = 2,       // at `point`: sums at `scales` (unbounded losses, after an acceptance)
};

// Plain settings of one estimation (the same for every leaf).
struct leaf_search_config {
  loss_spec loss;
  std::int32_t newton = 1;        // leaf_method::newton, else gradient
  std::int32_t backtracking = 1;  // backtracking_kind: 0 no, 1 any improvement, 2 Armijo
  std::int32_t iterations = 1;
  std::int32_t bounded = 1;  // static scales: candidate passes also give the sums
  std::int32_t leaves = 1;
  std::int32_t hess_channels = 1;
  std::int64_t rows = 0;  // for the scales from maxima
  double l2 = 1e-20;

  [[nodiscard]] CBG_HOST_DEVICE int channels() const noexcept { return loss.dims + hess_channels + 1; }
  [[nodiscard]] CBG_HOST_DEVICE int values() const noexcept { return leaves * loss.dims; }
};

// Scalars of the search (8-byte aligned; read back by the host at the end).
struct leaf_search_status {
  double value = 0;  // function value at `point`
  double step = 1;
  double gdir = 0;  // sum of g * direction at `point`
  std::int32_t used = 0;
  std::int32_t accepted_any = 0;
  std::int32_t mode = leaf_mode_done;
  std::int32_t error = 0;  // 1: a channel maximum is not finite (the approx overflowed)
};

// The arrays of one search (host vectors or device memory).
struct leaf_search_view {
  leaf_search_status* status = nullptr;
  double* point = nullptr;        // [leaves][dims]
  double* direction = nullptr;    // [leaves][dims]
  double* candidate = nullptr;    // [leaves][dims]
  double* leaf_weight = nullptr;  // [leaves]: the sums of w at the start
  fixed_scale* scales = nullptr;  // [channels]: of the sums the next pass computes in mode sums
};

namespace detail {

CBG_HOST_DEVICE inline double leaf_sqrt(double v) noexcept {
#if defined(__CUDA_ARCH__)
  return ::sqrt(v);
#else
  return std::sqrt(v);
#endif
}

// Solves (H + l2 I) x = g for a symmetric positive definite H given as its upper triangle
// (Cholesky); false when it is not positive definite (x untouched then).
CBG_HOST_DEVICE inline bool solve_spd(int n, const double* upper, double l2, const double* g, double* x) noexcept {
  double a[max_dims * max_dims];
  double y[max_dims];
  for (int i = 0; i < n; ++i) {
    for (int j = i; j < n; ++j) {
      const double v = upper[triangle_index(n, i, j)] + (i == j ? l2 : 0.0);
      a[i * n + j] = v;
      a[j * n + i] = v;
    }
  }
  for (int j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    const double root = leaf_sqrt(d);
    a[j * n + j] = root;
    for (int i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (int k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / root;
    }
  }
  for (int i = 0; i < n; ++i) {
    double v = g[i];
    for (int k = 0; k < i; ++k) v -= a[i * n + k] * y[k];
    y[i] = v / a[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double v = y[i];
    for (int k = i + 1; k < n; ++k) v -= a[k * n + i] * x[k];
    x[i] = v / a[i * n + i];
  }
  return true;
}

}  // namespace detail

// One leaf's channel sums (fixed point) as doubles: g[dims], h[hess_channels], w.
CBG_HOST_DEVICE inline void leaf_sums_of(const leaf_search_config& c, const std::int64_t* sums,
                                         const fixed_scale* scales, int leaf, double* g, double* h,
                                         double* w) noexcept {
  const int dims = c.loss.dims;
  const int channels = c.channels();
  const std::int64_t* s = sums + static_cast<std::int64_t>(leaf) * channels;
  for (int k = 0; k < dims; ++k) g[k] = from_fixed64(s[k], scales[k]);
  for (int k = 0; k < c.hess_channels; ++k) h[k] = from_fixed64(s[dims + k], scales[dims + k]);
  *w = from_fixed64(s[dims + c.hess_channels], scales[dims + c.hess_channels]);
}

// The step of one leaf from its sums: Newton (full Hessian by Cholesky, else diagonal) or Gradient.
CBG_HOST_DEVICE inline void leaf_direction_of(const leaf_search_config& c, const double* g, const double* h, double w,
                                              double* x) noexcept {
  const loss_spec& l = c.loss;
  const int d = l.dims;
  if (c.newton == 0) {
    const double den = w + c.l2;
    for (int k = 0; k < d; ++k) x[k] = den > 0 ? g[k] / den : 0.0;
    return;
  }
  if (full_hessian(l) && detail::solve_spd(d, h, c.l2, g, x)) return;
  for (int k = 0; k < d; ++k) {
    const double den = (full_hessian(l) ? h[triangle_index(d, k, k)] : h[k]) + c.l2;
    x[k] = den > 0 ? g[k] / den : 0.0;
  }
}

// Directions of leaves first, first + stride, ... from the sums (and the leaf weights when asked).
CBG_HOST_DEVICE inline void leaf_directions(const leaf_search_config& c, const leaf_search_view& v,
                                            const std::int64_t* sums, const fixed_scale* scales, bool keep_weights,
                                            int first, int stride) noexcept {
  const int d = c.loss.dims;
  for (int leaf = first; leaf < c.leaves; leaf += stride) {
    double g[max_dims], h[max_dims * (max_dims + 1) / 2], w = 0;
    leaf_sums_of(c, sums, scales, leaf, g, h, &w);
    if (keep_weights) v.leaf_weight[leaf] = w;
    leaf_direction_of(c, g, h, w, v.direction + static_cast<std::int64_t>(leaf) * d);
  }
}

// Term i = leaf * dims + k of leaf_gdir: g[k] of the leaf times its direction (terms are independent:
// a block may compute them in parallel and one thread add them in leaf_gdir's order).
CBG_HOST_DEVICE inline double leaf_gdir_term(const leaf_search_config& c, const leaf_search_view& v,
                                             const std::int64_t* sums, const fixed_scale* scales, int i) noexcept {
  const int d = c.loss.dims;
  const int leaf = i / d;
  const int k = i - leaf * d;
  return from_fixed64(sums[static_cast<std::int64_t>(leaf) * c.channels() + k], scales[k]) * v.direction[i];
}

// sum over leaves and dims (leaf-major) of g * direction, in that order (one thread).
CBG_HOST_DEVICE inline double leaf_gdir(const leaf_search_config& c, const leaf_search_view& v,
                                        const std::int64_t* sums, const fixed_scale* scales) noexcept {
  double total = 0;
  for (int i = 0; i < c.values(); ++i) total += leaf_gdir_term(c, v, sums, scales, i);
  return total;
}

// candidate = point + step * direction (leaf-parallel).
CBG_HOST_DEVICE inline void leaf_candidate(const leaf_search_config& c, const leaf_search_view& v, double step,
                                           int first, int stride) noexcept {
  for (int i = first; i < c.values(); i += stride) v.candidate[i] = v.point[i] + step * v.direction[i];
}

// ---- the decisions (one thread; the leaf-parallel parts follow in the caller when `out` says so) ----
// What the caller does after a decision, leaf-parallel.
struct leaf_next {
  bool directions = false;  // new directions from `sums` at `scales` (then gdir on one thread)
  bool accept = false;      // point = candidate, before anything else
  bool candidate = false;   // candidate = point + step * direction, last
};

// Start (one thread): the function value at the approx. Before it the caller has set point = 0 and
// the directions with the leaf weights from the sums at the approx (leaf_directions); after it comes
// leaf_begin_direction.
CBG_HOST_DEVICE inline void leaf_start(const leaf_search_view& v, double value) noexcept {
  leaf_search_status& s = *v.status;
  s = leaf_search_status{};
  s.value = value;
  s.mode = leaf_mode_candidate;
}

// point = 0 (leaf-parallel).
CBG_HOST_DEVICE inline void leaf_zero_point(const leaf_search_config& c, const leaf_search_view& v, int first,
                                            int stride) noexcept {
  for (int i = first; i < c.values(); i += stride) v.point[i] = 0.0;
}

// After new directions: one iteration -> the point is the direction (done); else gdir and step 1.
// Returns whether the caller computes the candidate next.
CBG_HOST_DEVICE inline bool leaf_begin_direction(const leaf_search_config& c, const leaf_search_view& v,
                                                 const std::int64_t* sums, const fixed_scale* scales) noexcept {
  leaf_search_status& s = *v.status;
  if (c.iterations <= 1) {
    for (int i = 0; i < c.values(); ++i) v.point[i] = v.direction[i];
    s.mode = leaf_mode_done;
    return false;
  }
  s.gdir = leaf_gdir(c, v, sums, scales);
  s.step = 1.0;
  s.mode = leaf_mode_candidate;
  return true;
}

// Scales of the sums at the accepted point from its channel maxima (max_keys: abs_float_key);
// false (error set) when one is not finite.
CBG_HOST_DEVICE inline bool leaf_scales_from_max(const leaf_search_config& c, const leaf_search_view& v,
                                                 const std::uint32_t* max_keys) noexcept {
  for (int ch = 0; ch < c.channels(); ++ch) {
    if (max_keys[ch] >= 0x7f800000u) {
      v.status->error = 1;
      v.status->mode = leaf_mode_done;
      return false;
    }
    v.scales[ch] = fixed_scale_for(float_of_key(max_keys[ch]), c.rows);
  }
  return true;
}

// After a candidate pass with function value `value` (ignored without backtracking).
CBG_HOST_DEVICE inline leaf_next leaf_after_candidate(const leaf_search_config& c, const leaf_search_view& v,
                                                      double value) noexcept {
  leaf_search_status& s = *v.status;
  leaf_next next;
  s.used += 1;
  const bool ok = c.backtracking == 0 || (c.backtracking == 1 && value >= s.value) ||
                  (c.backtracking == 2 && value >= s.value + 1e-5 * s.step * s.gdir);
  if (ok) {
    s.accepted_any = 1;
    s.value = value;
    next.accept = true;
    if (s.used >= c.iterations) {
      s.mode = leaf_mode_done;
    } else if (c.bounded != 0) {
      next.directions = true;  // from this pass's sums; then leaf_begin_direction
    } else {
      s.mode = leaf_mode_sums;  // the caller sets the scales from this pass's maxima
    }
    return next;
  }
  s.step *= 0.5;
  if ((s.accepted_any != 0 && s.used >= c.iterations) || s.used >= 100) {
    s.mode = leaf_mode_done;
    return next;
  }
  next.candidate = true;
  return next;
}

// The point after acceptance (leaf-parallel).
CBG_HOST_DEVICE inline void leaf_accept(const leaf_search_config& c, const leaf_search_view& v, int first,
                                        int stride) noexcept {
  for (int i = first; i < c.values(); i += stride) v.point[i] = v.candidate[i];
}

}  // namespace cbg::train
