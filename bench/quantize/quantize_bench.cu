// SPDX-License-Identifier: Apache-2.0
// cbgpu-quantize-bench: times the GPU quantizer (borders + packed bin index) on float32 matrices in
// device memory, against the floor of reading the input once at the bandwidth of a device-to-device
// copy measured in the same run (floor = copy time / 2: a copy reads and writes the bytes once).
// Also times the same input in pinned host memory (the kernels read it over PCIe).
//   cbgpu-quantize-bench [rows cols]...   (default: 10500000 28  400000 2000)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/tensor/dlpack.hpp"

namespace {

#define BENCH_CHECK(call)                                                                  \
  do {                                                                                     \
    const cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));     \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__device__ std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Row-major [rows, cols]: column kinds cycle through continuous, integer, heavy-tailed, NaN-bearing.
__global__ void fill(float* x, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = i % cols;
    const std::uint64_t h = mix64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 12345);
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    float v;
    switch (c % 4) {
      case 0: v = u + u2 - 1.0f; break;
      case 1: v = static_cast<float>(h % 50); break;
      case 2: v = __expf(8.0f * (u - 0.5f)); break;
      default: v = u2 < 0.05f ? __int_as_float(0x7fc00000) : u; break;
    }
    x[i] = v;
  }
}

double ms_between(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_quantize(const cbg::pool& p, const cbg::context& ctx, int reps) {
  cbg::quantize::options o;  // CatBoost's GPU defaults: GreedyLogSum, 128 borders, Min
  (void)cbg::quantize::quantize_device(p, o);  // warm-up (allocator pool, module load)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    ctx.sync();
    const auto t0 = std::chrono::steady_clock::now();
    cbg::quantize::device_quantized q = cbg::quantize::quantize_device(p, o);  // blocks
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
  for (int i = 1; i + 1 < argc; i += 2) shapes.emplace_back(std::atoll(argv[i]), std::atoll(argv[i + 1]));
  if (shapes.empty()) shapes = {{10500000, 28}, {400000, 2000}};
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  try {
    cbg::context_options co;
    co.device = 0;
    auto ctx = cbg::context::create(co);
    const cudaStream_t s = ctx->stream();
    cudaEvent_t e0, e1;
    BENCH_CHECK(cudaEventCreate(&e0));
    BENCH_CHECK(cudaEventCreate(&e1));
    for (const auto& [rows, cols] : shapes) {
      const std::size_t bytes = static_cast<std::size_t>(rows * cols) * sizeof(float);
      float* x = nullptr;
      float* y = nullptr;
      BENCH_CHECK(cudaMalloc(&x, bytes));
      BENCH_CHECK(cudaMalloc(&y, bytes));
      fill<<<4096, 256, 0, s>>>(x, rows, cols);
      BENCH_CHECK(cudaGetLastError());
      // Device bandwidth: a device-to-device copy of the input (median of 5).
      std::vector<double> copies;
      for (int r = 0; r < 6; ++r) {
        BENCH_CHECK(cudaEventRecord(e0, s));
        BENCH_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s));
        BENCH_CHECK(cudaEventRecord(e1, s));
        BENCH_CHECK(cudaEventSynchronize(e1));
        if (r > 0) copies.push_back(ms_between(e0, e1));
      }
      BENCH_CHECK(cudaFree(y));
      const double copy_ms = median(copies);
      const double bw = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e-3);
      const double floor_ms = copy_ms / 2.0;

      std::int64_t shape[2] = {rows, cols};
      DLTensor t{};
      t.data = x;
      t.device = {kDLCUDA, 0};
      t.ndim = 2;
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shape;
      double device_ms = 0;
      {
        cbg::pool_inputs in;
        in.features = {cbg::tensor_ref_kind::dltensor, &t};
        const cbg::pool p = cbg::pool::build(ctx, std::move(in));
        device_ms = time_quantize(p, *ctx, 5);
      }
      std::printf(
          "%lld x %lld float32 (%.2f GB), device memory: quantize %.2f ms; D2D copy %.3f ms = "
          "%.2f TB/s read+write; one read of the input %.3f ms; ratio %.1fx\n",
          static_cast<long long>(rows), static_cast<long long>(cols), bytes / 1e9, device_ms,
          copy_ms, bw / 1e12, floor_ms, device_ms / floor_ms);
      std::fflush(stdout);
      // Host input: the same values in pinned host memory, read by the kernels over PCIe.
      float* h = nullptr;
      BENCH_CHECK(cudaMallocHost(&h, bytes));
      BENCH_CHECK(cudaMemcpyAsync(h, x, bytes, cudaMemcpyDeviceToHost, s));
      BENCH_CHECK(cudaStreamSynchronize(s));
      BENCH_CHECK(cudaFree(x));
      t.data = h;
      t.device = {kDLCUDAHost, 0};
      {
        cbg::pool_inputs in;
        in.features = {cbg::tensor_ref_kind::dltensor, &t};
        const cbg::pool p = cbg::pool::build(ctx, std::move(in));
        const double host_ms = time_quantize(p, *ctx, 2);
        std::printf("%lld x %lld float32, pinned host memory (read over PCIe): quantize %.2f ms; "
                    "ratio to one device read %.1fx\n",
                    static_cast<long long>(rows), static_cast<long long>(cols), host_ms,
                    host_ms / floor_ms);
        std::fflush(stdout);
      }
      BENCH_CHECK(cudaFreeHost(h));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
