// SPDX-License-Identifier: Apache-2.0
#include "training_parameters.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "data_options.hpp"
#include "errors.hpp"

namespace cbgpu_bench {

namespace {

template <class T>
bool parse_whole(const std::string& s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

std::string integer_in(const std::string& v, int64_t lo, int64_t hi) {
  int64_t n = 0;
  if (!parse_whole(v, n) || n < lo || n > hi) {
    return fmt::format("'{}' is not an integer in [{}, {}]", v, lo, hi);
  }
  return {};
}

std::string one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return {};
    list += list.empty() ? a : fmt::format(", {}", a);
  }
  return fmt::format("'{}' is not one of {}", v, list);
}

std::string check_loss(const std::string& v) {
  return v.empty() ? std::string("the loss function name is empty") : std::string();
}
std::string check_iterations(const std::string& v) { return integer_in(v, 1, 100000000); }
std::string check_depth(const std::string& v) { return integer_in(v, 1, 16); }
std::string check_border_count(const std::string& v) { return integer_in(v, 1, 65535); }
std::string check_metric_period(const std::string& v) { return integer_in(v, 1, 100000000); }
std::string check_learning_rate(const std::string& v) {
  double d = 0;
  if (!parse_whole(v, d) || !(d > 0.0) || d > 1e6) {
    return fmt::format("'{}' is not a positive number", v);
  }
  return {};
}
std::string check_seed(const std::string& v) {
  uint64_t n = 0;
  return parse_whole(v, n) ? std::string() : fmt::format("'{}' is not an unsigned integer", v);
}
std::string check_logging_level(const std::string& v) {
  return one_of(v, {"Silent", "Verbose", "Info", "Debug"});
}
std::string number_in(const std::string& v, double lo, double hi) {
  double d = 0;
  if (!parse_whole(v, d) || !(d >= lo) || !(d <= hi)) {
    return fmt::format("'{}' is not a number in [{}, {}]", v, lo, hi);
  }
  return {};
}
std::string check_non_negative(const std::string& v) { return number_in(v, 0.0, 1e300); }
std::string check_fraction(const std::string& v) { return number_in(v, 1e-300, 1.0); }
std::string check_count(const std::string& v) { return integer_in(v, 0, 100000000); }
std::string check_thread_count(const std::string& v) { return integer_in(v, -1, 4096); }
std::string check_name(const std::string& v) {
  return v.empty() ? std::string("the value is empty") : std::string();
}
std::string check_border_type(const std::string& v) {
  return one_of(v, {"GreedyLogSum", "GreedyMinEntropy", "Median", "Uniform", "UniformAndQuantiles",
                    "MinEntropy", "MaxLogSum"});
}
std::string check_bootstrap_type(const std::string& v) {
  return one_of(v, {"Bayesian", "Bernoulli", "MVS", "Poisson", "No"});
}
std::string check_od_type(const std::string& v) { return one_of(v, {"IncToDec", "Iter"}); }
std::string check_bool(const std::string& v) { return one_of(v, {"true", "false"}); }

}  // namespace

const std::vector<parameter_spec>& training_parameters() {
  static const std::vector<parameter_spec> specs{
      {"loss_function", "--loss-function", "Loss function (Logloss, RMSE, MultiClass, ...)", "NAME",
       check_loss},
      {"iterations", "-i,--iterations", "Maximum number of trees", "INT", check_iterations},
      {"learning_rate", "-w,--learning-rate", "Learning rate", "FLOAT", check_learning_rate},
      {"depth", "-n,--depth", "Depth of the trees (1..16)", "INT", check_depth},
      {"random_seed", "-r,--random-seed", "Random seed", "UINT", check_seed},
      {"border_count", "-x,--border-count", "Number of borders per numeric feature", "INT",
       check_border_count},
      {"task_type", "--task-type", "CPU (host reference path) or GPU; default: a GPU if visible",
       "CPU|GPU", check_task_type},
      {"devices", "--devices", "GPU ordinals: 0, 0:1 or 0-3 (the first is used)", "LIST",
       check_devices},
      {"logging_level", "--logging-level", "Library log level: Silent, Verbose, Info or Debug",
       "LEVEL", check_logging_level},
      {"metric_period", "--metric-period", "Compute metrics every N iterations", "INT",
       check_metric_period},
      {"feature_border_type", "--feature-border-type", "Border selection of numeric features",
       "TYPE", check_border_type},
      {"l2_leaf_reg", "--l2-leaf-reg", "L2 regularisation of leaf values", "FLOAT",
       check_non_negative},
      {"random_strength", "--random-strength", "Score noise at split selection", "FLOAT",
       check_non_negative},
      {"bootstrap_type", "--bootstrap-type", "Bayesian, Bernoulli, MVS, Poisson or No", "TYPE",
       check_bootstrap_type},
      {"bagging_temperature", "--bagging-temperature", "Bayesian bootstrap temperature", "FLOAT",
       check_non_negative},
      {"subsample", "--subsample", "Bernoulli/MVS sample rate", "FLOAT", check_fraction},
      {"od_type", "--od-type", "Overfitting detector: IncToDec or Iter", "TYPE", check_od_type},
      {"od_wait", "--od-wait", "Iterations to wait after the best eval metric", "INT", check_count},
      {"eval_metric", "--eval-metric", "Metric for the overfitting detector and best model", "NAME",
       check_name},
      {"custom_metric", "--custom-metric", "More metrics to compute, comma-separated", "NAMES",
       check_name},
      {"use_best_model", "--use-best-model", "Shrink the model to the best eval iteration",
       "true|false", check_bool},
      {"thread_count", "-T,--thread-count", "Host threads (-1: all)", "INT", check_thread_count},
  };
  return specs;
}

std::vector<std::string> apply_overrides(const std::vector<std::string>& overrides,
                                         parameter_values& values) {
  std::vector<std::string> unknown;
  for (const std::string& arg : overrides) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw usage_error(fmt::format("unexpected argument '{}' (overrides are key=value)", arg));
    }
    std::string key = arg.substr(0, eq);
    std::replace(key.begin(), key.end(), '-', '_');
    const std::string value = arg.substr(eq + 1);
    const auto& specs = training_parameters();
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const parameter_spec& s) { return key == s.key; });
    if (spec == specs.end()) {
      unknown.push_back(key);
    } else if (const std::string problem = spec->check(value); !problem.empty()) {
      throw usage_error(fmt::format("{}={}: {}", key, value, problem));
    }
    values[key] = value;
  }
  return unknown;
}

}  // namespace cbgpu_bench
