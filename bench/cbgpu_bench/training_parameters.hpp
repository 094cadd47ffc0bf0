// SPDX-License-Identifier: Apache-2.0
// The training parameters `fit` accepts, as CatBoost flags and as trailing key=value overrides.
// Values are checked here; using them is the trainer's job (issue #7).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cbgpu_bench {

struct parameter_spec {
  const char* key;    // key=value name, CatBoost's parameter name ("learning_rate")
  const char* flags;  // CLI11 names ("-w,--learning-rate")
  const char* help;
  const char* type_name;  // shown by --help: NAME, INT, FLOAT, ...
  // Returns "" for a valid value, else what is wrong with it.
  std::string (*check)(const std::string& value);
};

const std::vector<parameter_spec>& training_parameters();

// Parameter values by key, as given on the command line.
using parameter_values = std::map<std::string, std::string>;

// Applies trailing `key=value` arguments (key spelled with '_' or '-') over `values`. Known keys
// are checked; unknown keys are kept and returned, for the trainer to judge. Throws usage_error
// for an argument without '=' or with an invalid value.
std::vector<std::string> apply_overrides(const std::vector<std::string>& overrides,
                                         parameter_values& values);

}  // namespace cbgpu_bench
