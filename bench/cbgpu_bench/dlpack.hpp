// SPDX-License-Identifier: Apache-2.0
// The DLPack 1.x structs the tool hands to the library, declared here from the specification
// (https://dmlc.github.io/dlpack/latest/c_api.html). The tool needs no dlpack.h: Debian ships
// 0.6, which lacks the versioned struct, and the GPU machines ship none. The layouts are fixed by
// the specification; the static_asserts below catch a slip.
#pragma once

#include <cstdint>

namespace cbgpu_bench::dl {

// DLDeviceType values (an int-sized C enum in dlpack.h).
inline constexpr int32_t kDLCPU = 1;
inline constexpr int32_t kDLCUDA = 2;

// DLDataTypeCode values.
inline constexpr uint8_t kDLInt = 0;
inline constexpr uint8_t kDLUInt = 1;
inline constexpr uint8_t kDLFloat = 2;

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means compact row-major
  uint64_t byte_offset;
};

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

inline constexpr uint32_t version_major = 1;
inline constexpr uint32_t version_minor = 1;

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4);
static_assert(sizeof(void*) != 8 || sizeof(DLTensor) == 48);
static_assert(sizeof(void*) != 8 || sizeof(DLManagedTensorVersioned) == 80);

}  // namespace cbgpu_bench::dl
