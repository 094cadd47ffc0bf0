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
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/io/json_position.hpp"
#include "cbg/train/metric_names.hpp"

namespace cbg::train {

namespace {

using nlohmann::json;

[[noreturn]] void invalid(const std::string& key, const std::string& what) {
  CBG_FAIL(status::invalid_argument, fmt::format("parameter '{}': {}", key, what));
}

// Canonical names by alias (CatBoost's Python aliases included).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> m{
      {"objective", "loss_function"},      {"loss", "loss_function"},
      {"custom_loss", "custom_metric"},    {"num_boost_round", "iterations"},
      {"n_estimators", "iterations"},      {"num_trees", "iterations"},
      {"eta", "learning_rate"},            {"max_depth", "depth"},
      {"reg_lambda", "l2_leaf_reg"},       {"random_state", "random_seed"},
      {"max_bin", "border_count"},         {"verbose_eval", "verbose"},
      {"early_stopping_rounds", "early_stopping_rounds"},
  };
  return m;
}

// The most classes classes_count and class_names take (the trainer's MultiClass label limit).
constexpr std::int64_t max_classes = 1000000;

const param_definition* find_definition(const std::string& key) {
  for (const param_definition& d : param_definitions()) {
    if (key == d.name) return &d;
  }
  return nullptr;
}

// One value of the JSON object, read as the type a parameter needs.
struct value_reader {
  const std::string& key;
  const json& v;

  [[nodiscard]] std::string text() const {
    if (v.is_string()) return v.get<std::string>();
    invalid(key, fmt::format("{} is not a string", v.dump()));
  }
  [[nodiscard]] double number() const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      double d = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return d;
    }
    invalid(key, fmt::format("{} is not a number", v.dump()));
  }
  [[nodiscard]] double number_in(double lo, double hi, bool lo_open = false) const {
    const double d = number();
    if (!std::isfinite(d) || d < lo || d > hi || (lo_open && d == lo)) {
      invalid(key, fmt::format("{} is outside {}{}, {}]", v.dump(), lo_open ? "(" : "[", lo, hi));
    }
    return d;
  }
  [[nodiscard]] std::int64_t integer(std::int64_t lo, std::int64_t hi) const {
    const double d = number();
    if (!(d == std::floor(d)) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
      invalid(key, fmt::format("{} is not an integer in [{}, {}]", v.dump(), lo, hi));
    }
    return static_cast<std::int64_t>(d);
  }
  [[nodiscard]] bool boolean() const {
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
    invalid(key, fmt::format("{} is not a boolean", v.dump()));
  }
  template <class E>
  [[nodiscard]] E choice(std::initializer_list<std::pair<const char*, E>> options) const {
    const std::string s = text();
    std::string list;
    for (const auto& [name, e] : options) {
      if (s == name) return e;
      list += list.empty() ? name : fmt::format(", {}", name);
    }
    invalid(key, fmt::format("'{}' is not one of {}", s, list));
  }
};

// A validated value as CatBoost stores it in flat_params: the JSON type of the parameter's
// definition (text "6" becomes 6, "true" becomes true; lists and strings stay as given).
json typed_value(const std::string& key, const json& v, param_type type) {
  const value_reader r{key, v};
  switch (type) {
    case param_type::integer: {
      if (v.is_number_integer()) return v;
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        std::uint64_t u = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return json(u);
      }
      return json(static_cast<std::int64_t>(r.number()));
    }
    case param_type::number:
      return v.is_number() ? v : json(r.number());
    case param_type::boolean:
      return json(r.boolean());
    case param_type::verbosity: {
      if (v.is_boolean() || v.is_number_integer()) return v;
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        std::int64_t i = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty() && i > 1) return json(i);
      }
      return json(r.boolean());
    }
    case param_type::text:
      return v.is_string() ? v : json(v.dump());
    case param_type::text_or_list:
    case param_type::number_list:
      break;
  }
  return v;
}

