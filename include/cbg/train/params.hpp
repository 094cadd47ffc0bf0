// SPDX-License-Identifier: Apache-2.0
// Training parameters: CatBoost's names (and its common aliases), its GPU defaults, validation, the
// data-dependent defaults (learning rate rule, leaf estimation, boost_from_average, use_best_model;
// catboost-training.md §3.6-§3.9, §4) and the CatBoost-like "params" JSON stored in the model.
//
// parse_params() reads a JSON object (the C ABI's params_json); every key must be a parameter of
// cbg/train/param_table.hpp and every value valid, else cbg::error(invalid_argument) names the parameter. Values may be
// JSON numbers/booleans or the same as strings ("6", "true"), as command lines give them. Recognised but unimplemented
// choices (e.g. boosting_type Ordered) fail with not_implemented, naming the parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cbg/ctr/options.hpp"
#include "cbg/quantize/quantize_math.hpp"
#include "cbg/train/loss.hpp"
#include "cbg/train/metric.hpp"
#include "cbg/train/tree_search.hpp"

namespace cbg::train {

enum class bootstrap_kind : std::uint8_t { bayesian, bernoulli, mvs, no, poisson };
enum class leaf_method : std::uint8_t { newton, gradient, exact };  // exact: MAE/Quantile only
enum class backtracking_kind : std::uint8_t { no, any_improvement, armijo };
enum class od_kind : std::uint8_t { none, iter, inc_to_dec };

struct named_metric {
  metric_spec spec;
  std::string name;                // CatBoost's text, e.g. "Quantile:alpha=0.3"
  std::optional<bool> skip_train;  // hints=skip_train~...; unset: the metric's default
};

// The most classes classes_count and class_names take (the trainer's MultiClass label limit).
inline constexpr std::int64_t max_classes = 1000000;

// One entry of per_float_feature_quantization (CatBoost's "FeatureId:border_count=N,nan_mode=M,
// border_type=T"): the feature by flat index, or by name when `name` is set; unset settings keep the
// common ones.
struct float_quantization {
  std::int64_t feature = -1;
  std::string name;
  std::optional<int> border_count;
  std::optional<quantize::nan_mode> nan_mode;
  std::optional<quantize::border_type> border_type;
};

// The parameters of one training, typed; each is described (name, aliases, bounds, default, doc) in
// cbg/train/param_table.hpp, which parse_params() follows.
struct train_params {
  // loss
  loss_spec loss;  // dims resolved with the data
  std::string loss_name = "RMSE";
  std::optional<double> target_border;
  // boosting
  int iterations = 1000;
  std::optional<double> learning_rate;
  std::optional<bool> boost_from_average;
  int permutation_count = 1;  // the permutations of the ordered CTRs (has_time: 1)
  // trees
  int depth = 6;
  std::optional<double> l2_leaf_reg;
  double random_strength = 1.0;
  double model_size_reg = 0.5;
  score_function score = score_function::cosine;
  bool newton_score = false;  // NewtonCosine / NewtonL2: weights are the second derivatives
  // bootstrap
  bootstrap_kind bootstrap = bootstrap_kind::bayesian;
  double bagging_temperature = 1.0;
  std::optional<double> subsample;
  std::optional<double> mvs_reg;  // MVS: candidates sqrt(der^2 + mvs_reg); unset: (mean |der|)^2
  std::uint64_t random_seed = 0;
  // quantization
  int border_count = quantize::default_border_count;
  quantize::nan_mode nan_mode = quantize::nan_mode::min;
  quantize::border_type border_type = quantize::border_type::greedy_log_sum;
  std::vector<float_quantization> per_float_quantization;  // per_float_feature_quantization
  // leaves
  std::optional<leaf_method> method;
  std::optional<int> leaf_iterations;
  backtracking_kind backtracking = backtracking_kind::any_improvement;
  // evaluation and control
  std::optional<named_metric> eval_metric;
  std::vector<named_metric> custom_metrics;
  std::optional<bool> use_best_model;
  od_kind od_type = od_kind::none;
  int od_wait = 20;
  double od_pval = 0.0;
  std::optional<int> early_stopping_rounds;  // od_type Iter with this od_wait
  int metric_period = 1;
  bool verbose = true;    // progress lines (through the log callback, level info)
  std::string train_dir;  // empty: no training logs
  bool allow_writing_files = true;
  // recorded only
  std::string task_type = "GPU";
  std::string devices;
  int thread_count = -1;
  std::string name = "experiment";
  // categorical features (one-hot and CTRs; cbg/ctr/options.hpp)
  ctr::options ctr;
  // class_names: the label value of each class (a label equal to class_values[k] is class k). When a
  // name is not a number, labels are the class indices themselves and class_values is 0, 1, ...
  std::vector<double> class_values;
  // class_names given as JSON strings (CatBoost's class_label_type String): the names to store.
  std::vector<std::string> class_name_texts;
  std::optional<int> classes_count;

  std::set<std::string> given;   // canonical names of the parameters the caller set
  std::string flat_json = "{}";  // what the caller set, by canonical name (CatBoost's flat_params)
};

// Parses a JSON object (text; empty or "{}" = all defaults). Throws cbg::error naming the parameter.
train_params parse_params(const std::string& json_text);

// Facts about the data that decide the data-dependent defaults.
struct data_facts {
  std::int64_t rows = 0;
  std::int64_t features = 0;
  int classes = 0;        // classification: number of classes (>= 2)
  bool has_eval = false;  // an eval set is given
  bool eval_target_constant = true;
  bool has_baseline = false;
};

// The parameters after every data-dependent default is fixed.
struct resolved_params {
  train_params p;
  loss_spec loss;
  double learning_rate = 0.03;
  double l2_leaf_reg = 3.0;
  bool boost_from_average = false;
  leaf_method method = leaf_method::newton;
  int leaf_iterations = 1;
  double subsample = 0.66;
  bool use_best_model = false;
  named_metric objective;  // the loss as a metric
  named_metric eval_metric;
};

// Applies CatBoost's data-dependent defaults. Throws cbg::error for combinations that need the data
// to be judged (e.g. boost_from_average for a loss that has no optimal constant).
resolved_params resolve_params(const train_params& p, const data_facts& facts);

// CatBoost's GPU automatic learning rate (§3.8), or nullopt where it does not apply.
std::optional<double> automatic_learning_rate(loss_kind loss, std::int64_t rows, int iterations, bool use_best_model,
                                              bool boost_from_average);

// Parses a metric description ("RMSE", "Quantile:alpha=0.3", ...); `what` names the parameter.
named_metric parse_metric(const std::string& text, const std::string& what);
// The metric of a loss (the objective metric).
named_metric loss_metric(const train_params& p);

// The effective parameters as CatBoost lays them out in a model's "params" info (JSON text).
std::string catboost_params_json(const resolved_params& r, const std::vector<std::string>& class_names);
// The output options (use_best_model, metric_period, train_dir, ...) as CatBoost keeps them apart
// from the parameters, in a model's "output_options" info; its get_all_params() reads both.
std::string catboost_output_options_json(const resolved_params& r);

// CatBoost's name of each choice.
const char* loss_name(loss_kind k) noexcept;
const char* bootstrap_name(bootstrap_kind k) noexcept;

}  // namespace cbg::train
