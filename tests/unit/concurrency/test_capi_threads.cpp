// SPDX-License-Identifier: Apache-2.0
// The C ABI from several threads at once, on CPU contexts so that it runs in CI (and under
// ThreadSanitizer: the tsan preset, scripts/test.sh): threads predicting with one model while another
// trains, thread-local error messages, handles created on one thread and freed on another. Every
// result must equal the single-threaded one.
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cbg/tensor/dlpack.hpp"
#include "cbgpu/cbgpu.h"
#include "support/catch.hpp"
#include "support/host_tensor.hpp"

namespace {

constexpr std::int64_t rows = 600;
constexpr std::int64_t features = 5;
constexpr const char* predict_params = R"({"iterations": 12, "depth": 4, "loss_function": "RMSE"})";
constexpr const char* train_params =
    R"({"iterations": 8, "depth": 3, "loss_function": "Logloss", "bootstrap_type": "Bernoulli",
        "subsample": 0.7, "random_seed": 5})";

// A row-major float32 matrix and two labels (regression and 0/1), made once, read by every thread.
struct dataset {
  std::vector<float> x;
  std::vector<float> y_reg;
  std::vector<float> y_bin;
  dataset() : x(static_cast<std::size_t>(rows * features)), y_reg(rows), y_bin(rows) {
    std::uint64_t s = 0x9e3779b97f4a7c15ULL;
    auto next = [&s] {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      return static_cast<float>(s >> 40) / static_cast<float>(1 << 24) - 0.5f;
    };
    for (float& v : x) v = next();
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = &x[static_cast<std::size_t>(r * features)];
      y_reg[static_cast<std::size_t>(r)] = 2.0f * row[0] - row[1] * row[2] + 0.1f * next();
      y_bin[static_cast<std::size_t>(r)] = row[0] + 0.5f * row[3] > 0.0f ? 1.0f : 0.0f;
    }
  }
};

const dataset& data() {
  static const dataset d;
  return d;
}

using cbg::test::host_tensor;

cbg_context_t* cpu_context() {
  cbg_context_desc_t d;
  REQUIRE(cbg_context_desc_init(&d) == CBG_OK);
  d.device = CBG_DEVICE_CPU;
  cbg_context_t* ctx = nullptr;
  REQUIRE(cbg_context_create(&d, &ctx) == CBG_OK);
  return ctx;
}

// Checks outside Catch2's macros: they are not thread-safe under Catch2 2.x. Worker threads count
// what went wrong; the main thread asserts the counts are zero.
cbg_pool_t* make_pool(cbg_context_t* ctx, const std::vector<float>& label) {
  host_tensor xt(data().x.data(), kDLFloat, 32, rows, features);
  host_tensor yt(label.data(), kDLFloat, 32, rows, 0);
  cbg_pool_desc_t pd;
  if (cbg_pool_desc_init(&pd) != CBG_OK) return nullptr;
  pd.features = xt.ref();
  pd.label = yt.ref();
  cbg_pool_t* pool = nullptr;
  if (cbg_pool_from_dlpack(ctx, &pd, &pool) != CBG_OK) return nullptr;
  return pool;
}

std::vector<double> predict(const cbg_model_t* model, const cbg_pool_t* pool) {
  std::vector<double> out(static_cast<std::size_t>(rows), -1.0);
  host_tensor ot(out.data(), kDLFloat, 64, rows, 0);
  const cbg_tensor_ref_t ref = ot.ref();
  if (cbg_predict_to_host(model, pool, nullptr, &ref, nullptr) != CBG_OK) out.clear();
  return out;
}

std::vector<std::uint8_t> cbm_bytes(cbg_model_t* model) {
  const void* bytes = nullptr;
  std::size_t size = 0;
  if (cbg_model_save_buffer(model, CBG_MODEL_FORMAT_CBM, &bytes, &size) != CBG_OK) return {};
  const auto* p = static_cast<const std::uint8_t*>(bytes);
  return {p, p + size};
}

// Trains on a fresh context and pool of the calling thread; returns the .cbm bytes (empty on error).
std::vector<std::uint8_t> train_once() {
  cbg_context_desc_t d;
  cbg_context_desc_init(&d);
  d.device = CBG_DEVICE_CPU;
  cbg_context_t* ctx = nullptr;
  if (cbg_context_create(&d, &ctx) != CBG_OK) return {};
  cbg_pool_t* pool = make_pool(ctx, data().y_bin);
  std::vector<std::uint8_t> bytes;
  cbg_model_t* model = nullptr;
  if (pool != nullptr && cbg_train(pool, train_params, nullptr, nullptr, &model) == CBG_OK) {
    bytes = cbm_bytes(model);
  }
  cbg_model_free(model);
  cbg_pool_free(pool);
  cbg_context_free(ctx);
  return bytes;
}

