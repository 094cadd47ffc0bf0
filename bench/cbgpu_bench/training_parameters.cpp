// SPDX-License-Identifier: Apache-2.0
#include "training_parameters.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "data_options.hpp"
#include "errors.hpp"
#include "text.hpp"

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

std::string number_in(const std::string& v, double lo, double hi) {
  double d = 0;
  if (!parse_whole(v, d) || !(d >= lo) || !(d <= hi)) {
    return fmt::format("'{}' is not a number in [{}, {}]", v, lo, hi);
  }
  return {};
}

std::string check_name(const std::string& v) { return v.empty() ? std::string("the value is empty") : std::string(); }
std::string check_iterations(const std::string& v) { return integer_in(v, 1, 100000000); }
std::string check_depth(const std::string& v) { return integer_in(v, 1, 16); }
std::string check_border_count(const std::string& v) { return integer_in(v, 1, 65535); }
std::string check_positive_count(const std::string& v) { return integer_in(v, 1, 100000000); }
std::string check_count(const std::string& v) { return integer_in(v, 0, 100000000); }
std::string check_thread_count(const std::string& v) { return integer_in(v, -1, 4096); }
std::string check_learning_rate(const std::string& v) {
  double d = 0;
  if (!parse_whole(v, d) || !(d > 0.0) || d > 1e6) return fmt::format("'{}' is not a positive number", v);
  return {};
}
std::string check_seed(const std::string& v) {
  uint64_t n = 0;
  return parse_whole(v, n) ? std::string() : fmt::format("'{}' is not an unsigned integer", v);
}
std::string check_leaf_count_limit(const std::string& v) {
  uint64_t n = 0;
  return parse_whole(v, n) && n > 0 ? std::string() : fmt::format("'{}' is not a positive integer", v);
}
std::string check_logging_level(const std::string& v) { return one_of(v, {"Silent", "Verbose", "Info", "Debug"}); }
std::string check_non_negative(const std::string& v) { return number_in(v, 0.0, 1e300); }
std::string check_fraction(const std::string& v) { return number_in(v, 1e-300, 1.0); }
std::string check_probability(const std::string& v) { return number_in(v, 0.0, 1.0); }
std::string check_border_type(const std::string& v) {
  return one_of(
      v, {"GreedyLogSum", "GreedyMinEntropy", "Median", "Uniform", "UniformAndQuantiles", "MinEntropy", "MaxLogSum"});
}
std::string check_bootstrap_type(const std::string& v) {
  return one_of(v, {"Bayesian", "Bernoulli", "MVS", "Poisson", "No"});
}
std::string check_od_type(const std::string& v) { return one_of(v, {"IncToDec", "Iter"}); }
std::string check_bool(const std::string& v) { return one_of(v, {"true", "false", "True", "False", "1", "0"}); }
std::string check_verbose(const std::string& v) {
  return check_bool(v).empty() ? std::string() : integer_in(v, 0, 100000000);
}
std::string check_nan_mode(const std::string& v) { return one_of(v, {"Min", "Max", "Forbidden"}); }

constexpr value_kind text = value_kind::text;
constexpr value_kind integer = value_kind::integer;
constexpr value_kind number = value_kind::number;
constexpr value_kind boolean = value_kind::boolean;
constexpr value_kind list = value_kind::list;
constexpr value_kind feature_list = value_kind::feature_list;
constexpr value_kind absent = value_kind::not_implemented;

}  // namespace

