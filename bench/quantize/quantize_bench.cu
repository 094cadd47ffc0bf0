// SPDX-License-Identifier: Apache-2.0
// cbgpu-quantize-bench: times the GPU quantizer (borders + packed bin index) on float32 matrices in
// device memory, against the floor of reading the input once at the bandwidth of a device-to-device
// copy measured in the same run (floor = copy time / 2: a copy reads and writes the bytes once).
// Also times the same input in pinned host memory (the kernels read it over PCIe) and in pageable
// host memory (staged to the device through double-buffered pinned memory, chunk by chunk), and
// the other border types on device memory.
//   cbgpu-quantize-bench [rows cols]...   (default: 10500000 28  400000 2000)
// With CBGPU_BENCH_SORTS set, also the candidates for the border subsets' sort and their tunings.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "kernels/common/cccl.cuh"

#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "bench/common/bench_util.hpp"

namespace {

// Row-major [rows, cols]: column kinds cycle through continuous, integer, heavy-tailed, NaN-bearing.
__global__ void fill(float* x, std::int64_t rows, std::int64_t cols) {
  const std::int64_t n = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = i % cols;
    const std::uint64_t h = cbg_bench::mix64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 12345);
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    float v;
    switch (c % 4) {
      case 0:
        v = u + u2 - 1.0f;
        break;
      case 1:
        v = static_cast<float>(h % 50);
        break;
      case 2:
        v = __expf(8.0f * (u - 0.5f));
        break;
      default:
        v = u2 < 0.05f ? __int_as_float(0x7fc00000) : u;
        break;
    }
    x[i] = v;
  }
}

// Segments [nf][m] of the same column kinds, and the same values as 64-bit (feature, flipped
// float) keys for a device-wide sort.
__global__ void fill_segments(float* x, std::uint64_t* composite, std::int64_t nf, std::int64_t m) {
  const std::int64_t n = nf * m;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = i / m;
    const std::uint64_t h = cbg_bench::mix64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 777);
    const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((h >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    float v;
    switch (c % 4) {
      case 0:
        v = u + u2 - 1.0f;
        break;
      case 1:
        v = static_cast<float>(h % 50);
        break;
      case 2:
        v = __expf(8.0f * (u - 0.5f));
        break;
      default:
        v = u2 < 0.05f ? __int_as_float(0x7fc00000) : u;
        break;
    }
    x[i] = v;
    const std::uint32_t b = static_cast<std::uint32_t>(__float_as_int(v));
    composite[i] = (static_cast<std::uint64_t>(c) << 32) | (b ^ ((b >> 31) != 0 ? 0xffffffffu : 0x80000000u));
  }
}

int bits_for(std::int64_t n) {
  int b = 0;
  while ((std::int64_t{1} << b) < n) ++b;
  return b;
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

// Median time of `reps` copies on the stream (after one warm-up).
double time_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s, cudaEvent_t e0,
                 cudaEvent_t e1, int reps) {
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    BENCH_CHECK(cudaEventRecord(e0, s));
    BENCH_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    BENCH_CHECK(cudaEventRecord(e1, s));
    BENCH_CHECK(cudaEventSynchronize(e1));
    if (r > 0) t.push_back(ms_between(e0, e1));
  }
  return median(t);
}

// Median wall time of quantize_device and the median of each stage on the GPU timeline
// (stage_marks; "finish" is the wall time after binarize: the status read and the frees).
constexpr int stages = 9;
struct quantize_times {
  double wall = 0;
  double stage[stages] = {};
};
constexpr const char* stage_names[stages] = {"subset", "prepare", "allocate", "upload", "gather",
                                             "sort",   "borders", "binarize", "finish"};

