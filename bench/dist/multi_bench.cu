// SPDX-License-Identifier: Apache-2.0
// cbgpu-multi-bench: training time per iteration on 1, 2 and 4 GPUs (issue 9) for a Higgs-shaped
// set (10.5M rows x 28 float features, binary label, generated on device 0), and whether every
// device list gives the same model. Time per iteration is the steady state: (time of 2N iterations
// - time of N) / N, so quantization, sharding and NCCL setup are left out; the totals are printed too.
//   cbgpu-multi-bench [--rows R] [--features F] [--iterations N] [--devices "0;0:1;0-3"] [--json FILE]
//                     [--extra '"leaf_estimation_iterations": 1']   (more JSON parameters)
//                     [--model-out PREFIX]   (PREFIX-K.cbm: the K-th device list's model, params blanked)
//   cbgpu-multi-bench --collectives R [--json FILE]: the latency of the reducer's collectives on R
//                     GPUs (the sizes a Higgs-shape iteration uses), one thread per rank as in training.
// --repeat K times t(N) and t(2N) K times each (the set-up of a sharded training varies by tenths of a
// second); every device is synchronised before a timer starts.
// A/B switches of the library (cbg::policy): --fused-pass 0|1, --spin-us N, --sliced-score -1|0|1,
// --fused-leaf 0|1 (one GPU: the leaf pass's value sum folded by its decision kernel),
// --fused-search 0|1 (a level's split chosen by the score kernel's last block, one memset per tree),
// --fused-metric 0|1 (the learn metric summed by the next weak pass; with --extra '"metric_period": 1').
// --rank-contexts 1: a list of several devices trained as several processes are (one context,
// communicator and training loop per rank, each on its own thread) instead of "devices".
// --profile FILE: the trainings run with stage timings on (slower: every stage waits for its stream)
// and each appends one JSON line {"devices", "iterations", "stages": {stage: {"ms", "calls"}}} to FILE
// (bench/dist/profile_summary.py summarises it).
#include <algorithm>
#include <barrier>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbgpu/cbgpu_dlpack.h"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/model/io.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/policy.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/trainer.hpp"

namespace {

__device__ float unit(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<double>(z >> 11) / 9007199254740992.0);
}

// Column-major features: a few informative ones (Higgs-like: smooth and skewed), the rest noise;
// label from a logistic of a mixture.
__global__ void generate(float* x, float* y, std::int64_t rows, int features) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float s = 0.f;
    for (int f = 0; f < features; ++f) {
      const float u = unit(static_cast<std::uint64_t>(r) * 0x9e3779b97f4a7c15ull +
                           static_cast<std::uint64_t>(f) * 0x632be59bd9b4e019ull + 7);
      const float v = f % 3 == 0 ? -logf(u + 1e-7f) : 4.f * u - 2.f;
      x[static_cast<std::int64_t>(f) * rows + r] = v;
      if (f < 6) s += (f % 2 == 0 ? 0.6f : -0.4f) * v + (f == 1 ? 0.3f * v * v : 0.f);
    }
    const float noise = unit(static_cast<std::uint64_t>(r) * 0xd1342543de82ef95ull + 3);
    y[r] = 1.f / (1.f + expf(-s)) > noise ? 1.f : 0.f;
  }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string fmt_pair(double a, double b, bool comma) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "[%.4f, %.4f]%s", a, b, comma ? ", " : "");
  return buf;
}

__global__ void touch(unsigned long long* p) {
  if (threadIdx.x == 0) p[0] += 1;
}

