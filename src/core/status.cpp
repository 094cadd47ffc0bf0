// SPDX-License-Identifier: Apache-2.0
#include "cbg/core/status.hpp"

namespace cbg {

std::string_view describe(status s) noexcept {
  switch (s) {
    case status::ok:
      return "CBG_OK: success";
    case status::invalid_argument:
      return "CBG_ERR_INVALID_ARGUMENT: an argument is out of range or inconsistent";
    case status::null_pointer:
      return "CBG_ERR_NULL_POINTER: a required pointer argument was NULL";
    case status::invalid_handle:
      return "CBG_ERR_INVALID_HANDLE: the handle is freed, foreign or of the wrong type";
    case status::dtype:
      return "CBG_ERR_DTYPE: unsupported element type";
    case status::shape:
      return "CBG_ERR_SHAPE: unusable rank, shape or strides";
    case status::device:
      return "CBG_ERR_DEVICE: the tensor is on a device this call cannot use";
    case status::dlpack_version:
      return "CBG_ERR_DLPACK_VERSION: unsupported DLPack major version";
    case status::read_only:
      return "CBG_ERR_READ_ONLY: the output tensor is read-only";
    case status::strict_d2h:
      return "CBG_ERR_STRICT_D2H: device-to-host copy refused by strict mode";
    case status::out_of_memory:
      return "CBG_ERR_OUT_OF_MEMORY: an allocation failed";
    case status::cuda:
      return "CBG_ERR_CUDA: a CUDA call failed";
    case status::cuda_fatal:
      return "CBG_ERR_CUDA_FATAL: sticky CUDA error; the process must restart its GPU work";
    case status::no_device:
      return "CBG_ERR_NO_DEVICE: no usable CUDA device or driver";
    case status::unsupported:
      return "CBG_ERR_UNSUPPORTED: not supported by cbgpu";
    case status::not_implemented:
      return "CBG_ERR_NOT_IMPLEMENTED: not implemented in this build yet";
    case status::io:
      return "CBG_ERR_IO: a file could not be read or written";
    case status::format:
      return "CBG_ERR_FORMAT: malformed input bytes";
    case status::bad_data:
      return "CBG_ERR_BAD_DATA: values are invalid for their role";
    case status::internal:
      return "CBG_ERR_INTERNAL: internal error (a bug in cbgpu)";
  }
  return "unknown status code";
}

}  // namespace cbg
