// SPDX-License-Identifier: Apache-2.0
#include "cbg/runtime/stream.hpp"

#include <utility>

#include "cbg/core/cuda_check.hpp"

namespace cbg {

event::event() { CBG_CUDA_TRY(cudaEventCreateWithFlags(&handle_, cudaEventDisableTiming)); }

event::~event() {
  if (handle_ != nullptr) CBG_ASSERT_CUDA_SUCCESS(cudaEventDestroy(handle_));
}

event& event::operator=(event&& other) noexcept {
  std::swap(handle_, other.handle_);
  return *this;
}

void event::record(cudaStream_t stream) { CBG_CUDA_TRY(cudaEventRecord(handle_, stream)); }

void stream_wait_for(cudaStream_t waiter, cudaStream_t producer) {
  if (waiter == producer) return;
  event e;
  e.record(producer);
  CBG_CUDA_TRY(cudaStreamWaitEvent(waiter, e.get(), 0));
  // Destroying a recorded event is safe: the wait keeps the dependency.
}

}  // namespace cbg
