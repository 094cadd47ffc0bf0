// SPDX-License-Identifier: Apache-2.0
// cbgpu-tree-bench: times search_tree_device (one oblivious tree's structure: histograms, scores,
// best split, leaf index, every level) on random packed bin indexes of given shapes, against the
// floor of reading the bytes the design needs per level at the device's read bandwidth measured in
// the same run. Reports ms per tree (median after warm-up) for a few launch geometries, the time of
// each stage on the GPU timeline, kernel launches per tree and the bytes per level.
//   cbgpu-tree-bench [--depth D] [--borders B] [--trees N] [--json FILE] [rows features]...
//   (default shapes: 10500000 28 (Higgs) and 400000 2000 (Epsilon); depth 6; 128 borders)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kernels/train/search_tuning.hpp"

#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/tree_search.hpp"

namespace {

// Exits with the CUDA error's text (a benchmark has nothing to recover).
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define BENCH_CHECK(call) check((call), #call)

// A 64-bit hash of i (xorshift-multiply rounds) for reproducible random data.
__device__ std::uint64_t hash64(std::uint64_t i) {
  i = (i ^ (i >> 30)) * 0xbf58476d1ce4e5b9ULL;
  i = (i ^ (i >> 27)) * 0x94d049bb133111ebULL;
  return i ^ (i >> 31);
}

// Random bins 0..borders of every feature into the packed index (zero padding rows and bytes).
__global__ void fill_index(std::uint32_t* index, std::int64_t rows, std::int64_t padded, std::int64_t features,
                           int borders) {
  const std::int64_t groups = (features + 3) / 4;
  const std::int64_t n = groups * padded;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t g = i / padded;
    const std::int64_t r = i % padded;
    std::uint32_t w = 0;
    if (r < rows) {
      const std::uint64_t h = hash64(static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + 99);
      for (int j = 0; j < 4 && 4 * g + j < features; ++j) {
        w |= static_cast<std::uint32_t>(((h >> (16 * j)) & 0xffffu) % static_cast<unsigned>(borders + 1)) << (8 * j);
      }
    }
    index[i] = w;
  }
}

// der: a signal from a few features' bins plus noise; weight: Bayesian bootstrap (-ln U).
__global__ void fill_targets(const std::uint32_t* index, std::int64_t rows, std::int64_t padded, int borders,
                             float* der, float* weight) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = hash64(static_cast<std::uint64_t>(r) + 12345);
    const float u1 = (static_cast<float>(h >> 40) + 0.5f) * (1.0f / 16777216.0f);
    const float u2 = (static_cast<float>((h >> 16) & 0xffffff) + 0.5f) * (1.0f / 16777216.0f);
    const std::uint32_t w0 = index[r];
    const float signal = static_cast<float>(w0 & 0xffu) / borders - 0.5f +
                         0.5f * (static_cast<float>((w0 >> 16) & 0xffu) / borders - 0.5f);
    const float w = -__logf(u1);
    weight[r] = w;
    der[r] = w * (signal + 0.5f * (u2 - 0.5f));
  }
}

__global__ void read_all(const uint4* p, std::int64_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Read bandwidth (GB/s): a streaming read of `bytes` of the buffer, best of several.
double read_bandwidth(const void* buf, std::size_t bytes, cudaStream_t stream) {
  unsigned* sink = nullptr;
  BENCH_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  int sms = 0;
  BENCH_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  double best = 0;
  for (int rep = 0; rep < 6; ++rep) {
    BENCH_CHECK(cudaEventRecord(a, stream));
    read_all<<<sms * 8, 512, 0, stream>>>(static_cast<const uint4*>(buf), static_cast<std::int64_t>(bytes / 16), sink);
    BENCH_CHECK(cudaEventRecord(b, stream));
    BENCH_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
    best = std::max(best, static_cast<double>(bytes) / (ms * 1e6));
  }
  BENCH_CHECK(cudaFree(sink));
  BENCH_CHECK(cudaEventDestroy(a));
  BENCH_CHECK(cudaEventDestroy(b));
  return best;
}

struct shape {
  std::int64_t rows;
  std::int64_t features;
};

}  // namespace

