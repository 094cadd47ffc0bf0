// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench calc`: CatBoost's `catboost calc`. Reads a model file and a DSV file, evaluates the
// model on the host reference path (cbg_model_predict_host; the GPU evaluator is issue #6) and
// writes the predictions as a TSV.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace cbgpu_bench {

struct calc_options {
  std::string model_file = "model.bin";
  std::string input_path;
  std::string column_description;
  std::string output_path = "output.tsv";
  std::string prediction_type = "RawFormulaVal";
  std::string delimiter = "\\t";
  bool has_header = false;
  std::string model_format = "CatboostBinary";
};

CLI::App* add_calc_command(CLI::App& app, calc_options& options);

// Throws usage_error (exit code 2) for bad input, library_error for a model the library refuses.
int run_calc(const calc_options& options);

}  // namespace cbgpu_bench
