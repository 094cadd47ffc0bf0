/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cbgpu_dlpack.h
 * @brief Optional helper: the DLPack structs, for C99 and C++ callers without a DLPack >= 1.0 header.
 *
 * cbgpu.h itself needs no DLPack header. Callers that build DLManagedTensorVersioned structs by hand
 * may include this one: it includes the system's <dlpack/dlpack.h> when there is one (Debian 12 ships
 * 0.6) and declares what it lacks from the DLPack 1.x specification
 * (https://dmlc.github.io/dlpack/latest/c_api.html): DLPackVersion, DLManagedTensorVersioned, the
 * flag bits. Where no dlpack.h is installed at all, the whole ABI is declared from the same
 * specification; the layouts are fixed by it. Define CBG_NO_SYSTEM_DLPACK to skip the system header.
 * The library uses these same declarations internally (its source is the core's
 * include/cbg/tensor/dlpack_abi.h, installed under this name). @since 0.1
 */
#ifndef CBGPU_CBGPU_DLPACK_H
#define CBGPU_CBGPU_DLPACK_H

#include <stddef.h>
#include <stdint.h>

#if !defined(CBG_NO_SYSTEM_DLPACK) && defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#define CBG_HAVE_SYSTEM_DLPACK 1
#endif
#endif

#ifdef CBG_HAVE_SYSTEM_DLPACK
#include <dlpack/dlpack.h>
#else
#define CBG_DLPACK_DECLARED_HERE 1
#ifdef __cplusplus
extern "C" {
#endif
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
  kDLHexagon = 16
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
  kDLComplex = 5U
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
#ifdef __cplusplus
}
#endif
#endif /* CBG_HAVE_SYSTEM_DLPACK */

#ifndef DLPACK_MAJOR_VERSION
/* DLPack 1.x additions (layout fixed by the specification; fields up to `flags` never move). */
#ifdef __cplusplus
extern "C" {
#endif
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
#ifdef __cplusplus
}
#endif
#define CBG_DLPACK_VERSIONED_DECLARED_HERE 1
#endif

/* Flag bits of DLManagedTensorVersioned, and kDLBool (DLPack 0.8+), under names of our own so they
 * never clash with a newer dlpack.h. */
#define CBG_DLPACK_FLAG_READ_ONLY (1ULL << 0)
#define CBG_DLPACK_FLAG_IS_COPIED (1ULL << 1)
#define CBG_DLPACK_CODE_BOOL 6

#endif /* CBGPU_CBGPU_DLPACK_H */
