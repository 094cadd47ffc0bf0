// SPDX-License-Identifier: Apache-2.0
// Device memory accounting for a context: bytes in use and their peak, an optional budget, and a
// fault-injection hook for tests (the n-th allocation from now fails). It wraps the context's real
// resource; every device allocation of the library passes through it. Thread-safe (atomics only).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cbg/memory/resource.hpp"

namespace cbg {

struct memory_stats {
  std::size_t in_use = 0;         // bytes allocated and not yet freed
  std::size_t peak = 0;           // the most in_use has been since creation or the last reset_peak()
  std::size_t limit = 0;          // the budget; 0 = none
  std::uint64_t allocations = 0;  // successful allocations since creation
  std::uint64_t failures = 0;     // allocations refused (budget, injected or real out of memory)
};

class accounting_resource final : public device_memory_resource {
 public:
  // limit_bytes: refuse allocations that would take in_use above it (0: no budget).
  accounting_resource(int device, std::shared_ptr<device_memory_resource> upstream, std::size_t limit_bytes);

  // Throws out_of_memory naming the budget (with the requested and the remaining bytes), the
  // injected failure, or the upstream's own error.
  void* allocate(std::size_t bytes, cudaStream_t stream) override;
  void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept override;
  void release_unused() noexcept override { upstream_->release_unused(); }

  [[nodiscard]] memory_stats stats() const noexcept;
  void reset_peak() noexcept;
  // The n-th allocation from now (n >= 1) fails with out_of_memory, once; 0 disarms.
  void fail_allocation(std::uint64_t n) noexcept;

 private:
  int device_;
  std::shared_ptr<device_memory_resource> upstream_;
  std::size_t limit_;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
  std::atomic<std::uint64_t> allocations_{0};
  std::atomic<std::uint64_t> failures_{0};
  std::atomic<std::uint64_t> fail_countdown_{0};
};

}  // namespace cbg