// A CPU context, a regression pool over the data, a model trained on it and its predictions:
// what the threads share. Freed (and checked) at the end of the test.
struct shared_model {
  cbg_context_t* ctx = nullptr;
  cbg_pool_t* pool = nullptr;
  cbg_model_t* model = nullptr;
  std::vector<double> expected;
  shared_model() {
    ctx = cpu_context();
    pool = make_pool(ctx, data().y_reg);
    REQUIRE(pool != nullptr);
    REQUIRE(cbg_train(pool, predict_params, nullptr, nullptr, &model) == CBG_OK);
    expected = predict(model, pool);
    REQUIRE(expected.size() == static_cast<std::size_t>(rows));
  }
  shared_model(const shared_model&) = delete;
  shared_model& operator=(const shared_model&) = delete;
  ~shared_model() {
    CHECK(cbg_model_free(model) == CBG_OK);
    CHECK(cbg_pool_free(pool) == CBG_OK);
    CHECK(cbg_context_free(ctx) == CBG_OK);
  }
};

}  // namespace

TEST_CASE("C ABI threads: many predict with one model while another trains", "[concurrency]") {
  const shared_model shared;
  const std::vector<std::uint8_t> expected_model = train_once();
  REQUIRE(!expected_model.empty());

  constexpr int predictors = 6;
  constexpr int rounds = 8;
  std::atomic<int> wrong{0};
  std::atomic<bool> training{true};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {  // trains other models, on its own context, meanwhile
    for (int i = 0; i < 2; ++i) {
      if (train_once() != expected_model) ++wrong;
    }
    training = false;
  });
  for (int t = 0; t < predictors; ++t) {
    threads.emplace_back([&] {
      int done = 0;
      while (done < rounds || training) {  // at least `rounds`, and for as long as training goes on
        if (predict(shared.model, shared.pool) != shared.expected) ++wrong;
        ++done;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("C ABI threads: error messages are per thread", "[concurrency]") {
  constexpr int n = 8;
  std::barrier sync(n);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        const int level = 100 + t * 20 + round;  // distinct per thread and round
        cbg_context_desc_t d;
        cbg_context_desc_init(&d);
        d.device = CBG_DEVICE_CPU;
        d.log_level = level;
        cbg_context_t* ctx = nullptr;
        if (cbg_context_create(&d, &ctx) != CBG_ERR_INVALID_ARGUMENT || ctx != nullptr) ++wrong;
        sync.arrive_and_wait();  // every thread has failed with its own message
        const std::string mine = "log_level " + std::to_string(level);
        if (std::string(cbg_last_error()).find(mine) == std::string::npos) ++wrong;
        sync.arrive_and_wait();
        std::int32_t count = -1;
        if (cbg_device_count(&count) != CBG_OK || cbg_last_error()[0] != '\0') ++wrong;  // cleared
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("C ABI threads: handles made on one thread and freed on another", "[concurrency]") {
  // Each thread makes a context, a pool and a model (loaded from the same bytes), hands them to the
  // next thread through a slot, and frees what the previous thread made after predicting with it.
  shared_model shared;
  const std::vector<double>& expected = shared.expected;
  const std::vector<std::uint8_t> bytes = cbm_bytes(shared.model);
  REQUIRE(!bytes.empty());

  struct handles {
    cbg_context_t* ctx = nullptr;
    cbg_pool_t* pool = nullptr;
    cbg_model_t* model = nullptr;
  };
  constexpr int n = 6;
  std::vector<handles> slots(n);
  std::barrier sync(n);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 4; ++round) {
        handles& mine = slots[static_cast<std::size_t>(t)];
        mine.ctx = nullptr;
        cbg_context_desc_t d;
        cbg_context_desc_init(&d);
        d.device = CBG_DEVICE_CPU;
        if (cbg_context_create(&d, &mine.ctx) != CBG_OK) ++wrong;
        mine.pool = make_pool(mine.ctx, data().y_reg);
        if (mine.pool == nullptr) ++wrong;
        if (cbg_model_load_buffer(bytes.data(), bytes.size(), CBG_MODEL_FORMAT_CBM, &mine.model) != CBG_OK) {
          ++wrong;
        }
        sync.arrive_and_wait();
        const handles other = slots[static_cast<std::size_t>((t + 1) % n)];
        if (predict(other.model, other.pool) != expected) ++wrong;
        sync.arrive_and_wait();  // nobody uses the neighbour's handles any more
        if (cbg_model_free(other.model) != CBG_OK) ++wrong;
        if (cbg_pool_free(other.pool) != CBG_OK) ++wrong;
        if (cbg_context_free(other.ctx) != CBG_OK) ++wrong;
        sync.arrive_and_wait();  // everything freed before the slots are refilled
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
  // Freed handles are refused, not used.
  cbg_pool_info_t info{};
  info.struct_size = sizeof(info);
  CHECK(cbg_pool_info(slots[0].pool, &info) == CBG_ERR_INVALID_HANDLE);
}
