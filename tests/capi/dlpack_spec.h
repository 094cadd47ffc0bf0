/* SPDX-License-Identifier: Apache-2.0 */
/* The DLPack 1.x structs, declared from the specification (https://dmlc.github.io/dlpack/latest/),
 * so the pure-C tests need no dlpack package (Debian's is 0.6, the GPU machines have none). */
#ifndef CBG_TESTS_DLPACK_SPEC_H
#define CBG_TESTS_DLPACK_SPEC_H

#include <stdint.h>

enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLOpenCL = 4, kDLCUDAManaged = 13 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };

typedef struct {
  int32_t device_type; /* an enum in dlpack.h: int-sized */
  int32_t device_id;
} DLDevice;
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
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
};
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)

#endif
