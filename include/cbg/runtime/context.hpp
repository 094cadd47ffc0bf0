// SPDX-License-Identifier: Apache-2.0
// The context: device, stream, memory resource, seed, log level, copy accounting and rules.
// Shared (std::shared_ptr) by the objects made with it, so freeing a context handle early is safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <cuda_runtime_api.h>

#include "cbg/log/logger.hpp"
#include "cbg/memory/accounting_resource.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/resource.hpp"
#include "cbg/runtime/policy.hpp"
#include "cbg/runtime/profiler.hpp"

namespace cbg {

inline constexpr int cpu_device = -1;   // the host reference path
inline constexpr int auto_device = -2;  // current CUDA device if any, else the CPU

struct context_options {
  int device = auto_device;
  log::level log_level = log::level::trace;
  std::uint64_t seed = 0;
  cudaStream_t stream = nullptr;                     // borrowed; nullptr: the context owns a non-blocking stream
  bool strict_no_d2h = false;                        // OR-ed with the CBGPU_STRICT_NO_D2H environment variable
  std::shared_ptr<device_memory_resource> resource;  // nullptr: the hooks below, else an async pool
  alloc_hook alloc = nullptr;                        // caller's allocator (both hooks or neither)
  free_hook free = nullptr;
  void* alloc_user_data = nullptr;
  std::size_t memory_limit = 0;  // device memory budget in bytes (0: none); see accounting_resource
  bool profile = false;          // stage timings (profiler.hpp); off: NVTX ranges only
};

class context {
 public:
  // Throws cbg::error(no_device) when the device cannot be used.
  static std::shared_ptr<context> create(const context_options& options);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  [[nodiscard]] bool is_cpu() const noexcept { return device_ < 0; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
  [[nodiscard]] const std::shared_ptr<device_memory_resource>& resource() const noexcept { return resource_; }
  // The accounting in front of resource(): bytes in use, peak, budget, fault injection. Null on
  // the CPU.
  [[nodiscard]] accounting_resource* memory() const noexcept { return accounting_.get(); }
  [[nodiscard]] copy_counters& copies() const noexcept { return copies_; }
  [[nodiscard]] const copy_rules& rules() const noexcept { return rules_; }
  // Implementation choices (policy.hpp); stage timings when profiling is on (profiler.hpp).
  [[nodiscard]] const cbg::policy& policy() const noexcept { return policy_; }
  [[nodiscard]] bool profiling() const noexcept { return profiling_; }
  [[nodiscard]] profiler& stage_profiler() const noexcept { return profiler_; }

  // Switches to `stream` (nullptr: the owned stream), ordered after the work on the old one.
  void set_stream(cudaStream_t stream);
  // Blocks until the work queued on the stream has finished.
  void sync() const;

  // Logs under this context's level filter.
  void log(log::level l, std::string_view category, std::string_view message) const noexcept;

  // Objects kept between calls made with this context, by key: the sharded trainer keeps the NCCL
  // communicators of a device set here, since making and destroying them costs 0.1 to 1 s per
  // training. take() hands a kept object to one caller (nullptr when none is kept under the key);
  // keep() puts one back. Thread-safe. What is kept is destroyed with the context, first.
  void keep(const std::string& key, std::shared_ptr<void> object) const;
  [[nodiscard]] std::shared_ptr<void> take(const std::string& key) const;
  [[nodiscard]] bool log_enabled(log::level l) const noexcept { return l >= log_level_ && log::enabled(l); }

 private:
  friend void set_policy(context& ctx, const cbg::policy& p);
  context() = default;

  int device_ = cpu_device;
  cudaStream_t owned_stream_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::uint64_t seed_ = 0;
  log::level log_level_ = log::level::trace;
  copy_rules rules_{};
  cbg::policy policy_{};
  bool profiling_ = false;
  mutable profiler profiler_;
  mutable copy_counters copies_;
  std::shared_ptr<accounting_resource> accounting_;
  std::shared_ptr<device_memory_resource> resource_;  // accounting_, as the base class
  mutable std::mutex kept_mutex_;
  mutable std::multimap<std::string, std::shared_ptr<void>> kept_;
};

}  // namespace cbg
