// SPDX-License-Identifier: Apache-2.0
// Per-element CTR math of training (catboost-training.md §2.4, catboost-model-format.md §5), once,
// as __host__ __device__ inline functions: the host reference (src/ctr/) and the kernels
// (kernels/ctr/) share them.
//
// Learn rows get *ordered* target statistics: rows are visited in a seeded permutation, and a row
// sees only the rows of its category that come before it (an exclusive prefix), so its own target
// never enters its value. The counter types (Counter, FeatureFreq) are not ordered: every row sees
// the counts of the whole learn set. Every value is the model's TModelCtr::Calc in float32 with
// shift 0 and scale 1, so the borders chosen on learn values compare directly with what an
// evaluator computes from the stored tables.
// The sums are object counts: sample weights never enter them (catboost-training.md §2.4 writes
// "w is the object weight", but CatBoost's GPU learner gives every learn object CTR weight 1 and its
// model tables hold counts; tests/python/test_estimator_categorical.py checks the tables with weights).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/model/apply_math.hpp"

namespace cbg::ctr {

// The sort key of `row` in the permutation of `seed`: rows are visited in ascending (key, row)
// order. A SplitMix64 finaliser of (seed, row), so the host and the GPU draw the same permutation.
CBG_HOST_DEVICE inline std::uint64_t permutation_key(std::uint64_t seed, std::uint64_t row) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ULL + row + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Which permutation the ordered statistics visit the rows in (catboost-training.md §2.4): the data's
// order (has_time), or a seeded shuffle of blocks of `block` consecutive rows (fold_permutation_block;
// CatBoost's GPU trainer shuffles blocks and keeps the rows' order inside each). Block 1 shuffles rows.
struct permutation_rule {
  std::uint64_t seed = 0;
  std::uint32_t block = 1;  // >= 1
  bool identity = false;    // has_time: the data's order
};
// The sort key of `row` under rule `r`: rows are visited in ascending (key, row) order, so the rows
// of one block (one key) stay in their order, and the identity gives every row the same key.
CBG_HOST_DEVICE inline std::uint64_t permutation_key(const permutation_rule& r, std::uint64_t row) {
  return r.identity ? 0 : permutation_key(r.seed, row / r.block);
}

// The most target borders of a regression target (ctr_target_border_count; classes fit a byte).
inline constexpr int max_target_borders = 254;
// The target borders of a regression target, by value (a kernel argument).
struct target_borders {
  float values[max_target_borders] = {};  // ascending
  int count = 0;
};
// The target class of a regression target: how many of the ascending target borders it is above
// (one border: 1 when the target is above it).
CBG_HOST_DEVICE inline std::uint8_t target_class(float target, const target_borders& b) {
  int c = 0;
  while (c < b.count && target > b.values[c]) ++c;
  return static_cast<std::uint8_t>(c);
}

// The target-based CTR types (Borders, Buckets, BinarizedTargetMeanValue) over C target classes
// (C = 2 for a binary or binarized target; the class count for multiclass): how many CTR features a
// prior gives (Borders: one per target border, C - 1; Buckets: one per class; the mean: one), and
// the per-row quantity that feature `j` sums over the category's earlier rows: class > j for
// Borders, class == j for Buckets, the class itself for the mean.
CBG_HOST_DEVICE inline int target_features_of(model::ctr_type t, int classes) {
  if (t == model::ctr_type::borders) return classes - 1;
  if (t == model::ctr_type::buckets) return classes;
  return 1;
}
CBG_HOST_DEVICE inline std::uint32_t target_term(model::ctr_type t, int j, std::uint8_t cls) {
  if (t == model::ctr_type::borders) return cls > j ? 1u : 0u;
  if (t == model::ctr_type::buckets) return cls == j ? 1u : 0u;
  return cls;
}
// The mean type's sum from the summed classes: sum / (C - 1) in float (the table stores the same).
CBG_HOST_DEVICE inline float mean_sum(std::uint32_t class_sum, int classes) {
  return static_cast<float>(class_sum) / static_cast<float>(classes - 1);
}
// The ordered value of target-based feature (type, j): `terms` summed and `total` rows of the
// category before this row.
CBG_HOST_DEVICE inline float ordered_target_value(model::ctr_type t, int classes, std::uint32_t terms,
                                                  std::uint32_t total, float prior_num, float prior_denom) {
  const float a =
      t == model::ctr_type::binarized_target_mean_value ? mean_sum(terms, classes) : static_cast<float>(terms);
  return model::ctr_value(a, static_cast<float>(total), prior_num, prior_denom, 0.f, 1.f);
}

// FloatTargetMeanValue sums raw targets in 64-bit fixed point (exact and order-free, so the
// ordered prefix sums of the host's loop and of the GPU's scan agree bit for bit); `scale` is a
// power of two chosen from the largest |target| and the row count (fixed_scale_for), so no sum
// overflows. The table stores the float of the final sum.
CBG_HOST_DEVICE inline std::int64_t to_fixed(float t, double scale) {
  return static_cast<std::int64_t>(rint(static_cast<double>(t) * scale));
}
CBG_HOST_DEVICE inline float from_fixed(std::int64_t v, double scale) {
  return static_cast<float>(static_cast<double>(v) / scale);
}
inline double fixed_scale_for(float max_abs, std::int64_t rows) {
  const double bound = static_cast<double>(max_abs) * static_cast<double>(rows > 0 ? rows : 1) + 1.0;
  int e = 0;
  (void)std::frexp(bound, &e);  // bound < 2^e
  return std::ldexp(1.0, std::max(-60, std::min(60, 61 - e)));
}
CBG_HOST_DEVICE inline float ordered_float_mean_value(std::int64_t prefix, std::uint32_t total, double scale,
                                                      float prior_num, float prior_denom) {
  return model::ctr_value(from_fixed(prefix, scale), static_cast<float>(total), prior_num, prior_denom, 0.f, 1.f);
}

// The value of a counter CTR: the category's count over the denominator (Counter: the largest
// category count; FeatureFreq: the number of rows counted).
CBG_HOST_DEVICE inline float counter_value(std::uint32_t count, std::uint32_t denominator, float prior_num,
                                           float prior_denom) {
  return model::ctr_value(static_cast<float>(count), static_cast<float>(denominator), prior_num, prior_denom, 0.f, 1.f);
}

// The one-hot column of value `v`: 1 when the row's hash equals it.
CBG_HOST_DEVICE inline float one_hot_value(std::uint32_t hash, std::int32_t v) {
  return model::one_hot_split_true(hash, v) ? 1.f : 0.f;
}

}  // namespace cbg::ctr
