// SPDX-License-Identifier: Apache-2.0
// CatBoost's border types other than the greedy ones (those are in quantize_math.hpp): Median,
// Uniform, UniformAndQuantiles, and the exact dynamic programme of MinEntropy and MaxLogSum. Each
// takes the sorted non-NaN values of a feature's border subset (duplicates kept) and writes at
// most `max_borders` borders; finish_borders then makes them CatBoost's set (-0.0 as +0.0,
// ascending, unique). Written once for the host reference and the kernels; the float arithmetic
// is spelled out with round-to-nearest operations so that neither compiler fuses a multiply and an
// add (CatBoost computes these in float, operation by operation).
//
// Facts from CatBoost's library/cpp/grid_creator/binarization.cpp (the code here is our own):
//  - Median: for i < k, the value at position min((i + 1) * n / (k + 1), n - 1) of the sorted
//    values, unless it equals the first value, gives the "regular border" before it: the float
//    midpoint (a + b) * 0.5f of it and the value below it (or that value itself when the midpoint
//    rounds up to the upper one). Nothing when the feature is constant.
//  - Uniform: min + (i + 1) * (max - min) / (k + 1) for i < k, every operation in float.
//  - UniformAndQuantiles: Median with k - k/2 borders, and k/2 uniform points (same formula with
//    k/2), each snapped to the regular border before the first value not below it.
//  - MinEntropy / MaxLogSum: the unique values weighted by their counts are cut into at most k + 1
//    runs minimising the sum of the runs' penalties (w ln(w + 1e-8), or -ln(w + 1e-8)); CatBoost
//    solves it level by level with a linear-time variant of the DP (its mode E_RLM2) whose
//    pointer walks accept near-ties (1e-12) in a fixed order, so the same walks are done here to
//    pick the same cut among equal ones. The border after unique value t is
//    (v[t] + v[t + 1]) / 2 in float.
#pragma once

#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::quantize {

// Float operations rounded one by one (no contraction into a fused multiply-add; on the host a
// volatile result keeps the compiler from fusing it with the next operation).
#if defined(__CUDA_ARCH__)
CBG_HOST_DEVICE inline float add_rn(float a, float b) noexcept { return __fadd_rn(a, b); }
CBG_HOST_DEVICE inline float sub_rn(float a, float b) noexcept { return __fsub_rn(a, b); }
CBG_HOST_DEVICE inline float mul_rn(float a, float b) noexcept { return __fmul_rn(a, b); }
CBG_HOST_DEVICE inline float div_rn(float a, float b) noexcept { return __fdiv_rn(a, b); }
#else
CBG_HOST_DEVICE inline float add_rn(float a, float b) noexcept {
  volatile float r = a + b;
  return r;
}
CBG_HOST_DEVICE inline float sub_rn(float a, float b) noexcept {
  volatile float r = a - b;
  return r;
}
CBG_HOST_DEVICE inline float mul_rn(float a, float b) noexcept {
  volatile float r = a * b;
  return r;
}
CBG_HOST_DEVICE inline float div_rn(float a, float b) noexcept {
  volatile float r = a / b;
  return r;
}
#endif

// Makes `n` candidate borders CatBoost's set: -0.0 as +0.0, ascending, unique; returns the count
// and zeroes the slots freed (n <= border_stride; insertion sort). A NaN border (Uniform over a
// feature with an infinite minimum: -inf + inf) becomes the canonical quiet NaN, whose bits the
// host and the GPU would otherwise make differently; like CatBoost's set, NaNs stay unmerged.
CBG_HOST_DEVICE inline int finish_borders(float* b, int n) noexcept {
  for (int i = 0; i < n; ++i) {
    float v = b[i];
    if (v == 0.0f) v = 0.0f;
    if (is_nan(v)) v = to_feature_float(static_cast<double>(v));
    int j = i;
    while (j > 0 && b[j - 1] > v) {
      b[j] = b[j - 1];
      --j;
    }
    b[j] = v;
  }
  const int count = unique_borders(b, n);
  for (int i = count; i < n; ++i) b[i] = 0.0f;
  return count;
}

