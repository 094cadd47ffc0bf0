// SPDX-License-Identifier: Apache-2.0
// The GPU evaluator against the host evaluator (tagged [gpu]: skipped without a device).
// RawFormulaVal, Class and leaf indexes must be bit-identical; the other prediction types within
// 1e-12 relative (the GPU's exp/log). Models: random ones of every feature kind (float with every
// NaN treatment and more than 127 borders, one-hot with more than 127 values, CTRs of every type
// over projections with float and one-hot splits, depths 0..12, dimensions 1..3, Scale and Bias)
// and CatBoost-made model files (tests/data/apply). Inputs of every dtype, per-column tensors and a
// row-major matrix; outputs float32/float64/integers, row- and column-major and 1-D; every tiling
// path. Also: many host threads and streams with one model, strict no-D2H mode, CUDA graph capture.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cbg/apply/evaluator.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/model/io.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/matrix_view.hpp"
#include "support/random_model.hpp"

namespace ca = cbg::apply;
namespace cm = cbg::model;
using cbg::dtype;

namespace {

using cbg::test::make_context;

std::uint16_t half_of(float f) {  // truncating float -> binary16 (both sides read the same bits)
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const int e = static_cast<int>((b >> 23) & 0xffu);
  if (e == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | ((b & 0x7fffffu) != 0 ? 0x200u : 0u));
  const int he = e - 127 + 15;
  if (he >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (he <= 0) return sign;
  return static_cast<std::uint16_t>(sign | (he << 10) | ((b >> 13) & 0x3ffu));
}

// One input column in host memory, as bytes of its dtype.
struct column_bytes {
  dtype type = dtype::float32;
  std::vector<unsigned char> bytes;
};

DLDataType dl_of(dtype t) {
  switch (t) {
    case dtype::float16:
      return cbg::test::dl_float(16);
    case dtype::float32:
      return cbg::test::dl_float(32);
    case dtype::float64:
      return cbg::test::dl_float(64);
    case dtype::int8:
      return cbg::test::dl_int(8);
    case dtype::int16:
      return cbg::test::dl_int(16);
    case dtype::int32:
      return cbg::test::dl_int(32);
    case dtype::int64:
      return cbg::test::dl_int(64);
    case dtype::uint8:
      return cbg::test::dl_uint(8);
    case dtype::uint16:
      return cbg::test::dl_uint(16);
    case dtype::uint32:
      return cbg::test::dl_uint(32);
    case dtype::uint64:
      return cbg::test::dl_uint(64);
    case dtype::boolean:
      return cbg::test::dl_uint(8);  // not used: no bool columns here
  }
  return cbg::test::dl_float(32);
}

template <class T>
void put(std::vector<unsigned char>& out, T v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

// Flat column j of `in` converted to dtype `t`.
column_bytes convert(const cbg::test::random_inputs& in, std::size_t j, dtype t) {
  column_bytes c;
  c.type = t;
  const auto rows = static_cast<std::size_t>(in.rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const float f = in.floats[j * rows + r];
    const std::int64_t i = in.cats[j * rows + r];
    switch (t) {
      case dtype::float16:
        put(c.bytes, half_of(f));
        break;
      case dtype::float32:
        put(c.bytes, f);
        break;
      case dtype::float64:
        put(c.bytes, static_cast<double>(f) * (1.0 + 1e-9));
        break;  // not a float32
      case dtype::int32:
        put(c.bytes,
            in.is_cat[j] ? static_cast<std::int32_t>(i) : static_cast<std::int32_t>(std::isfinite(f) ? f * 10 : 0));
        break;
      case dtype::int64:
        put(c.bytes, i);
        break;
      case dtype::uint8:
        put(c.bytes, static_cast<std::uint8_t>(i));
        break;
      case dtype::uint16:
        put(c.bytes, static_cast<std::uint16_t>(i));
        break;
      case dtype::uint64:
        put(c.bytes, static_cast<std::uint64_t>(i));
        break;
      case dtype::int8:
        put(c.bytes, static_cast<std::int8_t>(i));
        break;
      default:
        put(c.bytes, f);
        break;
    }
  }
  return c;
}

// The same columns as a CPU pool and as a GPU pool (device copies), plus the tensors behind them.
struct twin_pools {
  std::vector<column_bytes> host;
  std::vector<cbg::device_buffer<unsigned char>> device;
  std::vector<std::unique_ptr<cbg::test::fake_tensor>> tensors;
  std::optional<cbg::pool> cpu, gpu;
};

void build_pools(twin_pools& t, const cbg::test::random_inputs& in, const std::shared_ptr<cbg::context>& gctx,
                 int dtype_variant, bool matrix) {
  auto hctx = make_context(cbg::cpu_device);
  cbg::pool_inputs hp, dp;
  const std::size_t n = in.is_cat.size();
  const auto rows = in.rows;
  if (matrix) {  // one row-major float32 matrix (numeric models only)
    std::vector<float> x(static_cast<std::size_t>(rows) * n);
    for (std::size_t j = 0; j < n; ++j)
      for (std::int64_t r = 0; r < rows; ++r)
        x[static_cast<std::size_t>(r) * n + j] =
            in.floats[j * static_cast<std::size_t>(rows) + static_cast<std::size_t>(r)];
    column_bytes c;
    c.bytes.resize(x.size() * 4);
    std::memcpy(c.bytes.data(), x.data(), c.bytes.size());
    t.host.push_back(std::move(c));
  } else {
    static const dtype float_types[] = {dtype::float32, dtype::float64, dtype::float16, dtype::int32};
    static const dtype cat_types[] = {dtype::int64, dtype::int32,  dtype::uint16,
                                      dtype::uint8, dtype::uint64, dtype::int8};
    for (std::size_t j = 0; j < n; ++j) {
      const dtype type =
          in.is_cat[j]
              ? cat_types[(j + static_cast<std::size_t>(dtype_variant)) % 6]
              : (dtype_variant == 0 ? dtype::float32 : float_types[(j + static_cast<std::size_t>(dtype_variant)) % 4]);
      t.host.push_back(convert(in, j, type));
    }
  }
  for (auto& c : t.host) {
    t.device.emplace_back(c.bytes.size(), gctx->stream(), gctx->resource());
    CBG_CUDA_TRY(cudaMemcpyAsync(t.device.back().data(), c.bytes.data(), c.bytes.size(), cudaMemcpyHostToDevice,
                                 gctx->stream()));
  }
  gctx->sync();
  for (std::size_t k = 0; k < t.host.size(); ++k) {
    const std::vector<std::int64_t> shape =
        matrix ? std::vector<std::int64_t>{rows, static_cast<std::int64_t>(n)} : std::vector<std::int64_t>{rows};
    const std::vector<std::int64_t> strides =
        matrix ? std::vector<std::int64_t>{static_cast<std::int64_t>(n), 1} : std::vector<std::int64_t>{1};
    t.tensors.push_back(
        std::make_unique<cbg::test::fake_tensor>(t.host[k].bytes.data(), dl_of(t.host[k].type), shape, strides));
    t.tensors.push_back(std::make_unique<cbg::test::fake_tensor>(t.device[k].data(), dl_of(t.host[k].type), shape,
                                                                 strides, DLDevice{kDLCUDA, gctx->device()}));
    if (matrix) {
      hp.features = t.tensors[t.tensors.size() - 2]->as_borrowed();
      dp.features = t.tensors.back()->as_borrowed();
    } else {
      hp.columns.push_back(t.tensors[t.tensors.size() - 2]->as_borrowed());
      dp.columns.push_back(t.tensors.back()->as_borrowed());
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    if (in.is_cat[j]) {
      hp.cat_features.push_back(static_cast<std::int32_t>(j));
      dp.cat_features.push_back(static_cast<std::int32_t>(j));
    }
  }
  t.cpu.emplace(cbg::pool::build(hctx, std::move(hp)));
  t.gpu.emplace(cbg::pool::build(gctx, std::move(dp)));
}

constexpr auto view_of = cbg::test::matrix_view;

double element(const std::vector<unsigned char>& bytes, dtype t, std::size_t i) {
  switch (t) {
    case dtype::float32: {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    case dtype::int32: {
      std::int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    case dtype::uint32: {
      std::uint32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    case dtype::int64: {
      std::int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      return static_cast<double>(v);
    }
    default: {
      double d;
      std::memcpy(&d, bytes.data() + 8 * i, 8);
      return d;
    }
  }
}

// The outputs built on the C library's exp or log (CUDA's on the GPU).
bool uses_libm(const ca::predict_options& o) {
  return o.output != ca::output_kind::leaf_indexes &&
         (o.type == cm::prediction_type::probability || o.type == cm::prediction_type::log_probability ||
          o.type == cm::prediction_type::multi_probability);
}

// Runs the GPU evaluator into a device output of `type`/`layout` and compares with `expected`
// ([rows, cols] row-major doubles from the host evaluator). Returns the number of mismatches.
std::size_t compare_gpu(ca::device_model_cache& cache, const cm::model& m, const cbg::pool& gpu,
                        const ca::predict_options& o, const std::vector<double>& expected, std::int64_t cols,
                        dtype type, int layout, const ca::tiling_policy* policy, cudaStream_t stream = nullptr) {
  const cbg::context& ctx = *gpu.ctx();
  const std::int64_t rows = gpu.num_rows();
  const std::size_t n = static_cast<std::size_t>(rows * cols);
  cbg::device_buffer<unsigned char> out(std::max<std::size_t>(n, 1) * cbg::size_of(type), ctx.stream(), ctx.resource());
  CBG_CUDA_TRY(cudaMemsetAsync(out.data(), 0xff, out.size_bytes(), ctx.stream()));
  ctx.sync();
  ca::predict_to_device(cache, m, gpu, o,
                        view_of(out.data(), type, cbg::memory_kind::device, ctx.device(), rows, cols, layout), stream,
                        policy);
  CBG_CUDA_TRY(cudaStreamSynchronize(stream != nullptr ? stream : ctx.stream()));
  std::vector<unsigned char> host(out.size_bytes());
  CBG_CUDA_TRY(cudaMemcpy(host.data(), out.data(), host.size(), cudaMemcpyDeviceToHost));
  std::size_t bad = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::size_t at = static_cast<std::size_t>(layout == 1 ? j * rows + r : r * cols + j);
      const double got = element(host, type, at);
      double want = expected[static_cast<std::size_t>(r * cols + j)];
      if (type == dtype::float32) want = static_cast<float>(want);
      // Bit for bit, the sign of zero included, except where CUDA's exp or log stands for the C
      // library's (the last bit may differ there).
      bool ok = (got == want) || (std::isnan(got) && std::isnan(want));
      if (ok && type == dtype::float64) ok = std::signbit(got) == std::signbit(want) || std::isnan(got);
      if (!ok && uses_libm(o)) {
        ok = std::abs(got - want) <= (type == dtype::float32 ? 1e-6 : 2e-15) * std::max(1.0, std::abs(want));
      }
      if (!ok && bad++ < 3) {
        UNSCOPED_INFO("row " << r << " column " << j << ": GPU " << got << " host " << want << " (diff " << got - want
                             << ")");
      }
    }
  }
  return bad;
}

// Host reference through the CPU pool (the host evaluator), [rows, cols] row-major doubles.
std::vector<double> reference(ca::device_model_cache& cache, const cm::model& m, const cbg::pool& cpu,
                              const ca::predict_options& o, std::int64_t& cols) {
  const auto shape = ca::output_shape(m, o, cpu.num_rows());
  cols = shape[1];
  std::vector<double> out(static_cast<std::size_t>(shape[0] * shape[1]));
  ca::predict_to_host(cache, m, cpu, o,
                      view_of(out.data(), dtype::float64, cbg::memory_kind::host, -1, shape[0], shape[1], 0), nullptr);
  return out;
}

std::vector<cm::prediction_type> all_types() {
  std::vector<cm::prediction_type> t;
  for (int i = 0; i < cm::prediction_type_count; ++i) t.push_back(static_cast<cm::prediction_type>(i));
  return t;
}

struct model_case {
  const char* name;
  cbg::test::random_model_spec spec;
  std::vector<std::int64_t> rows;
};

std::vector<model_case> model_cases() {
  std::vector<model_case> cases;
  cbg::test::random_model_spec s;
  s.n_float = 8;
  s.n_trees = 40;
  s.max_depth = 8;
  s.loss = "Logloss";
  s.scale = 0.5;
  s.bias = true;
  s.seed = 11;
  cases.push_back({"numeric d0-8 Logloss", s, {1, 7, 4099}});
  s = {};
  s.n_float = 5;
  s.n_cat = 3;
  s.n_one_hot = 2;
  s.n_ctr = 9;
  s.n_trees = 60;
  s.max_depth = 10;
  s.big_one_hot = true;
  s.cat_values = 160;
  s.loss = "RMSE";
  s.seed = 12;
  cases.push_back({"one-hot + CTR, d0-10, wide slots", s, {5, 70001}});
  s = {};
  s.n_float = 4;
  s.n_cat = 2;
  s.n_one_hot = 1;
  s.n_ctr = 6;
  s.n_trees = 30;
  s.min_depth = 1;
  s.max_depth = 6;
  s.dim = 3;
  s.bias = true;
  s.loss = "MultiClass";
  s.seed = 13;
  cases.push_back({"MultiClass dim 3 with CTRs", s, {3, 2051}});
  // Nine classes (the fast exponent's vector lanes and tail) and raw values far apart (its clamping).
  s.dim = 9;
  s.scale = 400.0;
  s.seed = 17;
  cases.push_back({"MultiClass dim 9, large raw values", s, {2049}});
  s.dim = 3;
  s.scale = 1.0;
  s.loss = "MultiClassOneVsAll";
  s.seed = 14;
  s.bias = false;
  cases.push_back({"MultiClassOneVsAll dim 3", s, {1029}});
  s = {};
  s.n_float = 6;
  s.n_cat = 1;
  s.n_ctr = 2;
  s.dim = 2;
  s.n_trees = 25;
  s.loss = "RMSEWithUncertainty";
  s.seed = 15;
  cases.push_back({"RMSEWithUncertainty dim 2", s, {997}});
  s.loss = "MultiLogloss";
  s.scale = 1.25;
  s.bias = true;
  s.seed = 16;
  cases.push_back({"MultiLogloss dim 2", s, {998}});
  return cases;
}

std::vector<ca::tiling_policy> policies() {
  std::vector<ca::tiling_policy> p(4);
  p[1].max_tile_rows = 32;
  p[1].tree_chunk = 3;
  p[2].force_global_bins = true;
  p[2].max_tile_rows = 256;
  p[2].tree_chunk = 5;
  p[3].smem_budget = 6 * 1024;  // global bins and global row sums
  p[3].max_tile_rows = 512;
  return p;
}

}  // namespace

TEST_CASE("GPU evaluator equals the host evaluator: random models, every type, layout and tiling", "[gpu][apply]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  const auto tilings = policies();
  int variant = 0;
  for (const model_case& mc : model_cases()) {
    const cm::model m = cbg::test::random_model(mc.spec);
    cm::validate(m);
    ca::device_model_cache cache;
    for (const std::int64_t rows : mc.rows) {
      CAPTURE(mc.name, rows, variant);
      const auto in =
          cbg::test::random_data(m, rows, mc.spec.cat_values, static_cast<std::uint64_t>(rows) + mc.spec.seed);
      twin_pools pools;
      const bool matrix = m.cat_features.empty() && variant % 2 == 0;
      build_pools(pools, in, gctx, variant, matrix);
      ++variant;
      const std::size_t n = m.tree_count();
      // All trees (tree_end 0), an inner range (no bias), an empty range.
      const std::vector<std::array<std::size_t, 2>> ranges = {{0, 0}, {1, n - 1}, {3, 3}};
      for (const auto type : all_types()) {
        for (const auto& range : ranges) {
          ca::predict_options o;
          o.type = type;
          o.tree_begin = range[0];
          o.tree_end = range[1];
          CAPTURE(static_cast<int>(type), o.tree_begin, o.tree_end);
          std::int64_t cols = 0;
          std::vector<double> expected;
          try {
            expected = reference(cache, m, *pools.cpu, o, cols);
          } catch (const cbg::error& e) {
            CHECK(e.code() == cbg::status::unsupported);  // a type the model cannot give: same on the GPU
            cbg::device_buffer<double> out(static_cast<std::size_t>(rows) * 4, gctx->stream(), gctx->resource());
            try {
              ca::predict_to_device(cache, m, *pools.gpu, o,
                                    view_of(out.data(), dtype::float64, cbg::memory_kind::device, 0, rows, 2, 0),
                                    nullptr);
              FAIL("the GPU accepted an unsupported prediction type");
            } catch (const cbg::error& g) {
              CHECK(g.code() == cbg::status::unsupported);
            }
            continue;
          }
          for (std::size_t p = 0; p < tilings.size(); ++p) {
            CAPTURE(p);
            const int layout = static_cast<int>((p + static_cast<std::size_t>(type)) % 3);
            const dtype out_type =
                (p == 1 && type != cm::prediction_type::raw_formula_val) ? dtype::float32 : dtype::float64;
            CAPTURE(layout, cbg::name_of(out_type));
            CHECK(compare_gpu(cache, m, *pools.gpu, o, expected, cols, out_type, layout, &tilings[p]) == 0);
          }
        }
      }
      // Leaf indexes over a range, as uint32 and int64, every tiling.
      ca::predict_options leaf;
      leaf.output = ca::output_kind::leaf_indexes;
      leaf.tree_begin = 2;
      std::int64_t cols = 0;
      const auto expected = reference(cache, m, *pools.cpu, leaf, cols);
      for (std::size_t p = 0; p < tilings.size(); ++p) {
        CAPTURE(p);
        CHECK(compare_gpu(cache, m, *pools.gpu, leaf, expected, cols, p % 2 == 0 ? dtype::uint32 : dtype::int64,
                          static_cast<int>(p % 2), &tilings[p]) == 0);
      }
    }
  }
}

namespace {

std::filesystem::path data_dir() {
  // The tests run from the source tree's root on the GPU machines, from the build tree under CTest.
  for (const char* candidate : {"tests/data/apply", CBG_TEST_SOURCE_DIR "/data/apply"}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  return {};
}

}  // namespace

TEST_CASE("GPU evaluator equals the host evaluator on CatBoost-made model files", "[gpu][apply]") {
  CBG_REQUIRE_GPU();
  const auto dir = data_dir();
  REQUIRE(!dir.empty());
  auto gctx = make_context(0);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".cbm") continue;
    ++files;
    CAPTURE(entry.path().filename().string());
    const cm::model m = cm::load_model_file(entry.path().string(), cm::file_format::cbm);
    ca::device_model_cache cache;
    auto in = cbg::test::random_data(m, 3001, 40, 77);
    for (auto& v : in.cats) v = v * 7 - 5;  // make_models.py's categories: mostly seen ones, a few unseen
    twin_pools pools;
    build_pools(pools, in, gctx, 1, false);
    for (const auto type : all_types()) {
      ca::predict_options o;
      o.type = type;
      std::int64_t cols = 0;
      std::vector<double> expected;
      try {
        expected = reference(cache, m, *pools.cpu, o, cols);
      } catch (const cbg::error&) {
        continue;
      }
      CAPTURE(static_cast<int>(type));
      CHECK(compare_gpu(cache, m, *pools.gpu, o, expected, cols, dtype::float64, 0, nullptr) == 0);
    }
    ca::predict_options leaf;
    leaf.output = ca::output_kind::leaf_indexes;
    std::int64_t cols = 0;
    const auto expected = reference(cache, m, *pools.cpu, leaf, cols);
    CHECK(compare_gpu(cache, m, *pools.gpu, leaf, expected, cols, dtype::uint32, 0, nullptr) == 0);
  }
  CHECK(files >= 3);
}

TEST_CASE("GPU evaluator: many threads and streams with one model give identical results", "[gpu][apply]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  cbg::test::random_model_spec s;
  s.n_float = 6;
  s.n_cat = 3;
  s.n_one_hot = 2;
  s.n_ctr = 6;
  s.n_trees = 200;
  s.max_depth = 8;
  s.dim = 3;
  s.loss = "MultiClass";
  s.seed = 21;
  const cm::model m = cbg::test::random_model(s);
  const auto in = cbg::test::random_data(m, 20000, s.cat_values, 22);
  twin_pools pools;
  build_pools(pools, in, gctx, 2, false);
  ca::device_model_cache cache;  // empty: the threads race to upload the model
  ca::predict_options o;
  o.type = cm::prediction_type::probability;
  std::int64_t cols = 0;
  const auto expected = reference(cache, m, *pools.cpu, o, cols);
  constexpr int threads = 8, rounds = 4;
  std::vector<std::size_t> mismatches(threads, 0);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool_of_threads;
  for (int t = 0; t < threads; ++t) {
    pool_of_threads.emplace_back([&, t] {
      try {
        cudaStream_t stream = nullptr;
        CBG_CUDA_TRY(cudaSetDevice(0));
        CBG_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        for (int r = 0; r < rounds; ++r)
          mismatches[static_cast<std::size_t>(t)] +=
              compare_gpu(cache, m, *pools.gpu, o, expected, cols, dtype::float64, t % 2, nullptr, stream);
        CBG_CUDA_TRY(cudaStreamDestroy(stream));
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : pool_of_threads) th.join();
  for (int t = 0; t < threads; ++t) {
    CAPTURE(t, errors[static_cast<std::size_t>(t)]);
    CHECK(errors[static_cast<std::size_t>(t)].empty());
    CHECK(mismatches[static_cast<std::size_t>(t)] == 0);
  }
}

TEST_CASE("GPU evaluator in strict mode copies nothing to the host", "[gpu][apply]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0, /*strict=*/true);
  cbg::test::random_model_spec s;
  s.n_float = 5;
  s.n_cat = 2;
  s.n_one_hot = 1;
  s.n_ctr = 4;
  s.n_trees = 50;
  s.seed = 31;
  const cm::model m = cbg::test::random_model(s);
  const auto in = cbg::test::random_data(m, 100000, s.cat_values, 32);
  twin_pools pools;
  build_pools(pools, in, gctx, 0, false);
  ca::device_model_cache cache;
  gctx->copies().reset();
  cbg::device_buffer<double> out(100000, gctx->stream(), gctx->resource());
  ca::predict_options o;
  for (int i = 0; i < 3; ++i)
    ca::predict_to_device(cache, m, *pools.gpu, o,
                          view_of(out.data(), dtype::float64, cbg::memory_kind::device, 0, 100000, 1, 0), nullptr);
  gctx->sync();
  const cbg::copy_totals t = gctx->copies().totals();
  CHECK(t.bytes_in(cbg::copy_direction::d2h) == 0);
  CHECK(t.calls_in(cbg::copy_direction::d2h) == 0);
  CHECK(t.calls_in(cbg::copy_direction::h2d) == 1);  // the model image, once
  // A host output of 800 KB is a device-to-host copy: refused in strict mode.
  std::vector<double> host(100000);
  try {
    ca::predict_to_host(cache, m, *pools.gpu, o,
                        view_of(host.data(), dtype::float64, cbg::memory_kind::host, -1, 100000, 1, 0), nullptr);
    FAIL("strict mode let 800 KB of predictions come back");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::strict_d2h);
  }
}

TEST_CASE("GPU evaluator: captured into a CUDA graph and replayed", "[gpu][apply]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0);
  cbg::test::random_model_spec s;
  s.n_float = 6;
  s.n_cat = 2;
  s.n_one_hot = 1;
  s.n_ctr = 3;
  s.n_trees = 40;
  s.seed = 41;
  s.loss = "Logloss";
  const cm::model m = cbg::test::random_model(s);
  const auto in = cbg::test::random_data(m, 5000, s.cat_values, 42);
  twin_pools pools;
  build_pools(pools, in, gctx, 0, false);
  ca::device_model_cache cache;
  ca::predict_options o;
  o.type = cm::prediction_type::probability;
  std::int64_t cols = 0;
  const auto expected = reference(cache, m, *pools.cpu, o, cols);
  // The first call uploads the model (outside capture); then the whole call is captured.
  REQUIRE(compare_gpu(cache, m, *pools.gpu, o, expected, cols, dtype::float64, 0, nullptr) == 0);
  cudaStream_t stream = nullptr;
  CBG_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cbg::device_buffer<double> out(static_cast<std::size_t>(5000 * cols), gctx->stream(), gctx->resource());
  gctx->sync();
  cudaGraph_t graph = nullptr;
  CBG_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  ca::predict_to_device(cache, m, *pools.gpu, o,
                        view_of(out.data(), dtype::float64, cbg::memory_kind::device, 0, 5000, cols, 0), stream);
  CBG_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CBG_CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    CBG_CUDA_TRY(cudaMemsetAsync(out.data(), 0, out.size_bytes(), stream));
    CBG_CUDA_TRY(cudaGraphLaunch(exec, stream));
    CBG_CUDA_TRY(cudaStreamSynchronize(stream));
    std::vector<double> got(out.size());
    CBG_CUDA_TRY(cudaMemcpy(got.data(), out.data(), out.size_bytes(), cudaMemcpyDeviceToHost));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      bad += std::abs(got[i] - expected[i]) <= 1e-12 * std::abs(expected[i]) ? 0 : 1;
    CHECK(bad == 0);
  }
  CBG_CUDA_TRY(cudaGraphExecDestroy(exec));
  CBG_CUDA_TRY(cudaGraphDestroy(graph));
  CBG_CUDA_TRY(cudaStreamDestroy(stream));
}
