// SPDX-License-Identifier: Apache-2.0
// Training parameters: parsing with CatBoost's names, validation, data-dependent defaults, and the
// CatBoost-like JSON of the effective parameters.
#include "cbg/train/params.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/io/json_position.hpp"
#include "cbg/train/metric_names.hpp"
#include "cbg/train/param_table.hpp"

namespace cbg::train {

namespace {

using nlohmann::json;

// A validated value as CatBoost stores it in flat_params: the JSON type of the parameter's
// definition (text "6" becomes 6, "true" becomes true; lists and strings stay as given).
json typed_value(const std::string& key, const json& v, param_type type) {
  switch (type) {
    case param_type::integer: {
      if (v.is_number_integer()) return v;
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        std::uint64_t u = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return json(u);
      }
      return json(static_cast<std::int64_t>(read_number(key, v)));
    }
    case param_type::number:
      return v.is_number() ? v : json(read_number(key, v));
    case param_type::boolean:
      return json(read_boolean(key, v));
    case param_type::verbosity: {
      if (v.is_boolean() || v.is_number_integer()) return v;
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        std::int64_t i = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty() && i > 1) return json(i);
      }
      return json(read_boolean(key, v));
    }
    case param_type::text:
      return v.is_string() ? v : json(v.dump());
    case param_type::text_or_list:
    case param_type::number_list:
      break;
  }
  return v;
}

// Reads a value as its parameter's kind asks, checking bounds and choices.
param_value read_value(const param_spec& spec, const std::string& key, const json& value, const json& root) {
  param_value v{key, value, root, 0, 0, false, 0, {}};
  switch (spec.kind) {
    case value_kind::integer:
      v.integer = read_integer(key, value, static_cast<std::int64_t>(spec.lo), static_cast<std::int64_t>(spec.hi));
      break;
    case value_kind::number: {
      const double d = read_number(key, value);
      if (!std::isfinite(d) || d < spec.lo || d > spec.hi || (spec.lo_open && d == spec.lo)) {
        invalid_param(key,
                      fmt::format("{} is outside {}{}, {}]", value.dump(), spec.lo_open ? "(" : "[", spec.lo, spec.hi));
      }
      v.number = d;
      break;
    }
    case value_kind::boolean:
      v.boolean = read_boolean(key, value);
      break;
    case value_kind::choice: {
      v.text = read_text(key, value);
      const auto listed = [](const std::vector<std::string_view>& names) {
        return fmt::format("{}", fmt::join(names, ", "));
      };
      if (std::find(spec.not_implemented.begin(), spec.not_implemented.end(), v.text) != spec.not_implemented.end()) {
        CBG_FAIL(status::not_implemented, fmt::format("parameter '{}': {} is not implemented (implemented: {})", key,
                                                      v.text, listed(spec.choices)));
      }
      const auto it = std::find(spec.choices.begin(), spec.choices.end(), v.text);
      if (it == spec.choices.end()) {
        invalid_param(key, fmt::format("'{}' is not one of {}", v.text, listed(spec.choices)));
      }
      v.choice = static_cast<std::size_t>(it - spec.choices.begin());
      break;
    }
    case value_kind::text:
      v.text = read_text(key, value);
      break;
    case value_kind::custom:
      break;
  }
  return v;
}

