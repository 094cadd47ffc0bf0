// SPDX-License-Identifier: Apache-2.0
#include "cbg/memory/accounting_resource.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg {

accounting_resource::accounting_resource(int device, std::shared_ptr<device_memory_resource> upstream,
                                         std::size_t limit_bytes)
    : device_(device), upstream_(std::move(upstream)), limit_(limit_bytes) {}

void* accounting_resource::allocate(std::size_t bytes, cudaStream_t stream) {
  // Reserve first so that concurrent allocations cannot both pass the budget check.
  const std::size_t before = in_use_.fetch_add(bytes, std::memory_order_relaxed);
  const auto refuse = [&](const std::string& why) {
    in_use_.fetch_sub(bytes, std::memory_order_relaxed);
    failures_.fetch_add(1, std::memory_order_relaxed);
    const std::size_t free_bytes = limit_ > before ? limit_ - before : 0;
    throw out_of_memory(fmt::format("out of device memory on device {}: {} ({} bytes asked for, {} in use, "
                                    "{} left in the budget)",
                                    device_, why, bytes, before, limit_ != 0 ? free_bytes : 0),
                        bytes, free_bytes);
  };
  if (limit_ != 0 && bytes > limit_ - std::min(before, limit_)) {
    refuse(fmt::format("the context's device memory budget of {} bytes is spent", limit_));
  }
  std::uint64_t countdown = fail_countdown_.load(std::memory_order_relaxed);
  while (countdown != 0 &&
         !fail_countdown_.compare_exchange_weak(countdown, countdown - 1, std::memory_order_relaxed)) {}
  if (countdown == 1) refuse("injected allocation failure (cbg_context_fail_allocation)");
  void* p = nullptr;
  try {
    p = upstream_->allocate(bytes, stream);
  } catch (...) {
    in_use_.fetch_sub(bytes, std::memory_order_relaxed);
    failures_.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  const std::size_t now = before + bytes;
  std::size_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
  return p;
}

void accounting_resource::deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept {
  upstream_->deallocate(ptr, bytes, stream);
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
}

memory_stats accounting_resource::stats() const noexcept {
  memory_stats s;
  s.in_use = in_use_.load(std::memory_order_relaxed);
  s.peak = peak_.load(std::memory_order_relaxed);
  s.limit = limit_;
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  return s;
}

void accounting_resource::reset_peak() noexcept {
  peak_.store(in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void accounting_resource::fail_allocation(std::uint64_t n) noexcept {
  fail_countdown_.store(n, std::memory_order_relaxed);
}

}  // namespace cbg
