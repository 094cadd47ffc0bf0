// SPDX-License-Identifier: Apache-2.0
// Stage timings: one facility for the whole library. Every stage_range is an NVTX range (visible in
// Nsight Systems, free when no tool is attached). When the context's profiling is on
// (context_options::profile), a range also waits for the context's stream at its end and adds its
// wall time to the context's per-stage totals, which users read through the C ABI's stats query;
// waiting makes the profiled run slower, so it is off by default.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cbg {

class context;

struct stage_total {
  std::string stage;
  double ms = 0;
  std::int64_t calls = 0;
};

// Per-stage totals of one context (thread-safe: the ranks of a sharded training share one).
class profiler {
 public:
  // `calls` occurrences of the stage that took `ms` together.
  void add(const std::string& stage, double ms, std::int64_t calls = 1);
  // Another profiler's totals, their stage names prefixed (a sharded training's ranks into the
  // context the caller profiles).
  void merge(const profiler& other, const std::string& prefix);
  [[nodiscard]] std::vector<stage_total> totals() const;  // by stage name
  void reset();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, stage_total> totals_;
};

// Times a scope as the stage `name` (a string literal: kept by pointer).
class stage_range {
 public:
  stage_range(const context& ctx, const char* name);
  ~stage_range();
  stage_range(const stage_range&) = delete;
  stage_range& operator=(const stage_range&) = delete;

 private:
  const context& ctx_;
  const char* name_;
  bool timed_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cbg