// Microseconds per collective on `ranks` GPUs (0..ranks-1): reps back to back after a warm-up, every
// rank on its own thread and stream (as the sharded trainer runs them); "chain" adds a small kernel
// before and after each all-gather, as a leaf pass has them.
std::string collective_bench(int ranks, int reps) {
  std::vector<int> devices;
  for (int d = 0; d < ranks; ++d) devices.push_back(d);
  std::vector<std::unique_ptr<cbg::dist::reducer>> reds = cbg::dist::make_local_reducers(devices);
  struct test {
    const char* name;
    std::size_t bytes;
    std::function<void(cbg::dist::reducer&, unsigned char*, unsigned char*, std::size_t, cudaStream_t)> op;
  };
  const std::vector<test> tests = {
      {"all_gather", 7 * 1024,
       [](cbg::dist::reducer& r, unsigned char* a, unsigned char* b, std::size_t n, cudaStream_t s) {
         r.all_gather(a, b, n, s);
       }},
      {"max_u32", 12,
       [](cbg::dist::reducer& r, unsigned char* a, unsigned char*, std::size_t n, cudaStream_t s) {
         r.max_u32(reinterpret_cast<unsigned*>(a), n / 4, s);
       }},
      {"sum_i64", 57344,
       [](cbg::dist::reducer& r, unsigned char* a, unsigned char*, std::size_t n, cudaStream_t s) {
         r.sum_i64(reinterpret_cast<long long*>(a), n / 8, s);
       }},
      {"sum_i64", 917504,
       [](cbg::dist::reducer& r, unsigned char* a, unsigned char*, std::size_t n, cudaStream_t s) {
         r.sum_i64(reinterpret_cast<long long*>(a), n / 8, s);
       }},
      {"chain", 7 * 1024,
       [](cbg::dist::reducer& r, unsigned char* a, unsigned char* b, std::size_t n, cudaStream_t s) {
         touch<<<1, 32, 0, s>>>(reinterpret_cast<unsigned long long*>(a));
         r.all_gather(a, b, n, s);
         touch<<<1, 32, 0, s>>>(reinterpret_cast<unsigned long long*>(b));
       }},
  };
  std::vector<double> us(tests.size());
  std::barrier sync(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      CBG_CUDA_TRY(cudaSetDevice(r));
      cudaStream_t s = nullptr;
      CBG_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      unsigned char *a = nullptr, *b = nullptr;
      CBG_CUDA_TRY(cudaMalloc(&a, 1 << 20));
      CBG_CUDA_TRY(cudaMalloc(&b, static_cast<std::size_t>(ranks) << 20));
      CBG_CUDA_TRY(cudaMemsetAsync(a, 0, 1 << 20, s));
      for (std::size_t t = 0; t < tests.size(); ++t) {
        for (int k = 0; k < 50; ++k) tests[t].op(*reds[static_cast<std::size_t>(r)], a, b, tests[t].bytes, s);
        CBG_CUDA_TRY(cudaStreamSynchronize(s));
        sync.arrive_and_wait();
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < reps; ++k) tests[t].op(*reds[static_cast<std::size_t>(r)], a, b, tests[t].bytes, s);
        CBG_CUDA_TRY(cudaStreamSynchronize(s));
        if (r == 0) us[t] = seconds_since(t0) * 1e6 / reps;
        sync.arrive_and_wait();
      }
      CBG_CUDA_TRY(cudaFree(a));
      CBG_CUDA_TRY(cudaFree(b));
      CBG_CUDA_TRY(cudaStreamDestroy(s));
    });
  }
  for (auto& t : threads) t.join();
  reds.clear();
  std::string out = "[";
  for (std::size_t t = 0; t < tests.size(); ++t) {
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%s{\"collective\": \"%s\", \"ranks\": %d, \"bytes\": %zu, \"us\": %.2f}",
                  t == 0 ? "\n" : ",\n", tests[t].name, ranks, tests[t].bytes, us[t]);
    std::printf("%s\n", buf + (t == 0 ? 1 : 2));
    out += buf;
  }
  return out + "\n]\n";
}

// One JSON line of a training's stage timings (--profile).
void append_stages(const std::string& path, const std::string& devices, int iterations, const cbg::profiler& p) {
  std::string line =
      "{\"devices\": \"" + devices + "\", \"iterations\": " + std::to_string(iterations) + ", \"stages\": {";
  bool first = true;
  for (const cbg::stage_total& t : p.totals()) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "{\"ms\": %.4f, \"calls\": %lld}", t.ms, static_cast<long long>(t.calls));
    line += (first ? "\"" : ", \"") + t.stage + "\": " + buf;
    first = false;
  }
  std::ofstream(path, std::ios::app) << line << "}}\n";
}

