// SPDX-License-Identifier: Apache-2.0
// Columns quantized over a border subset drawn once (src/quantize/subset_quantizer.hpp): the
// Uniform stand-in gives the borders of the whole subset, the results' layout, and (tagged [gpu])
// borders and bins equal to the host reference's bit for bit.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/border_types.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "src/quantize/subset_quantizer.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"

namespace q = cbg::quantize;

namespace {

std::shared_ptr<cbg::context> make_context(int device, std::uint64_t seed) {
  cbg::context_options o;
  o.device = device;
  o.seed = seed;
  return cbg::context::create(o);
}

// Column-major [rows, kinds] values of varied shapes: normal, few integers, heavy tail, constant,
// signed zeros among positives, tiny denormal spread, counts over rows (FeatureFreq-like).
std::vector<float> columns(std::int64_t rows, int kinds, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(0, 9);
  std::vector<float> x(static_cast<std::size_t>(rows * kinds));
  for (int f = 0; f < kinds; ++f) {
    for (std::int64_t r = 0; r < rows; ++r) {
      float v = 0;
      switch (f % 7) {
        case 0:
          v = normal(rng);
          break;
        case 1:
          v = static_cast<float>(small(rng));
          break;
        case 2:
          v = std::exp(4.0f * normal(rng));
          break;
        case 3:
          v = 0.25f;
          break;
        case 4:
          v = small(rng) < 3 ? (small(rng) < 5 ? -0.0f : 0.0f) : static_cast<float>(small(rng)) * 0.5f;
          break;
        case 5:
          v = static_cast<float>(small(rng)) * std::numeric_limits<float>::denorm_min();
          break;
        default:
          v = static_cast<float>(1 + small(rng) * small(rng)) / static_cast<float>(rows);
          break;
      }
      x[static_cast<std::size_t>(f * rows + r)] = v;
    }
  }
  return x;
}

std::vector<float> host_borders(const q::host_quantized& h, std::size_t f) {
  const float* b = h.borders.data() + f * q::border_stride;
  return {b, b + h.border_count[f]};
}

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

}  // namespace

TEST_CASE("the Uniform stand-in gives the borders of the whole border subset", "[quantize]") {
  // The border search's steps (search.cu: begin_feature, end_feature) over the stand-in, against
  // the host quantizer over the column.
  auto hctx = make_context(cbg::cpu_device, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::int64_t rows = 3000;
  std::vector<float> x = columns(rows, 7, 11);
  const std::size_t base = x.size();
  x.resize(base + 3 * static_cast<std::size_t>(rows));  // with NaNs, all NaN, one value and NaNs
  for (std::int64_t r = 0; r < rows; ++r) {
    x[base + static_cast<std::size_t>(r)] = r % 7 == 0 ? nan : static_cast<float>(r % 13) - 6.0f;
    x[base + static_cast<std::size_t>(rows + r)] = nan;
    x[base + static_cast<std::size_t>(2 * rows + r)] = r % 2 == 0 ? nan : 3.0f;
  }
  const int features = static_cast<int>(x.size() / static_cast<std::size_t>(rows));
  for (const q::nan_mode mode : {q::nan_mode::min, q::nan_mode::max}) {
    for (const int k : {1, 2, 15, 255}) {
      CAPTURE(static_cast<int>(mode), k);
      cbg::test::fake_tensor t(x.data(), cbg::test::dl_float(32), {rows, features}, {1, rows});
      cbg::pool_inputs in;
      in.features = t.as_borrowed();
      const cbg::pool p = cbg::pool::build(hctx, std::move(in));
      q::options o;
      o.border_count = k;
      o.type = q::border_type::uniform;
      o.mode = mode;
      const q::host_quantized h = q::quantize_host(p, o);
      for (int f = 0; f < features; ++f) {
        CAPTURE(f);
        float lo = 0, hi = 0;
        std::uint32_t valid = 0, nans = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
          const float v = x[static_cast<std::size_t>(f * rows + r)];
          if (std::isnan(v)) {
            ++nans;
            continue;
          }
          lo = valid == 0 ? v : std::min(lo, v);
          hi = valid == 0 ? v : std::max(hi, v);
          ++valid;
        }
        const q::uniform_stand_in s = q::make_uniform_stand_in(lo, hi, valid, nans);
        const bool has_nan = s.nan_count != 0;
        CHECK(has_nan == (nans != 0));
        float out[q::border_stride] = {};
        int count = q::uniform_candidates(s.sorted, 3 - s.nan_count, q::search_border_budget(k, has_nan), out);
        count = q::add_nan_border(out, q::finish_borders(out, count), q::effective_nan_mode(mode, has_nan));
        CHECK(bits_of({out, out + count}) == bits_of(host_borders(h, static_cast<std::size_t>(f))));
      }
    }
  }
}

