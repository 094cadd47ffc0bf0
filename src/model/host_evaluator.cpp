// SPDX-License-Identifier: Apache-2.0
// Host evaluation of oblivious-tree models with the shared per-element math (apply_math.hpp,
// hash.hpp).
#include "cbg/model/host_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/model/hash.hpp"

namespace cbg::model {

namespace {

bool multi_label_loss(const std::string& loss) { return loss == "MultiLogloss" || loss == "MultiCrossEntropy"; }
bool sigmoid_per_dim_loss(const std::string& loss) { return loss == "MultiClassOneVsAll" || multi_label_loss(loss); }

// Everything per model that rows need: binary features, each CTR feature's table.
struct plan {
  std::vector<binary_feature> features;
  std::vector<const ctr_table*> tables;  // per ctr feature
};

plan make_plan(const model& m) {
  plan p;
  p.features = binary_features(m);
  for (const auto& f : m.ctr_features) {
    const ctr_table* t = nullptr;
    for (const auto& table : m.ctr_tables)
      if (table.base == f.ctr.base) t = &table;
    CBG_EXPECTS(t != nullptr, status::format, "invalid model: a CTR feature has no table");
    p.tables.push_back(t);
  }
  return p;
}

float float_input(const model& m, const host_rows& rows, std::size_t r, std::int32_t float_index) {
  const auto& f = m.float_features[static_cast<std::size_t>(float_index)];
  const float x = rows.floats[r * rows.float_row_stride + static_cast<std::size_t>(float_index)];
  return nan_substituted(x, f.has_nans, static_cast<std::uint8_t>(f.nan_value_treatment));
}

std::uint32_t cat_input(const host_rows& rows, std::size_t r, std::int32_t cat_index) {
  return rows.cat_hashes[r * rows.cat_row_stride + static_cast<std::size_t>(cat_index)];
}

ctr_table_view view_of(const ctr_table& t) {
  return ctr_table_view{t.bucket_hashes.data(), t.bucket_indices.data(), t.bucket_hashes.size(), t.means.data(),
                        t.counts.data(),        t.counter_denominator,   t.target_classes_count};
}

float ctr_feature_value(const model& m, const ctr_feature& f, const ctr_table& t, const host_rows& rows,
                        std::size_t r) {
  const auto& p = f.ctr.base.proj;
  const std::uint64_t key = projection_key(
      p.cat_features.data(), p.cat_features.size(), p.float_splits.data(), p.float_splits.size(),
      p.one_hot_splits.data(), p.one_hot_splits.size(), [&](std::int32_t c) { return cat_input(rows, r, c); },
      [&](std::int32_t fi) { return float_input(m, rows, r, fi); });
  return ctr_value_of(view_of(t), calc_of(f.ctr), key);
}

void check_rows(const model& m, const host_rows& rows) {
  if (rows.n_rows == 0) return;
  if (!m.float_features.empty()) {
    CBG_EXPECTS(rows.floats != nullptr, status::null_pointer, "float features are NULL");
    CBG_EXPECTS(rows.float_row_stride >= m.float_features.size(), status::invalid_argument,
                fmt::format("float row stride {} < {} float features", rows.float_row_stride, m.float_features.size()));
  }
  if (!m.cat_features.empty()) {
    CBG_EXPECTS(rows.cat_hashes != nullptr, status::null_pointer, "categorical hashes are NULL");
    CBG_EXPECTS(
        rows.cat_row_stride >= m.cat_features.size(), status::invalid_argument,
        fmt::format("categorical row stride {} < {} categorical features", rows.cat_row_stride, m.cat_features.size()));
  }
}

void check_range(const model& m, std::size_t tree_begin, std::size_t tree_end) {
  CBG_EXPECTS(tree_begin <= tree_end && tree_end <= m.tree_count(), status::invalid_argument,
              fmt::format("tree range [{}, {}) outside the model's {} trees", tree_begin, tree_end, m.tree_count()));
}

// Evaluates the binary features of one row into `bits` (0/1 per binary feature).
void binarize_row(const model& m, const plan& p, const host_rows& rows, std::size_t r, std::vector<std::uint8_t>& bits,
                  std::vector<float>& ctr_values) {
  for (std::size_t i = 0; i < m.ctr_features.size(); ++i)
    ctr_values[i] = ctr_feature_value(m, m.ctr_features[i], *p.tables[i], rows, r);
  for (std::size_t i = 0; i < p.features.size(); ++i) {
    const auto& bf = p.features[i];
    const auto fi = static_cast<std::size_t>(bf.feature);
    const auto item = static_cast<std::size_t>(bf.item);
    bool cond = false;
    switch (bf.kind) {
      case split_kind::float_feature:
        cond =
            float_split_true(float_input(m, rows, r, m.float_features[fi].index), m.float_features[fi].borders[item]);
        break;
      case split_kind::one_hot:
        cond = one_hot_split_true(cat_input(rows, r, m.one_hot_features[fi].cat_index),
                                  m.one_hot_features[fi].values[item]);
        break;
      case split_kind::ctr:
        cond = float_split_true(ctr_values[fi], m.ctr_features[fi].borders[item]);
        break;
    }
    bits[i] = cond ? 1 : 0;
  }
}

std::vector<std::size_t> leaf_offsets(const model& m) {
  std::vector<std::size_t> off(m.tree_count() + 1, 0);
  for (std::size_t t = 0; t < m.tree_count(); ++t)
    off[t + 1] = off[t] + (std::size_t{1} << m.tree_sizes[t]) * static_cast<std::size_t>(m.approx_dimension);
  return off;
}

std::uint32_t tree_leaf(const model& m, std::size_t t, const std::vector<std::uint8_t>& bits) {
  std::uint32_t leaf = 0;
  const auto start = static_cast<std::size_t>(m.tree_start_offsets[t]);
  for (std::int32_t d = 0; d < m.tree_sizes[t]; ++d)
    leaf |= leaf_bit(bits[static_cast<std::size_t>(m.tree_splits[start + static_cast<std::size_t>(d)])] != 0, d);
  return leaf;
}

}  // namespace

std::size_t prediction_columns(const model& m, prediction_type type) {
  const auto dim = static_cast<std::size_t>(m.approx_dimension);
  switch (type) {
    case prediction_type::raw_formula_val:
    case prediction_type::exponent:
    case prediction_type::multi_probability:
      return dim;
    case prediction_type::probability:
    case prediction_type::log_probability:
      return dim == 1 ? 2 : dim;
    case prediction_type::class_index:
      return multi_label_loss(semantics(m).loss) ? dim : 1;
    case prediction_type::rmse_with_uncertainty:
      CBG_EXPECTS(dim == 2, status::unsupported,
                  fmt::format("RMSEWithUncertainty needs a model of dimension 2, this one has {}", dim));
      return 2;
  }
  CBG_FAIL(status::invalid_argument, fmt::format("unknown prediction type {}", static_cast<int>(type)));
}

postprocess_plan plan_postprocess(const model& m, prediction_type type) {
  (void)prediction_columns(m, type);  // refuses types that do not fit the model
  const model_semantics sem = semantics(m);
  const bool one = m.approx_dimension == 1;
  postprocess_plan p;
  switch (type) {
    case prediction_type::raw_formula_val:
      p.kind = post_kind::raw;
      break;
    case prediction_type::exponent:
      p.kind = post_kind::exponent;
      break;
    case prediction_type::multi_probability:
      p.kind = post_kind::sigmoid_each;
      break;
    case prediction_type::rmse_with_uncertainty:
      p.kind = post_kind::rmse_with_uncertainty;
      break;
    case prediction_type::probability:
      p.kind = one ? post_kind::probability_binary
                   : (sigmoid_per_dim_loss(sem.loss) ? post_kind::sigmoid_each : post_kind::softmax);
      break;
    case prediction_type::log_probability:
      p.kind = one ? post_kind::log_probability_binary
                   : (sigmoid_per_dim_loss(sem.loss) ? post_kind::log_sigmoid_each : post_kind::log_softmax);
      break;
    case prediction_type::class_index:
      p.kind = one ? post_kind::class_binary
                   : (multi_label_loss(sem.loss) ? post_kind::class_each : post_kind::class_argmax);
      break;
  }
  p.logit_threshold = -std::log(1.0 / sem.binclass_probability_threshold - 1.0);
  return p;
}

void predict_host(const model& m, const host_rows& rows, prediction_type type, std::size_t tree_begin,
                  std::size_t tree_end, double* out, std::size_t out_size) {
  const std::size_t cols = prediction_columns(m, type);
  check_range(m, tree_begin, tree_end);
  check_rows(m, rows);
  CBG_EXPECTS(rows.n_rows == 0 || out != nullptr, status::null_pointer, "the output is NULL");
  CBG_EXPECTS(out_size / cols >= rows.n_rows, status::shape,
              fmt::format("output of {} values is too small for {} rows x {} columns", out_size, rows.n_rows, cols));
  const postprocess_plan post = plan_postprocess(m, type);
  const plan p = make_plan(m);
  const auto offsets = leaf_offsets(m);
  const auto dim = static_cast<std::size_t>(m.approx_dimension);
  std::vector<std::uint8_t> bits(p.features.size());
  std::vector<float> ctr_values(m.ctr_features.size());
  std::vector<double> raw(dim);

  for (std::size_t r = 0; r < rows.n_rows; ++r) {
    binarize_row(m, p, rows, r, bits, ctr_values);
    std::fill(raw.begin(), raw.end(), 0.0);
    for (std::size_t t = tree_begin; t < tree_end; ++t) {
      const std::uint32_t leaf = tree_leaf(m, t, bits);
      const double* values = m.leaf_values.data() + offsets[t] + leaf * dim;
      for (std::size_t k = 0; k < dim; ++k) raw[k] += values[k];
    }
    for (std::size_t k = 0; k < dim; ++k) raw[k] = scaled_raw(raw[k], m.scale, m.bias[k], tree_begin == 0);
    double* o = out + r * cols;
    postprocess_row(post, raw.data(), static_cast<int>(dim), [o](int j, double v) { o[j] = v; });
  }
}

void leaf_indexes_host(const model& m, const host_rows& rows, std::size_t tree_begin, std::size_t tree_end,
                       std::uint32_t* out, std::size_t out_size) {
  check_range(m, tree_begin, tree_end);
  check_rows(m, rows);
  const std::size_t n_trees = tree_end - tree_begin;
  CBG_EXPECTS(rows.n_rows == 0 || n_trees == 0 || out != nullptr, status::null_pointer, "the output is NULL");
  CBG_EXPECTS(n_trees == 0 || out_size / n_trees >= rows.n_rows, status::shape,
              fmt::format("output of {} values is too small for {} rows x {} trees", out_size, rows.n_rows, n_trees));
  const plan p = make_plan(m);
  std::vector<std::uint8_t> bits(p.features.size());
  std::vector<float> ctr_values(m.ctr_features.size());
  for (std::size_t r = 0; r < rows.n_rows; ++r) {
    binarize_row(m, p, rows, r, bits, ctr_values);
    for (std::size_t t = tree_begin; t < tree_end; ++t) out[r * n_trees + (t - tree_begin)] = tree_leaf(m, t, bits);
  }
}

}  // namespace cbg::model