int main(int argc, char** argv) {
  int depth = 6;
  int borders = 128;
  int trees = 15;
  std::string json_path;
  std::vector<shape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--depth" && i + 1 < argc) {
      depth = std::atoi(argv[++i]);
    } else if (a == "--borders" && i + 1 < argc) {
      borders = std::atoi(argv[++i]);
    } else if (a == "--trees" && i + 1 < argc) {
      trees = std::atoi(argv[++i]);
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (i + 1 < argc) {
      shapes.push_back({std::atoll(argv[i]), std::atoll(argv[i + 1])});
      ++i;
    }
  }
  if (shapes.empty()) shapes = {{10500000, 28}, {400000, 2000}};
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  FILE* json = json_path.empty() ? nullptr : std::fopen(json_path.c_str(), "w");

  cbg::context_options co;
  co.device = 0;
  auto ctx = cbg::context::create(co);
  const cudaStream_t stream = ctx->stream();
  for (const shape& s : shapes) {
    namespace q = cbg::quantize;
    namespace tr = cbg::train;
    q::device_quantized dq;
    dq.rows = s.rows;
    dq.features = s.features;
    dq.padded_rows = q::padded_rows_of(s.rows);
    dq.device = 0;
    const std::int64_t groups = q::groups_of(s.features);
    dq.index =
        cbg::device_buffer<std::uint32_t>(static_cast<std::size_t>(groups * dq.padded_rows), stream, ctx->resource());
    dq.border_count = cbg::device_buffer<std::int32_t>(static_cast<std::size_t>(s.features), stream, ctx->resource());
    dq.borders =
        cbg::device_buffer<float>(static_cast<std::size_t>(s.features) * q::border_stride, stream, ctx->resource());
    dq.mode = cbg::device_buffer<std::uint8_t>(static_cast<std::size_t>(s.features), stream, ctx->resource());
    std::vector<std::int32_t> counts(static_cast<std::size_t>(s.features), borders);
    BENCH_CHECK(
        cudaMemcpyAsync(dq.border_count.data(), counts.data(), counts.size() * 4, cudaMemcpyHostToDevice, stream));
    fill_index<<<4096, 256, 0, stream>>>(dq.index.data(), s.rows, dq.padded_rows, s.features, borders);
    cbg::device_buffer<float> der(static_cast<std::size_t>(s.rows), stream, ctx->resource());
    cbg::device_buffer<float> weight(static_cast<std::size_t>(s.rows), stream, ctx->resource());
    cbg::device_buffer<std::uint32_t> leaves(static_cast<std::size_t>(s.rows), stream, ctx->resource());
    fill_targets<<<4096, 256, 0, stream>>>(dq.index.data(), s.rows, dq.padded_rows, borders, der.data(), weight.data());
    BENCH_CHECK(cudaStreamSynchronize(stream));
    BENCH_CHECK(cudaGetLastError());

    const double bw = read_bandwidth(dq.index.data(), dq.index.size_bytes(), stream);
    tr::tree_search_params p;
    p.depth = depth;
    auto ws = tr::make_device_search_workspace(*ctx, dq, 1, p);
    tr::device_search_input in;
    in.q = &dq;
    in.der = der.data();
    in.weight = weight.data();
    in.noise.assign(static_cast<std::size_t>(depth * s.features), 0.0);
    for (std::size_t i = 0; i < in.noise.size(); ++i) in.noise[i] = 1e-6 * static_cast<double>((i * 7919) % 101) - 5e-5;

    // Bytes each level reads in this design: the whole index, der and weight (level 0) or the leaf
    // index (later levels; der/weight of the computed rows come from L2 mostly), plus the leaf update.
    const double index_bytes = static_cast<double>(dq.index.size_bytes());
    const double level0 = index_bytes + 8.0 * s.rows;
    const double later = index_bytes + 12.0 * s.rows;
    const double leaf_update = 4.0 * s.rows + 8.0 * s.rows;  // split word + leaf read, leaf write
    const double tree_bytes = level0 + (depth - 1) * later + depth * leaf_update;
    const double floor_ms = tree_bytes / (bw * 1e6);
    std::printf(
        "shape %lld x %lld, depth %d, %d borders: read bandwidth %.0f GB/s; bytes per level %.3f GB "
        "(level 0 %.3f GB); floor %.3f ms per tree\n",
        static_cast<long long>(s.rows), static_cast<long long>(s.features), depth, borders, bw, later / 1e9,
        level0 / 1e9, floor_ms);

    // Geometries: blocks per SM (fast histogram kernel), and the simple kernel (key -2).
    // Key: blocks per SM (negative: the simple kernel) + 10 * (groups per block - 1) + 100 * L2 prefetch;
    // 0: the library's default.
    std::map<int, double> per_geometry;
    tr::tree_structure structure;
    const auto set_geometry = [&](int key) {
      // Key 1000 + k: geometry k with the row lists off (every level reads every row).
      tr::detail::set_histogram_row_lists(*ws, key < 1000);
      key %= 1000;
      if (key == 0) {
        tr::detail::set_fast_histograms(*ws, dq, true);
        tr::detail::set_histogram_blocks_per_sm(*ws, dq, 2);
        tr::detail::set_histogram_groups_per_block(*ws, dq, 0);
        tr::detail::set_histogram_prefetch(*ws, dq, false);
        return;
      }
      const int blocks = key % 10;
      const int groups = (key % 100) / 10 + 1;
      tr::detail::set_fast_histograms(*ws, dq, blocks > 0);
      tr::detail::set_histogram_blocks_per_sm(*ws, dq, blocks > 0 ? blocks : -blocks);
      tr::detail::set_histogram_groups_per_block(*ws, dq, groups);
      tr::detail::set_histogram_prefetch(*ws, dq, key >= 100);
    };
    for (int key : {0, 1000, 2, 102, 1, 101, -2, 12, 112, 32, 132, 31, 131}) {
      set_geometry(key);
      const int blocks = key % 1000 == 0 ? 2 : key % 10;
      std::vector<double> times;
      cudaEvent_t a, b;
      BENCH_CHECK(cudaEventCreate(&a));
      BENCH_CHECK(cudaEventCreate(&b));
      for (int t = 0; t < trees + 2; ++t) {
        BENCH_CHECK(cudaEventRecord(a, stream));
        structure = tr::search_tree_device(*ctx, in, p, *ws, leaves.data());
        BENCH_CHECK(cudaEventRecord(b, stream));
        BENCH_CHECK(cudaEventSynchronize(b));
        float ms = 0;
        BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
        if (t >= 2) times.push_back(ms);
      }
      BENCH_CHECK(cudaEventDestroy(a));
      BENCH_CHECK(cudaEventDestroy(b));
      per_geometry[key] = median(times);
      const auto& plans = tr::detail::histogram_plans(*ws);
      std::printf(
          "  key %d: %s blocks/SM %d groups/block %d prefetch %d: %.3f ms per tree (median of %d), %.1f%% of floor "
          "speed; hist grids:",
          key, blocks > 0 ? "fast" : "simple", blocks > 0 ? blocks : -blocks,
          key % 1000 == 0 ? 0 : (key % 100) / 10 + 1, key % 1000 >= 100 ? 1 : 0, median(times), trees,
          100.0 * floor_ms / median(times));
      for (const auto& pl : plans) {
        std::printf(" [fpb %d g %d pf %d slots %d units %d chunks %d blocks %d smem %zu]", pl.features_per_block,
                    pl.groups_per_block, pl.prefetch ? 1 : 0, pl.slots_per_pass, pl.units, pl.row_chunks, pl.blocks,
                    pl.shared_bytes);
      }
      std::printf("\n");
    }
    int best_blocks = per_geometry.begin()->first;
    for (const auto& [k, v] : per_geometry) {
      if (v < per_geometry[best_blocks]) best_blocks = k;
    }
    set_geometry(best_blocks);
    // One profiled tree: each stage's time on the GPU timeline.
    tr::detail::set_search_profiling(*ws, true);
    std::map<std::string, double> by_kind;
    std::vector<std::pair<std::string, float>> stages;
    for (int rep = 0; rep < 3; ++rep) {
      (void)tr::search_tree_device(*ctx, in, p, *ws, leaves.data());
      stages = tr::detail::last_search_stats(*ws).stages;
    }
    tr::detail::set_search_profiling(*ws, false);
    std::printf("  profiled tree (blocks/SM %d), ms per stage:", best_blocks);
    for (const auto& [name, ms] : stages) {
      std::printf(" %s %.3f;", name.c_str(), ms);
      const auto space = name.find(' ');
      by_kind[space == std::string::npos ? name : name.substr(space + 1)] += ms;
    }
    std::printf("\n  totals by stage:");
    for (const auto& [k, v] : by_kind) std::printf(" %s %.3f;", k.c_str(), v);
    const auto& st = tr::detail::last_search_stats(*ws);
    std::printf("\n  kernel launches per tree %d, memsets %d, splits:", st.launches, st.memsets);
    for (const auto& sp : structure.splits) std::printf(" (%d,%d)", sp.feature, sp.bin);
    std::printf("\n");
    if (json != nullptr) {
      std::fprintf(json,
                   "{\"device\":\"%s\",\"rows\":%lld,\"features\":%lld,\"depth\":%d,\"borders\":%d,"
                   "\"read_gbps\":%.1f,\"floor_ms\":%.4f,\"ms_per_tree\":%.4f,\"blocks_per_sm\":%d,"
                   "\"launches\":%d,\"memsets\":%d}\n",
                   prop.name, static_cast<long long>(s.rows), static_cast<long long>(s.features), depth, borders, bw,
                   floor_ms, per_geometry[best_blocks], best_blocks, st.launches, st.memsets);
    }
    std::fflush(stdout);
  }
  if (json != nullptr) std::fclose(json);
  return 0;
}
