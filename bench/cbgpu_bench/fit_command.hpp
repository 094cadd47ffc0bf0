// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench fit`: CatBoost's `catboost fit` flags. Reads the learn (and test) set, builds
// pools through the C ABI (on the GPU: device copies), trains with cbg_train and writes the model
// (.cbm) and CatBoost's training logs (train_dir).
#pragma once

#include <string>
#include <vector>

#include "data_options.hpp"
#include "training_parameters.hpp"

namespace CLI {
class App;
}

namespace cbgpu_bench {

struct fit_options {
  std::string learn_set;
  std::string test_set;
  data_options data;
  std::string model_file = "model.bin";
  std::string model_format = "CatboostBinary";  // comma-separated: CatboostBinary, Json
  std::string params_file;                      // a JSON object of CatBoost parameters
  std::string learning_curve_html;              // --plot-learning-curve
  std::string train_dir = "catboost_info";
  std::string eval_file;                          // the test set's predictions, as calc writes them
  std::string prediction_type = "RawFormulaVal";  // --eval-file's prediction types
  std::string output_columns;                     // --eval-file's columns (calc's --output-columns)
  std::string learn_err_log;                      // copies of the train dir's learn_error.tsv / test_error.tsv
  std::string test_err_log;
  parameter_values parameters;         // training parameters given as flags
  std::vector<std::string> overrides;  // trailing key=value arguments
};

CLI::App* add_fit_command(CLI::App& app, fit_options& options);

// Returns the process exit code; throws the exceptions of errors.hpp.
int run_fit(fit_options options);

}  // namespace cbgpu_bench
