// SPDX-License-Identifier: Apache-2.0
// device_buffer<T>: owning, uninitialised, stream-ordered, move-only device memory.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <cuda_runtime_api.h>

#include "cbg/memory/resource.hpp"

namespace cbg {

template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "device_buffer holds trivially copyable types only");

 public:
  device_buffer() = default;
  // Allocates `count` elements on `stream` from `resource`; contents are uninitialised.
  device_buffer(std::size_t count, cudaStream_t stream, std::shared_ptr<device_memory_resource> resource)
      : size_(count), stream_(stream), resource_(std::move(resource)) {
    if (size_ > 0) data_ = static_cast<T*>(resource_->allocate(size_ * sizeof(T), stream_));
  }
  ~device_buffer() { reset(); }

  device_buffer(device_buffer&& other) noexcept { swap(other); }
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  // Later frees are ordered on `stream` (the caller orders it after the old stream's uses).
  void set_stream(cudaStream_t stream) noexcept { stream_ = stream; }

  // Frees the memory, ordered on the buffer's stream.
  void reset() noexcept {
    if (data_ != nullptr) resource_->deallocate(data_, size_bytes(), stream_);
    data_ = nullptr;
    size_ = 0;
  }

 private:
  void swap(device_buffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(stream_, other.stream_);
    std::swap(resource_, other.resource_);
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<device_memory_resource> resource_;
};

}  // namespace cbg
