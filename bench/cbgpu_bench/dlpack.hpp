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

// The version the tool writes into the tensors it makes.
inline constexpr std::uint32_t version_major = 1;
inline constexpr std::uint32_t version_minor = 1;

}  // namespace cbgpu_bench::dl
