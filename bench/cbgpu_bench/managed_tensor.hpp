// SPDX-License-Identifier: Apache-2.0
// An owning DLManagedTensorVersioned built by hand, with a deleter, to pass data to the library.
//
// The tool holds it until give() hands it to a consuming call (cbg_pool_from_dlpack); from then on
// the library calls the deleter exactly once. borrow() lends it to calls that never consume
// (cbg_tensor_copy). Process-wide counters let the tool check that every tensor given to the
// library came back through its deleter.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cbgpu/cbgpu.h"
#include "dlpack.hpp"

namespace cbgpu_bench {

template <class T>
dl::DLDataType dtype_of();
template <>
inline dl::DLDataType dtype_of<float>() {
  return {dl::kDLFloat, 32, 1};
}
template <>
inline dl::DLDataType dtype_of<int64_t>() {
  return {dl::kDLInt, 64, 1};
}
template <>
inline dl::DLDataType dtype_of<uint8_t>() {
  return {dl::kDLUInt, 8, 1};
}

class managed_tensor {
 public:
  // Views `data` (kept alive by `owner` until the deleter runs) with `shape` and `strides`
  // (in elements; empty: compact row-major).
  static managed_tensor wrap(std::shared_ptr<void> owner, void* data, dl::DLDevice device, dl::DLDataType dtype,
                             std::vector<int64_t> shape, std::vector<int64_t> strides = {});

  // Host tensor over `values`, which it takes.
  template <class T>
  static managed_tensor host(std::vector<T> values, std::vector<int64_t> shape, std::vector<int64_t> strides = {}) {
    auto owned = std::make_shared<std::vector<T>>(std::move(values));
    void* data = owned->data();
    return wrap(std::move(owned), data, dl::DLDevice{dl::kDLCPU, 0}, dtype_of<T>(), std::move(shape),
                std::move(strides));
  }

  managed_tensor(managed_tensor&& other) noexcept;
  managed_tensor& operator=(managed_tensor&& other) noexcept;
  managed_tensor(const managed_tensor&) = delete;
  managed_tensor& operator=(const managed_tensor&) = delete;
  ~managed_tensor();  // runs the deleter unless the tensor was given away

  // A reference for calls that borrow (the tool keeps ownership).
  cbg_tensor_ref_t borrow() const noexcept;
  // Hands ownership to the library: the reference is for exactly one consuming call.
  cbg_tensor_ref_t give() noexcept;

  // Tensors handed over with give(), and how many of those the library has deleted since.
  static uint64_t given_count() noexcept;
  static uint64_t released_by_library_count() noexcept;

 private:
  explicit managed_tensor(dl::DLManagedTensorVersioned* t) noexcept : tensor_(t) {}
  dl::DLManagedTensorVersioned* tensor_ = nullptr;
};

}  // namespace cbgpu_bench