quantize_times time_quantize(const cbg::pool& p, const cbg::context& ctx, int reps,
                             cbg::quantize::sort_method method = cbg::quantize::sort_method::automatic,
                             cbg::quantize::border_type type = cbg::quantize::border_type::greedy_log_sum,
                             int border_count = cbg::quantize::default_border_count, std::int64_t chunk_features = 0) {
  cbg::quantize::options o;  // CatBoost's GPU defaults: GreedyLogSum, 128 borders, Min
  o.sort = method;
  o.chunk_features = chunk_features;
  o.type = type;
  o.border_count = border_count;
  cudaEvent_t ev[stages];
  for (cudaEvent_t& e : ev) BENCH_CHECK(cudaEventCreate(&e));
  cbg::quantize::stage_marks marks;
  marks.start = ev[0];
  marks.subset = ev[1];
  marks.prepare = ev[2];
  marks.allocate = ev[3];
  marks.setup = ev[4];
  marks.gather = ev[5];
  marks.sort = ev[6];
  marks.borders = ev[7];
  marks.binarize = ev[8];
  (void)cbg::quantize::quantize_device(p, o, &marks);  // warm-up (allocator pool, module load)
  std::vector<double> wall;
  std::vector<std::vector<double>> stage(stages);
  for (int r = 0; r < reps; ++r) {
    ctx.sync();
    const auto t0 = std::chrono::steady_clock::now();
    {
      cbg::quantize::device_quantized q = cbg::quantize::quantize_device(p, o, &marks);  // blocks
    }
    const auto t1 = std::chrono::steady_clock::now();
    const double w = std::chrono::duration<double, std::milli>(t1 - t0).count();
    wall.push_back(w);
    double sum = 0;
    for (int k = 0; k + 1 < stages; ++k) {
      const double ms = ms_between(ev[k], ev[k + 1]);
      stage[static_cast<std::size_t>(k)].push_back(ms);
      sum += ms;
    }
    stage[stages - 1].push_back(w - sum);
  }
  for (cudaEvent_t& e : ev) BENCH_CHECK(cudaEventDestroy(e));
  quantize_times t;
  t.wall = median(wall);
  for (int k = 0; k < stages; ++k) t.stage[k] = median(stage[static_cast<std::size_t>(k)]);
  return t;
}

void print_stages(const quantize_times& t) {
  std::printf("  stages (median ms):");
  for (int k = 0; k < stages; ++k) std::printf(" %s %.3f", stage_names[k], t.stage[k]);
  std::printf("\n");
}

// A pool that keeps freed memory for the next allocation (release threshold unlimited), as
// PyTorch's and RMM's pools do. The library's default pool has threshold 0: it hands freed memory
// back at each synchronisation, so every call maps its memory anew.
class keeping_pool final : public cbg::device_memory_resource {
 public:
  explicit keeping_pool(int device) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    BENCH_CHECK(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t keep = ~std::uint64_t{0};
    BENCH_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  ~keeping_pool() override { (void)cudaMemPoolDestroy(pool_); }
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = nullptr;
    BENCH_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_, stream));
    return p;
  }
  void deallocate(void* ptr, std::size_t, cudaStream_t stream) noexcept override { (void)cudaFreeAsync(ptr, stream); }

 private:
  cudaMemPool_t pool_ = nullptr;
};

// CUB's segmented radix sort with other tunings than its own (6-bit digits, 192 threads x 39 keys
// on sm_90): fewer passes with wider digits, other block shapes.
template <int Threads, int Items, int Bits, cbg::cub::RadixRankAlgorithm Rank>
struct segmented_tuning {
  struct Policy900 : cbg::cub::ChainedPolicy<900, Policy900, Policy900> {
    using SegmentedPolicy =
        cbg::cub::AgentRadixSortDownsweepPolicy<Threads, Items, float, cbg::cub::BLOCK_LOAD_TRANSPOSE,
                                                cbg::cub::LOAD_DEFAULT, Rank, cbg::cub::BLOCK_SCAN_WARP_SCANS, Bits>;
    using AltSegmentedPolicy =
        cbg::cub::AgentRadixSortDownsweepPolicy<Threads, Items, float, cbg::cub::BLOCK_LOAD_TRANSPOSE,
                                                cbg::cub::LOAD_DEFAULT, Rank, cbg::cub::BLOCK_SCAN_WARP_SCANS,
                                                Bits - 1>;
  };
  using MaxPolicy = Policy900;
};