const std::vector<parameter_spec>& training_parameters() {
  static const std::vector<parameter_spec> specs{
      // Objective and metrics
      {"loss_function", "--loss-function", "Loss function (Logloss, RMSE, MultiClass, ...)", "NAME", text, check_name},
      {"custom_metric", "--custom-metric,--custom-loss", "More metrics to compute, comma-separated", "NAMES", list,
       check_name},
      {"eval_metric", "--eval-metric", "Metric for the overfitting detector and the best model", "NAME", text,
       check_name},
      // Boosting
      {"iterations", "-i,--iterations", "Maximum number of trees", "INT", integer, check_iterations},
      {"learning_rate", "-w,--learning-rate", "Learning rate (default: chosen from the data)", "FLOAT", number,
       check_learning_rate},
      {"random_seed", "-r,--random-seed", "Random seed", "UINT", integer, check_seed},
      {"l2_leaf_reg", "--l2-leaf-reg,--l2-leaf-regularizer", "L2 regularisation of leaf values", "FLOAT", number,
       check_non_negative},
      {"bootstrap_type", "--bootstrap-type", "Bayesian, Bernoulli, MVS, Poisson or No", "TYPE", text,
       check_bootstrap_type},
      {"bagging_temperature", "--bagging-temperature", "Bayesian bootstrap temperature", "FLOAT", number,
       check_non_negative},
      {"subsample", "--subsample", "Bernoulli/MVS/Poisson sample rate", "FLOAT", number, check_fraction},
      {"sampling_unit", "--sampling-unit", "Object (Group is not implemented)", "UNIT", text},
      {"mvs_reg", "--mvs-reg", "MVS regularisation", "FLOAT", number, check_non_negative},
      {"random_strength", "--random-strength", "Score noise at split selection", "FLOAT", number, check_non_negative},
      {"use_best_model", "--use-best-model", "Shrink the model to the best eval iteration", "BOOL", boolean,
       check_bool},
      {"depth", "-n,--depth", "Depth of the trees (1..16)", "INT", integer, check_depth},
      {"grow_policy", "--grow-policy", "SymmetricTree (Depthwise, Lossguide: not implemented)", "POLICY", text},
      {"nan_mode", "--nan-mode", "Missing numeric values: Min, Max or Forbidden", "MODE", text, check_nan_mode},
      {"leaf_estimation_method", "--leaf-estimation-method", "Newton, Gradient or Exact", "METHOD", text},
      {"leaf_estimation_iterations", "--leaf-estimation-iterations", "Gradient steps per leaf value", "INT", integer,
       check_positive_count},
      {"leaf_estimation_backtracking", "--leaf-estimation-backtracking", "No, AnyImprovement or Armijo", "TYPE", text},
      {"boosting_type", "--boosting-type", "Plain (Ordered: not implemented)", "TYPE", text},
      {"boost_from_average", "--boost-from-average", "Start from the best constant", "BOOL", boolean, check_bool},
      {"score_function", "--score-function", "Cosine, L2, NewtonCosine or NewtonL2", "NAME", text},
      {"model_size_reg", "--model-size-reg", "Model size regularisation (CTR features)", "FLOAT", number,
       check_non_negative},
      {"class_names", "--class-names", "Class labels, comma-separated, in class order", "LIST", list, check_name},
      {"classes_count", "--classes-count", "Number of classes (labels 0 .. count-1)", "INT", integer,
       check_positive_count},
      {"target_border", "--target-border", "Logloss: labels above it are class 1", "FLOAT", number},
      // Overfitting detector
      {"od_type", "--od-type", "Overfitting detector: IncToDec or Iter", "TYPE", text, check_od_type},
      {"od_pval", "--od-pval", "IncToDec threshold", "FLOAT", number, check_probability},
      {"od_wait", "--od-wait", "Iterations to wait after the best eval metric", "INT", integer, check_count},
      {"early_stopping_rounds", "--early-stopping-rounds", "Iter detector with this wait", "INT", integer,
       check_positive_count},
      // Quantization
      {"border_count", "-x,--border-count", "Number of borders per numeric feature", "INT", integer,
       check_border_count},
      {"feature_border_type", "--feature-border-type", "Border selection of numeric features", "TYPE", text,
       check_border_type},
      // Categorical features
      {"one_hot_max_size", "--one-hot-max-size", "One-hot encode categorical features with at most this many values",
       "INT", integer, check_count},
      {"simple_ctr", "--simple-ctr", "CTRs of single categorical features, comma-separated", "CTRS", list},
      {"combinations_ctr", "--combinations-ctr", "CTRs of feature combinations, comma-separated", "CTRS", list},
      {"per_feature_ctr", "--per-feature-ctr", "FeatureIndex:CTR;CTR, comma-separated", "CTRS", list},
      {"max_ctr_complexity", "--max-ctr-complexity", "Most categorical features in a combination", "INT", integer,
       check_positive_count},
      {"counter_calc_method", "--counter-calc-method", "SkipTest or Full", "METHOD", text},
      // Text: the library reads the whole unsigned 64-bit range (the default is its largest value).
      {"ctr_leaf_count_limit", "--ctr-leaf-count-limit", "Most categories a CTR table keeps (CPU only)", "UINT", text,
       check_leaf_count_limit},
      {"store_all_simple_ctr", "--store-all-simple-ctr", "Single features exempt from --ctr-leaf-count-limit", "BOOL",
       boolean, check_bool},
      {"ctr_target_border_count", "--ctr-target-border-count", "Target borders of CTRs", "INT", integer,
       check_positive_count},
      {"has_time", "--has-time", "Ordered CTRs visit the rows in the data's order (no permutation)", "", boolean},
      {"fold_permutation_block", "--fold-permutation-block", "Ordered CTRs: the permutation shuffles blocks of rows",
       "INT", integer, check_count},
      {"permutation_count", "-p,--permutations", "Permutations of the ordered CTRs (CatBoost's GPU scheme)", "INT",
       integer, check_positive_count},
      // Output and processing unit
      {"logging_level", "--logging-level", "Silent, Verbose, Info or Debug", "LEVEL", text, check_logging_level},
      {"verbose", "--verbose", "Progress every N iterations, or true/false", "INT|BOOL", value_kind::integer_or_boolean,
       check_verbose},
      {"metric_period", "--metric-period", "Compute metrics every N iterations", "INT", integer, check_positive_count},
      {"name", "--name", "Experiment name (catboost_training.json)", "NAME", text},
      {"allow_writing_files", "--allow-writing-files", "Write the training logs (catboost_info)", "BOOL", boolean,
       check_bool},
      {"task_type", "--task-type", "CPU (host reference path) or GPU; default: a GPU if visible", "CPU|GPU", text,
       check_task_type},
      {"devices", "--devices", "GPU ordinals: 0, 0:1 or 0-3", "LIST", text, check_devices},
      {"thread_count", "-T,--thread-count", "Host threads (-1: all)", "INT", integer, check_thread_count},
      // CatBoost options the trainer does not implement: using one exits 3.
      {"rsm", "--rsm", "Random subspace method", "FLOAT", absent},
      {"class_weights", "--class-weights", "Class weights", "LIST", absent},
      {"auto_class_weights", "--auto-class-weights", "Balanced or SqrtBalanced class weights", "TYPE", absent},
      {"scale_pos_weight", "--scale-pos-weight", "Weight of class 1", "FLOAT", absent},
      {"ignored_features", "-I,--ignore-features", "Features to ignore", "LIST", absent},
      {"min_data_in_leaf", "--min-data-in-leaf", "Least objects in a leaf (Depthwise, Lossguide)", "INT", absent},
      {"max_leaves", "--max-leaves", "Most leaves (Lossguide)", "INT", absent},
      {"fold_len_multiplier", "--fold-len-multiplier", "Fold length multiplier", "FLOAT", absent},
      {"approx_on_full_history", "--approx-on-full-history", "Ordered boosting approximations", "BOOL", absent},
      {"langevin", "--langevin", "Stochastic Gradient Langevin Boosting", "BOOL", absent},
      {"diffusion_temperature", "--diffusion-temperature", "Langevin diffusion temperature", "FLOAT", absent},
      {"posterior_sampling", "--posterior-sampling", "Posterior sampling", "BOOL", absent},
      {"allow_const_label", "--allow-const-label", "Train on a constant label", "BOOL", absent},
      {"monotone_constraints", "--monotone-constraints", "Monotone constraints", "LIST", absent},
      {"feature_weights", "--feature-weights", "Feature weights", "LIST", absent},
      {"first_feature_use_penalties", "--first-feature-use-penalties", "First use penalties", "LIST", absent},
      {"penalties_coefficient", "--penalties-coefficient", "Penalties coefficient", "FLOAT", absent},
      {"model_shrink_rate", "--model-shrink-rate", "Model shrinkage", "FLOAT", absent},
      {"model_shrink_mode", "--model-shrink-mode", "Model shrinkage mode", "MODE", absent},
      {"sampling_frequency", "--sampling-frequency", "PerTree or PerTreeLevel", "TYPE", absent},
      {"best_model_min_trees", "--best-model-min-trees", "Least trees of the best model", "INT", absent},
      {"input_borders_file", "--input-borders-file", "Borders from a file", "PATH", absent},
      {"output_borders_file", "--output-borders-file", "Borders to a file", "PATH", absent},
      {"per_float_feature_quantization", "--per-float-feature-quantization",
       "Per-feature quantization: FeatureId:border_count=N,nan_mode=M,border_type=T, ';'-separated", "LIST",
       feature_list},
      {"final_ctr_computation_mode", "--final-ctr-computation-mode", "Final CTR computation", "MODE", absent},
      {"snapshot_file", "--snapshot-file", "Training snapshot", "PATH", absent},
      {"snapshot_interval", "--snapshot-interval", "Seconds between snapshots", "INT", absent},
      {"learn_pairs", "--learn-pairs", "Pairs of the learn set", "PATH", absent},
      {"test_pairs", "--test-pairs", "Pairs of the test set", "PATH", absent},
      {"learn_group_weights", "--learn-group-weights", "Group weights of the learn set", "PATH", absent},
      {"test_group_weights", "--test-group-weights", "Group weights of the test set", "PATH", absent},
      {"learn_baseline", "--learn-baseline", "Baseline file of the learn set", "PATH", absent},
      {"test_baseline", "--test-baseline", "Baseline file of the test set", "PATH", absent},
      {"cv", "--cv", "Cross-validation", "SPEC", absent},
      {"cv_rand", "--cv-rand", "Cross-validation seed", "INT", absent},
      {"used_ram_limit", "--used-ram-limit", "RAM limit", "SIZE", absent},
      {"gpu_ram_part", "--gpu-ram-part", "Share of GPU memory", "FLOAT", absent},
      {"pinned_memory_size", "--pinned-memory-size", "Pinned memory", "SIZE", absent},
      {"gpu_cat_features_storage", "--gpu-cat-features-storage", "Categorical features storage", "TYPE", absent},
      {"data_partition", "--data-partition", "Data partition on several GPUs", "TYPE", absent},
      {"tokenizers", "--tokenizers", "Text feature tokenizers", "SPEC", absent},
      {"dictionaries", "--dictionaries", "Text feature dictionaries", "SPEC", absent},
      {"feature_calcers", "--feature-calcers", "Text feature calcers", "SPEC", absent},
      {"text_processing", "--text-processing", "Text feature processing", "JSON", absent},
      {"embedding_processing", "--embedding-processing", "Embedding feature processing", "JSON", absent},
      {"fstr_file", "--fstr-file", "Feature strength file", "PATH", absent},
      {"fstr_type", "--fstr-type", "Feature strength type", "TYPE", absent},
      {"fstr_internal_file", "--fstr-internal-file", "Internal feature strength file", "PATH", absent},
      {"json_log", "--json-log", "JSON training log", "PATH", absent},
      {"profile_log", "--profile-log", "Profile log", "PATH", absent},
      {"roc_file", "--roc-file", "ROC curve points", "PATH", absent},
  };
  return specs;
}

