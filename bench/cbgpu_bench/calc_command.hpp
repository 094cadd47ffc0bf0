// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench calc`: CatBoost's `catboost calc`. Reads a model file and a DSV file, evaluates the
// model with the GPU evaluator (cbg_predict_to_device, results copied back with cbg_tensor_copy)
// when a GPU is visible, else with the host evaluator (cbg_model_predict_host), and writes the
// predictions as a TSV.
#pragma once

#include <cstdint>
#include <string>

#include "data_options.hpp"

#include "cbgpu/cbgpu.h"

namespace CLI {
class App;
}

namespace cbgpu_bench {

struct calc_options {
  std::string model_file = "model.bin";
  std::string input_path;
  data_options data;
  std::string output_path = "output.tsv";
  std::string prediction_type = "RawFormulaVal";
  std::string output_columns;  // CatBoost's --output-columns: prediction types and input columns
  int64_t ntree_start = 0;
  int64_t ntree_end = 0;    // 0: all trees
  int64_t eval_period = 0;  // not implemented: refused when given
  std::string model_format = "CatboostBinary";
  std::string task_type;  // "" (a GPU if visible), CPU or GPU
  std::string devices;
  int thread_count = -1;  // accepted for CatBoost's sake; the evaluators choose their threads
};

CLI::App* add_calc_command(CLI::App& app, calc_options& options);

// Throws usage_error (exit code 2) for bad input, library_error for a model the library refuses.
int run_calc(const calc_options& options);

// What run_calc does after loading the model: applies `model` to options.input_path and writes the
// table (fit's --eval-file uses it too).
void apply_model(const cbg_model_t* model, const calc_options& options);

}  // namespace cbgpu_bench
