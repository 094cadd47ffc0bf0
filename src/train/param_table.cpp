// SPDX-License-Identifier: Apache-2.0
// The table of training parameters (param_table.hpp) and the readers of their values.
#include "cbg/train/param_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/ctr/options.hpp"
#include "cbg/train/metric_names.hpp"
#include "cbg/train/params.hpp"

namespace cbg::train {

namespace {

using nlohmann::json;

bool is_loss_metric(metric_kind k) {
  return static_cast<int>(k) <= static_cast<int>(metric_kind::rmse_with_uncertainty);
}

loss_kind loss_of(metric_kind k) {
  switch (k) {
    case metric_kind::rmse:
      return loss_kind::rmse;
    case metric_kind::logloss:
      return loss_kind::logloss;
    case metric_kind::cross_entropy:
      return loss_kind::cross_entropy;
    case metric_kind::multiclass:
      return loss_kind::multiclass;
    case metric_kind::multiclass_one_vs_all:
      return loss_kind::multiclass_one_vs_all;
    case metric_kind::mae:
      return loss_kind::mae;
    case metric_kind::quantile:
      return loss_kind::quantile;
    case metric_kind::poisson:
      return loss_kind::poisson;
    case metric_kind::tweedie:
      return loss_kind::tweedie;
    case metric_kind::rmse_with_uncertainty:
      return loss_kind::rmse_with_uncertainty;
    default:
      break;
  }
  return loss_kind::rmse;
}

void set_loss(train_params& p, const param_value& v) {
  const std::string text = read_text(v.key, v.raw);
  const std::string name = text.substr(0, text.find(':'));
  CBG_EXPECTS(!is_unimplemented_catboost_loss(name), status::not_implemented,
              fmt::format("parameter '{}': CatBoost's loss {} is not implemented", v.key, name));
  const named_metric m = parse_metric(text, v.key);
  if (!is_loss_metric(m.spec.kind)) {
    invalid_param(v.key, fmt::format("'{}' is a metric, not a loss function", m.name));
  }
  p.loss.kind = loss_of(m.spec.kind);
  p.loss.alpha = m.spec.kind == metric_kind::mae ? 0.5 : m.spec.alpha;
  p.loss.variance_power = m.spec.variance_power;
  p.loss_name = m.name;
}

void set_custom_metrics(train_params& p, const param_value& v) {
  if (v.raw.is_array()) {
    for (const auto& item : v.raw) p.custom_metrics.push_back(parse_metric(read_text(v.key, item), v.key));
  } else {
    p.custom_metrics.push_back(parse_metric(read_text(v.key, v.raw), v.key));
  }
}

void set_random_seed(train_params& p, const param_value& v) {
  const double d = read_number(v.key, v.raw);
  if (!(d >= 0 && d == std::floor(d) && d < 1.8446744073709552e19)) {
    invalid_param(v.key, fmt::format("{} is not an unsigned integer", v.raw.dump()));
  }
  p.random_seed = v.raw.is_number_unsigned() ? v.raw.get<std::uint64_t>() : static_cast<std::uint64_t>(d);
}

// CatBoost's verbose: a boolean, or the period of the progress lines (metric_period unless given).
void set_verbose(train_params& p, const param_value& v) {
  if (v.raw.is_boolean() || v.raw.is_string()) {
    p.verbose = read_boolean(v.key, v.raw);
    return;
  }
  const auto period = read_integer(v.key, v.raw, 0, 100000000);
  p.verbose = period > 0;
  if (period > 0 && !v.given.contains("metric_period")) p.metric_period = static_cast<int>(period);
}

// Pools hold numeric labels. Numeric names (numbers, or numeric text) are label values: a label equal
// to class_names[k] is class k. Names that are not all numeric (string class labels) need labels that
// are already class indices. Names given as strings are stored as strings (CatBoost's
// class_label_type String).
void set_class_names(train_params& p, const param_value& v) {
  const std::string& key = v.key;
  const json& value = v.raw;
  if (!value.is_array()) invalid_param(key, fmt::format("{} is not a list of class names", value.dump()));
  std::vector<std::string> texts;
  bool numeric = true, any_text = false;
  for (const auto& item : value) {
    if (item.is_string()) {
      any_text = true;
      const std::string s = item.get<std::string>();
      double d = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      numeric = numeric && ec == std::errc() && end == s.data() + s.size() && !s.empty() && std::isfinite(d);
      texts.push_back(s);
    } else {
      const double d = read_number(key, item);
      if (!std::isfinite(d)) invalid_param(key, fmt::format("{} is not a finite label value", item.dump()));
      texts.push_back(item.dump());
    }
  }
  for (std::size_t a = 0; a < value.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      const bool same = numeric ? read_number(key, value[a]) == read_number(key, value[b]) : texts[a] == texts[b];
      if (same) invalid_param(key, fmt::format("{} is listed twice", value[a].dump()));
    }
  }
  if (value.size() < 2 || value.size() > static_cast<std::size_t>(max_classes)) {
    invalid_param(key, fmt::format("{} names; a classifier takes 2 .. {} classes", value.size(), max_classes));
  }
  for (std::size_t c = 0; c < value.size(); ++c) {
    p.class_values.push_back(numeric ? read_number(key, value[c]) : static_cast<double>(c));
  }
  if (any_text) p.class_name_texts = texts;
}

// per_float_feature_quantization: CatBoost's "FeatureId:border_count=N,nan_mode=M,border_type=T"
// (ParsePerFeatureBinarization), one string or a list; FeatureId is a flat index or a feature name.
void set_per_float_quantization(train_params& p, const param_value& v) {
  std::vector<std::string> items;
  if (v.raw.is_array()) {
    for (const auto& item : v.raw) items.push_back(read_text(v.key, item));
  } else {
    items.push_back(read_text(v.key, v.raw));
  }
  for (const std::string& text : items) {
    const std::size_t colon = text.find(':');
    float_quantization q;
    const std::string id = text.substr(0, colon);
    if (id.empty()) invalid_param(v.key, fmt::format("'{}' names no feature (FeatureId:key=value,...)", text));
    std::int64_t index = 0;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), index);
    if (ec == std::errc() && end == id.data() + id.size() && index >= 0) {
      q.feature = index;
    } else {
      q.name = id;
    }
    std::size_t start = colon == std::string::npos ? text.size() : colon + 1;
    while (start < text.size()) {
      const std::size_t stop = std::min(text.find(',', start), text.size());
      const std::string item = text.substr(start, stop - start);
      start = stop + 1;
      if (item.empty()) continue;
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos) invalid_param(v.key, fmt::format("'{}': '{}' is not key=value", text, item));
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      if (key == "border_count") {
        int count = 0;
        const auto [stop_at, err] = std::from_chars(value.data(), value.data() + value.size(), count);
        if (err != std::errc() || stop_at != value.data() + value.size() || count < 1 ||
            count > quantize::max_border_count) {
          invalid_param(v.key, fmt::format("'{}': border_count '{}' is not an integer in [1, {}]", text, value,
                                           quantize::max_border_count));
        }
        q.border_count = count;
      } else if (key == "nan_mode") {
        if (value == "Min")
          q.nan_mode = quantize::nan_mode::min;
        else if (value == "Max")
          q.nan_mode = quantize::nan_mode::max;
        else if (value == "Forbidden")
          q.nan_mode = quantize::nan_mode::forbidden;
        else
          invalid_param(v.key, fmt::format("'{}': nan_mode '{}' is not one of Min, Max, Forbidden", text, value));
      } else if (key == "border_type") {
        quantize::border_type t{};
        if (!quantize::border_type_from_name(value.c_str(), t)) {
          invalid_param(v.key, fmt::format("'{}': '{}' is not a border type ({})", text, value,
                                           fmt::join(quantize::border_type_names, ", ")));
        }
        q.border_type = t;
      } else {
        invalid_param(v.key, fmt::format("'{}': unknown key '{}' (border_count, nan_mode, border_type)", text, key));
      }
    }
    p.per_float_quantization.push_back(std::move(q));
  }
}

