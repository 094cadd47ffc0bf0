// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench fstr`: CatBoost's `catboost fstr`. Reads a model file (and, where the type needs one,
// a DSV file with its .cd), computes the feature importances with cbg_model_feature_importance and
// writes them in CatBoost's output formats:
//   PredictionValuesChange, LossFunctionChange   "<importance>\t<feature>" per feature, by
//                                                descending importance;
//   Interaction                                  "<score>\t<feature>\t<feature>" per pair;
//   ShapValues                                   per row (and per class of a multiclass model) the
//                                                features' values and the expected value, tab-separated.
// A feature is named as the model names it, else by its index.
#pragma once

#include <string>

#include "data_options.hpp"

namespace CLI {
class App;
}

namespace cbgpu_bench {

struct fstr_options {
  std::string model_file = "model.bin";
  std::string model_format = "CatboostBinary";
  std::string input_path;
  data_options data;
  std::string output_path = "feature_strength.tsv";
  std::string fstr_type;
  int thread_count = -1;  // accepted for CatBoost's sake
  int verbose = 0;        // accepted for CatBoost's sake
};

CLI::App* add_fstr_command(CLI::App& app, fstr_options& options);

// Throws usage_error (exit code 2) for bad input, not_implemented_error for the internal types,
// library_error for what the library refuses.
int run_fstr(const fstr_options& options);

}  // namespace cbgpu_bench
