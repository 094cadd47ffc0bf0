// SPDX-License-Identifier: Apache-2.0
// A borrowed host DLTensor over caller memory, for C ABI tests written in C++; it keeps its shape.
#pragma once

#include <cstdint>

#include "cbg/tensor/dlpack.hpp"
#include "cbgpu/cbgpu.h"

namespace cbg::test {

struct host_tensor {
  std::int64_t shape[2];
  DLTensor t{};
  // [n0] when n1 is 0, else [n0, n1]; row-major.
  host_tensor(const void* ptr, std::uint8_t code, std::uint8_t bits, std::int64_t n0, std::int64_t n1) {
    shape[0] = n0;
    shape[1] = n1;
    t.data = const_cast<void*>(ptr);
    t.device = {kDLCPU, 0};
    t.ndim = n1 > 0 ? 2 : 1;
    t.dtype = {code, bits, 1};
    t.shape = shape;
  }
  host_tensor(const host_tensor&) = delete;  // t.shape points into this object
  host_tensor& operator=(const host_tensor&) = delete;
  cbg_tensor_ref_t ref() { return {CBG_TENSOR_DLTENSOR, &t}; }
};

}  // namespace cbg::test
