// SPDX-License-Identifier: Apache-2.0
#include "cbg/memory/resource.hpp"

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg {

namespace {

[[noreturn]] void throw_device_oom(int device, std::size_t bytes, const char* how) {
  std::size_t free_bytes = 0, total_bytes = 0;
  (void)cudaMemGetInfo(&free_bytes, &total_bytes);
  (void)cudaGetLastError();
  throw out_of_memory(fmt::format("out of device memory on device {}: {} asked for {} bytes, {} of "
                                  "{} bytes free",
                                  device, how, bytes, free_bytes, total_bytes),
                      bytes, free_bytes);
}

class async_pool_resource final : public device_memory_resource {
 public:
  explicit async_pool_resource(int device) : device_(device) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CBG_CUDA_TRY(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t keep = ~std::uint64_t{0};
    CBG_CUDA_TRY(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  ~async_pool_resource() override { CBG_ASSERT_CUDA_SUCCESS(cudaMemPoolDestroy(pool_)); }

  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = nullptr;
    const cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, pool_, stream);
    if (err == cudaErrorMemoryAllocation) throw_device_oom(device_, bytes, "cudaMallocFromPoolAsync");
    CBG_CUDA_TRY(err);
    return p;
  }
  void deallocate(void* ptr, std::size_t, cudaStream_t stream) noexcept override {
    CBG_ASSERT_CUDA_SUCCESS(cudaFreeAsync(ptr, stream));
  }
  void release_unused() noexcept override { CBG_ASSERT_CUDA_SUCCESS(cudaMemPoolTrimTo(pool_, 0)); }

 private:
  int device_;
  cudaMemPool_t pool_ = nullptr;
};

class callback_resource final : public device_memory_resource {
 public:
  callback_resource(int device, alloc_hook alloc, free_hook free, void* user)
      : device_(device), alloc_(alloc), free_(free), user_(user) {}

  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = alloc_(bytes, stream, user_);
    if (p == nullptr && bytes > 0) throw_device_oom(device_, bytes, "the caller's allocator");
    return p;
  }
  void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept override {
    free_(ptr, bytes, stream, user_);
  }

 private:
  int device_;
  alloc_hook alloc_;
  free_hook free_;
  void* user_;
};

}  // namespace

std::shared_ptr<device_memory_resource> make_async_pool_resource(int device) {
  scoped_device guard(device);
  return std::make_shared<async_pool_resource>(device);
}

std::shared_ptr<device_memory_resource> make_callback_resource(int device, alloc_hook alloc, free_hook free,
                                                               void* user_data) {
  CBG_EXPECTS(alloc != nullptr && free != nullptr, status::invalid_argument,
              "a custom allocator needs both the alloc and the free hook");
  return std::make_shared<callback_resource>(device, alloc, free, user_data);
}

}  // namespace cbg