bool is_loss_metric(metric_kind k) {
  return static_cast<int>(k) <= static_cast<int>(metric_kind::rmse_with_uncertainty);
}

loss_kind loss_of(metric_kind k) {
  switch (k) {
    case metric_kind::rmse: return loss_kind::rmse;
    case metric_kind::logloss: return loss_kind::logloss;
    case metric_kind::cross_entropy: return loss_kind::cross_entropy;
    case metric_kind::multiclass: return loss_kind::multiclass;
    case metric_kind::multiclass_one_vs_all: return loss_kind::multiclass_one_vs_all;
    case metric_kind::mae: return loss_kind::mae;
    case metric_kind::quantile: return loss_kind::quantile;
    case metric_kind::poisson: return loss_kind::poisson;
    case metric_kind::tweedie: return loss_kind::tweedie;
    case metric_kind::rmse_with_uncertainty: return loss_kind::rmse_with_uncertainty;
    default: break;
  }
  return loss_kind::rmse;
}

// "Name:key=value;key=value" -> name and its parameters.
std::pair<std::string, std::map<std::string, std::string>> split_description(
    const std::string& text, const std::string& what) {
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
      invalid(what, fmt::format("'{}': '{}' is not key=value", text, item));
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
    invalid(what, fmt::format("'{}': {}={} is not a number", text, key, value));
  }
  return d;
}

std::string od_name(od_kind k) {
  switch (k) {
    case od_kind::iter: return "Iter";
    case od_kind::inc_to_dec: return "IncToDec";
    case od_kind::none: break;
  }
  return "None";
}

json metric_json(const named_metric& m) {
  const auto [name, params] = split_description(m.name, "metric");
  json p = json::object();
  for (const auto& [k, v] : params) p[k] = v;
  return json{{"type", name}, {"params", p}};
}

}  // namespace

const std::vector<param_definition>& param_definitions() {
  using t = param_type;
  static const std::vector<param_definition> defs = [] {
    std::vector<param_definition> d{
        {"loss_function", t::text},          {"eval_metric", t::text},
        {"custom_metric", t::text_or_list},  {"iterations", t::integer},
        {"learning_rate", t::number},        {"depth", t::integer},
        {"l2_leaf_reg", t::number},          {"random_strength", t::number},
        {"model_size_reg", t::number},       {"score_function", t::text},
        {"bootstrap_type", t::text},         {"bagging_temperature", t::number},
        {"subsample", t::number},            {"sampling_unit", t::text},
        {"random_seed", t::integer},         {"border_count", t::integer},
        {"feature_border_type", t::text},    {"nan_mode", t::text},
        {"leaf_estimation_method", t::text}, {"leaf_estimation_iterations", t::integer},
        {"leaf_estimation_backtracking", t::text}, {"boost_from_average", t::boolean},
        {"use_best_model", t::boolean},      {"od_type", t::text},
        {"od_wait", t::integer},             {"od_pval", t::number},
        {"early_stopping_rounds", t::integer}, {"metric_period", t::integer},
        {"verbose", t::verbosity},           {"silent", t::boolean},
        {"logging_level", t::text},          {"train_dir", t::text},
        {"allow_writing_files", t::boolean}, {"task_type", t::text},
        {"devices", t::text},                {"thread_count", t::integer},
        {"name", t::text},                   {"boosting_type", t::text},
        {"grow_policy", t::text},            {"target_border", t::number},
        {"mvs_reg", t::number},              {"classes_count", t::integer},
        {"class_names", t::number_list}};
    for (const ctr::option_definition& o : ctr::option_definitions()) d.push_back({o.name, o.type});
    return d;
  }();
  return defs;
}

