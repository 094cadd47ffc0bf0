// SPDX-License-Identifier: Apache-2.0
#include "class_labels.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "errors.hpp"

namespace cbgpu_bench {

namespace {

std::optional<double> number_of(const std::string& s) {
  double d = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(d)) return std::nullopt;
  return d;
}

bool all_numbers(const std::vector<std::string>& names) {
  return std::all_of(names.begin(), names.end(), [](const std::string& n) { return number_of(n).has_value(); });
}

std::string loss_name(const nlohmann::json& params) {
  const auto it = params.find("loss_function");
  const std::string loss = it != params.end() && it->is_string() ? it->get<std::string>() : "RMSE";
  return loss.substr(0, loss.find(':'));
}

}  // namespace

std::optional<std::vector<std::string>> class_names_for(const nlohmann::json& params, const loaded_dataset& learn) {
  const std::string loss = loss_name(params);
  const bool classifier = loss == "Logloss" || loss == "MultiClass" || loss == "MultiClassOneVsAll";
  if (const auto given = params.find("class_names"); given != params.end() && given->is_array()) {
    std::vector<std::string> names;
    for (const auto& n : *given) names.push_back(n.is_string() ? n.get<std::string>() : n.dump());
    return names;
  }
  if (!classifier || params.contains("classes_count") || params.contains("target_border") || learn.label_dims != 1) {
    return std::nullopt;
  }
  std::vector<std::string> names(learn.label_text.begin(), learn.label_text.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (learn.label_numeric) {
    std::stable_sort(names.begin(), names.end(),
                     [](const std::string& a, const std::string& b) { return *number_of(a) < *number_of(b); });
  }
  if (loss == "Logloss" && names.size() != 2) {
    // Numeric labels other than two classes (probabilities, for instance) are the trainer's to judge.
    if (learn.label_numeric) return std::nullopt;
    throw usage_error(
        fmt::format("{}: Logloss takes two classes, the labels name {} (give --class-names, or use "
                    "MultiClass)",
                    learn.path, names.size()));
  }
  return names;
}

void apply_class_names(loaded_dataset& data, const std::vector<std::string>& names) {
  if (data.label_dims != 1) return;
  if (all_numbers(names) && data.label_numeric) return;
  std::unordered_map<std::string, float> index;
  for (std::size_t k = 0; k < names.size(); ++k) index.emplace(names[k], static_cast<float>(k));
  for (std::size_t r = 0; r < data.label_text.size(); ++r) {
    const auto it = index.find(data.label_text[r]);
    if (it == index.end()) {
      throw usage_error(
          fmt::format("{}: the label '{}' of row {} is not one of the class names", data.path, data.label_text[r], r));
    }
    data.label[r] = it->second;
  }
  data.label_numeric = true;
}

void require_numeric_labels(const loaded_dataset& data) {
  if (data.label_numeric) return;
  for (std::size_t r = 0; r < data.label_text.size(); ++r) {
    if (!number_of(data.label_text[r])) {
      throw usage_error(
          fmt::format("{}: the label '{}' of row {} is not a number (a classifier's loss "
                      "function, or --class-names, makes labels classes)",
                      data.path, data.label_text[r], r / static_cast<std::size_t>(data.label_dims)));
    }
  }
}

}  // namespace cbgpu_bench
