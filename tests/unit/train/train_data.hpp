// SPDX-License-Identifier: Apache-2.0
// A generated float data set for the training tests (tests/unit/train/test_boosting.cpp) and the
// multi-GPU tests (tests/unit/dist/test_dist_gpu.cpp): column-major features, regression / binary /
// multiclass / count targets from a few informative features, NaNs in feature 2, optional random
// weights; and a pool over device copies of it. Each test file keeps its own constants (how often a
// NaN, how much noise), so that the data behind its expected results stays what it was.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"
#include "support/dlpack_fixtures.hpp"

namespace cbg::test {

struct train_data {
  std::int64_t rows = 0;
  int features = 0;
  std::vector<float> x, label, weight;  // x column-major: x[f * rows + r]
};

struct train_data_options {
  std::int64_t nan_every = 7;  // feature 2 is NaN in rows 0, nan_every, 2 * nan_every, ...
  float noise = 0.2f;          // the standard deviation of the noise added to the signal
  bool weights = false;        // random weights in [0.2, 2) (drawn from the same generator), else 1
};

// `features` must be at least 4 (the signal reads features 0, 1 and 3).
inline train_data make_train_data(std::int64_t rows, int features, const std::string& kind, std::uint32_t seed,
                                  const train_data_options& o = {}) {
  train_data d;
  d.rows = rows;
  d.features = features;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> uniform(0.2f, 2.0f);
  d.x.resize(static_cast<std::size_t>(rows * features));
  for (auto& v : d.x) v = normal(rng);
  for (std::int64_t r = 0; r < rows; r += o.nan_every) d.x[static_cast<std::size_t>(2 * rows + r)] = NAN;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto at = [&](int f) { return d.x[static_cast<std::size_t>(f * rows + r)]; };
    const float signal = at(0) + 0.5f * at(1) * at(1) - (at(3) > 0.3f ? 1.0f : 0.0f) + o.noise * normal(rng);
    if (kind == "binary")
      d.label.push_back(signal > 0.3f ? 1.0f : 0.0f);
    else if (kind == "multiclass")
      d.label.push_back(signal < -0.5f ? 0.0f : signal < 0.8f ? 1.0f : 2.0f);
    else if (kind == "count")
      d.label.push_back(std::floor(std::exp(0.5f * signal)));
    else
      d.label.push_back(signal);
    d.weight.push_back(o.weights ? uniform(rng) : 1.0f);
  }
  return d;
}

// A device copy of `host` on the context's stream (waited for).
template <class T>
cbg::device_buffer<T> upload_synced(const std::vector<T>& host, const cbg::context& ctx) {
  cbg::device_buffer<T> b(std::max<std::size_t>(host.size(), 1), ctx.stream(), ctx.resource());
  CBG_CUDA_TRY(cudaMemcpyAsync(b.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, ctx.stream()));
  ctx.sync();
  return b;
}

// A pool over device copies of a train_data (features, label, and the weights where asked); the
// buffers and the tensors the pool borrows live in it.
struct device_train_pool {
  cbg::device_buffer<float> x, label, weight;
  std::unique_ptr<fake_tensor> tx, tl, tw;
  std::unique_ptr<cbg::pool> pool;
};

inline device_train_pool device_pool(const std::shared_ptr<cbg::context>& ctx, const train_data& d,
                                     bool with_weight = false) {
  device_train_pool p;
  const DLDevice cuda{kDLCUDA, ctx->device()};
  p.x = upload_synced(d.x, *ctx);
  p.label = upload_synced(d.label, *ctx);
  p.tx = std::make_unique<fake_tensor>(p.x.data(), dl_float(32), std::vector<std::int64_t>{d.rows, d.features},
                                       std::vector<std::int64_t>{1, d.rows}, cuda);
  p.tl = std::make_unique<fake_tensor>(p.label.data(), dl_float(32), std::vector<std::int64_t>{d.rows},
                                       std::vector<std::int64_t>{}, cuda);
  cbg::pool_inputs in;
  in.features = p.tx->as_borrowed();
  in.label = p.tl->as_borrowed();
  if (with_weight) {
    p.weight = upload_synced(d.weight, *ctx);
    p.tw = std::make_unique<fake_tensor>(p.weight.data(), dl_float(32), std::vector<std::int64_t>{d.rows},
                                         std::vector<std::int64_t>{}, cuda);
    in.weight = p.tw->as_borrowed();
  }
  p.pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
  return p;
}

}  // namespace cbg::test
