// SPDX-License-Identifier: Apache-2.0
// cbgpu-ctr-bench (host main; fill.cu makes the data): times the GPU categorical-feature preparation (ctr/features.hpp:
// hashing, perfect hashing, ordered Borders CTRs with 3 priors and FeatureFreq per feature, the CTR tables for the
// model, the derived pool) on int32 categorical columns in device memory, against the floor of its compulsory traffic
// (read each column and the label once, write each derived float column once) at the bandwidth of a device-to-device
// copy measured in the same run. CatBoost computes these CTRs once before boosting (plain boosting, one permutation),
// so the per-iteration figure is the preparation divided by the iteration count.
//   cbgpu-ctr-bench [rows [iterations [train_iterations]]]   (default: 10000000 1000 0; 8 columns,
//   cardinalities 10, 100, 1000, 10^4, 10^5, 3*10^5, 10^6, 30). With train_iterations > 0 it also
//   trains (Logloss, depth 6, CatBoost's GPU default CTRs) and reports the time per iteration.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/trainer.hpp"
#include "bench/common/bench_util.hpp"

void ctr_bench_fill(std::int32_t* x, std::int64_t rows, int c, std::int32_t card, float* label);

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 10000000;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int train_iterations = argc > 3 ? std::atoi(argv[3]) : 0;
  const std::vector<std::int32_t> cards{10, 100, 1000, 10000, 100000, 300000, 1000000, 30};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("cbgpu-ctr-bench: no GPU visible\n");
    return 0;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  cbg::context_options co;
  co.device = 0;
  auto ctx = cbg::context::create(co);
  const int nc = static_cast<int>(cards.size());
  std::int32_t* x = nullptr;
  float* label = nullptr;
  BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&x), sizeof(std::int32_t) * rows * nc));
  BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&label), sizeof(float) * rows));
  for (int c = 0; c < nc; ++c) ctr_bench_fill(x + c * rows, rows, c, cards[static_cast<std::size_t>(c)], label);
  BENCH_CHECK(cudaDeviceSynchronize());

  std::vector<std::int64_t> shape{rows};
  std::vector<DLTensor> ts(static_cast<std::size_t>(nc) + 1);
  for (int c = 0; c <= nc; ++c) {
    DLTensor& t = ts[static_cast<std::size_t>(c)];
    t.data = c < nc ? static_cast<void*>(x + c * rows) : static_cast<void*>(label);
    t.device = {kDLCUDA, 0};
    t.ndim = 1;
    t.dtype = c < nc ? DLDataType{kDLInt, 32, 1} : DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
  }
  cbg::pool_inputs in;
  for (int c = 0; c < nc; ++c) {
    in.columns.push_back({cbg::tensor_ref_kind::dltensor, &ts[static_cast<std::size_t>(c)]});
    in.cat_features.push_back(c);
  }
  in.label = {cbg::tensor_ref_kind::dltensor, &ts[static_cast<std::size_t>(nc)]};
  const cbg::pool p = cbg::pool::build(ctx, std::move(in));

  cbg::ctr::options o;  // CatBoost's GPU defaults: Borders (3 priors) + FeatureFreq
  cbg::train::target_rule rule;
  rule.loss = cbg::train::loss_kind::logloss;
  double best = 1e30;
  std::size_t derived = 0;
  for (int rep = 0; rep < 3; ++rep) {
    BENCH_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    cbg::ctr::prepared_data d = cbg::ctr::prepare_categorical_device(p, nullptr, o, rule, false, 0);
    BENCH_CHECK(cudaStreamSynchronize(ctx->stream()));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    derived = d.derived.size();
  }

  // The floor: read the columns and the label once, write the derived columns once.
  const double bytes = static_cast<double>(rows) * (4.0 * nc + 4.0 + 4.0 * static_cast<double>(derived));
  void* a = nullptr;
  void* b = nullptr;
  const std::size_t copy_bytes = static_cast<std::size_t>(rows) * 4 * 16;
  BENCH_CHECK(cudaMalloc(&a, copy_bytes));
  BENCH_CHECK(cudaMalloc(&b, copy_bytes));
  cudaEvent_t e0, e1;
  BENCH_CHECK(cudaEventCreate(&e0));
  BENCH_CHECK(cudaEventCreate(&e1));
  float copy_ms = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    BENCH_CHECK(cudaEventRecord(e0));
    BENCH_CHECK(cudaMemcpyAsync(b, a, copy_bytes, cudaMemcpyDeviceToDevice));
    BENCH_CHECK(cudaEventRecord(e1));
    BENCH_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    copy_ms = std::min(copy_ms, ms);
  }
  const double bandwidth = 2.0 * static_cast<double>(copy_bytes) / (copy_ms * 1e-3);  // bytes/s read+written
  const double floor_s = bytes / bandwidth;
  double train_s = 0;
  if (train_iterations > 0) {
    const std::string params = "{\"iterations\": " + std::to_string(train_iterations) +
                               ", \"depth\": 6, \"verbose\": false, \"loss_function\": \"Logloss\"}";
    BENCH_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    (void)cbg::train::train(p, cbg::train::parse_params(params), {});
    train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf(
      "{\"device\": \"%s\", \"rows\": %lld, \"cat_columns\": %d, \"derived_columns\": %zu, "
      "\"prepare_ms\": %.3f, \"floor_ms\": %.3f, \"ratio\": %.2f, \"copy_GBps\": %.1f, "
      "\"iterations\": %d, \"per_iteration_ms\": %.4f, \"train_iterations\": %d, "
      "\"train_ms_per_iteration\": %.3f}\n",
      prop.name, static_cast<long long>(rows), nc, derived, best * 1e3, floor_s * 1e3, best / floor_s, bandwidth / 1e9,
      iterations, best * 1e3 / iterations, train_iterations,
      train_iterations > 0 ? train_s * 1e3 / train_iterations : 0.0);
  BENCH_CHECK(cudaFree(a));
  BENCH_CHECK(cudaFree(b));
  BENCH_CHECK(cudaFree(x));
  BENCH_CHECK(cudaFree(label));
  return 0;
}