const parameter_spec* find_parameter(const std::string& key) {
  const auto& specs = training_parameters();
  const auto it = std::find_if(specs.begin(), specs.end(), [&](const parameter_spec& s) { return key == s.key; });
  return it == specs.end() ? nullptr : &*it;
}

namespace {

std::string canonical_key(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "custom_loss") return "custom_metric";
  if (key == "ignore_features") return "ignored_features";
  return key;
}

[[noreturn]] void refuse(const parameter_spec& spec) {
  throw not_implemented_error(fmt::format("option {} ({}) is not implemented in cbgpu", spec.flags, spec.key));
}

}  // namespace

std::vector<std::string> apply_overrides(const std::vector<std::string>& overrides, parameter_values& values) {
  std::vector<std::string> unknown;
  for (const std::string& arg : overrides) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw usage_error(fmt::format("unexpected argument '{}' (overrides are key=value)", arg));
    }
    const std::string key = canonical_key(arg.substr(0, eq));
    const std::string value = arg.substr(eq + 1);
    const parameter_spec* spec = find_parameter(key);
    if (spec == nullptr) {
      unknown.push_back(key);
    } else if (spec->kind == value_kind::not_implemented) {
      refuse(*spec);
    } else if (spec->check != nullptr) {
      if (const std::string problem = spec->check(value); !problem.empty()) {
        throw usage_error(fmt::format("{}={}: {}", key, value, problem));
      }
    }
    values[key] = value;
  }
  return unknown;
}