// The rules between parameters, after all are read; `flat` is what the caller set (flat_params).
void finish_params(train_params& p, const json& flat) {
  // Overfitting detector (overfitting_detector_options.cpp; early_stopping_rounds = Iter + wait).
  const bool od_type_given = p.given.contains("od_type");
  const bool od_wait_given = p.given.contains("od_wait");
  const bool od_pval_given = p.given.contains("od_pval");
  if (const std::optional<int> early_stopping_rounds = p.early_stopping_rounds) {
    if (od_type_given && p.od_type != od_kind::iter) {
      invalid_param("early_stopping_rounds", "needs od_type Iter");
    }
    if (od_wait_given && p.od_wait != *early_stopping_rounds) {
      invalid_param("early_stopping_rounds", "contradicts od_wait");
    }
    p.od_type = od_kind::iter;
    p.od_wait = *early_stopping_rounds;
  } else if (!od_type_given) {
    if (od_pval_given)
      p.od_type = od_kind::inc_to_dec;
    else if (od_wait_given)
      p.od_type = od_kind::iter;
  }
  if (p.od_type == od_kind::iter && od_pval_given && p.od_pval != 0) {
    invalid_param("od_pval", "is meaningless with od_type Iter");
  }
  if (p.od_type == od_kind::inc_to_dec && !od_pval_given) {
    // CatBoost's IncToDec with p-value 0 never stops; keep that meaning.
    p.od_pval = 0.0;
  }

  // CatBoost keeps one permutation when the rows are in time order (has_time). Without CTR columns
  // the dataset keeps one too (dataset.cpp).
  if (p.ctr.has_time) p.permutation_count = 1;

  // Bootstrap options that the chosen type does not take (CatBoost refuses them too).
  if (p.given.contains("bagging_temperature") && p.bootstrap != bootstrap_kind::bayesian) {
    invalid_param("bagging_temperature",
                  fmt::format("is only for bootstrap_type Bayesian, not {}", bootstrap_name(p.bootstrap)));
  }
  if (p.subsample && (p.bootstrap == bootstrap_kind::bayesian || p.bootstrap == bootstrap_kind::no)) {
    invalid_param("subsample", fmt::format("is not used by bootstrap_type {}", bootstrap_name(p.bootstrap)));
  }
  if (p.target_border && p.loss.kind != loss_kind::logloss) {
    invalid_param("target_border", "is only for loss_function Logloss");
  }
  for (const char* key : {"classes_count", "class_names"}) {
    if (!flat.contains(key)) continue;
    const bool multiclass = p.loss.kind == loss_kind::multiclass || p.loss.kind == loss_kind::multiclass_one_vs_all;
    if (p.loss.kind != loss_kind::logloss && !multiclass) {
      invalid_param(key, "is only for loss_function Logloss, MultiClass or MultiClassOneVsAll");
    }
    const std::size_t count = flat[key].is_array() ? flat[key].size() : flat[key].get<std::size_t>();
    if (p.loss.kind == loss_kind::logloss && count != 2) invalid_param(key, "Logloss has 2 classes");
  }
  if (flat.contains("classes_count") && flat.contains("class_names") &&
      flat["classes_count"].get<std::size_t>() != flat["class_names"].size()) {
    invalid_param("classes_count", fmt::format("is {} but class_names lists {} classes",
                                               flat["classes_count"].get<std::size_t>(), flat["class_names"].size()));
  }
  // ctr_target_border_count above 1: CatBoost takes it for regression losses and MultiClass only.
  if (p.ctr.ctr_target_border_count.value_or(1) > 1) {
    const loss_kind k = p.loss.kind;
    CBG_EXPECTS(k != loss_kind::multiclass, status::not_implemented,
                "parameter 'ctr_target_border_count': above 1 with MultiClass is not implemented");
    if (k != loss_kind::rmse && k != loss_kind::mae && k != loss_kind::quantile && k != loss_kind::poisson) {
      invalid_param("ctr_target_border_count",
                    fmt::format("above 1 is not supported for loss_function {} (CatBoost: RMSE, MAE, Quantile, "
                                "Poisson, MAPE, LogLinQuantile, MultiClass)",
                                p.loss_name));
    }
    ctr::apply_target_border_count(p.ctr);
  }
  p.flat_json = flat.dump();
  if (p.eval_metric) {
    const metric_kind k = p.eval_metric->spec.kind;
    const bool classifier = p.loss.kind == loss_kind::logloss || p.loss.kind == loss_kind::cross_entropy ||
                            p.loss.kind == loss_kind::multiclass || p.loss.kind == loss_kind::multiclass_one_vs_all;
    const bool class_metric = k == metric_kind::auc || k == metric_kind::accuracy || k == metric_kind::precision ||
                              k == metric_kind::recall || k == metric_kind::f1 || k == metric_kind::logloss ||
                              k == metric_kind::cross_entropy || k == metric_kind::multiclass ||
                              k == metric_kind::multiclass_one_vs_all || is_classification_metric(k);
    if (classifier != class_metric) {
      invalid_param("eval_metric", fmt::format("'{}' does not fit loss_function {}", p.eval_metric->name, p.loss_name));
    }
  }
}

