// SPDX-License-Identifier: Apache-2.0
// CatBoost's label-to-class rules for labels read from a file. A classifier (Logloss, MultiClass,
// MultiClassOneVsAll) without class_names, classes_count or target_border names its classes after the
// distinct labels of the learn set, sorted as numbers when every label is one, else as text; the model
// stores them as strings (class_label_type String), as CatBoost does. Labels 1..7 are 7 classes "1".."7".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataset.hpp"

namespace cbgpu_bench {

// The class names to train with, or nullopt when the labels go to the trainer as they are (not a
// classifier, or classes_count / target_border given). `params` is the effective parameter object.
// Throws usage_error for labels that cannot be classes (e.g. Logloss with three distinct texts).
std::optional<std::vector<std::string>> class_names_for(const nlohmann::json& params, const loaded_dataset& learn);

// Makes the labels of `data` what the trainer takes with `names`: unchanged when every name is a number
// (the trainer matches label values), else the index of each label's name. Throws usage_error naming the
// row of a label that is not one of the names.
void apply_class_names(loaded_dataset& data, const std::vector<std::string>& names);

// Throws usage_error naming the first label that is not a number (losses that are not classifiers).
void require_numeric_labels(const loaded_dataset& data);

}  // namespace cbgpu_bench
