// SPDX-License-Identifier: Apache-2.0
#include "cbg/runtime/device.hpp"

#include <cuda_runtime_api.h>

#include "cbg/core/cuda_check.hpp"

namespace cbg {

int visible_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not an error for a query
    return 0;
  }
  return count;
}

scoped_device::scoped_device(int device) {
  if (device < 0) return;
  CBG_CUDA_TRY(cudaGetDevice(&previous_));
  if (previous_ != device) {
    CBG_CUDA_TRY(cudaSetDevice(device));
  } else {
    previous_ = -1;  // nothing to restore
  }
}

scoped_device::~scoped_device() {
  if (previous_ >= 0) CBG_ASSERT_CUDA_SUCCESS(cudaSetDevice(previous_));
}

}  // namespace cbg
