// SPDX-License-Identifier: Apache-2.0
// Training through the C ABI for `bench` and `fit`: the parameters as JSON, cbg_train with a
// per-iteration callback that times every iteration, and a context whose device allocations go
// through counting hooks, so the peak device memory the library used can be reported.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "library.hpp"
#include "model.hpp"
#include "training_parameters.hpp"

namespace cbgpu_bench {

// Counts the bytes the library holds through cbg_context_desc_t's allocator hooks
// (cudaMallocFromPoolAsync / cudaFreeAsync on the stream the library names). The hooks allocate
// from a pool of their own that keeps freed memory for the next allocation (release threshold
// unlimited), as the library's default pool does (and PyTorch's and RMM's pools): the device's
// default pool hands freed memory back to the driver at each synchronisation, so the memory of
// every step between two synchronisations would be mapped anew, a cost that only the counting adds.
struct allocation_counter {
  std::atomic<int64_t> current{0};
  std::atomic<int64_t> peak{0};
  std::atomic<int64_t> calls{0};
  void* pool = nullptr;  // the hooks' cudaMemPool_t, made by make_counted_context

  allocation_counter() = default;
  allocation_counter(const allocation_counter&) = delete;
  allocation_counter& operator=(const allocation_counter&) = delete;
  ~allocation_counter();
};

// A context on a CUDA device whose allocations `counter` sees (it must outlive the context); with
// `profile` it times the library's stages (cbg_context_stage_times).
context_handle make_counted_context(int32_t device, uint64_t seed, allocation_counter& counter, bool profile = false);

struct training_run {
  model_handle model;
  double train_ms = 0;               // the cbg_train call
  std::vector<double> iteration_ms;  // per iteration, from the callback's clock
  std::string metric;                // the eval metric's name
  double last_learn_metric = 0;      // when computed at the last iteration (else NaN)
  double last_eval_metric = 0;
  int64_t iterations = 0;
  std::vector<double> learn_history;  // per iteration; NaN where not computed
  std::vector<double> eval_history;
};

// Trains on `learn` (and `test`, may be null) with `params_json`; throws library_error. With
// `profiled` set, its stage times are reset once `reset_after` iterations have run (so they cover
// the iterations after a warm-up).
training_run train_pool(cbg_pool_t* learn, cbg_pool_t* test, const std::string& params_json,
                        cbg_context_t* profiled = nullptr, int64_t reset_after = 0);

// The mean of `v` after dropping the first `skip` values (the time per iteration of a run after its
// warm-up, as the difference of a long and a short run gives it); 0 for too few values.
double mean_after(const std::vector<double>& v, std::size_t skip);

// The median of `v` after dropping the first `skip` values (warm-up); 0 for too few values.
double median_after(std::vector<double> v, std::size_t skip);

}  // namespace cbgpu_bench