const char* loss_name(loss_kind k) noexcept {
  switch (k) {
    case loss_kind::rmse: return "RMSE";
    case loss_kind::logloss: return "Logloss";
    case loss_kind::cross_entropy: return "CrossEntropy";
    case loss_kind::multiclass: return "MultiClass";
    case loss_kind::multiclass_one_vs_all: return "MultiClassOneVsAll";
    case loss_kind::mae: return "MAE";
    case loss_kind::quantile: return "Quantile";
    case loss_kind::poisson: return "Poisson";
    case loss_kind::tweedie: return "Tweedie";
    case loss_kind::rmse_with_uncertainty: return "RMSEWithUncertainty";
  }
  return "?";
}

const char* bootstrap_name(bootstrap_kind k) noexcept {
  switch (k) {
    case bootstrap_kind::bayesian: return "Bayesian";
    case bootstrap_kind::bernoulli: return "Bernoulli";
    case bootstrap_kind::mvs: return "MVS";
    case bootstrap_kind::no: return "No";
    case bootstrap_kind::poisson: return "Poisson";
  }
  return "?";
}

named_metric parse_metric(const std::string& text, const std::string& what) {
  const auto [name, params] = split_description(text, what);
  named_metric m;
  m.name = text;
  const std::optional<metric_kind> kind = metric_kind_of(name);
  if (!kind) invalid(what, fmt::format("'{}' is not a supported metric ({})", name, supported_metric_names()));
  m.spec.kind = *kind;
  m.spec.use_weights = default_use_weights(*kind);
  bool has_variance_power = false;
  for (const auto& [k, v] : params) {
    if (k == "alpha" && m.spec.kind == metric_kind::quantile) {
      m.spec.alpha = description_number(what, text, k, v);
      if (!(m.spec.alpha > 0 && m.spec.alpha < 1)) {
        invalid(what, fmt::format("'{}': alpha must be in (0, 1)", text));
      }
    } else if (k == "variance_power" && m.spec.kind == metric_kind::tweedie) {
      m.spec.variance_power = description_number(what, text, k, v);
      has_variance_power = true;
      if (!(m.spec.variance_power > 1 && m.spec.variance_power < 2)) {
        invalid(what, fmt::format("'{}': variance_power must be in (1, 2)", text));
      }
    } else if (apply_metric_parameter(m.spec, m.skip_train, k, v, what, text)) {
    } else {
      invalid(what, fmt::format("'{}': unknown or invalid metric parameter '{}'", text, k));
    }
  }
  if (m.spec.kind == metric_kind::tweedie && !has_variance_power) {
    invalid(what, fmt::format("'{}': Tweedie needs variance_power (e.g. Tweedie:variance_power=1.5)",
                              text));
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
  std::optional<int> early_stopping_rounds;
  bool od_type_given = false, od_wait_given = false, od_pval_given = false;
  for (const auto& [given_key, value] : root.items()) {
    std::string key = given_key;
    if (const auto a = aliases().find(key); a != aliases().end()) key = a->second;
    const param_definition* definition = find_definition(key);
    if (definition == nullptr) {
      CBG_FAIL(status::invalid_argument,
               fmt::format("unknown parameter '{}' (cbgpu takes CatBoost's parameter names)", given_key));
    }
    CBG_EXPECTS(!p.given.contains(key), status::invalid_argument,
                fmt::format("parameter '{}' is given twice (through an alias)", key));
    p.given.insert(key);
    flat[key] = value;
    if (value.is_null()) invalid(key, "null is not a value");
    const value_reader r{key, value};
    if (key == "loss_function") {
      const named_metric m = parse_metric(r.text(), key);
      if (!is_loss_metric(m.spec.kind)) {
        invalid(key, fmt::format("'{}' is a metric, not a loss function", m.name));
      }
      p.loss.kind = loss_of(m.spec.kind);
      p.loss.alpha = m.spec.kind == metric_kind::mae ? 0.5 : m.spec.alpha;
      p.loss.variance_power = m.spec.variance_power;
      p.loss_name = m.name;
    } else if (key == "eval_metric") {
      p.eval_metric = parse_metric(r.text(), key);
    } else if (key == "custom_metric") {
      if (value.is_array()) {
        for (const auto& item : value) {
          const value_reader ir{key, item};
          p.custom_metrics.push_back(parse_metric(ir.text(), key));
        }
      } else {
        p.custom_metrics.push_back(parse_metric(r.text(), key));
      }
    } else if (key == "iterations") {
      p.iterations = static_cast<int>(r.integer(1, 100000000));
    } else if (key == "learning_rate") {
      p.learning_rate = r.number_in(0, 1e6, /*lo_open=*/true);
    } else if (key == "depth") {
      p.depth = static_cast<int>(r.integer(1, max_depth));
    } else if (key == "l2_leaf_reg") {
      p.l2_leaf_reg = r.number_in(0, 1e300);
    } else if (key == "random_strength") {
      p.random_strength = r.number_in(0, 1e300);
    } else if (key == "model_size_reg") {
      p.model_size_reg = r.number_in(0, 1e300);
    } else if (key == "score_function") {
      const int s = r.choice<int>({{"Cosine", 0}, {"L2", 1}, {"NewtonCosine", 2}, {"NewtonL2", 3}});
      p.score = (s % 2 == 0) ? score_function::cosine : score_function::l2;
      p.newton_score = s >= 2;
    } else if (key == "bootstrap_type") {
      p.bootstrap = r.choice<bootstrap_kind>({{"Bayesian", bootstrap_kind::bayesian},
                                              {"Bernoulli", bootstrap_kind::bernoulli},
                                              {"MVS", bootstrap_kind::mvs},
                                              {"No", bootstrap_kind::no},
                                              {"Poisson", bootstrap_kind::poisson}});
    } else if (key == "bagging_temperature") {
      p.bagging_temperature = r.number_in(0, 1e300);
    } else if (key == "subsample") {
      p.subsample = r.number_in(0, 1, /*lo_open=*/true);
    } else if (key == "mvs_reg") {
      p.mvs_reg = r.number_in(0, 1e300);
    } else if (key == "sampling_unit") {
      (void)r.choice<int>({{"Object", 0}});
    } else if (key == "random_seed") {
      const double d = r.number();
      if (!(d >= 0 && d == std::floor(d) && d < 1.8446744073709552e19)) {
        invalid(key, fmt::format("{} is not an unsigned integer", value.dump()));
      }
      p.random_seed = value.is_number_unsigned() ? value.get<std::uint64_t>()
                                                 : static_cast<std::uint64_t>(d);
    } else if (key == "border_count") {
      p.border_count = static_cast<int>(r.integer(1, quantize::max_border_count));
    } else if (key == "feature_border_type") {
      (void)r.choice<int>({{"GreedyLogSum", 0}});
    } else if (key == "nan_mode") {
      p.nan_mode = r.choice<quantize::nan_mode>({{"Min", quantize::nan_mode::min},
                                                 {"Max", quantize::nan_mode::max},
                                                 {"Forbidden", quantize::nan_mode::forbidden}});
    } else if (key == "leaf_estimation_method") {
      const std::string s = r.text();
      if (s == "Simple") {
        CBG_FAIL(status::not_implemented,
                 fmt::format("parameter 'leaf_estimation_method': {} is not implemented", s));
      }
      p.method = r.choice<leaf_method>({{"Newton", leaf_method::newton},
                                        {"Gradient", leaf_method::gradient},
                                        {"Exact", leaf_method::exact}});
    } else if (key == "leaf_estimation_iterations") {
      p.leaf_iterations = static_cast<int>(r.integer(1, 1000));
    } else if (key == "leaf_estimation_backtracking") {
      p.backtracking = r.choice<backtracking_kind>({{"No", backtracking_kind::no},
                                                    {"AnyImprovement", backtracking_kind::any_improvement},
                                                    {"Armijo", backtracking_kind::armijo}});
    } else if (key == "boost_from_average") {
      p.boost_from_average = r.boolean();
    } else if (key == "use_best_model") {
      p.use_best_model = r.boolean();
    } else if (key == "od_type") {
      od_type_given = true;
      p.od_type = r.choice<od_kind>({{"Iter", od_kind::iter}, {"IncToDec", od_kind::inc_to_dec}});
    } else if (key == "od_wait") {
      od_wait_given = true;
      p.od_wait = static_cast<int>(r.integer(0, 100000000));
    } else if (key == "od_pval") {
      od_pval_given = true;
      p.od_pval = r.number_in(0, 1);
    } else if (key == "early_stopping_rounds") {
      early_stopping_rounds = static_cast<int>(r.integer(1, 100000000));
    } else if (key == "metric_period") {
      p.metric_period = static_cast<int>(r.integer(1, 100000000));
    } else if (key == "verbose") {
      if (value.is_boolean() || value.is_string()) {
        p.verbose = r.boolean();
      } else {
        const auto period = r.integer(0, 100000000);
        p.verbose = period > 0;
        if (period > 0 && !root.contains("metric_period")) p.metric_period = static_cast<int>(period);
      }
    } else if (key == "silent") {
      p.verbose = !r.boolean();
    } else if (key == "logging_level") {
      p.verbose = r.choice<int>({{"Silent", 0}, {"Verbose", 1}, {"Info", 1}, {"Debug", 1}}) == 1;
    } else if (key == "train_dir") {
      p.train_dir = r.text();
    } else if (key == "allow_writing_files") {
      p.allow_writing_files = r.boolean();
    } else if (key == "task_type") {
      p.task_type = r.choice<std::string>({{"GPU", "GPU"}, {"CPU", "CPU"}});
    } else if (key == "devices") {
      p.devices = value.is_string() ? r.text() : std::to_string(r.integer(0, 1024));
    } else if (key == "thread_count") {
      p.thread_count = static_cast<int>(r.integer(-1, 1 << 20));
    } else if (key == "name") {
      p.name = r.text();
    } else if (key == "boosting_type") {
      if (r.text() == "Ordered") {
        CBG_FAIL(status::not_implemented,
                 "parameter 'boosting_type': Ordered boosting is not implemented (use Plain)");
      }
      (void)r.choice<int>({{"Plain", 0}});
    } else if (key == "grow_policy") {
      const std::string s = r.text();
      if (s == "Depthwise" || s == "Lossguide") {
        CBG_FAIL(status::not_implemented,
                 fmt::format("parameter 'grow_policy': {} is not implemented (SymmetricTree only)", s));
      }
      (void)r.choice<int>({{"SymmetricTree", 0}});
    } else if (key == "target_border") {
      p.target_border = r.number_in(-1e300, 1e300);
    } else if (key == "classes_count") {
      (void)r.integer(2, max_classes);
    } else if (key == "class_names") {
      // Pools hold numeric labels. Numeric names (numbers, or numeric text) are label values: a label
      // equal to class_names[k] is class k. Names that are not all numeric (string class labels) need
      // labels that are already class indices. Names given as strings are stored as strings
      // (CatBoost's class_label_type String).
      if (!value.is_array()) invalid(key, fmt::format("{} is not a list of class names", value.dump()));
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
          const double d = value_reader{key, item}.number();
          if (!std::isfinite(d)) invalid(key, fmt::format("{} is not a finite label value", item.dump()));
          texts.push_back(item.dump());
        }
      }
      for (std::size_t a = 0; a < value.size(); ++a) {
        for (std::size_t b = 0; b < a; ++b) {
          const bool same = numeric ? value_reader{key, value[a]}.number() == value_reader{key, value[b]}.number()
                                    : texts[a] == texts[b];
          if (same) invalid(key, fmt::format("{} is listed twice", value[a].dump()));
        }
      }
      if (value.size() < 2 || value.size() > static_cast<std::size_t>(max_classes)) {
        invalid(key, fmt::format("{} names; a classifier takes 2 .. {} classes", value.size(), max_classes));
      }
      for (std::size_t k = 0; k < value.size(); ++k) {
        p.class_values.push_back(numeric ? value_reader{key, value[k]}.number() : static_cast<double>(k));
      }
      if (any_text) p.class_name_texts = texts;
    } else if (ctr::is_option_key(key)) {
      ctr::parse_option(p.ctr, key, value.dump());
    }
    if (key != "class_names") flat[key] = typed_value(key, value, definition->type);
  }

  // Overfitting detector (overfitting_detector_options.cpp; early_stopping_rounds = Iter + wait).
  if (early_stopping_rounds) {
    if (od_type_given && p.od_type != od_kind::iter) {
      invalid("early_stopping_rounds", "needs od_type Iter");
    }
    if (od_wait_given && p.od_wait != *early_stopping_rounds) {
      invalid("early_stopping_rounds", "contradicts od_wait");
    }
    p.od_type = od_kind::iter;
    p.od_wait = *early_stopping_rounds;
  } else if (!od_type_given) {
    if (od_pval_given) p.od_type = od_kind::inc_to_dec;
    else if (od_wait_given) p.od_type = od_kind::iter;
  }
  if (p.od_type == od_kind::iter && od_pval_given && p.od_pval != 0) {
    invalid("od_pval", "is meaningless with od_type Iter");
  }
  if (p.od_type == od_kind::inc_to_dec && !od_pval_given) {
    // CatBoost's IncToDec with p-value 0 never stops; keep that meaning.
    p.od_pval = 0.0;
  }

  // Bootstrap options that the chosen type does not take (CatBoost refuses them too).
  if (p.given.contains("bagging_temperature") && p.bootstrap != bootstrap_kind::bayesian) {
    invalid("bagging_temperature", fmt::format("is only for bootstrap_type Bayesian, not {}",
                                               bootstrap_name(p.bootstrap)));
  }
  if (p.subsample && (p.bootstrap == bootstrap_kind::bayesian || p.bootstrap == bootstrap_kind::no)) {
    invalid("subsample", fmt::format("is not used by bootstrap_type {}", bootstrap_name(p.bootstrap)));
  }
  if (p.target_border && p.loss.kind != loss_kind::logloss) {
    invalid("target_border", "is only for loss_function Logloss");
  }
  for (const char* key : {"classes_count", "class_names"}) {
    if (!flat.contains(key)) continue;
    const bool multiclass = p.loss.kind == loss_kind::multiclass || p.loss.kind == loss_kind::multiclass_one_vs_all;
    if (p.loss.kind != loss_kind::logloss && !multiclass) {
      invalid(key, "is only for loss_function Logloss, MultiClass or MultiClassOneVsAll");
    }
    const std::size_t count = flat[key].is_array() ? flat[key].size() : flat[key].get<std::size_t>();
    if (p.loss.kind == loss_kind::logloss && count != 2) invalid(key, "Logloss has 2 classes");
  }
  if (flat.contains("classes_count") && flat.contains("class_names") &&
      flat["classes_count"].get<std::size_t>() != flat["class_names"].size()) {
    invalid("classes_count", fmt::format("is {} but class_names lists {} classes",
                                         flat["classes_count"].get<std::size_t>(), flat["class_names"].size()));
  }
  p.flat_json = flat.dump();
  if (p.eval_metric) {
    const metric_kind k = p.eval_metric->spec.kind;
    const bool classifier = p.loss.kind == loss_kind::logloss || p.loss.kind == loss_kind::cross_entropy ||
                            p.loss.kind == loss_kind::multiclass ||
                            p.loss.kind == loss_kind::multiclass_one_vs_all;
    const bool class_metric = k == metric_kind::auc || k == metric_kind::accuracy ||
                              k == metric_kind::precision || k == metric_kind::recall ||
                              k == metric_kind::f1 || k == metric_kind::logloss ||
                              k == metric_kind::cross_entropy || k == metric_kind::multiclass ||
                              k == metric_kind::multiclass_one_vs_all || is_classification_metric(k);
    if (classifier != class_metric) {
      invalid("eval_metric", fmt::format("'{}' does not fit loss_function {}", p.eval_metric->name,
                                         p.loss_name));
    }
  }
  return p;
}

