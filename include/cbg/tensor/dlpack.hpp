// SPDX-License-Identifier: Apache-2.0
// The DLPack structs. We use the system's dlpack.h (Debian ships 0.6) and add what it lacks from the
// DLPack 1.x specification (https://dmlc.github.io/dlpack/latest/c_api.html): DLPackVersion,
// DLManagedTensorVersioned, the flag bits and kDLBool. Where no dlpack.h is installed at all (the GPU
// machines), the whole ABI is declared here from the same specification; the layouts are fixed by it.
#pragma once

#include <cstddef>
#include <cstdint>

#if __has_include(<dlpack/dlpack.h>) && !defined(CBG_NO_SYSTEM_DLPACK)
#include <dlpack/dlpack.h>
#else
#define CBG_DLPACK_DECLARED_HERE 1
extern "C" {
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
} DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
} DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
}
#endif

#ifndef DLPACK_MAJOR_VERSION
// DLPack 1.x additions (layout fixed by the specification; fields up to `flags` never move).
extern "C" {
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}
#define CBG_DLPACK_VERSIONED_DECLARED_HERE 1
#endif

namespace cbg::dlpack {

// The major version of DLManagedTensorVersioned we read; a different major is refused unread.
inline constexpr std::uint32_t supported_major = 1;
inline constexpr std::uint64_t flag_read_only = 1ULL << 0;
inline constexpr std::uint64_t flag_is_copied = 1ULL << 1;
// kDLBool arrived in DLPack 0.8; older headers lack the enumerator.
inline constexpr std::uint8_t code_bool = 6;

// Version of the dlpack.h we compiled against, for cbg_build_info ("0.6", "1.1", ...).
const char* header_version() noexcept;

}  // namespace cbg::dlpack
