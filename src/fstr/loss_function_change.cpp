// SPDX-License-Identifier: Apache-2.0
// LossFunctionChange (CatBoost's loss_change_fstr.cpp): the model's objective metric on a pool
// with each combination class's SHAP contribution taken out of the raw predictions, minus the
// metric of the whole model, credited to the flat features of the class's first split feature.
#include <algorithm>
#include <functional>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/fstr/feature_importance.hpp"
#include "cbg/train/metric.hpp"
#include "cbg/train/params.hpp"
#include "src/fstr/model_features.hpp"
#include "src/fstr/shap_tables.hpp"

namespace cbg::fstr {

namespace {

using nlohmann::json;

// CatBoost's text ("Quantile:alpha=0.3") of a {"type", "params"} description.
std::string description_text(const json& d) {
  if (d.is_string()) return d.get<std::string>();
  CBG_EXPECTS(d.is_object() && d.contains("type") && d["type"].is_string(), status::format,
              "the model's objective metric is not a {type, params} description");
  std::string text = d["type"].get<std::string>();
  if (d.contains("params") && d["params"].is_object()) {
    char sep = ':';
    for (const auto& [k, v] : d["params"].items()) {
      if (k.rfind("__", 0) == 0) continue;  // CatBoost's bookkeeping (__params_key_order)
      text += fmt::format("{}{}={}", sep, k, v.is_string() ? v.get<std::string>() : v.dump());
      sep = ';';
    }
  }
  return text;
}

// The objective metric the model was trained with: params.metrics.objective_metric, else its loss.
train::named_metric objective_metric(const model::model& m) {
  const std::string* text = m.info_value("params");
  CBG_EXPECTS(text != nullptr, status::unsupported,
              "LossFunctionChange needs the model's training parameters (its \"params\" info), which this model lacks");
  const json p = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  CBG_EXPECTS(p.is_object(), status::format, "the model's \"params\" info is not a JSON object");
  if (p.contains("metrics") && p["metrics"].is_object() && p["metrics"].contains("objective_metric")) {
    return train::parse_metric(description_text(p["metrics"]["objective_metric"]), "objective_metric");
  }
  CBG_EXPECTS(p.contains("loss_function"), status::unsupported,
              "LossFunctionChange needs the model's loss function, which its \"params\" lack");
  return train::parse_metric(description_text(p["loss_function"]), "loss_function");
}

// Labels as the metric reads them: classifiers' labels become class indexes through the model's
// class names.
std::vector<float> metric_targets(const model::model& m, const std::vector<double>& labels) {
  const model::model_semantics s = model::semantics(m);
  const bool classes = s.loss == "Logloss" || s.loss == "MultiClass" || s.loss == "MultiClassOneVsAll";
  std::vector<double> names;
  if (classes) {
    for (const std::string& n : s.class_names) {
      try {
        names.push_back(std::stod(n));
      } catch (const std::exception&) {
        CBG_FAIL(status::unsupported, fmt::format("class name '{}' is not a number; pools hold numeric labels", n));
      }
    }
  }
  std::vector<float> t(labels.size());
  for (std::size_t r = 0; r < labels.size(); ++r) {
    double y = labels[r];
    if (!names.empty()) {
      const auto it = std::find(names.begin(), names.end(), y);
      CBG_EXPECTS(it != names.end(), status::bad_data,
                  fmt::format("label {} of row {} is none of the model's classes", y, r));
      y = static_cast<double>(it - names.begin());
    }
    t[r] = static_cast<float>(y);
  }
  return t;
}

}  // namespace

std::vector<double> loss_function_change(const model::model& m, const std::vector<double>& leaf_weights,
                                         const pool_leaves& p, const pool_targets& targets) {
  CBG_EXPECTS(m.scale == 1.0, status::unsupported, "LossFunctionChange needs a model of scale 1");
  const train::named_metric metric = objective_metric(m);
  CBG_EXPECTS(metric.spec.kind != train::metric_kind::auc, status::unsupported,
              fmt::format("LossFunctionChange needs an additive metric, not {}", metric.name));
  CBG_EXPECTS(targets.labels.size() == p.rows, status::bad_data, "LossFunctionChange needs a label per row");
  const auto dims = static_cast<std::size_t>(m.approx_dimension);
  CBG_EXPECTS(targets.baseline.empty() || targets.baseline.size() == p.rows * dims, status::bad_data,
              fmt::format("the baseline has {} values; {} rows of {} dimensions need {}", targets.baseline.size(),
                          p.rows, dims, p.rows * dims));
  const std::vector<float> y = metric_targets(m, targets.labels);
  const combination_classes classes = combination_classes_of(m);
  const shap_tables tables = prepare_shap(m, leaf_weights, /*by_class=*/true);
  const shap_table_view view = tables.view();
  const std::size_t n_classes = classes.flat.size();
  const std::size_t trees = m.tree_count();

  train::loss_spec shape;
  shape.dims = m.approx_dimension;
  // Summed metric terms: [class] with that class taken out, [n_classes] the whole model.
  std::vector<std::array<double, train::metric_terms>> sums(n_classes + 1, std::array<double, train::metric_terms>{});
  std::vector<double> raw(dims), shifted(dims), shap((n_classes + 1) * dims);
  double terms[train::metric_terms];
  const auto add = [&](std::size_t slot, const double* a, std::size_t r) {
    const double w = p.weights.empty() ? 1.0 : static_cast<double>(p.weights[r]);
    train::metric_row_terms(metric.spec, shape, a, y[r], w, terms);
    for (int k = 0; k < train::metric_terms; ++k) sums[slot][static_cast<std::size_t>(k)] += terms[k];
  };
  std::size_t first = 0;
  std::vector<std::size_t> tree_first(trees);
  for (std::size_t t = 0; t < trees; ++t) {
    tree_first[t] = first;
    first += std::size_t{1} << m.tree_sizes[t];
  }
  for (std::size_t r = 0; r < p.rows; ++r) {
    const std::uint32_t* leaves = p.leaves.data() + r * trees;
    std::fill(raw.begin(), raw.end(), 0.0);
    for (std::size_t t = 0; t < trees; ++t) {
      for (std::size_t k = 0; k < dims; ++k) raw[k] += m.leaf_values[(tree_first[t] + leaves[t]) * dims + k];
    }
    for (std::size_t k = 0; k < dims; ++k) {
      raw[k] = raw[k] * m.scale + m.bias[k];
      if (!targets.baseline.empty()) raw[k] += targets.baseline[r * dims + k];
    }
    add(n_classes, raw.data(), r);
    // The row's contributions by class, [dim][class] (the last column is the tree means, unused).
    std::fill(shap.begin(), shap.end(), 0.0);
    add_row_shap(view, leaves, m.approx_dimension, static_cast<std::int64_t>(n_classes + 1), shap.data());
    for (std::size_t c = 0; c < n_classes; ++c) {
      for (std::size_t k = 0; k < dims; ++k) shifted[k] = raw[k] - shap[k * (n_classes + 1) + c];
      add(c, shifted.data(), r);
    }
  }
  const double whole = train::metric_final(metric.spec, sums[n_classes].data());
  std::vector<std::pair<double, int>> scores;
  for (std::size_t c = 0; c < n_classes; ++c) {
    double s = train::metric_final(metric.spec, sums[c].data()) - whole;
    if (train::higher_is_better(metric.spec.kind)) s = -s;
    scores.emplace_back(s, static_cast<int>(c));
  }
  std::stable_sort(scores.begin(), scores.end(), std::greater<>());
  std::vector<double> flat(m.flat_feature_count(), 0.0);
  for (const auto& [s, c] : scores)
    credit_split_feature(m, classes.representative[static_cast<std::size_t>(c)], s, flat);
  return flat;
}

}  // namespace cbg::fstr
