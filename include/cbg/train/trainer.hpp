// SPDX-License-Identifier: Apache-2.0
// The trainer: CatBoost-compatible gradient boosting of oblivious trees on a pool, on the pool's
// context (the GPU, or the host reference on a CPU context), into a cbg::model::model that CatBoost
// loads. The boosting loop is written once (src/train/trainer.cpp) over the data passes of
// boosting.hpp; the same data, parameters and seed give the same model on the host and the GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/model/model.hpp"
#include "cbg/train/params.hpp"

namespace cbg::train {

// What the per-iteration callback sees.
struct progress {
  int iteration = 0;   // 0-based, the one just finished
  int iterations = 0;  // planned
  std::string metric;  // the eval metric's name (CatBoost's text)
  bool has_learn = false;
  double learn = 0;  // the eval metric on the learn set (every metric_period iterations)
  bool has_eval = false;
  double eval = 0;  // the eval metric on the eval set
  double best_eval = 0;
  int best_iteration = -1;
  double elapsed_s = 0;
  double remaining_s = 0;
};

// Return false to stop training after this iteration (the model keeps the trees built so far).
using progress_callback = std::function<bool(const progress&)>;

struct train_options {
  const pool* eval = nullptr;  // optional eval set (same features)
  progress_callback on_iteration;
};

// Trains. Throws cbg::error: invalid_argument (a parameter, naming it), not_implemented,
// bad_data (labels), unsupported, device, cuda, out_of_memory. Categorical features of the pool
// become one-hot and CTR columns (cbg/ctr/features.hpp) before boosting.
// The parameters are typed (parse_params() reads CatBoost's JSON at the C ABI).
model::model train(const pool& learn, const train_params& p, const train_options& options);

}  // namespace cbg::train