TEST_CASE("subset quantizer results: layout, borders and the NaN status", "[quantize]") {
  std::vector<q::subset_quantizer::column> cols(3);
  cols[0].border_count = 15;
  cols[1].border_count = 4;
  cols[2].border_count = 31;
  const q::subset_quantizer::layout l = q::subset_quantizer::layout_of(cols);
  CHECK(l.columns == 3);
  CHECK(l.stride == 32);
  CHECK(l.words() == 1 + 3 * 32);
  CHECK(q::subset_quantizer::layout_of({}).words() == 0);
  std::vector<std::uint32_t> results(l.words(), 0);
  results[0] = 0x7f7f7f7fu;
  const float b[2] = {-1.5f, 2.25f};
  results[1 + 32] = 2;
  std::memcpy(&results[1 + 32 + 1], b, sizeof(b));
  CHECK_NOTHROW(q::subset_quantizer::check(results.data(), l));
  CHECK(q::subset_quantizer::borders_of(results.data(), l, 0).empty());
  CHECK(q::subset_quantizer::borders_of(results.data(), l, 1) == std::vector<float>{-1.5f, 2.25f});
  CHECK_THROWS_AS(q::subset_quantizer::borders_of(results.data(), l, 3), cbg::error);
  results[1 + 64] = 32;  // more borders than the slots hold
  CHECK_THROWS_AS(q::subset_quantizer::borders_of(results.data(), l, 2), cbg::error);
  results[0] = 1;  // column 1 had a NaN
  CHECK_THROWS_AS(q::subset_quantizer::check(results.data(), l), cbg::error);
  CHECK(q::subset_quantizer::handles(q::border_type::uniform));
  CHECK(q::subset_quantizer::handles(q::border_type::median));
  CHECK(q::subset_quantizer::handles(q::border_type::uniform_and_quantiles));
  CHECK_FALSE(q::subset_quantizer::handles(q::border_type::greedy_log_sum));
  CHECK_FALSE(q::subset_quantizer::handles(q::border_type::min_entropy));
}