// CatBoost's regular border before `v` among `n` sorted values (n > 0).
CBG_HOST_DEVICE inline float regular_border(const float* sorted, std::uint32_t n, float v) noexcept {
  const std::uint32_t p = lower_bound_f(sorted, 0, n, v);
  if (p == n) {  // above every value
    const float last = sorted[n - 1];
    const float a = mul_rn(2.0f, last);
    const float b = add_rn(last, 1.0f);
    return a < b ? b : a;
  }
  if (p == 0) {  // at or below the first value
    const float first = sorted[0];
    const float a = mul_rn(0.5f, first);
    const float b = mul_rn(2.0f, first);
    return b < a ? b : a;
  }
  const float r = mul_rn(add_rn(sorted[p], sorted[p - 1]), 0.5f);
  return r == sorted[p] ? sorted[p - 1] : r;
}

// Median: writes up to `max_borders` candidates (not yet finished); returns their number.
CBG_HOST_DEVICE inline int median_candidates(const float* sorted, std::uint32_t n, int max_borders,
                                             float* out) noexcept {
  if (n == 0 || max_borders <= 0 || sorted[0] == sorted[n - 1]) return 0;
  int count = 0;
  const std::uint64_t parts = static_cast<std::uint64_t>(max_borders) + 1;
  for (int i = 0; i < max_borders; ++i) {
    std::uint64_t at = (static_cast<std::uint64_t>(i) + 1) * n / parts;
    if (at > n - 1) at = n - 1;
    const float v = sorted[at];
    if (v != sorted[0]) out[count++] = regular_border(sorted, n, v);
  }
  return count;
}

// The i-th of k uniform points between min and max (CatBoost's float arithmetic).
CBG_HOST_DEVICE inline float uniform_point(float lo, float hi, int i, int k) noexcept {
  return add_rn(lo, div_rn(mul_rn(static_cast<float>(i + 1), sub_rn(hi, lo)), static_cast<float>(k + 1)));
}

CBG_HOST_DEVICE inline int uniform_candidates(const float* sorted, std::uint32_t n, int max_borders,
                                              float* out) noexcept {
  if (n == 0 || max_borders <= 0) return 0;
  const float lo = sorted[0];
  const float hi = sorted[n - 1];
  if (lo == hi) return 0;
  for (int i = 0; i < max_borders; ++i) out[i] = uniform_point(lo, hi, i, max_borders);
  return max_borders;
}

// Uniform reads only the least and the greatest of the sorted non-NaN values, so three values
// stand in for a feature's whole sorted border subset (NaNs last) in the border search: {lo, hi, hi}
// without NaN, {lo, hi, NaN} with NaNs (one counted), three NaNs when every value is NaN. `valid`
// and `nans` count the subset's values (valid + nans > 0); lo and hi are its least and greatest
// non-NaN values.
struct uniform_stand_in {
  float sorted[3];
  std::uint32_t nan_count;
};
CBG_HOST_DEVICE inline uniform_stand_in make_uniform_stand_in(float lo, float hi, std::uint32_t valid,
                                                              std::uint32_t nans) noexcept {
  const float nan = canonical_nan();
  if (valid == 0) return {{nan, nan, nan}, 3};
  return {{lo, hi, nans != 0 ? nan : hi}, nans != 0 ? 1u : 0u};
}

CBG_HOST_DEVICE inline int uniform_and_quantiles_candidates(const float* sorted, std::uint32_t n, int max_borders,
                                                            float* out) noexcept {
  if (n == 0 || max_borders <= 0 || sorted[0] == sorted[n - 1]) return 0;
  const int half = max_borders / 2;
  int count = median_candidates(sorted, n, max_borders - half, out);
  for (int i = 0; i < half; ++i) {
    out[count++] = regular_border(sorted, n, uniform_point(sorted[0], sorted[n - 1], i, half));
  }
  return count;
}

// ------------------------------------------------------------------------------------------------
// MinEntropy / MaxLogSum
// ------------------------------------------------------------------------------------------------

