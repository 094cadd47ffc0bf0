// SPDX-License-Identifier: Apache-2.0
// The training parameters `fit` accepts, as CatBoost's command-line flags and as trailing key=value
// overrides, and the JSON value each becomes. Values are checked here where the type is plain; using
// them is the trainer's job. CatBoost flags for options the trainer does not implement are listed too,
// so that --help shows them and using one exits 3 naming it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cbgpu_bench {

// How the text of a value becomes JSON for the trainer.
// list: items separated by ','; feature_list: by ';' (each item may hold commas, as in
// per_float_feature_quantization "0:border_count=8,nan_mode=Max;3:border_type=Median").
enum class value_kind { text, integer, number, boolean, list, feature_list, integer_or_boolean, not_implemented };

struct parameter_spec {
  const char* key;    // key=value name, CatBoost's parameter name ("learning_rate")
  const char* flags;  // CLI11 names ("-w,--learning-rate")
  const char* help;
  const char* type_name;  // shown by --help: NAME, INT, FLOAT, ...
  value_kind kind;
  // Returns "" for a valid value, else what is wrong with it; null: the trainer judges.
  std::string (*check)(const std::string& value) = nullptr;
};

const std::vector<parameter_spec>& training_parameters();

// The spec of `key` (CatBoost's parameter name), or null.
const parameter_spec* find_parameter(const std::string& key);

// Parameter values by key, as given on the command line.
using parameter_values = std::map<std::string, std::string>;

// Applies trailing `key=value` arguments (key spelled with '_' or '-') over `values`. Known keys
// are checked; unknown keys are kept and returned, for the trainer to judge. Throws usage_error
// for an argument without '=' or with an invalid value, not_implemented_error for an option the
// trainer does not implement.
std::vector<std::string> apply_overrides(const std::vector<std::string>& overrides, parameter_values& values);

// Throws not_implemented_error naming the first given parameter the trainer does not implement.
void refuse_not_implemented(const parameter_values& values);

// The JSON value of `text` for parameter `key`: numbers and booleans as JSON numbers and booleans,
// comma-separated lists as arrays ("Borders,Counter"), the rest as strings.
nlohmann::json parameter_value(const std::string& key, const std::string& text);

}  // namespace cbgpu_bench
