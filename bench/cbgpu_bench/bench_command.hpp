// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench bench`: the end-to-end benchmark on a synthetic Higgs-like dataset: data generation,
// device upload, pool construction, training (ms per iteration, peak device memory), the model
// file, prediction (GPU evaluator: time, the learn metric checked against training's, the metric on
// held-out rows).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cbgpu_bench {

struct bench_options {
  int64_t rows = 100000;
  int64_t features = 28;
  int64_t eval_rows = -1;  // held-out rows (the generator with seed + 1); -1: rows / 4, 0: none
  uint64_t seed = 0;
  std::string layout = "column";  // "column" or "row" major feature matrix
  std::string device = "auto";    // "auto", "cpu", or a CUDA ordinal
  std::string json_path;          // empty: no JSON record
  bool verbose = false;           // library debug logs to stderr
  // Training (CatBoost's names; Higgs-shape defaults of the benchmark).
  int64_t iterations = 100;
  int64_t depth = 6;
  double learning_rate = 0.1;
  int64_t border_count = 128;
  std::string loss_function = "Logloss";
  std::string model_file;  // empty: the model is not written
  // The categorical workload (categorical_data.hpp): categorical columns beside the numeric ones.
  int64_t cat_features = 0;
  int64_t cat_max_cardinality = 1000000;
  int64_t max_ctr_complexity = 0;  // 0: the library's default
  int64_t permutation_count = 0;   // 0: the library's default
  std::string devices;             // the training parameter `devices` (empty: not set, one GPU)
  std::string input = "auto";      // where the pool's columns are: auto (the device on a GPU), host
  int64_t warmup = 20;             // iterations left out of the mean time per iteration
  bool profile = false;            // the library's stage times (of the iterations after the warm-up)
};

CLI::App* add_bench_command(CLI::App& app, bench_options& options);

// Returns the process exit code; throws the exceptions of errors.hpp.
int run_bench(const bench_options& options, const std::vector<std::string>& command_line);

}  // namespace cbgpu_bench