// The categorical-feature options are read by cbg/ctr/options.hpp.
void set_ctr_option(train_params& p, const param_value& v) { ctr::parse_option(p.ctr, v.key, v.raw.dump()); }

template <class E, std::size_t N>
E pick(const E (&values)[N], std::size_t choice) {
  return values[std::min(choice, N - 1)];
}

using t = param_type;
using k = value_kind;
constexpr double unbounded = 1e300;
constexpr double max_count = 100000000;  // iterations, periods, waits

// Designated initializers name only the fields a parameter uses; the others keep their defaults
// (GCC before 14 warns about that, wrongly).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<param_spec> make_table() {
  return {
      // ---- loss and metrics ----
      {.name = "loss_function",
       .aliases = {"objective", "loss"},
       .stored = t::text,
       .kind = k::custom,
       .choices = {"RMSE", "Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll", "MAE", "Quantile", "Poisson",
                   "Tweedie", "RMSEWithUncertainty"},
       .default_json = R"("RMSE")",
       .doc = "the loss, with its parameters in CatBoost's syntax (Quantile:alpha=0.3, Tweedie:variance_power=1.5)",
       .set = set_loss},
      {.name = "eval_metric",
       .stored = t::text,
       .kind = k::custom,
       .doc = "the metric of the eval set, early stopping and use_best_model (default: the loss); a loss, AUC, "
              "Accuracy, Precision, Recall, F1 or R2",
       .set = [](train_params& p,
                 const param_value& v) { p.eval_metric = parse_metric(read_text(v.key, v.raw), v.key); }},
      {.name = "custom_metric",
       .aliases = {"custom_loss"},
       .stored = t::text_or_list,
       .kind = k::custom,
       .doc = "further metrics to compute each iteration (a description or a list of them)",
       .set = set_custom_metrics},
      {.name = "target_border",
       .stored = t::number,
       .kind = k::number,
       .lo = -unbounded,
       .hi = unbounded,
       .doc = "Logloss: labels above it are class 1 (any label values)",
       .set = [](train_params& p, const param_value& v) { p.target_border = v.number; }},
      {.name = "classes_count",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 2,
       .hi = max_classes,
       .doc = "the number of classes of a classifier (Logloss: 2)",
       .set = [](train_params& p, const param_value& v) { p.classes_count = static_cast<int>(v.integer); }},
      {.name = "class_names",
       .stored = t::number_list,
       .kind = k::custom,
       .doc = "the label value (or name) of each class of a classifier",
       .set = set_class_names},
      // ---- boosting ----
      {.name = "iterations",
       .aliases = {"num_boost_round", "n_estimators", "num_trees"},
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = max_count,
       .default_json = "1000",
       .doc = "the number of trees",
       .set = [](train_params& p, const param_value& v) { p.iterations = static_cast<int>(v.integer); }},
      {.name = "learning_rate",
       .aliases = {"eta"},
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = 1e6,
       .lo_open = true,
       .doc = "the step; unset: CatBoost's automatic rule (RMSE, Logloss, MultiClass) when l2_leaf_reg and the leaf "
              "estimation options are unset too, else 0.03",
       .set = [](train_params& p, const param_value& v) { p.learning_rate = v.number; }},
      {.name = "boost_from_average",
       .stored = t::boolean,
       .kind = k::boolean,
       .doc = "start from the best constant (default: true for RMSE, MAE, Quantile and RMSEWithUncertainty)",
       .set = [](train_params& p, const param_value& v) { p.boost_from_average = v.boolean; }},
      {.name = "boosting_type",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Plain"},
       .not_implemented = {"Ordered"},
       .default_json = R"("Plain")",
       .implies = true,
       .doc = "Plain boosting (given, MAE and Quantile leaves default to Exact as on CatBoost's GPU)",
       .set = [](train_params&, const param_value&) {}},
      {.name = "use_best_model",
       .stored = t::boolean,
       .kind = k::boolean,
       .doc = "keep the trees up to the best eval metric (default: true with an eval set)",
       .set = [](train_params& p, const param_value& v) { p.use_best_model = v.boolean; }},
      {.name = "od_type",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Iter", "IncToDec"},
       .doc = "the overfitting detector (default: none; Iter when od_wait is given, IncToDec when od_pval is)",
       .set =
           [](train_params& p, const param_value& v) {
             constexpr od_kind kinds[] = {od_kind::iter, od_kind::inc_to_dec};
             p.od_type = pick(kinds, v.choice);
           }},
      {.name = "od_wait",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 0,
       .hi = max_count,
       .default_json = "20",
       .implies = true,
       .doc = "iterations without improvement before stopping",
       .set = [](train_params& p, const param_value& v) { p.od_wait = static_cast<int>(v.integer); }},
      {.name = "od_pval",
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = 1,
       .default_json = "0",
       .implies = true,
       .doc = "the IncToDec detector's threshold (0: never stops)",
       .set = [](train_params& p, const param_value& v) { p.od_pval = v.number; }},
      {.name = "early_stopping_rounds",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = max_count,
       .doc = "od_type Iter with this od_wait",
       .set = [](train_params& p, const param_value& v) { p.early_stopping_rounds = static_cast<int>(v.integer); }},
      {.name = "random_seed",
       .aliases = {"random_state"},
       .stored = t::integer,
       .kind = k::custom,
       .default_json = "0",
       .doc = "the seed of the bootstrap and the score noise (an unsigned 64-bit integer)",
       .set = set_random_seed},
      // ---- trees ----
      {.name = "depth",
       .aliases = {"max_depth"},
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = max_depth,
       .default_json = "6",
       .doc = "the depth of the (symmetric) trees",
       .set = [](train_params& p, const param_value& v) { p.depth = static_cast<int>(v.integer); }},
      {.name = "grow_policy",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"SymmetricTree"},
       .not_implemented = {"Depthwise", "Lossguide"},
       .default_json = R"("SymmetricTree")",
       .doc = "the tree shape",
       .set = [](train_params&, const param_value&) {}},
      {.name = "l2_leaf_reg",
       .aliases = {"reg_lambda"},
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = unbounded,
       .default_json = "3",
       .implies = true,
       .doc = "the L2 regularization of the leaf values (given, the automatic learning rate is off)",
       .set = [](train_params& p, const param_value& v) { p.l2_leaf_reg = v.number; }},
      {.name = "random_strength",
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = unbounded,
       .default_json = "1",
       .doc = "the scale of the noise added to split scores",
       .set = [](train_params& p, const param_value& v) { p.random_strength = v.number; }},
      {.name = "model_size_reg",
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = unbounded,
       .default_json = "0.5",
       .doc = "the penalty on CTRs not yet in the model in split scores, (1 + u / u_max)^-model_size_reg (u: the "
              "CTR's distinct values); larger: fewer CTR tables, a smaller model",
       .set = [](train_params& p, const param_value& v) { p.model_size_reg = v.number; }},
      {.name = "score_function",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Cosine", "L2", "NewtonCosine", "NewtonL2"},
       .not_implemented = {"SolarL2", "LOOL2"},
       .default_json = R"("Cosine")",
       .doc = "the split score (the Newton ones: one-dimensional losses only)",
       .set =
           [](train_params& p, const param_value& v) {
             p.score = (v.choice % 2 == 0) ? score_function::cosine : score_function::l2;
             p.newton_score = v.choice >= 2;
           }},
      {.name = "leaf_estimation_method",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Newton", "Gradient", "Exact"},
       .not_implemented = {"Simple"},
       .doc = "how leaf values are found (default per loss as CatBoost: Gradient for MAE and Quantile, else "
              "Newton; Exact for MAE and Quantile only)",
       .set =
           [](train_params& p, const param_value& v) {
             constexpr leaf_method methods[] = {leaf_method::newton, leaf_method::gradient, leaf_method::exact};
             p.method = pick(methods, v.choice);
           }},
      {.name = "leaf_estimation_iterations",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = 1000,
       .doc = "leaf estimation steps per tree (default per loss as CatBoost: 10 for Logloss, CrossEntropy and "
              "Poisson, 20 for Tweedie, else 1; 1 below 200 iterations on fewer than 20 features)",
       .set = [](train_params& p, const param_value& v) { p.leaf_iterations = static_cast<int>(v.integer); }},
      {.name = "leaf_estimation_backtracking",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"No", "AnyImprovement", "Armijo"},
       .default_json = R"("AnyImprovement")",
       .doc = "the line search of the leaf estimation steps",
       .set =
           [](train_params& p, const param_value& v) {
             constexpr backtracking_kind kinds[] = {backtracking_kind::no, backtracking_kind::any_improvement,
                                                    backtracking_kind::armijo};
             p.backtracking = pick(kinds, v.choice);
           }},
      // ---- sampling ----
      {.name = "bootstrap_type",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Bayesian", "Bernoulli", "MVS", "No", "Poisson"},
       .default_json = R"("Bayesian")",
       .doc = "the sampling of the rows of each tree",
       .set =
           [](train_params& p, const param_value& v) {
             constexpr bootstrap_kind kinds[] = {bootstrap_kind::bayesian, bootstrap_kind::bernoulli,
                                                 bootstrap_kind::mvs, bootstrap_kind::no, bootstrap_kind::poisson};
             p.bootstrap = pick(kinds, v.choice);
           }},
      {.name = "bagging_temperature",
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = unbounded,
       .default_json = "1",
       .doc = "the weight spread of the Bayesian bootstrap",
       .set = [](train_params& p, const param_value& v) { p.bagging_temperature = v.number; }},
      {.name = "subsample",
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = 1,
       .lo_open = true,
       .doc = "the sampled share of the rows for Bernoulli, MVS and Poisson (default 0.8 for MVS, else 0.66; 1 "
              "below 100 rows)",
       .set = [](train_params& p, const param_value& v) { p.subsample = v.number; }},
      {.name = "mvs_reg",
       .stored = t::number,
       .kind = k::number,
       .lo = 0,
       .hi = unbounded,
       .doc = "MVS: the regularization of the sampling weights (default: the squared mean gradient)",
       .set = [](train_params& p, const param_value& v) { p.mvs_reg = v.number; }},
      {.name = "sampling_unit",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Object"},
       .not_implemented = {"Group"},
       .default_json = R"("Object")",
       .doc = "what is sampled",
       .set = [](train_params&, const param_value&) {}},
      // ---- quantization ----
      {.name = "border_count",
       .aliases = {"max_bin"},
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = quantize::max_border_count,
       .default_json = "128",
       .doc = "the borders per float feature",
       .set = [](train_params& p, const param_value& v) { p.border_count = static_cast<int>(v.integer); }},
      {.name = "feature_border_type",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"GreedyLogSum", "GreedyMinEntropy", "Median", "Uniform", "UniformAndQuantiles", "MinEntropy",
                   "MaxLogSum"},
       .default_json = R"("GreedyLogSum")",
       .doc = "how the borders are chosen",
       .set = [](train_params& p,
                 const param_value& v) { (void)quantize::border_type_from_name(v.text.c_str(), p.border_type); }},
      {.name = "per_float_feature_quantization",
       .stored = t::text_or_list,
       .kind = k::custom,
       .doc = "per-feature border_count, nan_mode and border_type (\"FeatureId:border_count=N,nan_mode=M,"
              "border_type=T\", FeatureId an index or a name)",
       .set = set_per_float_quantization},
      {.name = "nan_mode",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Min", "Max", "Forbidden"},
       .default_json = R"("Min")",
       .doc = "where missing values go (below or above every border), or refused",
       .set =
           [](train_params& p, const param_value& v) {
             constexpr quantize::nan_mode modes[] = {quantize::nan_mode::min, quantize::nan_mode::max,
                                                     quantize::nan_mode::forbidden};
             p.nan_mode = pick(modes, v.choice);
           }},
      // ---- categorical features (read by cbg/ctr/options.hpp) ----
      {.name = "one_hot_max_size",
       .stored = t::integer,
       .kind = k::custom,
       .lo = 0,
       .hi = 255,
       .default_json = "2",
       .doc = "categorical features with at most this many values are one-hot encoded, the others get CTRs",
       .set = set_ctr_option},
      {.name = "simple_ctr",
       .stored = t::text_or_list,
       .kind = k::custom,
       .doc = "the CTRs of single categorical features (default: CatBoost's GPU set, Borders and FeatureFreq); "
              "Borders:PriorEstimation=BetaPrior estimates each feature's prior from the learn data, as CatBoost's "
              "GPU trainer",
       .set = set_ctr_option},
      {.name = "combinations_ctr",
       .stored = t::text_or_list,
       .kind = k::custom,
       .doc = "the CTRs of feature combinations (default: CatBoost's GPU set)",
       .set = set_ctr_option},
      {.name = "per_feature_ctr",
       .stored = t::text_or_list,
       .kind = k::custom,
       .doc = "the CTRs of given features (\"FeatureIndex:Description;Description...\")",
       .set = set_ctr_option},
      {.name = "max_ctr_complexity",
       .stored = t::integer,
       .kind = k::custom,
       .lo = 1,
       .hi = 16,
       .catboost_gpu_default = "4 (1 below 200 iterations), also on a GPU",
       .doc = "the most categorical features in a combination (default 4, 1 below 200 iterations)",
       .set = set_ctr_option},
      {.name = "counter_calc_method",
       .stored = t::text,
       .kind = k::custom,
       .choices = {"SkipTest", "Full"},
       .default_json = R"("SkipTest")",
       .doc = "whether Counter CTRs count the eval set too (Full)",
       .set = set_ctr_option},
      {.name = "has_time",
       .stored = t::boolean,
       .kind = k::boolean,
       .default_json = "false",
       .doc = "true: the ordered CTRs visit the learn rows in the data's order (one permutation, as in CatBoost); "
              "false: in a seeded permutation",
       .set = [](train_params& p, const param_value& v) { p.ctr.has_time = v.boolean; }},
      {.name = "fold_permutation_block",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 0,
       .hi = 1 << 30,
       .default_json = "64",
       .doc = "the permutation of the ordered CTRs shuffles blocks of this many consecutive rows (CatBoost's GPU "
              "rule: 0 means 64; below 50 000 learn rows 1; otherwise rounded up to a power of two and halved "
              "while 128 blocks exceed the rows)",
       .set = [](train_params& p,
                 const param_value& v) { p.ctr.fold_permutation_block = static_cast<std::uint32_t>(v.integer); }},
      {.name = "permutation_count",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = 1000,
       .default_json = "1",
       .catboost_gpu_default = "4",
       .doc = "the permutations of the ordered CTRs, as CatBoost's GPU trainer uses them: each has its own CTR "
              "columns (binned with the first one's borders) and approx; the last estimates the model's leaves, "
              "and each tree is searched on one of the others, drawn per iteration (CatBoost's default is 4; "
              "P permutations cost P times the CTR columns). With feature combinations each permutation computes its "
              "own combination columns, binned with the borders of the first permutation that made them. More "
              "than one over several GPUs or processes is CBG_ERR_NOT_IMPLEMENTED; without CTR features, or with "
              "has_time, any count means one, as in CatBoost",
       .set = [](train_params& p, const param_value& v) { p.permutation_count = static_cast<int>(v.integer); }},
      {.name = "ctr_target_border_count",
       .stored = t::integer,
       .kind = k::custom,
       .lo = 1,
       .hi = 254,
       .default_json = "1",
       .doc = "the target borders of the CTRs of a regression target (RMSE, MAE, Quantile, Poisson), as CatBoost's "
              "GPU trainer takes them",
       .set = set_ctr_option},
      {.name = "ctr_leaf_count_limit",
       .stored = t::integer,
       .kind = k::custom,
       .default_json = "18446744073709551615",
       .doc = "CatBoost's CPU-only bound on a CTR table's categories: a projection with more distinct learn values "
              "keeps this many of the most frequent, the others' rows join one kept value (chosen as CatBoost does) "
              "and the model sees them as unseen values; a CPU context only (a GPU context refuses other values "
              "than the default, unlimited, as CatBoost's GPU trainer)",
       .set = set_ctr_option},
      {.name = "store_all_simple_ctr",
       .stored = t::boolean,
       .kind = k::custom,
       .default_json = "false",
       .doc = "CatBoost's CPU-only exception to ctr_leaf_count_limit: true keeps every value of a single "
              "categorical feature's tables (combinations stay bounded); a CPU context only (a GPU context refuses "
              "true, as CatBoost's GPU trainer)",
       .set = set_ctr_option},
      // ---- output ----
      {.name = "metric_period",
       .stored = t::integer,
       .kind = k::integer,
       .lo = 1,
       .hi = max_count,
       .default_json = "1",
       .doc = "the period of the progress lines",
       .set = [](train_params& p, const param_value& v) { p.metric_period = static_cast<int>(v.integer); }},
      {.name = "verbose",
       .aliases = {"verbose_eval"},
       .stored = t::verbosity,
       .kind = k::custom,
       .lo = 0,
       .hi = max_count,
       .default_json = "true",
       .doc = "progress lines through the log callback (an integer: their period, unless metric_period is given)",
       .set = set_verbose},
      {.name = "silent",
       .stored = t::boolean,
       .kind = k::boolean,
       .default_json = "false",
       .doc = "no progress lines",
       .set = [](train_params& p, const param_value& v) { p.verbose = !v.boolean; }},
      {.name = "logging_level",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"Silent", "Verbose", "Info", "Debug"},
       .default_json = R"("Verbose")",
       .doc = "Silent: no progress lines",
       .set = [](train_params& p, const param_value& v) { p.verbose = v.choice != 0; }},
      {.name = "train_dir",
       .stored = t::text,
       .kind = k::text,
       .default_json = R"("")",
       .catboost_gpu_default = R"("catboost_info")",
       .doc = "the folder of CatBoost's training logs (empty: none are written)",
       .set = [](train_params& p, const param_value& v) { p.train_dir = v.text; }},
      {.name = "allow_writing_files",
       .stored = t::boolean,
       .kind = k::boolean,
       .default_json = "true",
       .doc = "false: no training logs even with train_dir",
       .set = [](train_params& p, const param_value& v) { p.allow_writing_files = v.boolean; }},
      {.name = "name",
       .stored = t::text,
       .kind = k::text,
       .default_json = R"("experiment")",
       .doc = "the experiment name of the training logs",
       .set = [](train_params& p, const param_value& v) { p.name = v.text; }},
      // ---- recorded in the model only ----
      {.name = "task_type",
       .stored = t::text,
       .kind = k::choice,
       .choices = {"GPU", "CPU"},
       .default_json = R"("GPU")",
       .doc = "recorded only: the context decides where training runs",
       .set = [](train_params& p, const param_value& v) { p.task_type = v.text; }},
      {.name = "devices",
       .stored = t::text,
       .kind = k::custom,
       .default_json = R"("")",
       .catboost_gpu_default = R"("-1" (every GPU))",
       .doc = "recorded only: the context (and its communicator) decides the GPUs",
       .set =
           [](train_params& p, const param_value& v) {
             p.devices =
                 v.raw.is_string() ? read_text(v.key, v.raw) : std::to_string(read_integer(v.key, v.raw, 0, 1024));
           }},
      {.name = "thread_count",
       .stored = t::integer,
       .kind = k::integer,
       .lo = -1,
       .hi = 1 << 20,
       .default_json = "-1",
       .doc = "recorded only",
       .set = [](train_params& p, const param_value& v) { p.thread_count = static_cast<int>(v.integer); }},
  };
}
#pragma GCC diagnostic pop

}  // namespace

