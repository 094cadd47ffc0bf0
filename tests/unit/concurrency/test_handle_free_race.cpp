// SPDX-License-Identifier: Apache-2.0
// Freeing a handle while other threads are inside calls that use it: the calls in flight finish with
// the right answer, every call that starts after the free returns CBG_ERR_INVALID_HANDLE, and nothing
// crashes (the registry counts the calls holding each handle). The host case runs under
// ThreadSanitizer (tsan preset); the [gpu] case does the same on a GPU context.
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbg/tensor/dlpack.hpp"
#include "cbgpu/cbgpu.h"
#include "support/catch.hpp"
#include "support/host_tensor.hpp"

namespace {

constexpr std::int64_t rows = 400;
constexpr std::int64_t features = 4;

using cbg::test::host_tensor;

// Features and label where the context's evaluator reads them: host memory for a CPU context,
// CUDA managed memory for a GPU one (the GPU evaluator does not read pageable host memory).
struct data {
  float* x = nullptr;
  float* y = nullptr;
  DLDevice where{kDLCPU, 0};
  std::vector<float> host;
  explicit data(std::int32_t device) : host(static_cast<std::size_t>(rows * (features + 1))) {
    x = host.data();
    y = host.data() + rows * features;
    if (device >= 0) {
      void* managed = nullptr;
      REQUIRE(cudaMallocManaged(&managed, host.size() * sizeof(float)) == cudaSuccess);
      x = static_cast<float*>(managed);
      y = x + rows * features;
      where = {kDLCUDAManaged, device};
    }
    for (std::int64_t i = 0; i < rows * features; ++i) x[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f;
    for (std::int64_t r = 0; r < rows; ++r) y[r] = x[r * features] * 3.0f - x[r * features + 1];
  }
  ~data() {
    if (where.device_type == kDLCUDAManaged) (void)cudaFree(x);
  }
  data(const data&) = delete;
  data& operator=(const data&) = delete;
};

cbg_pool_t* make_pool(cbg_context_t* ctx, const data& d) {
  host_tensor xt(d.x, kDLFloat, 32, rows, features);
  host_tensor yt(d.y, kDLFloat, 32, rows, 0);
  xt.t.device = d.where;
  yt.t.device = d.where;
  cbg_pool_desc_t pd;
  cbg_pool_desc_init(&pd);
  pd.features = xt.ref();
  pd.label = yt.ref();
  cbg_pool_t* pool = nullptr;
  return cbg_pool_from_dlpack(ctx, &pd, &pool) == CBG_OK ? pool : nullptr;
}

// The status of one prediction; `out` holds its values when CBG_OK.
cbg_status predict(const cbg_model_t* model, const cbg_pool_t* pool, std::vector<double>& out) {
  out.assign(static_cast<std::size_t>(rows), -1.0);
  host_tensor ot(out.data(), kDLFloat, 64, rows, 0);
  const cbg_tensor_ref_t ref = ot.ref();
  return cbg_predict_to_host(model, pool, nullptr, &ref, nullptr);
}

// `rounds` times: a model and a pool, 8 threads predicting with them, and one more thread freeing
// the model (even rounds) or the pool (odd rounds) while they do. Counts what went wrong.
void free_while_predicting(std::int32_t device, int rounds) {
  const data d(device);
  cbg_context_desc_t cd;
  REQUIRE(cbg_context_desc_init(&cd) == CBG_OK);
  cd.device = device;
  cbg_context_t* ctx = nullptr;
  REQUIRE(cbg_context_create(&cd, &ctx) == CBG_OK);
  cbg_pool_t* train_pool = make_pool(ctx, d);
  REQUIRE(train_pool != nullptr);
  cbg_model_t* trained = nullptr;
  REQUIRE(cbg_train(train_pool, R"({"iterations": 10, "depth": 4, "loss_function": "RMSE"})", nullptr, nullptr,
                    &trained) == CBG_OK);
  std::vector<double> expected;
  REQUIRE(predict(trained, train_pool, expected) == CBG_OK);
  const void* bytes = nullptr;
  std::size_t size = 0;
  REQUIRE(cbg_model_save_buffer(trained, CBG_MODEL_FORMAT_CBM, &bytes, &size) == CBG_OK);
  const std::vector<std::uint8_t> cbm(static_cast<const std::uint8_t*>(bytes),
                                      static_cast<const std::uint8_t*>(bytes) + size);
  REQUIRE(cbg_model_free(trained) == CBG_OK);
  REQUIRE(cbg_pool_free(train_pool) == CBG_OK);

  constexpr int predictors = 8;
  std::atomic<int> wrong_values{0}, wrong_status{0}, late_success{0}, refused{0}, succeeded{0};
  for (int round = 0; round < rounds; ++round) {
    cbg_model_t* model = nullptr;
    REQUIRE(cbg_model_load_buffer(cbm.data(), cbm.size(), CBG_MODEL_FORMAT_CBM, &model) == CBG_OK);
    cbg_pool_t* pool = make_pool(ctx, d);
    REQUIRE(pool != nullptr);
    const bool free_model = round % 2 == 0;
    std::atomic<bool> freed{false};
    std::atomic<int> done_this_round{0};
    std::barrier start(predictors + 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < predictors; ++t) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        std::vector<double> out;
        for (int i = 0; i < 64; ++i) {
          const bool after_free = freed.load();
          const cbg_status s = predict(model, pool, out);
          if (s == CBG_OK) {
            ++succeeded;
            ++done_this_round;
            if (out != expected) ++wrong_values;
            if (after_free) ++late_success;  // started after the free returned: must be refused
          } else if (s == CBG_ERR_INVALID_HANDLE) {
            ++refused;
          } else {
            ++wrong_status;
          }
        }
      });
    }
    start.arrive_and_wait();
    // Free once the threads are well under way, so that calls are in flight when it lands.
    while (done_this_round.load() < 2 * predictors) std::this_thread::yield();
    if ((free_model ? cbg_model_free(model) : cbg_pool_free(pool)) != CBG_OK) ++wrong_status;
    freed = true;
    for (std::thread& t : threads) t.join();
    // A second free of the same handle is refused, never a double delete.
    if ((free_model ? cbg_model_free(model) : cbg_pool_free(pool)) != CBG_ERR_INVALID_HANDLE) ++wrong_status;
    if (free_model) {
      CHECK(cbg_pool_free(pool) == CBG_OK);
    } else {
      CHECK(cbg_model_free(model) == CBG_OK);
    }
  }
  CHECK(cbg_context_free(ctx) == CBG_OK);
  INFO("predictions: " << succeeded << " finished, " << refused << " refused");
  CHECK(wrong_values == 0);
  CHECK(wrong_status == 0);
  CHECK(late_success == 0);
  CHECK(refused > 0);  // the frees did land while the threads were calling
  CHECK(succeeded > 0);
}

}  // namespace

TEST_CASE("C ABI threads: a model or pool freed while 8 threads predict with it", "[concurrency]") {
  free_while_predicting(CBG_DEVICE_CPU, 24);
}

TEST_CASE("C ABI threads: a model or pool freed while 8 threads predict with it, GPU context", "[gpu][concurrency]") {
  CBG_REQUIRE_GPU();
  free_while_predicting(0, 24);
}
