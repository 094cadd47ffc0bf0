// SPDX-License-Identifier: Apache-2.0
#include "training_run.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "text.hpp"

#include "timer.hpp"

namespace cbgpu_bench {

namespace {

void* counted_alloc(size_t bytes, cbg_stream_t stream, void* user) {
  void* p = nullptr;
  auto& c = *static_cast<allocation_counter*>(user);
  if (cudaMallocFromPoolAsync(&p, bytes == 0 ? 1 : bytes, static_cast<cudaMemPool_t>(c.pool),
                              reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  const int64_t now = c.current.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
  int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {}
  c.calls.fetch_add(1);
  return p;
}

void counted_free(void* p, size_t bytes, cbg_stream_t stream, void* user) {
  (void)cudaFreeAsync(p, reinterpret_cast<cudaStream_t>(stream));
  static_cast<allocation_counter*>(user)->current.fetch_sub(static_cast<int64_t>(bytes));
}

struct callback_state {
  stopwatch clock;
  double last = 0;
  training_run* run = nullptr;
  cbg_context_t* profiled = nullptr;
  int64_t reset_after = 0;
};

int32_t on_iteration(void* user, const cbg_train_progress_t* p) {
  auto& s = *static_cast<callback_state*>(user);
  const double now = s.clock.elapsed_ms();
  s.run->iteration_ms.push_back(now - s.last);
  s.last = now;
  s.run->metric = p->metric != nullptr ? p->metric : "";
  s.run->last_learn_metric = p->has_learn_metric ? p->learn_metric : std::nan("");
  s.run->last_eval_metric = p->has_eval_metric ? p->eval_metric : std::nan("");
  s.run->iterations = p->iteration + 1;
  s.run->learn_history.push_back(s.run->last_learn_metric);
  s.run->eval_history.push_back(s.run->last_eval_metric);
  if (s.profiled != nullptr && s.run->iterations == s.reset_after) (void)cbg_context_stage_times_reset(s.profiled);
  return 0;
}

}  // namespace

allocation_counter::~allocation_counter() {
  if (pool != nullptr) (void)cudaMemPoolDestroy(static_cast<cudaMemPool_t>(pool));
}

context_handle make_counted_context(int32_t device, uint64_t seed, allocation_counter& counter, bool profile) {
  if (counter.pool == nullptr) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    uint64_t keep = ~uint64_t{0};
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess ||
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
      const cudaError_t err = cudaGetLastError();
      if (pool != nullptr) (void)cudaMemPoolDestroy(pool);
      throw std::runtime_error(
          fmt::format("the counting allocator's memory pool on CUDA device {}: {}", device, cudaGetErrorString(err)));
    }
    counter.pool = pool;
  }
  cbg_context_desc_t desc;
  check(cbg_context_desc_init(&desc), "cbg_context_desc_init");
  desc.device = device;
  desc.seed = seed;
  desc.alloc_fn = counted_alloc;
  desc.free_fn = counted_free;
  desc.alloc_user_data = &counter;
  desc.profile = profile ? 1 : 0;
  cbg_context_t* ctx = nullptr;
  check(cbg_context_create(&desc, &ctx), "cbg_context_create");
  return context_handle(ctx);
}

training_run train_pool(cbg_pool_t* learn, cbg_pool_t* test, const std::string& params_json, cbg_context_t* profiled,
                        int64_t reset_after) {
  training_run run;
  callback_state state;
  state.run = &run;
  state.profiled = profiled;
  state.reset_after = reset_after;
  cbg_train_callbacks_t callbacks;
  check(cbg_train_callbacks_init(&callbacks), "cbg_train_callbacks_init");
  callbacks.on_iteration = on_iteration;
  callbacks.user_data = &state;
  cbg_model_t* model = nullptr;
  const stopwatch t;
  state.clock = stopwatch();
  check(cbg_train(learn, params_json.c_str(), test, &callbacks, &model), "cbg_train");
  run.train_ms = t.elapsed_ms();
  run.model.reset(model);
  return run;
}

double mean_after(const std::vector<double>& v, std::size_t skip) {
  if (v.size() <= skip) return 0.0;
  double sum = 0.0;
  for (std::size_t i = skip; i < v.size(); ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - skip);
}

double median_after(std::vector<double> v, std::size_t skip) {
  if (v.size() <= skip) return 0.0;
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(skip));
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace cbgpu_bench