// "Name:key=value;key=value" -> name and its parameters.
std::pair<std::string, std::map<std::string, std::string>> split_description(const std::string& text,
                                                                             const std::string& what) {
  const std::size_t colon = text.find(':');
  std::pair<std::string, std::map<std::string, std::string>> out;
  out.first = text.substr(0, colon);
  if (colon == std::string::npos) return out;
  std::string rest = text.substr(colon + 1);
  std::size_t start = 0;
  while (start <= rest.size()) {
    const std::size_t end = std::min(rest.find(';', start), rest.size());
    const std::string item = rest.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0) {
      invalid_param(what, fmt::format("'{}': '{}' is not key=value", text, item));
    }
    out.second[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return out;
}

double description_number(const std::string& what, const std::string& text, const std::string& key,
                          const std::string& value) {
  double d = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
    invalid_param(what, fmt::format("'{}': {}={} is not a number", text, key, value));
  }
  return d;
}

std::string od_name(od_kind k) {
  switch (k) {
    case od_kind::iter:
      return "Iter";
    case od_kind::inc_to_dec:
      return "IncToDec";
    case od_kind::none:
      break;
  }
  return "None";
}

json binarization_json(int border_count, quantize::border_type type, quantize::nan_mode mode) {
  return {{"border_count", border_count},
          {"border_type", quantize::border_type_names[static_cast<int>(type)]},
          {"nan_mode", mode == quantize::nan_mode::min   ? "Min"
                       : mode == quantize::nan_mode::max ? "Max"
                                                         : "Forbidden"},
          {"dev_max_subset_size_for_build_borders", quantize::default_max_subset_size}};
}

json metric_json(const named_metric& m) {
  const auto [name, params] = split_description(m.name, "metric");
  json p = json::object();
  for (const auto& [k, v] : params) p[k] = v;
  return json{{"type", name}, {"params", p}};
}

}  // namespace

const char* loss_name(loss_kind k) noexcept {
  switch (k) {
    case loss_kind::rmse:
      return "RMSE";
    case loss_kind::logloss:
      return "Logloss";
    case loss_kind::cross_entropy:
      return "CrossEntropy";
    case loss_kind::multiclass:
      return "MultiClass";
    case loss_kind::multiclass_one_vs_all:
      return "MultiClassOneVsAll";
    case loss_kind::mae:
      return "MAE";
    case loss_kind::quantile:
      return "Quantile";
    case loss_kind::poisson:
      return "Poisson";
    case loss_kind::tweedie:
      return "Tweedie";
    case loss_kind::rmse_with_uncertainty:
      return "RMSEWithUncertainty";
  }
  return "?";
}

const char* bootstrap_name(bootstrap_kind k) noexcept {
  switch (k) {
    case bootstrap_kind::bayesian:
      return "Bayesian";
    case bootstrap_kind::bernoulli:
      return "Bernoulli";
    case bootstrap_kind::mvs:
      return "MVS";
    case bootstrap_kind::no:
      return "No";
    case bootstrap_kind::poisson:
      return "Poisson";
  }
  return "?";
}

named_metric parse_metric(const std::string& text, const std::string& what) {
  const auto [name, params] = split_description(text, what);
  named_metric m;
  m.name = text;
  const std::optional<metric_kind> kind = metric_kind_of(name);
  if (!kind) {
    CBG_EXPECTS(!is_unimplemented_catboost_metric(name), status::not_implemented,
                fmt::format("parameter '{}': CatBoost's metric {} is not implemented (implemented: {})", what, name,
                            supported_metric_names()));
    invalid_param(what, fmt::format("'{}' is not a supported metric ({})", name, supported_metric_names()));
  }
  m.spec.kind = *kind;
  m.spec.use_weights = default_use_weights(*kind);
  bool has_variance_power = false;
  for (const auto& [k, v] : params) {
    if (k == "alpha" && m.spec.kind == metric_kind::quantile) {
      m.spec.alpha = description_number(what, text, k, v);
      if (!(m.spec.alpha > 0 && m.spec.alpha < 1)) {
        invalid_param(what, fmt::format("'{}': alpha must be in (0, 1)", text));
      }
    } else if (k == "variance_power" && m.spec.kind == metric_kind::tweedie) {
      m.spec.variance_power = description_number(what, text, k, v);
      has_variance_power = true;
      if (!(m.spec.variance_power > 1 && m.spec.variance_power < 2)) {
        invalid_param(what, fmt::format("'{}': variance_power must be in (1, 2)", text));
      }
    } else if (apply_metric_parameter(m.spec, m.skip_train, k, v, what, text)) {
    } else {
      invalid_param(what, fmt::format("'{}': unknown or invalid metric parameter '{}'", text, k));
    }
  }
  if (m.spec.kind == metric_kind::tweedie && !has_variance_power) {
    invalid_param(what, fmt::format("'{}': Tweedie needs variance_power (e.g. Tweedie:variance_power=1.5)", text));
  }
  return m;
}

