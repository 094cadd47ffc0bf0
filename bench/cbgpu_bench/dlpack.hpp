// SPDX-License-Identifier: Apache-2.0
// The DLPack 1.x structs the tool hands to the library, from the library's public helper header
// cbgpu/cbgpu_dlpack.h (which fills in what an old or missing dlpack.h lacks), under short names.
#pragma once

#include <cstdint>

#include "cbgpu/cbgpu_dlpack.h"

namespace cbgpu_bench::dl {

using ::DLDataType;
using ::DLDevice;
using ::DLManagedTensorVersioned;
using ::DLTensor;

inline constexpr DLDeviceType kDLCPU = ::kDLCPU;
inline constexpr DLDeviceType kDLCUDA = ::kDLCUDA;
inline constexpr std::uint8_t kDLInt = ::kDLInt;
inline constexpr std::uint8_t kDLUInt = ::kDLUInt;
inline constexpr std::uint8_t kDLFloat = ::kDLFloat;

// A borrowed float64 [shape[0], shape[1]] row-major view of `data` (prediction outputs; the caller
// keeps `shape` alive while the view is used).
inline DLTensor float64_matrix(void* data, std::int64_t* shape, DLDevice device) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 64, 1};
  t.shape = shape;
  return t;
}

// The version the tool writes into the tensors it makes.
inline constexpr std::uint32_t version_major = 1;
inline constexpr std::uint32_t version_minor = 1;

}  // namespace cbgpu_bench::dl