template <class Tuning>
double time_tuned_segmented(const float* x, float* y, float* z, std::int64_t nf, std::int64_t m, const int* offsets,
                            cudaStream_t s) {
  namespace cub = cbg::cub;
  using dispatch = cub::DispatchSegmentedRadixSort<cub::SortOrder::Ascending, float, cub::NullType, const int*,
                                                   const int*, int, Tuning>;
  const int n = static_cast<int>(nf * m);
  std::size_t bytes = 0;
  cub::DoubleBuffer<float> keys(y, z);
  cub::DoubleBuffer<cub::NullType> values;
  BENCH_CHECK(
      dispatch::Dispatch(nullptr, bytes, keys, values, n, static_cast<int>(nf), offsets, offsets + 1, 0, 32, true, s));
  void* temp = nullptr;
  BENCH_CHECK(cudaMalloc(&temp, std::max<std::size_t>(bytes, 1)));
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  bool ok = true;
  for (int r = 0; r < 6; ++r) {
    BENCH_CHECK(cudaMemcpyAsync(y, x, static_cast<std::size_t>(n) * 4, cudaMemcpyDeviceToDevice, s));
    cub::DoubleBuffer<float> k(y, z);
    BENCH_CHECK(cudaEventRecord(a, s));
    BENCH_CHECK(
        dispatch::Dispatch(temp, bytes, k, values, n, static_cast<int>(nf), offsets, offsets + 1, 0, 32, true, s));
    BENCH_CHECK(cudaEventRecord(b, s));
    BENCH_CHECK(cudaEventSynchronize(b));
    if (r > 0) t.push_back(ms_between(a, b));
    if (r == 5) {  // check the last run: the first segments ascending (NaNs last)
      const std::int64_t checked = std::min<std::int64_t>(nf, 8);
      std::vector<float> h(static_cast<std::size_t>(checked * m));
      BENCH_CHECK(cudaMemcpy(h.data(), k.Current(), h.size() * 4, cudaMemcpyDeviceToHost));
      for (std::int64_t f = 0; f < checked && ok; ++f) {
        for (std::int64_t i = f * m + 1; i < (f + 1) * m; ++i) {
          const float p = h[static_cast<std::size_t>(i - 1)], c = h[static_cast<std::size_t>(i)];
          if (!(p <= c) && !(c != c)) {
            ok = false;
            break;
          }
        }
      }
    }
  }
  BENCH_CHECK(cudaFree(temp));
  BENCH_CHECK(cudaEventDestroy(a));
  BENCH_CHECK(cudaEventDestroy(b));
  return ok ? median(t) : -1.0;
}