named_metric loss_metric(const train_params& p) {
  named_metric m = parse_metric(p.loss_name, "loss_function");
  return m;
}

train_params parse_params(const std::string& json_text) {
  train_params p;
  if (json_text.find_first_not_of(" \t\r\n") == std::string::npos) return p;
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    CBG_FAIL(status::invalid_argument, "params_json is not valid JSON: " + io::describe_json_error(json_text, e));
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    CBG_FAIL(status::invalid_argument, std::string("params_json is not valid JSON: ") + e.what());
  }
  CBG_EXPECTS(root.is_object(), status::invalid_argument, "params_json must be a JSON object");

  json flat = json::object();
  for (const auto& [given_key, value] : root.items()) {
    const param_spec* spec = find_param(given_key);
    if (spec == nullptr) {
      CBG_EXPECTS(!is_unimplemented_catboost_param(given_key), status::not_implemented,
                  fmt::format("parameter '{}': a CatBoost parameter cbgpu does not implement", given_key));
      CBG_FAIL(status::invalid_argument,
               fmt::format("unknown parameter '{}' (cbgpu takes CatBoost's parameter names)", given_key));
    }
    const std::string key(spec->name);
    CBG_EXPECTS(!p.given.contains(key), status::invalid_argument,
                fmt::format("parameter '{}' is given twice (through an alias)", key));
    p.given.insert(key);
    if (value.is_null()) invalid_param(key, "null is not a value");
    spec->set(p, read_value(*spec, key, value, root));
    flat[key] = typed_value(key, value, spec->stored);
  }
  finish_params(p, flat);
  return p;
}

std::optional<double> automatic_learning_rate(loss_kind loss, std::int64_t rows, int iterations, bool use_best_model,
                                              bool boost_from_average) {
  struct coefficients {
    double a, b, c;
  };
  // GPU table of options_helper.cpp (catboost-training.md §3.8): [best][bfa].
  coefficients k{};
  switch (loss) {
    case loss_kind::logloss: {
      static constexpr coefficients t[2][2] = {{{-0.055, -3.01, -0.896}, {0.427, -7.316, -0.907}},
                                               {{-0.085, -2.055, -0.414}, {0.04, -3.226, -0.488}}};
      k = t[use_best_model][boost_from_average];
      break;
    }
    case loss_kind::multiclass: {
      static constexpr coefficients t[2] = {{0.204, -4.144, -0.833}, {0.101, -2.95, -0.437}};
      k = t[use_best_model];
      break;
    }
    case loss_kind::rmse: {
      static constexpr coefficients t[2][2] = {{{0.047, -3.034, -0.591}, {0.131, -4.114, -0.597}},
                                               {{0.051, -3.001, -0.449}, {0.108, -3.525, -0.285}}};
      k = t[use_best_model][boost_from_average];
      break;
    }
    default:
      return std::nullopt;
  }
  const double n = static_cast<double>(std::max<std::int64_t>(rows, 1));
  const double lr = std::exp(k.a * std::log(n) + k.b) * std::pow(iterations / 1000.0, k.c);
  return std::round(std::min(0.5, lr) * 1e6) / 1e6;
}