TEST_CASE("GPU subset quantizer equals the host quantizer bit for bit", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  struct shape {
    std::int64_t rows;
    std::uint64_t seed;
    std::uint32_t max_subset = q::default_max_subset_size;
  };
  // Above 200 000 rows the subset is drawn; 5001 rows: every row, and columns not 16-byte aligned.
  const std::vector<shape> shapes = {{250000, 0}, {5001, 3}, {60000, 9, 2000}, {1, 1}};
  const std::vector<std::pair<q::border_type, int>> settings = {
      {q::border_type::uniform, 15},  {q::border_type::median, 15}, {q::border_type::uniform_and_quantiles, 31},
      {q::border_type::uniform, 255}, {q::border_type::median, 1},  {q::border_type::median, 254}};
  for (const shape& s : shapes) {
    CAPTURE(s.rows, s.seed);
    const int kinds = 7;
    const std::vector<float> base = columns(s.rows, kinds, static_cast<std::uint32_t>(s.rows));
    // Every setting over every kind of values: column (setting i, kind j).
    const int features = kinds * static_cast<int>(settings.size());
    std::vector<float> x;
    for (std::size_t i = 0; i < settings.size(); ++i) x.insert(x.end(), base.begin(), base.end());
    auto gctx = make_context(0, s.seed);
    auto hctx = make_context(cbg::cpu_device, s.seed);
    cbg::test::fake_tensor t(x.data(), cbg::test::dl_float(32), {s.rows, features}, {1, s.rows});
    cbg::pool_inputs in;
    in.features = t.as_borrowed();
    const cbg::pool hp = cbg::pool::build(hctx, std::move(in));
    q::options o;
    o.mode = q::nan_mode::forbidden;
    o.max_subset_size = s.max_subset;
    for (int f = 0; f < features; ++f) {
      const auto& [type, count] = settings[static_cast<std::size_t>(f / kinds)];
      o.overrides.push_back({f, count, -1, static_cast<int>(type)});
    }
    const q::host_quantized h = q::quantize_host(hp, o);

    const auto rows = static_cast<std::size_t>(s.rows);
    cbg::device_buffer<float> dx(x.size(), gctx->stream(), gctx->resource());
    cbg::device_buffer<std::uint8_t> dbins(x.size(), gctx->stream(), gctx->resource());
    CBG_CUDA_TRY(cudaMemcpyAsync(dx.data(), x.data(), dx.size_bytes(), cudaMemcpyHostToDevice, gctx->stream()));
    std::vector<q::subset_quantizer::column> cols;
    for (int f = 0; f < features; ++f) {
      const auto& [type, count] = settings[static_cast<std::size_t>(f / kinds)];
      cols.push_back({dx.data() + f * rows, dbins.data() + f * rows, count, type});
    }
    const q::subset_quantizer sq(*gctx, s.rows, o);
    const q::subset_quantizer::layout l = q::subset_quantizer::layout_of(cols);
    cbg::device_buffer<std::uint32_t> results(l.words(), gctx->stream(), gctx->resource());
    sq.enqueue(cols, results.data());
    std::vector<std::uint32_t> back(l.words());
    std::vector<std::uint8_t> bins(x.size());
    CBG_CUDA_TRY(
        cudaMemcpyAsync(back.data(), results.data(), results.size_bytes(), cudaMemcpyDeviceToHost, gctx->stream()));
    CBG_CUDA_TRY(
        cudaMemcpyAsync(bins.data(), dbins.data(), dbins.size_bytes(), cudaMemcpyDeviceToHost, gctx->stream()));
    gctx->sync();
    REQUIRE_NOTHROW(q::subset_quantizer::check(back.data(), l));
    for (int f = 0; f < features; ++f) {
      CAPTURE(f);
      const auto uf = static_cast<std::size_t>(f);
      REQUIRE(bits_of(q::subset_quantizer::borders_of(back.data(), l, uf)) == bits_of(host_borders(h, uf)));
      std::size_t wrong = 0;
      for (std::size_t r = 0; r < rows; ++r) wrong += bins[uf * rows + r] != h.bin(static_cast<std::int64_t>(r), f);
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("GPU subset quantizer: a NaN in a column's subset is reported", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0, 0);
  const std::int64_t rows = 1000;
  std::vector<float> x(2 * static_cast<std::size_t>(rows), 1.0f);
  x[1500] = std::numeric_limits<float>::quiet_NaN();  // column 1 (Median)
  cbg::device_buffer<float> dx(x.size(), gctx->stream(), gctx->resource());
  cbg::device_buffer<std::uint8_t> dbins(x.size(), gctx->stream(), gctx->resource());
  CBG_CUDA_TRY(cudaMemcpyAsync(dx.data(), x.data(), dx.size_bytes(), cudaMemcpyHostToDevice, gctx->stream()));
  const std::vector<q::subset_quantizer::column> cols = {
      {dx.data(), dbins.data(), 15, q::border_type::uniform},
      {dx.data() + rows, dbins.data() + rows, 15, q::border_type::median}};
  const q::subset_quantizer sq(*gctx, rows);
  const q::subset_quantizer::layout l = q::subset_quantizer::layout_of(cols);
  cbg::device_buffer<std::uint32_t> results(l.words(), gctx->stream(), gctx->resource());
  sq.enqueue(cols, results.data());
  std::vector<std::uint32_t> back(l.words());
  CBG_CUDA_TRY(
      cudaMemcpyAsync(back.data(), results.data(), results.size_bytes(), cudaMemcpyDeviceToHost, gctx->stream()));
  gctx->sync();
  CHECK_THROWS_AS(q::subset_quantizer::check(back.data(), l), cbg::error);
}