std::optional<double> automatic_learning_rate(loss_kind loss, std::int64_t rows, int iterations,
                                              bool use_best_model, bool boost_from_average) {
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
      CBG_EXPECTS(f.classes >= 2, status::bad_data,
                  "MultiClassOneVsAll needs at least 2 classes in the label");
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
    invalid("use_best_model", "needs an eval set");
  }

  // boost_from_average (§3.9).
  const loss_kind lk = p.loss.kind;
  const bool bfa_allowed = lk == loss_kind::rmse || lk == loss_kind::logloss ||
                           lk == loss_kind::cross_entropy || lk == loss_kind::quantile ||
                           lk == loss_kind::mae || lk == loss_kind::rmse_with_uncertainty;
  const bool bfa_default = lk == loss_kind::rmse || lk == loss_kind::quantile ||
                           lk == loss_kind::mae || lk == loss_kind::rmse_with_uncertainty;
  if (p.boost_from_average.value_or(false) && !bfa_allowed) {
    invalid("boost_from_average", fmt::format("is not supported for {}", p.loss_name));
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
    invalid("leaf_estimation_method", fmt::format("Exact is only for MAE and Quantile, not {}", p.loss_name));
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
  CBG_EXPECTS(r.loss.dims == 1 || !is_binary_only(r.eval_metric.spec.kind), status::not_implemented,
              fmt::format("parameter 'eval_metric': {} is implemented for binary classification only",
                          r.eval_metric.name));
  for (const named_metric& m : p.custom_metrics) {
    CBG_EXPECTS(r.loss.dims == 1 || !is_binary_only(m.spec.kind), status::not_implemented,
                fmt::format("parameter 'custom_metric': {} is implemented for binary classification only",
                            m.name));
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
      if (d == std::floor(d) && std::fabs(d) < 9e15) names.push_back(static_cast<std::int64_t>(d));
      else names.push_back(d);
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
        {"od_config",
         {{"type", od_name(p.od_type)}, {"wait_iterations", p.od_wait}, {"stop_pvalue", p.od_pval}}}}},
      {"tree_learner_options",
       {{"depth", p.depth},
        {"l2_leaf_reg", r.l2_leaf_reg},
        {"random_strength", p.random_strength},
        {"model_size_reg", p.model_size_reg},
        {"score_function", score_names[p.newton_score][static_cast<int>(p.score)]},
        {"grow_policy", "SymmetricTree"},
        {"bootstrap", bootstrap},
        {"leaf_estimation_method", r.method == leaf_method::newton   ? "Newton"
                                   : r.method == leaf_method::exact ? "Exact"
                                                                    : "Gradient"},
        {"leaf_estimation_iterations", r.leaf_iterations},
        {"leaf_estimation_backtracking", backtracking_names[static_cast<int>(p.backtracking)]}}},
      {"data_processing_options",
       {{"float_features_binarization",
         {{"border_count", p.border_count},
          {"border_type", "GreedyLogSum"},
          {"nan_mode", p.nan_mode == quantize::nan_mode::min   ? "Min"
                       : p.nan_mode == quantize::nan_mode::max ? "Max"
                                                               : "Forbidden"},
          {"dev_max_subset_size_for_build_borders", quantize::default_max_subset_size}}},
        {"class_names", names},
        {"classes_count", flat.is_object() && flat.contains("classes_count") ? flat["classes_count"] : json(0)},
        {"target_border", p.target_border ? json(*p.target_border) : json(nullptr)}}},
      {"metrics",
       {{"objective_metric", loss}, {"eval_metric", metric_json(r.eval_metric)}, {"custom_metrics", custom}}},
      {"flat_params", flat},
  };
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
