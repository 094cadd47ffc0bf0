// SPDX-License-Identifier: Apache-2.0
#include "prediction_run.hpp"

#include <cmath>
#include <memory>

#include "cuda_device.hpp"
#include "dlpack.hpp"
#include "library.hpp"
#include "timer.hpp"

namespace cbgpu_bench {

namespace {

dl::DLTensor column(double* data, int64_t* rows, dl::DLDevice device) {
  dl::DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = 1;
  t.dtype = dl::DLDataType{dl::kDLFloat, 64, 1};
  t.shape = rows;
  return t;
}

}  // namespace

prediction_run predict_raw(cbg_context_t* ctx, const cbg_model_t* model, const cbg_pool_t* pool, int64_t rows) {
  prediction_run run;
  run.rows = rows;
  run.raw.assign(static_cast<std::size_t>(rows), 0.0);
  cbg_predict_desc_t desc;
  check(cbg_predict_desc_init(&desc), "cbg_predict_desc_init");
  desc.prediction_type = CBG_PREDICTION_RAW_FORMULA_VAL;
  int64_t shape = rows;
  dl::DLTensor host_out = column(run.raw.data(), &shape, dl::DLDevice{dl::kDLCPU, 0});
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
  const std::shared_ptr<void> memory = device_allocate(static_cast<std::size_t>(rows) * sizeof(double), device);
  dl::DLTensor device_out = column(static_cast<double*>(memory.get()), &shape, dl::DLDevice{dl::kDLCUDA, device});
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

std::vector<metric_value> binary_label_metrics(const std::string& loss_function, const std::vector<double>& raw,
                                               const std::vector<float>& label) {
  const auto n = static_cast<double>(raw.size());
  if (loss_function == "Logloss" || loss_function == "CrossEntropy") {
    double loss = 0, right = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const double f = raw[i], y = label[i];
      loss += std::fmax(f, 0.0) + std::log1p(std::exp(-std::fabs(f))) - y * f;  // -log p(y | f), stable
      right += (f > 0) == (y > 0.5) ? 1 : 0;
    }
    return {{"Logloss", loss / n}, {"Accuracy", right / n}};
  }
  double squares = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) squares += (raw[i] - label[i]) * (raw[i] - label[i]);
  return {{"RMSE", std::sqrt(squares / n)}};
}

}  // namespace cbgpu_bench
