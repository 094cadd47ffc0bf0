// SPDX-License-Identifier: Apache-2.0
// CUDA error handling: CBG_CUDA_TRY turns a failed runtime call into the matching exception.
#pragma once

#include <cuda_runtime_api.h>

#include "cbg/core/error.hpp"

namespace cbg::detail {

// Throws out_of_memory, cuda_error(no_device | cuda | cuda_fatal) for `err`; `what` names the call.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line);

}  // namespace cbg::detail

#define CBG_CUDA_TRY(call)                                                          \
  do {                                                                              \
    cudaError_t const cbg_cuda_status_ = (call);                                    \
    if (cbg_cuda_status_ != cudaSuccess) [[unlikely]] {                             \
      ::cbg::detail::throw_cuda_error(cbg_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)

// For destructors and other noexcept places: the error is dropped (nothing can be reported).
#define CBG_ASSERT_CUDA_SUCCESS(call) \
  do {                                \
    (void)(call);                     \
  } while (0)

// Debug builds synchronise the stream after launches to surface errors at their source.
#ifndef NDEBUG
#define CBG_CHECK_CUDA(stream)                   \
  do {                                           \
    CBG_CUDA_TRY(cudaStreamSynchronize(stream)); \
    CBG_CUDA_TRY(cudaPeekAtLastError());         \
  } while (0)
#else
#define CBG_CHECK_CUDA(stream) CBG_CUDA_TRY(cudaGetLastError())
#endif