resolved_params resolve_params(const train_params& p, const data_facts& f) {
  resolved_params r;
  r.p = p;
  r.loss = p.loss;
  switch (p.loss.kind) {
    case loss_kind::multiclass:
      CBG_EXPECTS(f.classes >= 2, status::bad_data, "MultiClass needs at least 2 classes in the label");
      r.loss.dims = f.classes;
      break;
    case loss_kind::multiclass_one_vs_all:
      CBG_EXPECTS(f.classes >= 2, status::bad_data, "MultiClassOneVsAll needs at least 2 classes in the label");
      r.loss.dims = f.classes;
      break;
    case loss_kind::rmse_with_uncertainty:
      r.loss.dims = 2;
      break;
    default:
      r.loss.dims = 1;
  }
  CBG_EXPECTS(r.loss.dims <= max_dims, status::unsupported,
              fmt::format("{} classes: at most {} are supported", f.classes, max_dims));
  if (p.newton_score) {
    CBG_EXPECTS(r.loss.dims == 1, status::not_implemented,
                "parameter 'score_function': the Newton score functions are implemented for "
                "one-dimensional losses only");
  }
  r.l2_leaf_reg = p.l2_leaf_reg.value_or(3.0);

  r.use_best_model = p.use_best_model.value_or(f.has_eval && !f.eval_target_constant);
  if (p.use_best_model.value_or(false) && !f.has_eval) {
    invalid_param("use_best_model", "needs an eval set");
  }

  // boost_from_average (§3.9).
  const loss_kind lk = p.loss.kind;
  const bool bfa_allowed = lk == loss_kind::rmse || lk == loss_kind::logloss || lk == loss_kind::cross_entropy ||
                           lk == loss_kind::quantile || lk == loss_kind::mae || lk == loss_kind::rmse_with_uncertainty;
  const bool bfa_default = lk == loss_kind::rmse || lk == loss_kind::quantile || lk == loss_kind::mae ||
                           lk == loss_kind::rmse_with_uncertainty;
  if (p.boost_from_average.value_or(false) && !bfa_allowed) {
    invalid_param("boost_from_average", fmt::format("is not supported for {}", p.loss_name));
  }
  r.boost_from_average = f.has_baseline ? false : p.boost_from_average.value_or(bfa_default);

  // Leaf estimation defaults (GetEstimationMethodDefaults; §3.7).
  leaf_method default_method = leaf_method::newton;
  int default_iterations = 1;
  switch (lk) {
    case loss_kind::logloss:
    case loss_kind::cross_entropy:
    case loss_kind::poisson:
      default_iterations = 10;
      break;
    case loss_kind::tweedie:
      default_iterations = 20;
      break;
    case loss_kind::mae:
    case loss_kind::quantile:
      default_method = leaf_method::gradient;
      break;
    default:
      break;
  }
  // Exact (the weighted quantile of the residuals per leaf) is CatBoost's GPU choice for MAE and
  // Quantile when boosting_type is Plain when the options are resolved: that is, when it was set.
  if ((lk == loss_kind::mae || lk == loss_kind::quantile) && p.given.contains("boosting_type")) {
    default_method = leaf_method::exact;
  }
  r.method = p.method.value_or(default_method);
  if (r.method == leaf_method::exact && lk != loss_kind::mae && lk != loss_kind::quantile) {
    invalid_param("leaf_estimation_method", fmt::format("Exact is only for MAE and Quantile, not {}", p.loss_name));
  }
  if (p.method && *p.method == leaf_method::gradient && default_method == leaf_method::newton &&
      (lk == loss_kind::multiclass || lk == loss_kind::multiclass_one_vs_all)) {
    default_iterations = 10;
  }
  r.leaf_iterations = p.leaf_iterations.value_or(default_iterations);
  if (!p.leaf_iterations && p.iterations < 200 && f.features < 20) r.leaf_iterations = 1;

  // Learning rate: the automatic rule only when nothing that shapes the step is set.
  const bool auto_lr = !p.learning_rate && !p.method && !p.leaf_iterations && !p.l2_leaf_reg;
  std::optional<double> lr;
  if (auto_lr) {
    lr = automatic_learning_rate(lk, f.rows, p.iterations, r.use_best_model, r.boost_from_average);
  }
  r.learning_rate = p.learning_rate.value_or(lr.value_or(0.03));

  r.subsample = p.subsample.value_or(p.bootstrap == bootstrap_kind::mvs ? 0.8 : 0.66);
  if (!p.subsample && f.rows < 100) r.subsample = 1.0;

  r.objective = loss_metric(p);
  r.eval_metric = p.eval_metric.value_or(r.objective);
  CBG_EXPECTS(
      r.loss.dims == 1 || !is_binary_only(r.eval_metric.spec.kind), status::not_implemented,
      fmt::format("parameter 'eval_metric': {} is implemented for binary classification only", r.eval_metric.name));
  for (const named_metric& m : p.custom_metrics) {
    CBG_EXPECTS(r.loss.dims == 1 || !is_binary_only(m.spec.kind), status::not_implemented,
                fmt::format("parameter 'custom_metric': {} is implemented for binary classification only", m.name));
  }
  return r;
}