// A pool over column-major features x (rows x features) and labels y on the context's device.
cbg::pool pool_on(const std::shared_ptr<cbg::context>& ctx, float* x, float* y, std::int64_t rows, int features) {
  std::int64_t xs[2] = {rows, features}, xst[2] = {1, rows}, ys[1] = {rows};
  DLTensor tx{}, ty{};
  tx.data = x;
  tx.device = {kDLCUDA, ctx->device()};
  tx.ndim = 2;
  tx.dtype = {kDLFloat, 32, 1};
  tx.shape = xs;
  tx.strides = xst;
  ty = tx;
  ty.data = y;
  ty.ndim = 1;
  ty.shape = ys;
  ty.strides = nullptr;
  cbg::pool_inputs in;
  in.features = {cbg::tensor_ref_kind::dltensor, &tx};
  in.label = {cbg::tensor_ref_kind::dltensor, &ty};
  return cbg::pool::build(ctx, std::move(in));
}

// Timings of one device list trained as several processes do (--rank-contexts): one thread per rank,
// each with its own context on its device, a communicator from one NCCL unique id, its block of the
// rows copied from device 0 (rank 0 a multiple of 4096 rows, as cbgpu.dask places them) and its own
// training loop; the sharded trainer of one context instead runs one loop that hands every call to
// the ranks' threads. t(N) is from a barrier before every rank starts to one after every rank ended.
struct rank_context_run {
  std::vector<double> t_n, t_2n;
  cbg::model::model model;  // rank 0's, of the first N-iteration training
};
rank_context_run train_on_rank_contexts(const std::vector<int>& devices, const float* x, const float* y,
                                        std::int64_t rows, int features, int iterations, int repeat,
                                        const std::function<std::string(int)>& params, const cbg::policy& policy,
                                        const std::string& profile_path, const std::string& label) {
  const int k = static_cast<int>(devices.size());
  const auto id = cbg::dist::nccl_unique_id();
  const std::int64_t block = rows / k / 4096 * 4096;
  std::barrier sync(k);
  rank_context_run out;
  out.t_n.resize(static_cast<std::size_t>(repeat));
  out.t_2n.resize(static_cast<std::size_t>(repeat));
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r) {
    threads.emplace_back([&, r] {
      try {
        const int d = devices[static_cast<std::size_t>(r)];
        const std::int64_t first = r * block, n = r + 1 < k ? block : rows - first;
        cbg::context_options co;
        co.device = d;
        co.profile = !profile_path.empty();
        auto ctx = cbg::context::create(co);
        cbg::set_policy(*ctx, policy);
        const auto step = [r](const char* what) { std::fprintf(stderr, "rank %d: %s\n", r, what); };
        step("context");
        cbg::dist::attach_communicator(ctx, cbg::dist::make_id_communicator(id, r, k, d, std::chrono::seconds(30)));
        step("communicator");
        cbg::device_buffer<float> xs(static_cast<std::size_t>(n * features), ctx->stream(), ctx->resource());
        cbg::device_buffer<float> ys(static_cast<std::size_t>(n), ctx->stream(), ctx->resource());
        for (int f = 0; f < features; ++f) {  // device 0's columns, a peer copy each
          CBG_CUDA_TRY(cudaMemcpyPeerAsync(xs.data() + static_cast<std::int64_t>(f) * n, d,
                                           x + static_cast<std::int64_t>(f) * rows + first, 0,
                                           static_cast<std::size_t>(n) * 4, ctx->stream()));
        }
        CBG_CUDA_TRY(cudaMemcpyPeerAsync(ys.data(), d, y + first, 0, static_cast<std::size_t>(n) * 4, ctx->stream()));
        ctx->sync();
        const cbg::pool pool = pool_on(ctx, xs.data(), ys.data(), n, features);
        step("pool");
        (void)cbg::train::train(pool, cbg::train::parse_params(params(5)), {});  // warm-up
        step("warm-up");
        const auto timed = [&](int its, bool keep) {
          ctx->stage_profiler().reset();
          sync.arrive_and_wait();
          const auto t0 = std::chrono::steady_clock::now();
          cbg::model::model m = cbg::train::train(pool, cbg::train::parse_params(params(its)), {});
          sync.arrive_and_wait();
          const double t = seconds_since(t0);
          if (r == 0 && !profile_path.empty()) append_stages(profile_path, label, its, ctx->stage_profiler());
          if (keep) out.model = std::move(m);
          return t;
        };
        for (int rep = 0; rep < repeat; ++rep) {
          const double tn = timed(iterations, r == 0 && rep == 0);
          const double t2n = timed(2 * iterations, false);
          if (r == 0) {
            out.t_n[static_cast<std::size_t>(rep)] = tn;
            out.t_2n[static_cast<std::size_t>(rep)] = t2n;
          }
        }
      } catch (const std::exception& e) {
        // The other ranks would wait on NCCL or the barrier: a benchmark ends here.
        std::fprintf(stderr, "cbgpu-multi-bench: rank %d: %s\n", r, e.what());
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t rows = 10500000;
  int features = 28, iterations = 100, collectives = 0, repeat = 1;
  bool rank_contexts = false;
  std::string lists = "0;0:1;0-3", json_path, extra, profile_path, model_prefix;
  cbg::policy policy;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rows")
      rows = std::stoll(argv[i + 1]);
    else if (a == "--features")
      features = std::stoi(argv[i + 1]);
    else if (a == "--iterations")
      iterations = std::stoi(argv[i + 1]);
    else if (a == "--devices")
      lists = argv[i + 1];
    else if (a == "--json")
      json_path = argv[i + 1];
    else if (a == "--extra")
      extra = argv[i + 1];
    else if (a == "--collectives")
      collectives = std::stoi(argv[i + 1]);
    else if (a == "--repeat")
      repeat = std::max(1, std::stoi(argv[i + 1]));
    else if (a == "--fused-pass")
      policy.dist_fused_pass = std::stoi(argv[i + 1]) != 0;
    else if (a == "--fused-leaf")
      policy.fused_leaf_pass = std::stoi(argv[i + 1]) != 0;
    else if (a == "--fused-search")
      policy.fused_search_levels = std::stoi(argv[i + 1]) != 0;
    else if (a == "--rank-contexts")
      rank_contexts = std::stoi(argv[i + 1]) != 0;
    else if (a == "--fused-metric")
      policy.fused_learn_metric = std::stoi(argv[i + 1]) != 0;
    else if (a == "--spin-us")
      policy.dist_spin_us = std::stoll(argv[i + 1]);
    else if (a == "--sliced-score")
      policy.dist_sliced_score = std::stoi(argv[i + 1]);
    else if (a == "--profile")
      profile_path = argv[i + 1];
    else if (a == "--model-out")
      model_prefix = argv[i + 1];
  }
  try {
    const int visible = cbg::visible_device_count();
    if (visible == 0) {
      std::printf("cbgpu-multi-bench: no CUDA device visible\n");
      return 77;
    }
    if (collectives > 0) {
      const std::string out = collective_bench(std::min(collectives, visible), 2000);
      if (!json_path.empty()) std::ofstream(json_path) << out;
      return 0;
    }
    cbg::context_options co;
    co.device = 0;
    co.profile = !profile_path.empty();
    auto ctx = cbg::context::create(co);
    cbg::set_policy(*ctx, policy);
    cudaDeviceProp prop{};
    CBG_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
    cbg::device_buffer<float> x(static_cast<std::size_t>(rows * features), ctx->stream(), ctx->resource());
    cbg::device_buffer<float> y(static_cast<std::size_t>(rows), ctx->stream(), ctx->resource());
    generate<<<4096, 256, 0, ctx->stream()>>>(x.data(), y.data(), rows, features);
    CBG_CHECK_CUDA(ctx->stream());
    ctx->sync();
    const cbg::pool pool = pool_on(ctx, x.data(), y.data(), rows, features);

    std::vector<std::string> configs;
    for (std::size_t at = 0; at <= lists.size();) {
      const std::size_t end = std::min(lists.find(';', at), lists.size());
      if (end > at) configs.push_back(lists.substr(at, end - at));
      at = end + 1;
    }
    std::string out = "[";
    double base_ms = 0;
    std::vector<std::uint8_t> base_model;
    for (const std::string& devices : configs) {
      const std::vector<int> list = cbg::dist::parse_devices(devices, visible);
      const auto params = [&](int n) {
        return std::string(
                   R"({"loss_function": "Logloss", "depth": 6, "random_seed": 1, "metric_period": 1000, "iterations": )") +
               std::to_string(n) + R"(, "devices": ")" + devices + "\"" + (extra.empty() ? "" : ", " + extra) + "}";
      };
      cbg::model::model a;
      std::vector<double> t_ns, t_2ns;
      if (rank_contexts && list.size() > 1) {
        const auto rank_params = [&](int n) {
          return std::string(
                     R"({"loss_function": "Logloss", "depth": 6, "random_seed": 1, "metric_period": 1000, "iterations": )") +
                 std::to_string(n) + (extra.empty() ? "" : ", " + extra) + "}";
        };
        rank_context_run run = train_on_rank_contexts(list, x.data(), y.data(), rows, features, iterations, repeat,
                                                      rank_params, policy, profile_path, "rank contexts " + devices);
        t_ns = std::move(run.t_n);
        t_2ns = std::move(run.t_2n);
        a = std::move(run.model);
      } else {
        (void)cbg::train::train(pool, cbg::train::parse_params(params(5)), {});  // warm-up: NCCL, pools, kernels
        const auto timed = [&](int n, cbg::model::model* keep) {
          for (int d = 0; d < visible; ++d) {  // nothing of an earlier training left running
            CBG_CUDA_TRY(cudaSetDevice(d));
            CBG_CUDA_TRY(cudaDeviceSynchronize());
          }
          ctx->stage_profiler().reset();
          const auto t0 = std::chrono::steady_clock::now();
          cbg::model::model m = cbg::train::train(pool, cbg::train::parse_params(params(n)), {});
          const double t = seconds_since(t0);
          if (!profile_path.empty()) append_stages(profile_path, devices, n, ctx->stage_profiler());
          if (keep != nullptr) *keep = std::move(m);
          return t;
        };
        for (int k = 0; k < repeat; ++k) {
          t_ns.push_back(timed(iterations, k == 0 ? &a : nullptr));
          t_2ns.push_back(timed(2 * iterations, nullptr));
        }
      }
      const double t_n = *std::min_element(t_ns.begin(), t_ns.end());
      const double t_2n = *std::min_element(t_2ns.begin(), t_2ns.end());
      const double ms = (t_2n - t_n) / iterations * 1e3;
      std::string raw;
      for (int k = 0; k < repeat; ++k) {
        raw += fmt_pair(t_ns[static_cast<std::size_t>(k)], t_2ns[static_cast<std::size_t>(k)], k + 1 < repeat);
      }
      for (auto& [k, v] : a.info) {
        if (k == "params") v = "";
      }
      const std::vector<std::uint8_t> bytes = cbg::model::write_cbm(a);
      if (base_model.empty()) {
        base_model = bytes;
        base_ms = ms;
      }
      const bool same = bytes == base_model;
      if (!model_prefix.empty()) {  // for comparisons across runs (A/B switches, builds)
        std::ofstream(model_prefix + "-" + std::to_string(&devices - configs.data()) + ".cbm", std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      }
      char buf[1024];
      std::snprintf(buf, sizeof(buf),
                    "{\"devices\": \"%s\", \"gpus\": %zu, \"device_name\": \"%s\", \"rows\": %lld, \"features\": %d, "
                    "\"iterations\": %d, \"ms_per_iteration\": %.3f, \"speedup\": %.2f, \"total_s\": %.3f, "
                    "\"same_model_as_first\": %s, \"t_n_t_2n_s\": [%s]}",
                    devices.c_str(), list.size(), prop.name, static_cast<long long>(rows), features, iterations, ms,
                    base_ms / ms, t_n, same ? "true" : "false", raw.c_str());
      const std::string line = buf;
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      out += (out.size() > 1 ? ",\n" : "\n") + line;
    }
    out += "\n]\n";
    if (!json_path.empty()) std::ofstream(json_path) << out;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cbgpu-multi-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
