// SPDX-License-Identifier: Apache-2.0
// cbgpu-combo-bench (host main; the categorical data from fill.cu): GPU training time per iteration
// with max_ctr_complexity 1 against 2..4 (feature combinations on the GPU, issue 5) on int32
// categorical columns and float columns in device memory (Logloss, depth 6, CatBoost's GPU default
// CTRs, the label from the first categorical column's draw mixed with a float column).
//   cbgpu-combo-bench [rows [iterations [complexity...]]]   (default: 1000000 20 1 4; 8 categorical
//   columns, cardinalities 10 .. 10^5, and 8 float columns)
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/model/model.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "cbg/train/trainer.hpp"
#include "bench/common/bench_util.hpp"

void ctr_bench_fill(std::int32_t* x, std::int64_t rows, int c, std::int32_t card, float* label);

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  std::vector<int> complexities;
  for (int a = 3; a < argc; ++a) complexities.push_back(std::atoi(argv[a]));
  if (complexities.empty()) complexities = {1, 4};
  const std::vector<std::int32_t> cards{10, 30, 100, 300, 1000, 3000, 10000, 100000};
  constexpr int nf = 8;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("cbgpu-combo-bench: no GPU visible\n");
    return 0;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  cbg::context_options co;
  co.device = 0;
  auto ctx = cbg::context::create(co);
  const int nc = static_cast<int>(cards.size());
  std::int32_t* x = nullptr;
  float* f = nullptr;
  float* label = nullptr;
  BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&x), sizeof(std::int32_t) * rows * nc));
  BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&f), sizeof(float) * rows * nf));
  BENCH_CHECK(cudaMalloc(reinterpret_cast<void**>(&label), sizeof(float) * rows));
  for (int c = 0; c < nc; ++c) ctr_bench_fill(x + c * rows, rows, c, cards[static_cast<std::size_t>(c)], label);
  {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    std::vector<float> host(static_cast<std::size_t>(rows * nf));
    for (float& v : host) v = normal(rng);
    std::vector<float> lab(static_cast<std::size_t>(rows));
    BENCH_CHECK(cudaMemcpy(lab.data(), label, sizeof(float) * rows, cudaMemcpyDeviceToHost));
    for (std::int64_t r = 0; r < rows; ++r) {  // some signal from the first float column
      if (host[static_cast<std::size_t>(r)] > 1.0f) lab[static_cast<std::size_t>(r)] = 1.f;
    }
    BENCH_CHECK(cudaMemcpy(f, host.data(), sizeof(float) * rows * nf, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(label, lab.data(), sizeof(float) * rows, cudaMemcpyHostToDevice));
  }
  BENCH_CHECK(cudaDeviceSynchronize());

  std::vector<std::int64_t> shape{rows};
  std::vector<DLTensor> ts(static_cast<std::size_t>(nc + nf) + 1);
  for (int c = 0; c <= nc + nf; ++c) {
    DLTensor& t = ts[static_cast<std::size_t>(c)];
    t.data = c < nf        ? static_cast<void*>(f + c * rows)
             : c < nf + nc ? static_cast<void*>(x + (c - nf) * rows)
                           : static_cast<void*>(label);
    t.device = {kDLCUDA, 0};
    t.ndim = 1;
    t.dtype = c >= nf && c < nf + nc ? DLDataType{kDLInt, 32, 1} : DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
  }
  cbg::pool_inputs in;
  for (int c = 0; c < nc + nf; ++c) {
    in.columns.push_back({cbg::tensor_ref_kind::dltensor, &ts[static_cast<std::size_t>(c)]});
    if (c >= nf) in.cat_features.push_back(c);
  }
  in.label = {cbg::tensor_ref_kind::dltensor, &ts[static_cast<std::size_t>(nc + nf)]};
  const cbg::pool p = cbg::pool::build(ctx, std::move(in));

  for (const int complexity : complexities) {
    const std::string params = "{\"iterations\": " + std::to_string(iterations) +
                               ", \"depth\": 6, \"verbose\": false, \"loss_function\": \"Logloss\", "
                               "\"max_ctr_complexity\": " +
                               std::to_string(complexity) + "}";
    BENCH_CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    const cbg::model::model m = cbg::train::train(p, cbg::train::parse_params(params), {});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t combos = 0;
    for (const auto& cf : m.ctr_features)
      combos += cf.ctr.base.proj.cat_features.size() + cf.ctr.base.proj.float_splits.size() +
                            cf.ctr.base.proj.one_hot_splits.size() >
                        1
                    ? 1
                    : 0;
    std::printf(
        "{\"device\": \"%s\", \"rows\": %lld, \"cat_columns\": %d, \"float_columns\": %d, "
        "\"max_ctr_complexity\": %d, \"iterations\": %d, \"train_ms\": %.1f, \"ms_per_iteration\": %.2f, "
        "\"ctr_features\": %zu, \"combination_features\": %zu}\n",
        prop.name, static_cast<long long>(rows), nc, nf, complexity, iterations, s * 1e3, s * 1e3 / iterations,
        m.ctr_features.size(), combos);
    std::fflush(stdout);
  }
  BENCH_CHECK(cudaFree(x));
  BENCH_CHECK(cudaFree(f));
  BENCH_CHECK(cudaFree(label));
  return 0;
}