[[noreturn]] void invalid_param(const std::string& key, const std::string& what) {
  CBG_FAIL(status::invalid_argument, fmt::format("parameter '{}': {}", key, what));
}

const std::vector<param_spec>& param_table() {
  static const std::vector<param_spec> table = make_table();
  return table;
}

bool is_unimplemented_catboost_param(std::string_view name) noexcept {
  // CatBoost's parameters (its Python package's) that the table lacks.
  static constexpr std::string_view names[] = {"allow_const_label",
                                               "approx_on_full_history",
                                               "auto_class_weights",
                                               "best_model_min_trees",
                                               "callback",
                                               "cat_features",
                                               "class_weights",
                                               "colsample_bylevel",
                                               "ctr_description",
                                               "ctr_history_unit",
                                               "data_partition",
                                               "dev_efb_max_buckets",
                                               "dev_score_calc_obj_block_size",
                                               "device_config",
                                               "dictionaries",
                                               "diffusion_temperature",
                                               "embedding_features",
                                               "eval_fraction",
                                               "feature_calcers",
                                               "feature_weights",
                                               "final_ctr_computation_mode",
                                               "first_feature_use_penalties",
                                               "fixed_binary_splits",
                                               "fold_len_multiplier",
                                               "gpu_cat_features_storage",
                                               "gpu_ram_part",
                                               "ignored_features",
                                               "input_borders",
                                               "langevin",
                                               "max_leaves",
                                               "metadata",
                                               "min_child_samples",
                                               "min_data_in_leaf",
                                               "model_shrink_mode",
                                               "model_shrink_rate",
                                               "monotone_constraints",
                                               "num_leaves",
                                               "output_borders",
                                               "penalties_coefficient",
                                               "per_object_feature_penalties",
                                               "pinned_memory_size",
                                               "posterior_sampling",
                                               "random_score_type",
                                               "rsm",
                                               "sampling_frequency",
                                               "save_snapshot",
                                               "scale_pos_weight",
                                               "snapshot_file",
                                               "snapshot_interval",
                                               "sparse_features_conflict_fraction",
                                               "text_features",
                                               "text_processing",
                                               "tokenizers",
                                               "used_ram_limit"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

const param_spec* find_param(std::string_view name_or_alias) noexcept {
  for (const param_spec& s : param_table()) {
    if (s.name == name_or_alias) return &s;
    if (std::find(s.aliases.begin(), s.aliases.end(), name_or_alias) != s.aliases.end()) return &s;
  }
  return nullptr;
}

std::string read_text(const std::string& key, const json& v) {
  if (v.is_string()) return v.get<std::string>();
  invalid_param(key, fmt::format("{} is not a string", v.dump()));
}

double read_number(const std::string& key, const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    double d = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return d;
  }
  invalid_param(key, fmt::format("{} is not a number", v.dump()));
}

bool read_boolean(const std::string& key, const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i == 0 || i == 1) return i == 1;
  }
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == "true" || s == "1") return true;
    if (s == "false" || s == "0") return false;
  }
  invalid_param(key, fmt::format("{} is not a boolean", v.dump()));
}

std::int64_t read_integer(const std::string& key, const json& v, std::int64_t lo, std::int64_t hi) {
  const double d = read_number(key, v);
  if (!(d == std::floor(d)) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    invalid_param(key, fmt::format("{} is not an integer in [{}, {}]", v.dump(), lo, hi));
  }
  return static_cast<std::int64_t>(d);
}

}  // namespace cbg::train
