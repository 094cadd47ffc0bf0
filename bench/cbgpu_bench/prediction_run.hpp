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
  std::vector<double> raw;  // RawFormulaVal, one per row (the model has one dimension)
};

// Predicts RawFormulaVal for the `rows` rows of `pool` twice, timing each call to its end.
// Throws library_error.
prediction_run predict_raw(cbg_context_t* ctx, const cbg_model_t* model, const cbg_pool_t* pool, int64_t rows);

struct metric_value {
  std::string name;
  double value = 0;
};

// The training loss's metric of raw predictions against 0/1 labels: Logloss (and Accuracy) for
// Logloss and CrossEntropy, RMSE for any other loss (raw values are then the predictions).
std::vector<metric_value> binary_label_metrics(const std::string& loss_function, const std::vector<double>& raw,
                                               const std::vector<float>& label);

}  // namespace cbgpu_bench
