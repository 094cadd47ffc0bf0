// SPDX-License-Identifier: Apache-2.0
// cbgpu-apply-bench: the GPU evaluator (predict_to_device, device memory in and out) on random
// CatBoost-shaped models and inputs generated on the device, beside the host evaluator (one thread,
// on a subset of the rows), and against the floor of reading the input once at the bandwidth of a
// device-to-device copy measured in the same run (floor = copy time / 2).
//   cbgpu-apply-bench [--quick] [--sweep]
// Workloads (the issue's): 28 float features x 1000 depth-6 trees on 10M rows; 2000 features x 8000
// depth-6 trees on 100K rows; a CTR model with 8 categorical features (2 one-hot, 16 CTRs, 1000
// depth-6 trees) on 4M rows; latency of the first model at batch sizes 1, 1K and 64K. --sweep also
// times other tilings (tuning_apply.hpp); --quick uses a tenth of the rows.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cbg/apply/evaluator.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "support/matrix_view.hpp"
#include "support/random_model.hpp"
#include "bench/common/bench_util.hpp"

namespace {

namespace ca = cbg::apply;
namespace cm = cbg::model;

}  // namespace

// fill.cu
void bench_fill_floats(float* x, std::int64_t n, std::uint64_t seed, cudaStream_t stream);
void bench_fill_ints(std::int64_t* x, std::int64_t n, std::uint64_t seed, int values, cudaStream_t stream);

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median milliseconds of `f` (enqueued on `stream`), timed with events, after one warm-up.
double time_ms(cudaStream_t stream, int reps, const std::function<void()>& f) {
  f();
  BENCH_CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    BENCH_CHECK(cudaEventRecord(a, stream));
    f();
    BENCH_CHECK(cudaEventRecord(b, stream));
    BENCH_CHECK(cudaEventSynchronize(b));
    float t = 0;
    BENCH_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  BENCH_CHECK(cudaEventDestroy(a));
  BENCH_CHECK(cudaEventDestroy(b));
  return median(ms);
}

// Median wall microseconds of a blocking call (latency).
double wall_us(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(us);
}

double copy_bandwidth(cudaStream_t stream) {  // bytes/s of a device-to-device copy (read + write)
  const std::size_t bytes = std::size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  BENCH_CHECK(cudaMalloc(&a, bytes));
  BENCH_CHECK(cudaMalloc(&b, bytes));
  const double ms =
      time_ms(stream, 5, [&] { BENCH_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream)); });
  BENCH_CHECK(cudaFree(a));
  BENCH_CHECK(cudaFree(b));
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3);
}

DLTensor dl_tensor(void* data, DLDataType type, int device_type, std::int64_t* shape, std::int64_t* strides, int ndim) {
  DLTensor t{};
  t.data = data;
  t.device = {static_cast<DLDeviceType>(device_type), 0};
  t.ndim = ndim;
  t.dtype = type;
  t.shape = shape;
  t.strides = strides;
  return t;
}

// The inputs of one workload: flat columns in device memory (float32 matrix, or per-column tensors
// when the model has categorical features) and the host copy of the first `host_rows` rows.
struct workload {
  std::string name;
  cm::model model;
  std::int64_t rows = 0;
  std::int64_t host_rows = 0;
  std::size_t input_bytes = 0;
  std::vector<cbg::device_buffer<unsigned char>> device;
  std::vector<std::vector<unsigned char>> host;
  std::vector<std::vector<std::int64_t>> shapes;  // kept alive for the DLTensors
  std::vector<DLTensor> device_tensors, host_tensors;
  std::optional<cbg::pool> gpu, cpu;
};