// The candidates for sorting nf segments of m floats (the border subsets): median ms of 5 runs.
void time_sort_candidates(std::int64_t nf, std::int64_t m, cudaStream_t s) {
  namespace cub = cbg::cub;
  const std::size_t n = static_cast<std::size_t>(nf * m);
  float *x = nullptr, *y = nullptr;
  std::uint64_t *cx = nullptr, *cy = nullptr;
  int* offsets = nullptr;
  BENCH_CHECK(cudaMalloc(&x, n * 4));
  BENCH_CHECK(cudaMalloc(&y, n * 4));
  BENCH_CHECK(cudaMalloc(&cx, n * 8));
  BENCH_CHECK(cudaMalloc(&cy, n * 8));
  std::vector<int> off(static_cast<std::size_t>(nf) + 1);
  for (std::int64_t f = 0; f <= nf; ++f) off[static_cast<std::size_t>(f)] = static_cast<int>(f * m);
  BENCH_CHECK(cudaMalloc(&offsets, off.size() * sizeof(int)));
  BENCH_CHECK(cudaMemcpy(offsets, off.data(), off.size() * sizeof(int), cudaMemcpyHostToDevice));
  fill_segments<<<4096, 256, 0, s>>>(x, cx, nf, m);
  BENCH_CHECK(cudaGetLastError());
  const int end_bit = 32 + bits_for(nf);
  std::size_t t1 = 0, t2 = 0, t3 = 0;
  BENCH_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, t1, x, y, static_cast<int>(n), static_cast<int>(nf),
                                                      offsets, offsets + 1, 0, 32, s));
  BENCH_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, t2, cx, cy, n, 0, end_bit, s));
  BENCH_CHECK(
      cub::DeviceSegmentedSort::SortKeys(nullptr, t3, x, y, static_cast<std::int64_t>(n), nf, offsets, offsets + 1, s));
  void* temp = nullptr;
  BENCH_CHECK(cudaMalloc(&temp, std::max({t1, t2, t3, std::size_t{1}})));
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  const auto time = [&](auto&& f) {
    std::vector<double> t;
    for (int r = 0; r < 6; ++r) {
      BENCH_CHECK(cudaEventRecord(a, s));
      f();
      BENCH_CHECK(cudaEventRecord(b, s));
      BENCH_CHECK(cudaEventSynchronize(b));
      if (r > 0) t.push_back(ms_between(a, b));
    }
    return median(t);
  };
  const double seg_radix = time([&] {
    BENCH_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(temp, t1, x, y, static_cast<int>(n), static_cast<int>(nf),
                                                        offsets, offsets + 1, 0, 32, s));
  });
  const double composite =
      time([&] { BENCH_CHECK(cub::DeviceRadixSort::SortKeys(temp, t2, cx, cy, n, 0, end_bit, s)); });
  const double seg_sort = time([&] {
    BENCH_CHECK(
        cub::DeviceSegmentedSort::SortKeys(temp, t3, x, y, static_cast<std::int64_t>(n), nf, offsets, offsets + 1, s));
  });
  std::printf(
      "  sort %lld segments of %lld floats (median ms): DeviceSegmentedRadixSort %.3f; "
      "DeviceRadixSort of 64-bit (feature, value) keys, %d bits %.3f; DeviceSegmentedSort %.3f\n",
      static_cast<long long>(nf), static_cast<long long>(m), seg_radix, end_bit, composite, seg_sort);
  namespace tune = cbg::cub;
  float* z = reinterpret_cast<float*>(cx);
  const double a8 =
      time_tuned_segmented<segmented_tuning<128, 32, 8, tune::RADIX_RANK_MATCH>>(x, y, z, nf, m, offsets, s);
  const double b7 =
      time_tuned_segmented<segmented_tuning<256, 16, 7, tune::RADIX_RANK_MATCH>>(x, y, z, nf, m, offsets, s);
  const double c7 =
      time_tuned_segmented<segmented_tuning<160, 24, 7, tune::RADIX_RANK_MEMOIZE>>(x, y, z, nf, m, offsets, s);
  const double d6 =
      time_tuned_segmented<segmented_tuning<256, 24, 6, tune::RADIX_RANK_MEMOIZE>>(x, y, z, nf, m, offsets, s);
  const double e6 =
      time_tuned_segmented<segmented_tuning<192, 39, 6, tune::RADIX_RANK_MEMOIZE>>(x, y, z, nf, m, offsets, s);
  std::printf(
      "  segmented radix sort tunings (threads x keys, digit bits, rank; median ms, -1: unsorted): "
      "128x32 8b match %.3f; 256x16 7b match %.3f; 160x24 7b memoize %.3f; 256x24 6b memoize %.3f; "
      "192x39 6b memoize (CUB's) %.3f\n",
      a8, b7, c7, d6, e6);
  BENCH_CHECK(cudaEventDestroy(a));
  BENCH_CHECK(cudaEventDestroy(b));
  for (void* ptr : {static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(cx), static_cast<void*>(cy),
                    static_cast<void*>(offsets), temp}) {
    BENCH_CHECK(cudaFree(ptr));
  }
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
    cbg::context_options keep_o = co;
    keep_o.resource = std::make_shared<keeping_pool>(0);
    auto keep_ctx = cbg::context::create(keep_o);
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
      const double copy_ms = time_copy(y, x, bytes, cudaMemcpyDeviceToDevice, s, e0, e1, 5);
      BENCH_CHECK(cudaFree(y));
      const double bw = 2.0 * static_cast<double>(bytes) / (copy_ms * 1e-3);
      const double floor_ms = copy_ms / 2.0;

      std::int64_t shape[2] = {rows, cols};
      DLTensor t{};
      t.data = x;
      t.device = {kDLCUDA, 0};
      t.ndim = 2;
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shape;
      quantize_times device_t;
      {
        cbg::pool_inputs in;
        in.features = {cbg::tensor_ref_kind::dltensor, &t};
        const cbg::pool p = cbg::pool::build(ctx, std::move(in));
        device_t = time_quantize(p, *ctx, 7);
        // The two subset sorts forced, for the choice between them (quantize.cu).
        for (const auto& [method, name] : {std::pair{cbg::quantize::sort_method::device_wide, "device-wide sort"},
                                           std::pair{cbg::quantize::sort_method::segmented, "segmented sort"}}) {
          const quantize_times t = time_quantize(p, *ctx, 3, method);
          std::printf("  forced %s: quantize %.2f ms\n", name, t.wall);
          print_stages(t);
        }
        // Chunks of features (the stages per chunk; smaller scratch to allocate, sorts of fewer
        // segments) against all features at once.
        if (cols >= 512) {
          for (const std::int64_t chunk : {std::int64_t{264}, std::int64_t{528}}) {
            const quantize_times t =
                time_quantize(p, *ctx, 5, cbg::quantize::sort_method::automatic,
                              cbg::quantize::border_type::greedy_log_sum, cbg::quantize::default_border_count, chunk);
            std::printf("  chunks of %lld features: quantize %.2f ms\n", static_cast<long long>(chunk), t.wall);
            print_stages(t);
          }
        }
        // The other border types (128 borders; the exact DP, one thread per feature, with 32 and
        // only for few features: it is O(borders x distinct values) dependent steps).
        using bt = cbg::quantize::border_type;
        for (const auto& [type, name] :
             {std::pair{bt::greedy_min_entropy, "GreedyMinEntropy"}, std::pair{bt::median, "Median"},
              std::pair{bt::uniform, "Uniform"}, std::pair{bt::uniform_and_quantiles, "UniformAndQuantiles"},
              std::pair{bt::min_entropy, "MinEntropy (32 borders)"}}) {
          if (type == bt::min_entropy && cols > 64) continue;
          const quantize_times t =
              time_quantize(p, *ctx, type == bt::min_entropy ? 1 : 3, cbg::quantize::sort_method::automatic, type,
                            type == bt::min_entropy ? 32 : 128);
          std::printf("  border type %s: quantize %.2f ms (borders stage %.3f ms)\n", name, t.wall, t.stage[6]);
        }
      }
      {
        cbg::pool_inputs in;
        in.features = {cbg::tensor_ref_kind::dltensor, &t};
        const cbg::pool p = cbg::pool::build(keep_ctx, std::move(in));
        const quantize_times k = time_quantize(p, *keep_ctx, 7);
        std::printf("  with a pool that keeps its memory: quantize %.2f ms, ratio %.1fx\n", k.wall, k.wall / floor_ms);
        print_stages(k);
      }
      const double device_ms = device_t.wall;
      std::printf(
          "%lld x %lld float32 (%.2f GB), device memory: quantize %.2f ms; D2D copy %.3f ms = "
          "%.2f TB/s read+write; one read of the input %.3f ms; ratio %.1fx\n",
          static_cast<long long>(rows), static_cast<long long>(cols), bytes / 1e9, device_ms, copy_ms, bw / 1e12,
          floor_ms, device_ms / floor_ms);
      print_stages(device_t);
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
        const quantize_times host_t = time_quantize(p, *ctx, 2);
        const double host_ms = host_t.wall;
        std::printf(
            "%lld x %lld float32, pinned host memory (read over PCIe): quantize %.2f ms; "
            "ratio to one device read %.1fx\n",
            static_cast<long long>(rows), static_cast<long long>(cols), host_ms, host_ms / floor_ms);
        print_stages(host_t);
        std::fflush(stdout);
      }
      // Host to device over PCIe: one copy of the input from pinned memory (the transfer floor).
      float* d = nullptr;
      BENCH_CHECK(cudaMalloc(&d, bytes));
      const double h2d_ms = time_copy(d, h, bytes, cudaMemcpyHostToDevice, s, e0, e1, 3);
      BENCH_CHECK(cudaFree(d));
      // Pageable host input (a plain host array, e.g. numpy): staged through pinned buffers.
      {
        std::vector<float> pageable(h, h + static_cast<std::size_t>(rows * cols));
        BENCH_CHECK(cudaFreeHost(h));
        h = nullptr;
        t.data = pageable.data();
        t.device = {kDLCPU, 0};
        cbg::pool_inputs in;
        in.features = {cbg::tensor_ref_kind::dltensor, &t};
        const cbg::pool p = cbg::pool::build(ctx, std::move(in));
        const quantize_times host_t = time_quantize(p, *ctx, 3);
        std::printf(
            "%lld x %lld float32, pageable host memory (staged through pinned memory): "
            "quantize %.2f ms; one pinned host-to-device copy of the input %.2f ms (%.1f GB/s); "
            "ratio to that copy %.2fx, to one device read %.1fx\n",
            static_cast<long long>(rows), static_cast<long long>(cols), host_t.wall, h2d_ms,
            static_cast<double>(bytes) / (h2d_ms * 1e-3) / 1e9, host_t.wall / h2d_ms, host_t.wall / floor_ms);
        print_stages(host_t);
        std::fflush(stdout);
      }
      {
        std::vector<double> host;
        for (int r = 0; r < 5; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          const auto subset = cbg::quantize::border_subset(static_cast<std::uint64_t>(rows), 200000, 0);
          const auto t1 = std::chrono::steady_clock::now();
          host.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        std::printf("  host: border subset of %lld rows %.3f ms\n", static_cast<long long>(rows), median(host));
      }
      if (std::getenv("CBGPU_BENCH_SORTS") != nullptr) {  // the sort candidates and tunings
        time_sort_candidates(cols, std::min<std::int64_t>(rows, cbg::quantize::default_max_subset_size), s);
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
