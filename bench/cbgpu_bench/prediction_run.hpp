// SPDX-License-Identifier: Apache-2.0
// Predictions of a trained model over a pool, made the way a service makes them: on a GPU context
// cbg_predict_to_device into a device buffer (the first call also uploads the model; a second call
// is timed as the steady state), the values then copied back once; on a CPU context
// cbg_predict_to_host (the host evaluator). The metrics are computed here, on the host, from the raw
// values: they check the evaluator against the trainer and measure the model on held-out rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cbgpu/cbgpu.h"

namespace cbgpu_bench {

struct prediction_run {
  int64_t rows = 0;
  double first_ms = 0;      // the first call (on a GPU: the model's upload included)
  double ms = 0;            // the same call again (steady state)
  int64_t columns = 1;      // the model's dimensions
  std::vector<double> raw;  // RawFormulaVal, [rows, columns] row-major
};

// Predicts RawFormulaVal for the `rows` rows of `pool` twice, timing each call to its end.
// Throws library_error.
prediction_run predict_raw(cbg_context_t* ctx, const cbg_model_t* model, const cbg_pool_t* pool, int64_t rows);

struct metric_value {
  std::string name;
  double value = 0;
};

// Metrics of raw predictions against the class labels (0/1 here): Logloss and Accuracy for Logloss and
// CrossEntropy, MultiClass and Accuracy for a model of several dimensions (softmax), RMSE of the raw
// values otherwise. The first is the one to compare with training's metric when the names agree.
std::vector<metric_value> label_metrics(const std::string& loss_function, const prediction_run& run,
                                        const std::vector<float>& label);

}  // namespace cbgpu_bench