std::string catboost_params_json(const resolved_params& r, const std::vector<std::string>& class_names) {
  const train_params& p = r.p;
  json loss = metric_json(r.objective);
  json bootstrap{{"type", bootstrap_name(p.bootstrap)}};
  if (p.bootstrap == bootstrap_kind::bayesian) bootstrap["bagging_temperature"] = p.bagging_temperature;
  if (p.bootstrap == bootstrap_kind::bernoulli || p.bootstrap == bootstrap_kind::mvs ||
      p.bootstrap == bootstrap_kind::poisson) {
    bootstrap["subsample"] = r.subsample;
  }
  if (p.bootstrap == bootstrap_kind::mvs && p.mvs_reg) {
    bootstrap["mvs_reg"] = *p.mvs_reg;
  }
  bootstrap["sampling_unit"] = "Object";
  static const char* score_names[2][2] = {{"Cosine", "L2"}, {"NewtonCosine", "NewtonL2"}};
  const char* backtracking_names[] = {"No", "AnyImprovement", "Armijo"};
  json custom = json::array();
  for (const auto& m : p.custom_metrics) custom.push_back(metric_json(m));
  json names = json::array();
  for (const std::string& c : class_names) {
    // Numeric labels are stored as numbers (CatBoost's class_label_type Integer / Float), names given
    // as strings as strings.
    double d = 0;
    const auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), d);
    if (p.class_name_texts.empty() && ec == std::errc() && end == c.data() + c.size()) {
      if (d == std::floor(d) && std::fabs(d) < 9e15)
        names.push_back(static_cast<std::int64_t>(d));
      else
        names.push_back(d);
    } else {
      names.push_back(c);
    }
  }
  const json flat = json::parse(p.flat_json, nullptr, false);

  json out{
      {"loss_function", loss},
      {"task_type", p.task_type},
      {"random_seed", p.random_seed},
      {"logging_level", p.verbose ? "Verbose" : "Silent"},
      {"boosting_options",
       {{"iterations", p.iterations},
        {"learning_rate", r.learning_rate},
        {"boosting_type", "Plain"},
        {"boost_from_average", r.boost_from_average},
        {"permutation_count", 1},
        {"fold_len_multiplier", 2},
        {"approx_on_full_history", false},
        {"model_shrink_rate", 0},
        {"model_shrink_mode", "Constant"},
        {"od_config", {{"type", od_name(p.od_type)}, {"wait_iterations", p.od_wait}, {"stop_pvalue", p.od_pval}}}}},
      {"tree_learner_options",
       {{"depth", p.depth},
        {"l2_leaf_reg", r.l2_leaf_reg},
        {"random_strength", p.random_strength},
        {"model_size_reg", p.model_size_reg},
        {"score_function", score_names[p.newton_score][static_cast<int>(p.score)]},
        {"grow_policy", "SymmetricTree"},
        {"bootstrap", bootstrap},
        {"leaf_estimation_method", r.method == leaf_method::newton  ? "Newton"
                                   : r.method == leaf_method::exact ? "Exact"
                                                                    : "Gradient"},
        {"leaf_estimation_iterations", r.leaf_iterations},
        {"leaf_estimation_backtracking", backtracking_names[static_cast<int>(p.backtracking)]}}},
      {"data_processing_options",
       {{"float_features_binarization", binarization_json(p.border_count, p.border_type, p.nan_mode)},
        {"class_names", names},
        {"classes_count", flat.is_object() && flat.contains("classes_count") ? flat["classes_count"] : json(0)},
        {"target_border", p.target_border ? json(*p.target_border) : json(nullptr)}}},
      {"metrics",
       {{"objective_metric", loss}, {"eval_metric", metric_json(r.eval_metric)}, {"custom_metrics", custom}}},
      {"flat_params", flat},
  };
  if (!p.per_float_quantization.empty()) {
    // CatBoost's form: by feature id, each with the common settings filled in.
    json per = json::object();
    for (const float_quantization& q : p.per_float_quantization) {
      per[q.name.empty() ? std::to_string(q.feature) : q.name] =
          binarization_json(q.border_count.value_or(p.border_count), q.border_type.value_or(p.border_type),
                            q.nan_mode.value_or(p.nan_mode));
    }
    out["data_processing_options"]["per_float_feature_quantization"] = std::move(per);
  }
  return out.dump();
}

std::string catboost_output_options_json(const resolved_params& r) {
  const train_params& p = r.p;
  const json out{{"use_best_model", r.use_best_model},
                 {"metric_period", p.metric_period},
                 {"verbose", p.verbose ? p.metric_period : 0},
                 {"train_dir", p.train_dir},
                 {"name", p.name},
                 {"allow_writing_files", p.allow_writing_files}};
  return out.dump();
}

}  // namespace cbg::train
