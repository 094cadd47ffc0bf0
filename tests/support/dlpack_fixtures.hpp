// SPDX-License-Identifier: Apache-2.0
// Hand-built DLPack tensors for tests: they own their shape/strides and count deleter calls.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cbg/tensor/dlpack.hpp"
#include "cbg/tensor/dlpack_import.hpp"

namespace cbg::test {

// A managed tensor (versioned or legacy) over caller memory. The deleter only counts; the fixture
// itself frees nothing, so the test can check that the library called the deleter exactly once.
struct fake_tensor {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // empty: NULL strides
  DLManagedTensorVersioned versioned{};
  DLManagedTensor legacy{};
  int deleter_calls = 0;

  fake_tensor(void* data, DLDataType type, std::vector<std::int64_t> shape_in,
              std::vector<std::int64_t> strides_in = {}, DLDevice device = {kDLCPU, 0})
      : shape(std::move(shape_in)), strides(std::move(strides_in)) {
    DLTensor t{};
    t.data = data;
    t.device = device;
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.dtype = type;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
    versioned.version = {1, 0};
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<fake_tensor*>(self->manager_ctx)->deleter_calls;
    };
    versioned.dl_tensor = t;
    legacy.dl_tensor = t;
    legacy.manager_ctx = this;
    legacy.deleter = [](DLManagedTensor* self) { ++static_cast<fake_tensor*>(self->manager_ctx)->deleter_calls; };
  }
  fake_tensor(const fake_tensor&) = delete;
  fake_tensor& operator=(const fake_tensor&) = delete;

  tensor_ref as_versioned() { return {tensor_ref_kind::dlpack_versioned, &versioned}; }
  tensor_ref as_legacy() { return {tensor_ref_kind::dlpack_legacy, &legacy}; }
  tensor_ref as_borrowed() { return {tensor_ref_kind::dltensor, &versioned.dl_tensor}; }
};

inline DLDataType dl_float(int bits) { return {kDLFloat, static_cast<std::uint8_t>(bits), 1}; }
inline DLDataType dl_int(int bits) { return {kDLInt, static_cast<std::uint8_t>(bits), 1}; }
inline DLDataType dl_uint(int bits) { return {kDLUInt, static_cast<std::uint8_t>(bits), 1}; }

}  // namespace cbg::test
