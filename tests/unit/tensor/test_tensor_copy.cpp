// SPDX-License-Identifier: Apache-2.0
// Host tensor copies: values land where the strides say, with as few copy calls as the layouts allow.
#include <numeric>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/tensor/tensor_copy.hpp"
#include "support/catch.hpp"

namespace {

cbg::tensor_view matrix(const float* data, std::int64_t rows, std::int64_t cols, bool column_major) {
  cbg::tensor_view v;
  v.data = data;
  v.type = cbg::dtype::float32;
  v.rank = 2;
  v.shape[0] = rows;
  v.shape[1] = cols;
  v.strides[0] = column_major ? 1 : cols;
  v.strides[1] = column_major ? rows : 1;
  return v;
}

cbg::mutable_tensor_view writable(float* data, std::int64_t rows, std::int64_t cols, bool column_major) {
  const cbg::tensor_view c = matrix(data, rows, cols, column_major);
  cbg::mutable_tensor_view m;
  m.data = data;
  m.type = c.type;
  m.rank = 2;
  for (int i = 0; i < 2; ++i) {
    m.shape[i] = c.shape[i];
    m.strides[i] = c.strides[i];
  }
  return m;
}

std::shared_ptr<cbg::context> cpu() {
  cbg::context_options o;
  o.device = cbg::cpu_device;
  return cbg::context::create(o);
}

}  // namespace

TEST_CASE("same dense layouts copy in one call, column-major included", "[tensor]") {
  const std::int64_t rows = 1000, cols = 28;
  std::vector<float> src(rows * cols), dst(rows * cols, -1.0f);
  std::iota(src.begin(), src.end(), 0.0f);
  for (const bool column_major : {false, true}) {
    auto ctx = cpu();
    std::fill(dst.begin(), dst.end(), -1.0f);
    cbg::copy_tensor(*ctx, writable(dst.data(), rows, cols, column_major),
                     matrix(src.data(), rows, cols, column_major));
    CHECK(dst == src);
    CHECK(ctx->copies().totals().calls_in(cbg::copy_direction::h2h) == 1);
  }
}

TEST_CASE("a transposing copy takes one pitched call per column, not per row", "[tensor]") {
  const std::int64_t rows = 1000, cols = 28;
  std::vector<float> src(rows * cols), dst(rows * cols, -1.0f);
  std::iota(src.begin(), src.end(), 0.0f);
  auto ctx = cpu();
  cbg::copy_tensor(*ctx, writable(dst.data(), rows, cols, false), matrix(src.data(), rows, cols, true));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      REQUIRE(dst[static_cast<std::size_t>(i * cols + j)] == src[static_cast<std::size_t>(j * rows + i)]);
    }
  }
  CHECK(ctx->copies().totals().calls_in(cbg::copy_direction::h2h) == cols);
  CHECK(ctx->copies().totals().bytes_in(cbg::copy_direction::h2h) == rows * cols * 4);
}

TEST_CASE("a sliced source copies rows of contiguous elements", "[tensor]") {
  // Every other row of a [10, 6] matrix into a compact [5, 6].
  std::vector<float> src(60), dst(30, -1.0f);
  std::iota(src.begin(), src.end(), 0.0f);
  cbg::tensor_view v = matrix(src.data(), 5, 6, false);
  v.strides[0] = 12;
  auto ctx = cpu();
  cbg::copy_tensor(*ctx, writable(dst.data(), 5, 6, false), v);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 6; ++j)
      CHECK(dst[static_cast<std::size_t>(i * 6 + j)] == src[static_cast<std::size_t>(i * 12 + j)]);
  }
  CHECK(ctx->copies().totals().calls_in(cbg::copy_direction::h2h) == 1);  // one pitched copy
}

TEST_CASE("zero strides: a broadcast source is fine on the host, a broadcast output is not", "[tensor]") {
  std::vector<float> row = {1, 2, 3};
  std::vector<float> dst(12, -1.0f);
  cbg::tensor_view broadcast = matrix(row.data(), 4, 3, false);
  broadcast.strides[0] = 0;
  auto ctx = cpu();
  cbg::copy_tensor(*ctx, writable(dst.data(), 4, 3, false), broadcast);
  for (int i = 0; i < 12; ++i) CHECK(dst[static_cast<std::size_t>(i)] == row[static_cast<std::size_t>(i % 3)]);
  cbg::mutable_tensor_view bad = writable(dst.data(), 4, 3, false);
  bad.strides[0] = 0;
  try {
    cbg::copy_tensor(*ctx, bad, matrix(dst.data(), 4, 3, false));
    FAIL("a zero-stride destination was accepted");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::invalid_argument);
  }
}
