// SPDX-License-Identifier: Apache-2.0
// Per-element apply-time math of CatBoost models (catboost-model-format.md §3, §5), once, as
// __host__ __device__ inline functions: float binarisation with NaN treatment, CTR table lookup,
// CTR value formulas, leaf index bits and prediction post-processing.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cbg/config.hpp"

namespace cbg::model {

// ---- float features ------------------------------------------------------------------------------
// The value a float split compares: NaN becomes -inf (AsFalse) or +inf (AsTrue) only when the
// feature has NaNs; otherwise it stays NaN and every `value > border` is false.
// `treatment` is the ENanValueTreatment value (0 AsIs, 1 AsFalse, 2 AsTrue).
CBG_HOST_DEVICE inline float nan_substituted(float x, bool has_nans, std::uint8_t treatment) {
  if (x != x && has_nans) {
    if (treatment == 1) return -INFINITY;
    if (treatment == 2) return INFINITY;
  }
  return x;
}
// A float or CTR split: strictly greater, in float32.
CBG_HOST_DEVICE inline bool float_split_true(float value, float border) { return value > border; }

// ---- one-hot -------------------------------------------------------------------------------------
CBG_HOST_DEVICE inline bool one_hot_split_true(std::uint32_t cat_hash, std::int32_t value) {
  return static_cast<std::int32_t>(cat_hash) == value;
}

// ---- leaf index ----------------------------------------------------------------------------------
// Split d of an oblivious tree sets bit d of the leaf index.
CBG_HOST_DEVICE inline std::uint32_t leaf_bit(bool cond, int depth_index) {
  return static_cast<std::uint32_t>(cond ? 1u : 0u) << depth_index;
}

// ---- CTR tables ----------------------------------------------------------------------------------
inline constexpr std::uint32_t ctr_not_found = 0xFFFFFFFFu;
// Linear probing over `n_buckets` (a power of two) 12-byte-equivalent buckets, given as parallel
// arrays of hashes and indices. Returns the key's index or ctr_not_found.
CBG_HOST_DEVICE inline std::uint32_t ctr_lookup(const std::uint64_t* hashes, const std::uint32_t* indices,
                                                std::size_t n_buckets, std::uint64_t key) {
  if (n_buckets == 0) return ctr_not_found;
  const std::size_t mask = n_buckets - 1;
  std::size_t pos = static_cast<std::size_t>(key) & mask;
  for (std::size_t probes = 0; probes < n_buckets; ++probes) {
    const std::uint64_t h = hashes[pos];
    if (h == key) return indices[pos];
    if (h == ~std::uint64_t{0}) return ctr_not_found;
    pos = (pos + 1) & mask;
  }
  return ctr_not_found;
}

// TModelCtr::Calc: ((a + prior_num) / (b + prior_denom) + shift) * scale, all in float32.
CBG_HOST_DEVICE inline float ctr_value(float a, float b, float prior_num, float prior_denom, float shift,
                                       float scale) {
  const float num = a + prior_num;
  const float den = b + prior_denom;
  const float ratio = num / den;
  const float shifted = ratio + shift;
  return shifted * scale;
}

// ---- post-processing -----------------------------------------------------------------------------
CBG_HOST_DEVICE inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
// log(sigmoid(x)) as CatBoost writes it: -log(1 + exp(-x)).
CBG_HOST_DEVICE inline double log_sigmoid(double x) { return -std::log(1.0 + std::exp(-x)); }

}  // namespace cbg::model
