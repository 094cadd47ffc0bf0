// SPDX-License-Identifier: Apache-2.0
#include "cbg/core/error.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"

namespace cbg::detail {

// The messages reach users (cbg_last_error(), the CLI): they say what failed and why, never where in
// the source. The file and line stay parameters for a debugger stopped here.
void throw_error(status code, const std::string& message, const char* /*file*/, int /*line*/) {
  throw error(code, message);
}

void throw_cuda_error(cudaError_t err, const char* what, const char* /*file*/, int /*line*/) {
  const std::string text = fmt::format("{} failed: {} ({})", what, cudaGetErrorName(err), cudaGetErrorString(err));
  switch (err) {
    case cudaErrorMemoryAllocation: {
      std::size_t free_bytes = 0, total_bytes = 0;
      (void)cudaMemGetInfo(&free_bytes, &total_bytes);
      (void)cudaGetLastError();
      throw out_of_memory(text, 0, free_bytes);
    }
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      (void)cudaGetLastError();
      throw cuda_error(status::no_device, text, static_cast<int>(err));
    default:
      break;
  }
  // Non-sticky errors are cleared by cudaGetLastError; a sticky one stays and poisons the context,
  // so reading it back twice still gives the same error.
  const cudaError_t last = cudaGetLastError();
  const cudaError_t peek = cudaPeekAtLastError();
  if (err == last && last == peek) {
    throw cuda_error(status::cuda_fatal, text, static_cast<int>(err));
  }
  throw cuda_error(status::cuda, text, static_cast<int>(err));
}

}  // namespace cbg::detail
