// SPDX-License-Identifier: Apache-2.0
// Non-owning tensor views (design rule 2): small, trivially copyable, passed to kernels by value.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cbg/memory/copy.hpp"
#include "cbg/tensor/dtype.hpp"

namespace cbg {

inline constexpr int max_tensor_rank = 4;

// Strides are in elements (never negative); shape and strides beyond `rank` are unused.
struct tensor_view {
  const void* data = nullptr;
  dtype type = dtype::float32;
  memory_kind memory = memory_kind::host;
  std::int32_t device_id = -1;  // CUDA ordinal for device/managed/pinned memory, -1 for plain host
  std::int32_t rank = 0;
  std::int64_t shape[max_tensor_rank] = {};
  std::int64_t strides[max_tensor_rank] = {};
  bool read_only = false;

  [[nodiscard]] std::int64_t size() const noexcept {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  // True when the elements fill one dense row-major block (strides of size-1 dimensions ignored).
  [[nodiscard]] bool is_row_major_compact() const noexcept {
    std::int64_t expected = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expected) return false;
      expected *= shape[i];
    }
    return true;
  }
};

// The same, for memory the library writes (outputs). Never made from a read-only tensor.
struct mutable_tensor_view {
  void* data = nullptr;
  dtype type = dtype::float32;
  memory_kind memory = memory_kind::host;
  std::int32_t device_id = -1;
  std::int32_t rank = 0;
  std::int64_t shape[max_tensor_rank] = {};
  std::int64_t strides[max_tensor_rank] = {};

  [[nodiscard]] tensor_view as_const() const noexcept {
    tensor_view v;
    v.data = data;
    v.type = type;
    v.memory = memory;
    v.device_id = device_id;
    v.rank = rank;
    for (int i = 0; i < max_tensor_rank; ++i) {
      v.shape[i] = shape[i];
      v.strides[i] = strides[i];
    }
    return v;
  }
};

static_assert(std::is_trivially_copyable_v<tensor_view>);
static_assert(std::is_trivially_copyable_v<mutable_tensor_view>);

}  // namespace cbg
