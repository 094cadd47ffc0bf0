// SPDX-License-Identifier: Apache-2.0
// GPU tests: contexts, device buffers, accounted copies, strict mode, value checks GPU == host, and
// pools over device memory with no device-to-host copy. Tagged [gpu]: skipped without a device.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/data/value_checks.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/tensor/tensor_copy.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"

using cbg::copy_direction;
using cbg::memory_kind;

namespace {

std::shared_ptr<cbg::context> gpu_context(bool strict = false) {
  cbg::context_options o;
  o.device = 0;
  o.strict_no_d2h = strict;
  return cbg::context::create(o);
}

}  // namespace

TEST_CASE("a CPU context works everywhere; AUTO picks a GPU when one is visible", "[core]") {
  cbg::context_options o;
  o.device = cbg::cpu_device;
  auto cpu = cbg::context::create(o);
  CHECK(cpu->is_cpu());
  CHECK(cpu->stream() == nullptr);
  CHECK_NOTHROW(cpu->sync());
  auto automatic = cbg::context::create(cbg::context_options{});
  CHECK(automatic->is_cpu() == (cbg::visible_device_count() == 0));
  o.device = 64;
  try {
    (void)cbg::context::create(o);
    FAIL("device 64 accepted");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::no_device);
  }
}

TEST_CASE("device buffers and accounted copies in every direction", "[gpu]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context();
  CHECK(ctx->device() == 0);
  std::vector<int> host(1000), back(1000, -1);
  for (int i = 0; i < 1000; ++i) host[static_cast<std::size_t>(i)] = i * 7;
  cbg::device_buffer<int> a(1000, ctx->stream(), ctx->resource());
  cbg::device_buffer<int> b(1000, ctx->stream(), ctx->resource());
  const std::size_t bytes = 1000 * sizeof(int);
  cbg::copy_bytes(a.data(), memory_kind::device, host.data(), memory_kind::host, bytes, ctx->stream(), ctx->copies(),
                  ctx->rules(), CBG_COPY_SITE("test h2d"));
  cbg::copy_bytes(b.data(), memory_kind::device, a.data(), memory_kind::device, bytes, ctx->stream(), ctx->copies(),
                  ctx->rules(), CBG_COPY_SITE("test d2d"));
  cbg::copy_bytes(back.data(), memory_kind::host, b.data(), memory_kind::device, bytes, ctx->stream(), ctx->copies(),
                  ctx->rules(), CBG_COPY_SITE("test d2h"));
  ctx->sync();
  CHECK(back == host);
  const cbg::copy_totals t = ctx->copies().totals();
  CHECK(t.bytes_in(copy_direction::h2d) == bytes);
  CHECK(t.bytes_in(copy_direction::d2d) == bytes);
  CHECK(t.bytes_in(copy_direction::d2h) == bytes);
  CHECK(t.calls_in(copy_direction::h2h) == 0);

  cbg::device_buffer<int> moved(std::move(a));
  CHECK(a.data() == nullptr);
  CHECK(moved.size() == 1000);
}

TEST_CASE("strict mode allows metadata-sized device-to-host copies only", "[gpu]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context(true);
  const std::size_t big = cbg::strict_d2h_metadata_limit + 4;
  cbg::device_buffer<char> d(big, ctx->stream(), ctx->resource());
  CBG_CUDA_TRY(cudaMemsetAsync(d.data(), 7, big, ctx->stream()));
  std::vector<char> host(big);
  cbg::copy_bytes(host.data(), memory_kind::host, d.data(), memory_kind::device, 16, ctx->stream(), ctx->copies(),
                  ctx->rules(), CBG_COPY_SITE("small"));
  ctx->sync();
  CHECK(host[15] == 7);
  CHECK_THROWS_AS(cbg::copy_bytes(host.data(), memory_kind::host, d.data(), memory_kind::device, big, ctx->stream(),
                                  ctx->copies(), ctx->rules(), CBG_COPY_SITE("big")),
                  cbg::error);
  CHECK(ctx->copies().totals().bytes_in(copy_direction::d2h) == 16);
}

TEST_CASE("GPU value checks equal the host reference", "[gpu]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context();
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal;
  const std::size_t n = 1'000'003;
  std::vector<float> values(n);
  for (auto& v : values) v = normal(rng);
  for (std::size_t i = 0; i < n; i += 997) values[i] = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t i = 5; i < n; i += 4099) values[i] = -std::numeric_limits<float>::infinity();
  cbg::device_buffer<float> d(n, ctx->stream(), ctx->resource());
  cbg::copy_bytes(d.data(), memory_kind::device, values.data(), memory_kind::host, n * sizeof(float), ctx->stream(),
                  ctx->copies(), ctx->rules(), CBG_COPY_SITE("test upload"));
  for (const std::int64_t stride : {1, 3}) {
    cbg::column_view host{
        values.data(), cbg::dtype::float32, memory_kind::host, -1, static_cast<std::int64_t>(n) / stride, stride};
    cbg::column_view dev = host;
    dev.data = d.data();
    dev.memory = memory_kind::device;
    dev.device_id = 0;
    const cbg::value_counts expected = cbg::count_values_host(host);
    CHECK(expected.nan > 0);
    CHECK(expected.negative > 0);
    CHECK(cbg::count_values_device(dev, *ctx) == expected);
  }
}

