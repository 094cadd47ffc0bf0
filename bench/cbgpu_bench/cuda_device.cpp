// SPDX-License-Identifier: Apache-2.0
#include "cuda_device.hpp"

#include <stdexcept>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace cbgpu_bench {

namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so later calls start clean
  throw std::runtime_error(fmt::format("{} failed: {} ({})", what, cudaGetErrorName(e), cudaGetErrorString(e)));
}

}  // namespace

std::shared_ptr<void> device_allocate(std::size_t bytes, int device) {
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  void* ptr = nullptr;
  cuda_check(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), "cudaMalloc");
  return std::shared_ptr<void>(ptr, [](void* p) { (void)cudaFree(p); });
}

std::shared_ptr<void> device_copy(const void* host, std::size_t bytes, int device) {
  std::shared_ptr<void> memory = device_allocate(bytes, device);
  if (bytes > 0) cuda_check(cudaMemcpy(memory.get(), host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  return memory;
}

std::string device_description(int device) {
  cudaDeviceProp prop{};
  const cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return fmt::format("unknown device ({})", cudaGetErrorName(e));
  }
  return fmt::format("{} (sm_{}{}, {:.1f} GiB)", prop.name, prop.major, prop.minor,
                     static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
}

std::string device_line(int context_device, int visible, const char* why_host) {
  if (context_device >= 0) {
    return fmt::format("device: CUDA device {}: {} ({} visible)", context_device, device_description(context_device),
                       visible);
  }
  if (visible == 0) return "device: no GPU visible: using the host reference path";
  return fmt::format("device: host reference path ({}; {} GPU{} visible)", why_host, visible, visible == 1 ? "" : "s");
}

}  // namespace cbgpu_bench
