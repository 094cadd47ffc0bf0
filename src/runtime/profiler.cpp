// SPDX-License-Identifier: Apache-2.0
#include "cbg/runtime/profiler.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime_api.h>

#include "cbg/runtime/context.hpp"

namespace cbg {

void profiler::add(const std::string& stage, double ms, std::int64_t calls) {
  const std::lock_guard lock(mutex_);
  stage_total& t = totals_[stage];
  t.stage = stage;
  t.ms += ms;
  t.calls += calls;
}

void profiler::merge(const profiler& other, const std::string& prefix) {
  for (const stage_total& t : other.totals()) add(prefix + t.stage, t.ms, t.calls);
}

std::vector<stage_total> profiler::totals() const {
  const std::lock_guard lock(mutex_);
  std::vector<stage_total> out;
  out.reserve(totals_.size());
  for (const auto& [name, t] : totals_) out.push_back(t);
  return out;
}

void profiler::reset() {
  const std::lock_guard lock(mutex_);
  totals_.clear();
}

stage_range::stage_range(const context& ctx, const char* name) : ctx_(ctx), name_(name), timed_(ctx.profiling()) {
  nvtxRangePushA(name);
  if (timed_) start_ = std::chrono::steady_clock::now();
}

stage_range::~stage_range() {
  if (timed_) {
    // A failed wait leaves the stage untimed; the error itself surfaces at the caller's next check.
    if (ctx_.is_cpu() || cudaStreamSynchronize(ctx_.stream()) == cudaSuccess) {
      ctx_.stage_profiler().add(
          name_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
    }
  }
  nvtxRangePop();
}

}  // namespace cbg