TEST_CASE("a pool over device memory copies nothing to the host", "[gpu]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context(true);
  const std::int64_t rows = 4096, cols = 8;
  cbg::device_buffer<float> x(static_cast<std::size_t>(rows * cols), ctx->stream(), ctx->resource());
  cbg::device_buffer<float> y(static_cast<std::size_t>(rows), ctx->stream(), ctx->resource());
  cbg::test::fake_tensor features(x.data(), cbg::test::dl_float(32), {rows, cols}, {}, DLDevice{kDLCUDA, 0});
  cbg::test::fake_tensor label(y.data(), cbg::test::dl_float(32), {rows}, {}, DLDevice{kDLCUDA, 0});
  cudaStream_t producer = nullptr;
  CBG_CUDA_TRY(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  CBG_CUDA_TRY(cudaMemsetAsync(y.data(), 0, y.size_bytes(), ctx->stream()));  // a valid label
  ctx->sync();
  ctx->copies().reset();
  {
    cbg::pool_inputs in;
    in.features = features.as_versioned();
    in.label = label.as_versioned();
    in.producer_stream = producer;
    cbg::pool p = cbg::pool::build(ctx, std::move(in));
    CHECK(p.device() == 0);
    CHECK(p.features()[3].memory == memory_kind::device);
    CHECK(p.features()[3].stride == cols);
  }
  const cbg::copy_totals t = ctx->copies().totals();
  CHECK(t.bytes_in(copy_direction::d2h) == sizeof(cbg::value_counts));  // only the label check's counts come back
  CHECK(t.calls_in(copy_direction::d2h) == 1);
  CHECK(t.bytes_in(copy_direction::h2d) == 0);
  CHECK(features.deleter_calls == 1);
  CHECK(label.deleter_calls == 1);
  CBG_CUDA_TRY(cudaStreamDestroy(producer));
}

TEST_CASE("tensor copies between device and host, strided", "[gpu]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context();
  std::vector<double> src(6 * 4);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(i) * 0.5;
  cbg::device_buffer<double> d(src.size(), ctx->stream(), ctx->resource());
  cbg::mutable_tensor_view dev;
  dev.data = d.data();
  dev.type = cbg::dtype::float64;
  dev.memory = memory_kind::device;
  dev.device_id = 0;
  dev.rank = 2;
  dev.shape[0] = 6;
  dev.shape[1] = 4;
  dev.strides[0] = 4;
  dev.strides[1] = 1;
  cbg::tensor_view host_src = dev.as_const();
  host_src.data = src.data();
  host_src.memory = memory_kind::host;
  cbg::copy_tensor(*ctx, dev, host_src);
  // Read back transposed-by-strides into a column-major host array.
  std::vector<double> back(src.size(), -1.0);
  cbg::mutable_tensor_view host_dst = dev;
  host_dst.data = back.data();
  host_dst.memory = memory_kind::host;
  host_dst.strides[0] = 1;
  host_dst.strides[1] = 6;
  cbg::copy_tensor(*ctx, host_dst, dev.as_const());
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 4; ++j)
      CHECK(back[static_cast<std::size_t>(j * 6 + i)] == src[static_cast<std::size_t>(i * 4 + j)]);
  }
}

TEST_CASE("a NaN label in device memory is found on the GPU", "[gpu]") {
  CBG_REQUIRE_GPU();
  auto ctx = gpu_context();
  std::vector<float> x(64, 1.0f), y(64, 0.0f);
  y[17] = std::numeric_limits<float>::quiet_NaN();
  cbg::device_buffer<float> dx(x.size(), ctx->stream(), ctx->resource());
  cbg::device_buffer<float> dy(y.size(), ctx->stream(), ctx->resource());
  cbg::copy_bytes(dx.data(), memory_kind::device, x.data(), memory_kind::host, x.size() * 4, ctx->stream(),
                  ctx->copies(), ctx->rules(), CBG_COPY_SITE("test"));
  cbg::copy_bytes(dy.data(), memory_kind::device, y.data(), memory_kind::host, y.size() * 4, ctx->stream(),
                  ctx->copies(), ctx->rules(), CBG_COPY_SITE("test"));
  cbg::test::fake_tensor features(dx.data(), cbg::test::dl_float(32), {64, 1}, {}, DLDevice{kDLCUDA, 0});
  cbg::test::fake_tensor label(dy.data(), cbg::test::dl_float(32), {64}, {}, DLDevice{kDLCUDA, 0});
  cbg::pool_inputs in;
  in.features = features.as_versioned();
  in.label = label.as_versioned();
  try {
    (void)cbg::pool::build(ctx, std::move(in));
    FAIL("a NaN label was accepted");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
    CHECK(std::string(e.what()).find("1 NaN") != std::string::npos);
  }
  CHECK(features.deleter_calls == 1);
  CHECK(label.deleter_calls == 1);
}
