// SPDX-License-Identifier: Apache-2.0
// Device memory resources: every device allocation of the library goes through one of these.
#pragma once

#include <cstddef>
#include <memory>

#include <cuda_runtime_api.h>

namespace cbg {

// A stream-ordered device allocator. allocate() throws cbg::out_of_memory (with requested and free
// bytes) or cbg::cuda_error; deallocate() never throws. Implementations are thread-safe.
class device_memory_resource {
 public:
  virtual ~device_memory_resource() = default;
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept = 0;
  // Gives the device back the freed memory the resource keeps for reuse (none by default).
  virtual void release_unused() noexcept {}
};

// The default: a cudaMemPool of our own on `device`, used through cudaMallocFromPoolAsync, so our
// allocations are stream-ordered and never mix with the caller's default pool. It keeps freed memory
// for reuse (with CUDA's default release threshold of 0 it would unmap it at every synchronisation and
// map it again at the next allocation) until release_unused.
std::shared_ptr<device_memory_resource> make_async_pool_resource(int device);

// Caller-provided hooks (the C ABI's cbg_device_alloc_fn / cbg_device_free_fn).
using alloc_hook = void* (*)(std::size_t bytes, cudaStream_t stream, void* user_data);
using free_hook = void (*)(void* ptr, std::size_t bytes, cudaStream_t stream, void* user_data);
std::shared_ptr<device_memory_resource> make_callback_resource(int device, alloc_hook alloc, free_hook free,
                                                               void* user_data);

}  // namespace cbg
