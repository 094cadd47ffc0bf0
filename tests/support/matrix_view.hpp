// SPDX-License-Identifier: Apache-2.0
// A [rows, cols] output view over caller memory, for the evaluator tests and cbgpu-apply-bench.
#pragma once

#include <cstdint>

#include "cbg/tensor/tensor_view.hpp"

namespace cbg::test {

// 0: row-major; 1: column-major; 2: one-dimensional [rows] when cols == 1 (else row-major).
inline mutable_tensor_view matrix_view(void* data, dtype type, memory_kind memory, int device, std::int64_t rows,
                                       std::int64_t cols, int layout = 0) {
  mutable_tensor_view v;
  v.data = data;
  v.type = type;
  v.memory = memory;
  v.device_id = device;
  if (layout == 2 && cols == 1) {
    v.rank = 1;
    v.shape[0] = rows;
    v.strides[0] = 1;
    return v;
  }
  v.rank = 2;
  v.shape[0] = rows;
  v.shape[1] = cols;
  v.strides[0] = layout == 1 ? 1 : cols;
  v.strides[1] = layout == 1 ? rows : 1;
  return v;
}

}  // namespace cbg::test