// Scratch of exact_candidates for n sorted values and at most k borders (exact_scratch_sizes).
struct exact_scratch {
  float* values;          // n: the unique values
  std::uint32_t* cum;     // n: cumulative counts through each unique value
  double* err_prev;       // n
  double* err_cur;        // n
  double* e1;             // n
  double* e2;             // n
  std::uint32_t* bs1;     // n
  std::uint32_t* bs2;     // n
  std::uint32_t* choice;  // (k - 1) * n: the previous run's end for each level and run end
};

// The largest border subset the exact types take: CatBoost sums the counts in float, exact up to
// 2^24 (beyond, its sums round and ours would not).
inline constexpr std::uint32_t exact_max_subset = 1u << 24;

// The DP's near-tie tolerance (CatBoost's).
inline constexpr double exact_eps = 1e-12;

// The costs of one level l of the DP over d candidate positions: a run that ends after unique
// value l + j + 1 following one that ends after unique value l + i (i <= j) costs
// prev[i] + penalty(its weight); penalty = -gain. `mirrored` is the same seen from the right.
struct exact_level {
  const double* prev;
  const std::uint32_t* cum;
  const double* gains;
  std::uint32_t l;
  std::uint32_t d;
  [[nodiscard]] CBG_HOST_DEVICE double at(std::uint32_t i, std::uint32_t j) const noexcept {
    return prev[i] - gains[cum[l + j + 1] - cum[l + i]];
  }
  [[nodiscard]] CBG_HOST_DEVICE double mirrored(std::uint32_t i, std::uint32_t j) const noexcept {
    return at(d - 1 - i, d - 1 - j);
  }
  [[nodiscard]] CBG_HOST_DEVICE double cost(bool mirror, std::uint32_t i, std::uint32_t j) const noexcept {
    return mirror ? mirrored(i, j) : at(i, j);
  }
};

// One pointer walk of column j below `limit`, from candidate i: first look for a candidate that
// beats `best` by more than the tolerance; if there is one, go on while the next is not worse
// than the best so far by more than the tolerance, and stop on the last one taken. Without one,
// the result is `limit` (and `best` stays). Returns the candidate; `best` becomes its cost.
CBG_HOST_DEVICE inline std::uint32_t exact_walk(const exact_level& c, bool mirror, std::uint32_t j, std::uint32_t i,
                                                std::uint32_t limit, double& best) noexcept {
  bool found = false;
  while (i + 1 < limit) {
    const double next = c.cost(mirror, i, j);
    if (next + exact_eps < best) {
      best = next;
      found = true;
      break;
    }
    ++i;
  }
  if (!found) return limit;
  for (++i; i + 1 < limit; ++i) {
    const double next = c.cost(mirror, i, j);
    if (next > best + exact_eps) break;
    best = next;
  }
  return i - 1;
}

// The mirrored walk for column j (right to left), bounded by the forward answer of that column;
// writes the column's mirrored answer and returns the pointer.
CBG_HOST_DEVICE inline std::uint32_t exact_mirrored_column(const exact_level& c, const exact_scratch& s,
                                                           std::uint32_t j, std::uint32_t i) noexcept {
  const std::uint32_t col = c.d - 1 - j;
  double best = s.e1[col];
  i = exact_walk(c, true, j, i, c.d - 1 - s.bs1[col], best);
  s.bs2[col] = c.d - 1 - i;
  s.e2[col] = best;
  return i;
}

