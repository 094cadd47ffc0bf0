// SPDX-License-Identifier: Apache-2.0
#include "prediction_run.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "cuda_device.hpp"
#include "dlpack.hpp"
#include "library.hpp"
#include "timer.hpp"

namespace cbgpu_bench {

prediction_run predict_raw(cbg_context_t* ctx, const cbg_model_t* model, const cbg_pool_t* pool, int64_t rows) {
  prediction_run run;
  run.rows = rows;
  check(cbg_model_prediction_columns(model, CBG_PREDICTION_RAW_FORMULA_VAL, &run.columns),
        "cbg_model_prediction_columns");
  const std::size_t values = static_cast<std::size_t>(rows) * static_cast<std::size_t>(run.columns);
  run.raw.assign(values, 0.0);
  cbg_predict_desc_t desc;
  check(cbg_predict_desc_init(&desc), "cbg_predict_desc_init");
  desc.prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
  int64_t shape[2] = {rows, run.columns};
  dl::DLTensor host_out = dl::float64_matrix(run.raw.data(), shape, dl::DLDevice{dl::kDLCPU, 0});
  const cbg_tensor_ref_t host_ref{CBG_TENSOR_DLTENSOR, &host_out};
  const int32_t device = context_device(ctx);
  double* timings[2] = {&run.first_ms, &run.ms};
  if (device < 0) {
    for (double* ms : timings) {
      const stopwatch t;
      check(cbg_predict_to_host(model, pool, &desc, &host_ref, nullptr), "cbg_predict_to_host");
      *ms = t.elapsed_ms();
    }
    return run;
  }
  const std::shared_ptr<void> memory = device_allocate(values * sizeof(double), device);
  dl::DLTensor device_out = dl::float64_matrix(memory.get(), shape, dl::DLDevice{dl::kDLCUDA, device});
  const cbg_tensor_ref_t device_ref{CBG_TENSOR_DLTENSOR, &device_out};
  for (double* ms : timings) {
    const stopwatch t;
    check(cbg_predict_to_device(model, pool, &desc, &device_ref, nullptr), "cbg_predict_to_device");
    check(cbg_context_sync(ctx), "cbg_context_sync");
    *ms = t.elapsed_ms();
  }
  check(cbg_tensor_copy(ctx, &host_ref, &device_ref), "cbg_tensor_copy (predictions to the host)");
  return run;
}

std::vector<metric_value> label_metrics(const std::string& loss_function, const prediction_run& run,
                                        const std::vector<float>& label) {
  const auto n = static_cast<double>(run.rows);
  const auto columns = static_cast<std::size_t>(run.columns);
  double loss = 0, right = 0;
  if (columns > 1) {  // softmax over the dimensions: -log p(class y)
    for (std::size_t i = 0; i < label.size(); ++i) {
      const double* f = run.raw.data() + i * columns;
      const double top = *std::max_element(f, f + columns);
      double sum = 0;
      for (std::size_t k = 0; k < columns; ++k) sum += std::exp(f[k] - top);
      const auto y = static_cast<std::size_t>(label[i]);
      loss += top + std::log(sum) - f[y];
      right += static_cast<std::size_t>(std::max_element(f, f + columns) - f) == y ? 1 : 0;
    }
    return {{"MultiClass", loss / n}, {"Accuracy", right / n}};
  }
  if (loss_function == "Logloss" || loss_function == "CrossEntropy") {
    for (std::size_t i = 0; i < label.size(); ++i) {
      const double f = run.raw[i], y = label[i];
      loss += std::fmax(f, 0.0) + std::log1p(std::exp(-std::fabs(f))) - y * f;  // -log p(y | f), stable
      right += (f > 0) == (y > 0.5) ? 1 : 0;
    }
    return {{"Logloss", loss / n}, {"Accuracy", right / n}};
  }
  for (std::size_t i = 0; i < label.size(); ++i) loss += (run.raw[i] - label[i]) * (run.raw[i] - label[i]);
  return {{"RMSE", std::sqrt(loss / n)}};
}

}  // namespace cbgpu_bench