void build_inputs(workload& w, const std::shared_ptr<cbg::context>& gctx, const std::shared_ptr<cbg::context>& hctx) {
  const cm::model& m = w.model;
  const auto n = static_cast<std::int64_t>(m.flat_feature_count());
  std::vector<bool> is_cat(static_cast<std::size_t>(n), false);
  for (const auto& c : m.cat_features) is_cat[static_cast<std::size_t>(c.flat_index)] = true;
  const bool matrix = m.cat_features.empty();
  const cudaStream_t s = gctx->stream();
  const auto add = [&](std::size_t bytes) {
    w.device.emplace_back(bytes, s, gctx->resource());
    w.input_bytes += bytes;
    return w.device.back().data();
  };
  cbg::pool_inputs dp, hp;
  w.shapes.reserve(4 * static_cast<std::size_t>(n) + 4);
  w.device_tensors.reserve(static_cast<std::size_t>(n) + 1);
  w.host_tensors.reserve(static_cast<std::size_t>(n) + 1);
  const auto tensors = [&](void* d, std::size_t elem, DLDataType type, std::int64_t cols, std::uint64_t seed,
                           bool ints) {
    const std::int64_t count = w.rows * cols;
    if (ints) {
      bench_fill_ints(static_cast<std::int64_t*>(d), count, seed, 40, s);
    } else {
      bench_fill_floats(static_cast<float*>(d), count, seed, s);
    }
    BENCH_CHECK(cudaGetLastError());
    w.host.emplace_back(static_cast<std::size_t>(w.host_rows * cols) * elem);
    BENCH_CHECK(cudaMemcpyAsync(w.host.back().data(), d, w.host.back().size(), cudaMemcpyDeviceToHost, s));
    w.shapes.push_back(cols == 1 ? std::vector<std::int64_t>{w.rows} : std::vector<std::int64_t>{w.rows, cols});
    w.shapes.push_back(cols == 1 ? std::vector<std::int64_t>{w.host_rows}
                                 : std::vector<std::int64_t>{w.host_rows, cols});
    const int nd = cols == 1 ? 1 : 2;
    w.device_tensors.push_back(dl_tensor(d, type, kDLCUDA, w.shapes[w.shapes.size() - 2].data(), nullptr, nd));
    w.host_tensors.push_back(dl_tensor(w.host.back().data(), type, kDLCPU, w.shapes.back().data(), nullptr, nd));
    return std::make_pair(cbg::tensor_ref{cbg::tensor_ref_kind::dltensor, &w.device_tensors.back()},
                          cbg::tensor_ref{cbg::tensor_ref_kind::dltensor, &w.host_tensors.back()});
  };
  if (matrix) {  // one row-major float32 [rows, n] matrix
    void* d = add(static_cast<std::size_t>(w.rows * n) * 4);
    auto [dr, hr] = tensors(d, 4, DLDataType{kDLFloat, 32, 1}, n, 7, false);
    dp.features = dr;
    hp.features = hr;
  } else {  // per-column tensors: float32 numeric, int64 categorical
    for (std::int64_t j = 0; j < n; ++j) {
      const bool cat = is_cat[static_cast<std::size_t>(j)];
      void* d = add(static_cast<std::size_t>(w.rows) * (cat ? 8 : 4));
      auto [dr, hr] = tensors(d, cat ? 8 : 4, cat ? DLDataType{kDLInt, 64, 1} : DLDataType{kDLFloat, 32, 1}, 1,
                              static_cast<std::uint64_t>(j) * 1000003ULL, cat);
      dp.columns.push_back(dr);
      hp.columns.push_back(hr);
      if (cat) {
        dp.cat_features.push_back(static_cast<std::int32_t>(j));
        hp.cat_features.push_back(static_cast<std::int32_t>(j));
      }
    }
  }
  BENCH_CHECK(cudaStreamSynchronize(s));
  w.gpu.emplace(cbg::pool::build(gctx, std::move(dp)));
  w.cpu.emplace(cbg::pool::build(hctx, std::move(hp)));
}

cbg::mutable_tensor_view output(void* data, cbg::memory_kind mem, std::int64_t rows, std::int64_t cols) {
  return cbg::test::matrix_view(data, cbg::dtype::float64, mem, mem == cbg::memory_kind::device ? 0 : -1, rows, cols);
}