// One level of the DP: err_cur[j] and choice[j] for every column j from err_prev.
CBG_HOST_DEVICE inline void exact_level_pass(const exact_level& c, const exact_scratch& s, double* err_cur,
                                             std::uint32_t* choice) noexcept {
  const std::uint32_t d = c.d;
  // Forward walk: the pointer moves right over candidates that are not worse by the tolerance.
  std::uint32_t i = 0;
  for (std::uint32_t j = 0; j < d; ++j) {
    double best = c.at(i, j);
    while (i + 1 <= j) {
      const double next = c.at(i + 1, j);
      if (next > best + exact_eps) break;
      best = next;
      ++i;
    }
    s.bs1[j] = i;
    s.e1[j] = best;
  }
  // Mirrored walk from the right.
  i = 0;
  for (std::uint32_t j = 0; j < d; ++j) {
    if (i < j) i = j;
    i = exact_mirrored_column(c, s, j, i);
  }
  // Where the two walks disagree by more than one candidate, walk again between them (each round
  // moves bs1[k] right, so this ends).
  for (std::uint32_t k = 0; k < d; ++k) {
    while (s.bs1[k] + 1 < s.bs2[k]) {
      std::uint32_t stop = d;
      i = s.bs1[k] + 2;
      for (std::uint32_t j = k; j < stop; ++j) {
        if (i <= s.bs1[j]) {
          stop = j;
          break;
        }
        double best = s.e2[j];
        i = exact_walk(c, false, j, i, s.bs2[j], best);
        s.bs1[j] = i;
        s.e1[j] = best;
      }
      const std::uint32_t from = d - stop;
      i = d - s.bs2[stop - 1] + 1;
      for (std::uint32_t j = from; j < d - k; ++j) i = exact_mirrored_column(c, s, j, i);
    }
    choice[k] = s.bs1[k];
    err_cur[k] = s.e1[k];
  }
}

// The float border after unique value t.
CBG_HOST_DEVICE inline float exact_border(const float* values, std::uint32_t t) noexcept {
  return div_rn(add_rn(values[t], values[t + 1]), 2.0f);
}

// MinEntropy or MaxLogSum (by `gains`, gain_table) on `n` sorted non-NaN values: writes up to
// `max_borders` candidates (not yet finished); returns their number. The subset must hold at most
// 2^24 values (CatBoost sums the counts in float).
CBG_HOST_DEVICE inline int exact_candidates(const float* sorted, std::uint32_t n, int max_borders, const double* gains,
                                            const exact_scratch& s, float* out) noexcept {
  if (n == 0 || max_borders <= 0) return 0;
  // Unique values and cumulative counts.
  std::uint32_t u = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (u == 0 || s.values[u - 1] != sorted[i]) {
      s.values[u] = sorted[i];
      ++u;
    }
    s.cum[u - 1] = i + 1;
  }
  const auto k = static_cast<std::uint32_t>(max_borders);
  const std::uint32_t bins = k + 1;
  if (u <= bins) {  // a border between every two unique values
    for (std::uint32_t t = 0; t + 1 < u; ++t) out[t] = exact_border(s.values, t);
    return static_cast<int>(u - 1);
  }
  const std::uint32_t d = u - bins + 1;
  double* prev = s.err_prev;
  double* cur = s.err_cur;
  for (std::uint32_t i = 0; i < d; ++i) cur[i] = -gains[s.cum[i]];
  for (std::uint32_t l = 0; l + 2 < bins; ++l) {
    double* t = prev;
    prev = cur;
    cur = t;
    const exact_level c{prev, s.cum, gains, l, d};
    exact_level_pass(c, s, cur, s.choice + static_cast<std::size_t>(l) * d);
  }
  // The last run ends at the last unique value: the first best previous end.
  const exact_level last{cur, s.cum, gains, bins - 2, d};
  std::uint32_t best_i = 0;
  double best = last.at(0, d - 1);
  for (std::uint32_t i = 1; i < d; ++i) {
    const double e = last.at(i, d - 1);
    if (e < best) {
      best = e;
      best_i = i;
    }
  }
  // Back through the levels; threshold q sits after unique value (its level's index) + q.
  int count = 0;
  for (std::uint32_t q = k; q-- > 0;) {
    if (q + 1 < k) best_i = s.choice[static_cast<std::size_t>(q) * d + best_i];
    const std::uint32_t t = best_i + q;
    if (t + 1 != u) out[count++] = exact_border(s.values, t);
  }
  return count;
}

// Elements of each part of exact_scratch for n values and k borders (choice: (k - 1) * n).
[[nodiscard]] CBG_HOST_DEVICE constexpr std::uint64_t exact_choice_size(std::uint32_t n, int k) noexcept {
  return k > 1 ? static_cast<std::uint64_t>(k - 1) * n : 0;
}

}  // namespace cbg::quantize