void refuse_not_implemented(const parameter_values& values) {
  for (const auto& [key, value] : values) {
    const parameter_spec* spec = find_parameter(key);
    if (spec != nullptr && spec->kind == value_kind::not_implemented) refuse(*spec);
  }
}

nlohmann::json parameter_value(const std::string& key, const std::string& text) {
  const parameter_spec* spec = find_parameter(key);
  const auto as_number = [&]() -> nlohmann::json {
    int64_t i = 0;
    if (parse_whole(text, i)) return i;
    double d = 0;
    if (parse_whole(text, d)) return d;
    return text;
  };
  const auto as_bool = [&]() -> nlohmann::json {
    if (text == "true" || text == "True") return true;
    if (text == "false" || text == "False") return false;
    return nlohmann::json();
  };
  const value_kind kind = spec != nullptr ? spec->kind : value_kind::integer_or_boolean;
  switch (kind) {
    case value_kind::integer:
    case value_kind::number:
      return as_number();
    case value_kind::boolean: {
      const nlohmann::json b = as_bool();
      return b.is_null() ? as_number() : b;
    }
    case value_kind::integer_or_boolean: {
      const nlohmann::json b = as_bool();
      return b.is_null() ? as_number() : b;
    }
    case value_kind::list:
    case value_kind::feature_list: {
      nlohmann::json items = nlohmann::json::array();
      for (std::string_view item : split(text, kind == value_kind::list ? ',' : ';')) {
        items.push_back(std::string(trim(item)));
      }
      return items;
    }
    case value_kind::text:
    case value_kind::not_implemented:
      break;
  }
  return text;
}

}  // namespace cbgpu_bench