void run_workload(workload& w, const std::shared_ptr<cbg::context>& gctx, const std::shared_ptr<cbg::context>& hctx,
                  double bandwidth, bool sweep, const std::vector<ca::tiling_policy>& policies) {
  build_inputs(w, gctx, hctx);
  std::printf("\n## %s: %lld rows, %zu trees, %zu float + %zu categorical features (%zu CTRs), input %.3f GB\n",
              w.name.c_str(), static_cast<long long>(w.rows), w.model.tree_count(), w.model.float_features.size(),
              w.model.cat_features.size(), w.model.ctr_features.size(), static_cast<double>(w.input_bytes) / 1e9);
  ca::device_model_cache cache;
  const cudaStream_t s = gctx->stream();
  const ca::predict_options o;
  cbg::device_buffer<double> out(static_cast<std::size_t>(w.rows), s, gctx->resource());
  const auto upload_t0 = std::chrono::steady_clock::now();
  ca::predict_to_device(cache, w.model, *w.gpu, o, output(out.data(), cbg::memory_kind::device, w.rows, 1), nullptr);
  BENCH_CHECK(cudaStreamSynchronize(s));
  const double first_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - upload_t0).count();
  const double floor_ms = static_cast<double>(w.input_bytes) / bandwidth * 2.0 * 1e3 / 2.0;  // one read
  const std::size_t n_policies = sweep ? policies.size() : 1;
  std::printf("| tiling | GPU ms | rows/s | x read floor (%.3f ms) |\n| --- | --- | --- | --- |\n", floor_ms);
  double best_default = 0;
  for (std::size_t p = 0; p < n_policies; ++p) {
    const ca::tiling_policy& pol = policies[p];
    try {
      const double ms = time_ms(s, 7, [&] {
        ca::predict_to_device(cache, w.model, *w.gpu, o, output(out.data(), cbg::memory_kind::device, w.rows, 1),
                              nullptr, &pol);
      });
      if (p == 0) best_default = ms;
      std::printf("| %s rows %d, chunk %d, budget %d KB%s | %.3f | %.3g | %.1fx |\n", p == 0 ? "default:" : "",
                  pol.max_tile_rows, pol.tree_chunk, pol.smem_budget / 1024,
                  pol.force_global_bins ? ", global bins" : "", ms, static_cast<double>(w.rows) / (ms * 1e-3),
                  ms / floor_ms);
    } catch (const std::exception& e) {
      std::printf("| policy %zu | failed: %s | | |\n", p, e.what());
    }
  }
  // The host evaluator on the first host_rows rows (one thread).
  std::vector<double> host_out(static_cast<std::size_t>(w.host_rows));
  ca::predict_options ho;
  // A CPU pool holds host_rows rows.
  const auto t0 = std::chrono::steady_clock::now();
  ca::predict_to_host(cache, w.model, *w.cpu, ho, output(host_out.data(), cbg::memory_kind::host, w.host_rows, 1),
                      nullptr);
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Spot check: the GPU's first rows equal the host's, bit for bit.
  std::vector<double> gpu_head(static_cast<std::size_t>(w.host_rows));
  BENCH_CHECK(cudaMemcpy(gpu_head.data(), out.data(), gpu_head.size() * sizeof(double), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(gpu_head.data(), host_out.data(), gpu_head.size() * sizeof(double)) == 0;
  const double image_mb = static_cast<double>(cache.get(w.model, 0, s, gctx->copies(), gctx->rules()).bytes()) / 1e6;
  std::printf(
      "first call (uploads the model, %.1f MB): %.2f ms; host evaluator: %lld rows in %.3f s = %.3g rows/s "
      "(GPU default %.0fx faster); GPU == host on those rows: %s\n",
      image_mb, first_ms, static_cast<long long>(w.host_rows), host_s, static_cast<double>(w.host_rows) / host_s,
      static_cast<double>(w.host_rows) / host_s > 0
          ? (static_cast<double>(w.rows) / (best_default * 1e-3)) / (static_cast<double>(w.host_rows) / host_s)
          : 0.0,
      same ? "yes" : "NO");
}

void latency(workload& w, const std::shared_ptr<cbg::context>& gctx) {
  std::printf("\n## latency, %s (blocking call: enqueue + stream synchronize, median of 200)\n", w.name.c_str());
  std::printf("| batch | GPU us | host evaluator us |\n| --- | --- | --- |\n");
  ca::device_model_cache cache;
  const cudaStream_t s = gctx->stream();
  for (const std::int64_t batch : {1LL, 1000LL, 65536LL}) {
    std::vector<std::int64_t> shape = {batch, static_cast<std::int64_t>(w.model.flat_feature_count())};
    DLTensor t = dl_tensor(w.device.front().data(), DLDataType{kDLFloat, 32, 1}, kDLCUDA, shape.data(), nullptr, 2);
    cbg::pool_inputs in;
    in.features = {cbg::tensor_ref_kind::dltensor, &t};
    const cbg::pool p = cbg::pool::build(gctx, std::move(in));
    cbg::device_buffer<double> out(static_cast<std::size_t>(batch), s, gctx->resource());
    const double us = wall_us(200, [&] {
      ca::predict_to_device(cache, w.model, p, ca::predict_options{},
                            output(out.data(), cbg::memory_kind::device, batch, 1), nullptr);
      BENCH_CHECK(cudaStreamSynchronize(s));
    });
    double host_us = 0;
    if (batch <= w.host_rows) {
      std::vector<std::int64_t> hshape = {batch, shape[1]};
      DLTensor ht = dl_tensor(w.host.front().data(), DLDataType{kDLFloat, 32, 1}, kDLCPU, hshape.data(), nullptr, 2);
      cbg::context_options co;
      co.device = cbg::cpu_device;
      cbg::pool_inputs hin;
      hin.features = {cbg::tensor_ref_kind::dltensor, &ht};
      const cbg::pool hp = cbg::pool::build(cbg::context::create(co), std::move(hin));
      std::vector<double> hout(static_cast<std::size_t>(batch));
      host_us = wall_us(batch >= 1000 ? 3 : 50, [&] {
        ca::predict_to_host(cache, w.model, hp, ca::predict_options{},
                            output(hout.data(), cbg::memory_kind::host, batch, 1), nullptr);
      });
    }
    std::printf("| %lld | %.1f | %s |\n", static_cast<long long>(batch), us,
                host_us > 0 ? std::to_string(static_cast<long long>(host_us)).c_str() : "-");
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, sweep = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--sweep") == 0) sweep = true;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("cbgpu-apply-bench: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  cbg::context_options go;
  go.device = 0;
  auto gctx = cbg::context::create(go);
  cbg::context_options ho;
  ho.device = cbg::cpu_device;
  auto hctx = cbg::context::create(ho);
  const double bw = copy_bandwidth(gctx->stream());
  std::printf("# cbgpu-apply-bench on %s (%d SMs), D2D copy %.2f TB/s (read + write)\n", prop.name,
              prop.multiProcessorCount, bw / 1e12);
  const std::int64_t scale = quick ? 10 : 1;

  std::vector<ca::tiling_policy> policies;
  policies.push_back({});  // the defaults (tuning_apply.hpp)
  for (int rows : {256, 512, 2048})
    for (int chunk : {16, 32, 64}) policies.push_back({rows, chunk, 0, false});
  for (int chunk : {16, 64}) policies.push_back({1024, chunk, 0, false});
  policies.push_back({1024, 32, 160 * 1024, false});
  policies.push_back({1024, 32, 0, true});
  policies.push_back({256, 64, 0, true});

  cbg::test::random_model_spec s;
  s.n_float = 28;
  s.n_trees = 1000;
  s.min_depth = s.max_depth = 6;
  s.max_borders = 128;
  s.edge_features = false;
  s.seed = 1;
  workload narrow;
  narrow.name = "28 float features x 1000 depth-6 trees";
  narrow.model = cbg::test::random_model(s);
  narrow.rows = 10000000 / scale;
  narrow.host_rows = 20000;
  run_workload(narrow, gctx, hctx, bw, sweep, policies);
  latency(narrow, gctx);
  narrow = workload{};

  s = {};
  s.n_float = 2000;
  s.n_trees = 8000;
  s.min_depth = s.max_depth = 6;
  s.max_borders = 64;
  s.edge_features = false;
  s.seed = 2;
  workload wide;
  wide.name = "2000 float features x 8000 depth-6 trees";
  wide.model = cbg::test::random_model(s);
  wide.rows = 100000 / scale;
  wide.host_rows = 500;
  run_workload(wide, gctx, hctx, bw, sweep, policies);
  wide = workload{};

  s = {};
  s.n_float = 12;
  s.n_cat = 8;
  s.n_one_hot = 2;
  s.n_ctr = 16;
  s.n_trees = 1000;
  s.min_depth = s.max_depth = 6;
  s.max_borders = 64;
  s.cat_values = 40;
  s.edge_features = false;
  s.seed = 3;
  workload ctr;
  ctr.name = "CTR model: 12 float + 8 categorical features (2 one-hot, 16 CTRs) x 1000 depth-6 trees";
  ctr.model = cbg::test::random_model(s);
  ctr.rows = 4000000 / scale;
  ctr.host_rows = 5000;
  run_workload(ctr, gctx, hctx, bw, sweep, policies);
  return 0;
}
