// SPDX-License-Identifier: Apache-2.0
// Per-element apply-time math of CatBoost models (catboost-model-format.md §3, §5), once, as
// __host__ __device__ inline functions: float binarisation with NaN treatment, CTR projection keys,
// CTR table lookup and value formulas, leaf index bits, Scale/Bias and prediction post-processing.
// The host evaluator (src/model/host_evaluator.cpp) and the GPU evaluator (kernels/apply/) both
// call these, so a row's result is the same computation on either side.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "cbg/config.hpp"
#include "cbg/model/fast_exp.hpp"
#include "cbg/model/rounded.hpp"
#include "cbg/model/hash.hpp"

namespace cbg::model {

// Values are those of CatBoost's ECtrType (ctr_data.fbs).
enum class ctr_type : std::uint8_t {
  borders = 0,
  buckets = 1,
  binarized_target_mean_value = 2,
  float_target_mean_value = 3,
  counter = 4,
  feature_freq = 5,
};

// One key of a mean-type CTR table (TCtrMeanHistory).
struct ctr_mean_history {
  float sum = 0.f;
  std::int32_t count = 0;
};

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

// Number of `borders[0..n)` (strictly ascending) that `value` is greater than: the float splits of
// this feature that are true are exactly the first `count` ones. NaN gives 0.
CBG_HOST_DEVICE inline std::uint32_t borders_below(const float* borders, std::uint32_t n, float value) {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (float_split_true(value, borders[mid])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// ---- one-hot -------------------------------------------------------------------------------------
CBG_HOST_DEVICE inline bool one_hot_split_true(std::uint32_t cat_hash, std::int32_t value) {
  return static_cast<std::int32_t>(cat_hash) == value;
}

// ---- leaf index ----------------------------------------------------------------------------------
// Split d of an oblivious tree sets bit d of the leaf index.
CBG_HOST_DEVICE inline std::uint32_t leaf_bit(bool cond, int depth_index) {
  return static_cast<std::uint32_t>(cond ? 1u : 0u) << depth_index;
}

// ---- CTR projections -----------------------------------------------------------------------------
// The key of one object under a projection (ctr_provider.h CalcHashes): its categorical hashes,
// then its float split bits, then its one-hot split bits. `cat(c)` is the object's 32-bit hash of
// categorical feature c; `value(f)` its NaN-substituted float feature f. FloatSplit has members
// float_index and border, OneHotSplit cat_index and value (model.hpp's float_split, one_hot_split).
template <class FloatSplit, class OneHotSplit, class CatAt, class FloatAt>
CBG_HOST_DEVICE std::uint64_t projection_key(const std::int32_t* cats, std::size_t n_cats,
                                             const FloatSplit* float_splits, std::size_t n_float,
                                             const OneHotSplit* one_hot_splits, std::size_t n_one_hot, const CatAt& cat,
                                             const FloatAt& value) {
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < n_cats; ++i) h = projection_add_cat(h, cat(cats[i]));
  for (std::size_t i = 0; i < n_float; ++i)
    h = projection_add_bit(h, float_split_true(value(float_splits[i].float_index), float_splits[i].border));
  for (std::size_t i = 0; i < n_one_hot; ++i)
    h = projection_add_bit(h, one_hot_split_true(cat(one_hot_splits[i].cat_index), one_hot_splits[i].value));
  return h;
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
CBG_HOST_DEVICE inline float ctr_value(float a, float b, float prior_num, float prior_denom, float shift, float scale) {
  const float num = a + prior_num;
  const float den = b + prior_denom;
  const float ratio = num / den;
  const float shifted = ratio + shift;
  return shifted * scale;
}

// A CTR table's statistics as flat arrays (the model's vectors on the host, their copies on a GPU).
struct ctr_table_view {
  const std::uint64_t* hashes = nullptr;
  const std::uint32_t* indices = nullptr;
  std::uint64_t n_buckets = 0;
  const ctr_mean_history* means = nullptr;  // mean types
  const std::int32_t* counts = nullptr;     // counter types: [key]; class types: [key][class]
  std::int32_t counter_denominator = 0;
  std::int32_t target_classes_count = 0;
};

// What a CTR feature computes from its table (TModelCtr).
struct ctr_calc {
  ctr_type type = ctr_type::borders;
  std::int32_t target_border_idx = 0;
  float prior_num = 0.f;
  float prior_denom = 1.f;
  float shift = 0.f;
  float scale = 1.f;
};

// The CTR value of the object whose projection key is `key` (static_ctr_provider.cpp CalcCtrs).
CBG_HOST_DEVICE inline float ctr_value_of(const ctr_table_view& t, const ctr_calc& c, std::uint64_t key) {
  const std::uint32_t idx = ctr_lookup(t.hashes, t.indices, static_cast<std::size_t>(t.n_buckets), key);
  const bool found = idx != ctr_not_found;
  float a = 0.f, b = 0.f;
  switch (c.type) {
    case ctr_type::binarized_target_mean_value:
    case ctr_type::float_target_mean_value:
      if (found) {
        a = t.means[idx].sum;
        b = static_cast<float>(t.means[idx].count);
      }
      break;
    case ctr_type::counter:
    case ctr_type::feature_freq:
      if (found) a = static_cast<float>(t.counts[idx]);
      b = static_cast<float>(t.counter_denominator);
      break;
    case ctr_type::buckets:
    case ctr_type::borders: {
      if (!found) break;
      const auto classes = static_cast<std::size_t>(t.target_classes_count);
      const std::int32_t* cnt = t.counts + static_cast<std::size_t>(idx) * classes;
      if (c.type == ctr_type::buckets) {
        std::int64_t total = 0;
        for (std::size_t k = 0; k < classes; ++k) total += cnt[k];
        a = static_cast<float>(cnt[c.target_border_idx]);
        b = static_cast<float>(total);
      } else if (classes == 2) {
        a = static_cast<float>(cnt[1]);
        b = static_cast<float>(cnt[0] + cnt[1]);
      } else {
        std::int64_t good = 0, total = 0;
        for (std::size_t k = 0; k < classes; ++k) {
          total += cnt[k];
          if (static_cast<std::int64_t>(k) > c.target_border_idx) good += cnt[k];
        }
        a = static_cast<float>(good);
        b = static_cast<float>(total);
      }
      break;
    }
  }
  return ctr_value(a, b, c.prior_num, c.prior_denom, c.shift, c.scale);
}

// ---- raw values ----------------------------------------------------------------------------------
// RawFormulaVal of one dimension from its tree sum (scale_and_bias.cpp): Scale always, Bias only
// when the tree range starts at tree 0; each applied only when it changes something (so a sum of
// -0.0 stays -0.0 under Scale 1 and Bias 0, as in CatBoost).
CBG_HOST_DEVICE inline double scaled_raw(double sum, double scale, double bias, bool add_bias) {
  double v = sum;
  if (scale != 1.0) v = mul_rounded(v, scale);
  if (add_bias && bias != 0.0) v = add_rounded(v, bias);
  return v;
}

// ---- post-processing -----------------------------------------------------------------------------
// The C library's exp and log, as CatBoost's process calls them. On a GPU they are CUDA's, which may
// differ from glibc's in the last bit (so may the outputs built on them: sigmoid, log-sigmoid and
// log-softmax); everything else in post-processing is the same bits on both sides.
CBG_HOST_DEVICE inline double libm_exp(double x) {
#if defined(__CUDA_ARCH__)
  return ::exp(x);
#else
  return std::exp(x);
#endif
}
CBG_HOST_DEVICE inline double libm_log(double x) {
#if defined(__CUDA_ARCH__)
  return ::log(x);
#else
  return std::log(x);
#endif
}

// CatBoost's CalcSigmoid and CalcLogSigmoid (eval_processing.h): the C library's exp and log, not
// its fast exponent.
CBG_HOST_DEVICE inline double sigmoid(double x) { return 1.0 / add_rounded(1.0, libm_exp(-x)); }
// log(sigmoid(x)) as CatBoost writes it: -log(1 + exp(-x)).
CBG_HOST_DEVICE inline double log_sigmoid(double x) { return -libm_log(add_rounded(1.0, libm_exp(-x))); }

// What a prediction type does to a row of raw values, once the model's loss is known
// (eval_result/eval_helpers.cpp PrepareEval; plan_postprocess() in host_evaluator.hpp picks it).
enum class post_kind : std::uint8_t {
  raw,                     // the raw values
  exponent,                // exp per dimension
  sigmoid_each,            // sigmoid per dimension (MultiProbability; Probability of one-vs-all losses)
  log_sigmoid_each,        // log-sigmoid per dimension
  probability_binary,      // [1 - p, p], p = sigmoid(raw0)
  log_probability_binary,  // [log(1 - p), log p]
  softmax,                 // per row, max subtracted
  log_softmax,
  class_binary,           // raw0 > logit threshold
  class_each,             // per dimension raw > 0 (multi-label losses)
  class_argmax,           // the first maximum's index
  rmse_with_uncertainty,  // [raw0, exp(2 raw1)]
};

struct postprocess_plan {
  post_kind kind = post_kind::raw;
  double logit_threshold = 0.0;  // class_binary: -log(1/p - 1) of the binclass probability threshold
};

// Writes the row's outputs through `out(column, value)`, reading `dim` raw values at `raw`.
template <class Out>
CBG_HOST_DEVICE void postprocess_row(const postprocess_plan& p, const double* raw, int dim, const Out& out) {
  switch (p.kind) {
    case post_kind::raw:
      for (int k = 0; k < dim; ++k) out(k, raw[k]);
      break;
    case post_kind::exponent:
      for (int k = 0; k < dim; ++k) out(k, fast_exp(raw[k]));
      break;
    case post_kind::sigmoid_each:
      for (int k = 0; k < dim; ++k) out(k, sigmoid(raw[k]));
      break;
    case post_kind::log_sigmoid_each:
      for (int k = 0; k < dim; ++k) out(k, log_sigmoid(raw[k]));
      break;
    case post_kind::probability_binary: {
      const double p1 = sigmoid(raw[0]);
      out(0, 1.0 - p1);
      out(1, p1);
      break;
    }
    case post_kind::log_probability_binary:
      out(0, log_sigmoid(-raw[0]));
      out(1, log_sigmoid(raw[0]));
      break;
    case post_kind::softmax:
    case post_kind::log_softmax: {
      // CalcSoftmax / CalcLogSoftmax (eval_processing.h): the first maximum subtracted, CatBoost's
      // fast exponent over the row, the sum in order; log-softmax takes the C library's log of it.
      double mx = raw[0];
      for (int k = 1; k < dim; ++k) mx = mx < raw[k] ? raw[k] : mx;
      double sum = 0.0;
      for (int k = 0; k < dim; ++k) sum = add_rounded(sum, fast_exp_at(raw[k] - mx, k, dim));
      if (p.kind == post_kind::log_softmax) {
        const double ls = libm_log(sum);
        for (int k = 0; k < dim; ++k) out(k, (raw[k] - mx) - ls);
      } else {
        for (int k = 0; k < dim; ++k) out(k, fast_exp_at(raw[k] - mx, k, dim) / sum);
      }
      break;
    }
    case post_kind::class_binary:
      out(0, raw[0] > p.logit_threshold ? 1.0 : 0.0);
      break;
    case post_kind::class_each:
      for (int k = 0; k < dim; ++k) out(k, raw[k] > 0.0 ? 1.0 : 0.0);
      break;
    case post_kind::class_argmax: {
      int best = 0;
      for (int k = 1; k < dim; ++k)
        if (raw[k] > raw[best]) best = k;
      out(0, static_cast<double>(best));
      break;
    }
    case post_kind::rmse_with_uncertainty:
      out(0, raw[0]);
      out(1, fast_exp(2.0 * raw[1]));  // CalcSquaredExponent
      break;
  }
}

}  // namespace cbg::model
