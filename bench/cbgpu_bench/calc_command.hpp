// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench calc`: CatBoost's `catboost calc` flags. Model files are issue #3 and the GPU
// evaluator issue #6, so today it checks its flags and exits with code 3.
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
};

CLI::App* add_calc_command(CLI::App& app, calc_options& options);

// Throws not_implemented_error (exit code 3) until model files exist.
int run_calc(const calc_options& options);

}  // namespace cbgpu_bench
