// SPDX-License-Identifier: Apache-2.0
// The few CUDA runtime calls the tool makes itself: allocating device buffers to put a dataset in
// GPU memory before handing it to the library, and naming the device. Used only when the library
// reports a GPU context.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace cbgpu_bench {

// cudaMalloc on `device`; the returned owner frees it with cudaFree. Throws std::runtime_error.
std::shared_ptr<void> device_allocate(std::size_t bytes, int device);

// device_allocate, then a copy of `bytes` host bytes into it (cudaMemcpy). Throws std::runtime_error.
std::shared_ptr<void> device_copy(const void* host, std::size_t bytes, int device);

// "NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)", or "unknown device (<error>)".
std::string device_description(int device);

// The "device: ..." line the commands print: the context's device (CBG_DEVICE_CPU or an ordinal),
// how many GPUs are visible, and why the host path was chosen where GPUs are visible.
std::string device_line(int context_device, int visible, const char* why_host);

}  // namespace cbgpu_bench
