// SPDX-License-Identifier: Apache-2.0
// Events and stream ordering: we order our work after a producer's with an event, never a host sync.
#pragma once

#include <cuda_runtime_api.h>

namespace cbg {

// An owning, timing-disabled CUDA event (move-only).
class event {
 public:
  event();
  ~event();
  event(event&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  event& operator=(event&& other) noexcept;
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  void record(cudaStream_t stream);
  [[nodiscard]] cudaEvent_t get() const noexcept { return handle_; }

 private:
  cudaEvent_t handle_ = nullptr;
};

// Makes `waiter` wait for the work queued on `producer` so far. No-op when they are the same stream.
void stream_wait_for(cudaStream_t waiter, cudaStream_t producer);

}  // namespace cbg
