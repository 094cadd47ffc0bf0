// SPDX-License-Identifier: Apache-2.0
#include "cbg/train/metric_names.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg::train {

namespace {

struct metric_name_entry {
  const char* name;
  metric_kind kind;
};
constexpr metric_name_entry metric_names[] = {
    {"RMSE", metric_kind::rmse},
    {"Logloss", metric_kind::logloss},
    {"CrossEntropy", metric_kind::cross_entropy},
    {"MultiClass", metric_kind::multiclass},
    {"MultiClassOneVsAll", metric_kind::multiclass_one_vs_all},
    {"MAE", metric_kind::mae},
    {"Quantile", metric_kind::quantile},
    {"Poisson", metric_kind::poisson},
    {"Tweedie", metric_kind::tweedie},
    {"RMSEWithUncertainty", metric_kind::rmse_with_uncertainty},
    {"AUC", metric_kind::auc},
    {"Accuracy", metric_kind::accuracy},
    {"Precision", metric_kind::precision},
    {"Recall", metric_kind::recall},
    {"F1", metric_kind::f1},
    {"R2", metric_kind::r2},
    {"BrierScore", metric_kind::brier_score},
    {"LogLikelihoodOfPrediction", metric_kind::log_likelihood_of_prediction},
    {"TotalF1", metric_kind::total_f1},
    {"MCC", metric_kind::mcc},
    {"BalancedAccuracy", metric_kind::balanced_accuracy},
    {"Kappa", metric_kind::kappa},
    {"WKappa", metric_kind::wkappa},
    {"PRAUC", metric_kind::prauc},
    {"NormalizedGini", metric_kind::normalized_gini},
};

// CatBoost's metric names (ELossFunction) that cbgpu lacks, and those of them CatBoost takes as a loss.
constexpr std::string_view unimplemented_losses[] = {"Cox",
                                                     "Expectile",
                                                     "Focal",
                                                     "GroupQuantile",
                                                     "Huber",
                                                     "LambdaMart",
                                                     "LogCosh",
                                                     "LogLinQuantile",
                                                     "Lq",
                                                     "MAPE",
                                                     "MultiCrossEntropy",
                                                     "MultiLogloss",
                                                     "MultiQuantile",
                                                     "MultiRMSE",
                                                     "MultiRMSEWithMissingValues",
                                                     "PairLogit",
                                                     "PairLogitPairwise",
                                                     "QueryCrossEntropy",
                                                     "QueryRMSE",
                                                     "QuerySoftMax",
                                                     "StochasticFilter",
                                                     "StochasticRank",
                                                     "SurvivalAft",
                                                     "YetiRank",
                                                     "YetiRankPairwise"};
constexpr std::string_view unimplemented_metrics[] = {"AUCMulticlass",
                                                      "AverageGain",
                                                      "BalancedErrorRate",
                                                      "Combination",
                                                      "CtrFactor",
                                                      "DCG",
                                                      "ERR",
                                                      "F",
                                                      "FairLoss",
                                                      "FilteredDCG",
                                                      "HammingLoss",
                                                      "HingeLoss",
                                                      "MAP",
                                                      "MRR",
                                                      "MSLE",
                                                      "MedianAbsoluteError",
                                                      "NDCG",
                                                      "NormalizedGiniMulticlass",
                                                      "NumErrors",
                                                      "PFound",
                                                      "PRAUCMulticlass",
                                                      "PairAccuracy",
                                                      "PrecisionAt",
                                                      "QueryAUC",
                                                      "QueryAUCMulticlass",
                                                      "QueryAverage",
                                                      "RMSPE",
                                                      "RecallAt",
                                                      "SMAPE",
                                                      "ZeroOneLoss"};

template <std::size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

[[noreturn]] void invalid(const std::string& what, const std::string& message) {
  CBG_FAIL(status::invalid_argument, fmt::format("parameter '{}': {}", what, message));
}

}  // namespace

std::optional<metric_kind> metric_kind_of(std::string_view name) {
  const auto* e = std::find_if(std::begin(metric_names), std::end(metric_names),
                               [name](const metric_name_entry& x) { return name == x.name; });
  if (e == std::end(metric_names)) return std::nullopt;
  return e->kind;
}

const char* metric_kind_name(metric_kind k) noexcept {
  for (const auto& e : metric_names) {
    if (e.kind == k) return e.name;
  }
  return "?";
}

bool is_unimplemented_catboost_metric(std::string_view name) noexcept {
  return listed(unimplemented_losses, name) || listed(unimplemented_metrics, name);
}

bool is_unimplemented_catboost_loss(std::string_view name) noexcept { return listed(unimplemented_losses, name); }

std::string supported_metric_names() {
  std::string list;
  for (const auto& x : metric_names) list += list.empty() ? x.name : fmt::format(", {}", x.name);
  return list;
}

bool default_use_weights(metric_kind k) noexcept { return k != metric_kind::auc; }

bool default_skip_train(metric_kind k) noexcept { return k == metric_kind::auc || k == metric_kind::normalized_gini; }

bool apply_metric_parameter(metric_spec& spec, std::optional<bool>& skip_train, const std::string& key,
                            const std::string& value, const std::string& what, const std::string& text) {
  if (key == "use_weights") {
    if (value != "true" && value != "false") invalid(what, fmt::format("'{}': use_weights is true or false", text));
    spec.use_weights = value == "true";
    return true;
  }
  if (key == "hints") {
    // CatBoost's hints: '|'-separated name~value pairs; skip_train is the one a metric takes.
    std::size_t start = 0;
    while (start <= value.size()) {
      const std::size_t end = std::min(value.find('|', start), value.size());
      const std::string hint = value.substr(start, end - start);
      if (hint == "skip_train~true" || hint == "skip_train~false") {
        skip_train = hint == "skip_train~true";
      } else {
        invalid(what, fmt::format("'{}': unknown hint '{}' (skip_train~true or skip_train~false)", text, hint));
      }
      start = end + 1;
    }
    return true;
  }
  if (key == "average" && spec.kind == metric_kind::total_f1) {
    if (value == "Weighted") {
      spec.average = metric_average::weighted;
    } else if (value == "Macro") {
      spec.average = metric_average::macro;
    } else if (value == "Micro") {
      spec.average = metric_average::micro;
    } else {
      invalid(what, fmt::format("'{}': average is Weighted, Macro or Micro", text));
    }
    return true;
  }
  if (key == "type" && spec.kind == metric_kind::auc) {
    if (value == "Classic") {
      spec.auc = auc_type::classic;
    } else if (value == "Mu") {
      spec.auc = auc_type::mu;
    } else if (value == "OneVsAll") {
      CBG_FAIL(
          status::not_implemented,
          fmt::format("parameter '{}': '{}': AUC type OneVsAll is not implemented (Classic and Mu are)", what, text));
    } else {
      invalid(what, fmt::format("'{}': AUC type is Classic, Mu or OneVsAll", text));
    }
    return true;
  }
  return false;
}

}  // namespace cbg::train
