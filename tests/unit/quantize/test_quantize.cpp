// SPDX-License-Identifier: Apache-2.0
// The quantizer: shared math, the border subset generator, the host reference, and (tagged [gpu])
// the GPU result equal to the host reference bit for bit, with no device-to-host copy of feature
// data. Parity with CatBoost itself is tested in tests/python/test_quantize_catboost.py.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/quantize/bin_search.hpp"
#include "cbg/quantize/border_types.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"
#include "kernels/quantize/stages.hpp"
#include "kernels/quantize/staging.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/shrink.hpp"

namespace q = cbg::quantize;
using cbg::copy_direction;
using cbg::memory_kind;

namespace {

std::shared_ptr<cbg::context> make_context(int device, std::uint64_t seed = 0, bool strict = false) {
  cbg::context_options o;
  o.device = device;
  o.seed = seed;
  o.strict_no_d2h = strict;
  return cbg::context::create(o);
}

std::vector<float> borders_of(const q::host_quantized& h, std::size_t f) {
  const float* b = h.borders.data() + f * q::border_stride;
  return {b, b + h.border_count[f]};
}

std::uint32_t bits(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

// A column-major [rows, features] float32 matrix of varied features (the CatBoost corpus shapes).
std::vector<float> corpus(std::int64_t rows, int features, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(0, 9);
  std::vector<float> x(static_cast<std::size_t>(rows * features));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int f = 0; f < features; ++f) {
    for (std::int64_t r = 0; r < rows; ++r) {
      float v = 0;
      switch (f % 8) {
        case 0:
          v = normal(rng);
          break;
        case 1:
          v = static_cast<float>(small(rng));
          break;  // few integers
        case 2:
          v = std::exp(4.0f * normal(rng));
          break;  // heavy tail
        case 3:
          v = 7.0f;
          break;  // constant
        case 4:
          v = small(rng) < 3 ? nan : normal(rng);
          break;  // NaNs
        case 5:
          v = small(rng) < 5 ? -0.0f : (small(rng) < 5 ? 0.0f : 1.0f);
          break;  // +-0
        case 6:
          v = std::round(normal(rng) * 1000.0f);
          break;  // long runs
        case 7:
          v = small(rng) == 0 ? 1.0f : 2.0f;
          break;  // two-valued
      }
      x[static_cast<std::size_t>(f * rows + r)] = v;
    }
  }
  return x;
}

}  // namespace

TEST_CASE("greedy borders: the median-run cut, ties to the left, float midpoints", "[quantize]") {
  std::vector<float> v(10);
  std::iota(v.begin(), v.end(), 0.0f);
  const auto logs = q::gain_table(q::penalty::log_sum, 10);
  std::vector<q::greedy_bin> heap(q::greedy_heap_capacity);
  std::vector<std::uint32_t> starts(q::border_stride);
  std::vector<float> out(q::border_stride);
  // n = 10: mid 5, candidates 5 (5|5) and 6 (6|4); 5 wins, border 0.5*4 + 0.5*5.
  REQUIRE(q::greedy_borders(v.data(), 10, 1, logs->data(), heap.data(), starts.data(), out.data()) == 1);
  CHECK(out[0] == 4.5f);
  // Every distinct value gets separated when the budget allows: 9 borders.
  REQUIRE(q::greedy_borders(v.data(), 10, 254, logs->data(), heap.data(), starts.data(), out.data()) == 9);
  for (int i = 0; i < 9; ++i) CHECK(out[static_cast<std::size_t>(i)] == 0.5f + static_cast<float>(i));
  // A constant gives no border; so does an empty feature.
  std::vector<float> c(100, 3.0f);
  CHECK(q::greedy_borders(c.data(), 100, 128, logs->data(), heap.data(), starts.data(), out.data()) == 0);
  CHECK(q::greedy_borders(c.data(), 0, 128, logs->data(), heap.data(), starts.data(), out.data()) == 0);
  // -0.0 borders become +0.0.
  std::vector<float> pm = {-std::numeric_limits<float>::denorm_min(), -0.0f};
  const auto logs2 = q::gain_table(q::penalty::log_sum, 2);
  REQUIRE(q::greedy_borders(pm.data(), 2, 4, logs2->data(), heap.data(), starts.data(), out.data()) == 1);
  CHECK(bits(out[0]) == 0u);
}

TEST_CASE("border types: Median, Uniform, UniformAndQuantiles, GreedyMinEntropy", "[quantize]") {
  std::vector<float> v(10);
  std::iota(v.begin(), v.end(), 0.0f);  // 0..9
  std::vector<float> out(q::border_stride);
  const auto finished = [&](int count) {
    return std::vector<float>(out.begin(), out.begin() + q::finish_borders(out.data(), count));
  };
  // Median: positions (i + 1) * 10 / (k + 1); the regular border before each value.
  CHECK(finished(q::median_candidates(v.data(), 10, 1, out.data())) == std::vector<float>{4.5f});
  CHECK(finished(q::median_candidates(v.data(), 10, 3, out.data())) == std::vector<float>{1.5f, 4.5f, 6.5f});
  // 20 borders over 10 values: the repeats collapse.
  CHECK(finished(q::median_candidates(v.data(), 10, 20, out.data())).size() == 9);
  // Uniform: min + (i + 1) * (max - min) / (k + 1), in float.
  CHECK(finished(q::uniform_candidates(v.data(), 10, 2, out.data())) == std::vector<float>{3.0f, 6.0f});
  // UniformAndQuantiles: one median border (4.5) and one uniform point (4.5) snapped to 4.5.
  CHECK(finished(q::uniform_and_quantiles_candidates(v.data(), 10, 2, out.data())) == std::vector<float>{4.5f});
  // A constant feature has no borders of any type.
  std::vector<float> c(50, 2.0f);
  CHECK(q::median_candidates(c.data(), 50, 8, out.data()) == 0);
  CHECK(q::uniform_candidates(c.data(), 50, 8, out.data()) == 0);
  CHECK(q::uniform_and_quantiles_candidates(c.data(), 50, 8, out.data()) == 0);
  // The regular border: the midpoint, or the lower value when the midpoint rounds up to the upper.
  const float a = 1.0f;
  const float b = std::nextafter(1.0f, 2.0f);
  const std::vector<float> ab = {a, b};
  CHECK(q::regular_border(ab.data(), 2, b) == a);
  CHECK(q::regular_border(ab.data(), 2, 5.0f) == std::max(2.0f * b, b + 1.0f));  // above all
  CHECK(q::regular_border(ab.data(), 2, 0.0f) == 0.5f);                          // below all
  // -0.0 candidates become +0.0 and duplicates go.
  std::vector<float> cand = {1.0f, -0.0f, 0.0f, 1.0f, -2.0f};
  REQUIRE(q::finish_borders(cand.data(), 5) == 3);
  CHECK(cand[0] == -2.0f);
  CHECK(bits(cand[1]) == 0u);
  CHECK(cand[2] == 1.0f);
  CHECK(cand[3] == 0.0f);  // freed slots zeroed
  // GreedyMinEntropy is the greedy search with the entropy gains: on 0..9 its first cut is the
  // median run's left edge as with GreedyLogSum.
  const auto ent = q::gain_table(q::penalty::entropy, 10);
  std::vector<q::greedy_bin> heap(q::greedy_heap_capacity);
  std::vector<std::uint32_t> starts(q::border_stride);
  REQUIRE(q::greedy_borders(v.data(), 10, 1, ent->data(), heap.data(), starts.data(), out.data()) == 1);
  CHECK(out[0] == 4.5f);
  CHECK((*ent)[4] == -(4.0 * std::log(4.0 + 1e-8)));
}

TEST_CASE("exact border types: the DP's cuts minimise the penalty sum", "[quantize]") {
  // Brute force over every set of cuts, on small weighted runs: the DP (CatBoost's walks with
  // near-tie tolerance) must reach the minimum; ties may pick other cuts of the same cost.
  std::mt19937 rng(21);
  for (const q::penalty pen : {q::penalty::log_sum, q::penalty::entropy}) {
    const auto gains = q::gain_table(pen, 64);
    for (int trial = 0; trial < 300; ++trial) {
      const int u = 2 + static_cast<int>(rng() % 9);  // unique values
      const int k = 1 + static_cast<int>(rng() % 5);  // borders
      std::vector<float> sorted;
      std::vector<std::uint32_t> counts;
      for (int i = 0; i < u; ++i) {
        counts.push_back(1 + rng() % (trial % 3 == 0 ? 1 : 5));  // equal counts: many ties
        sorted.insert(sorted.end(), counts.back(), static_cast<float>(i));
      }
      const auto n = static_cast<std::uint32_t>(sorted.size());
      std::vector<float> values(n);
      std::vector<double> err(4 * n);
      std::vector<std::uint32_t> idx(3 * n), choice(std::max<std::uint64_t>(q::exact_choice_size(n, k), 1));
      const q::exact_scratch s{values.data(),  idx.data(),         err.data(),
                               err.data() + n, err.data() + 2 * n, err.data() + 3 * n,
                               idx.data() + n, idx.data() + 2 * n, choice.data()};
      std::vector<float> out(q::border_stride);
      const int count =
          q::finish_borders(out.data(), q::exact_candidates(sorted.data(), n, k, gains->data(), s, out.data()));
      CAPTURE(trial, u, k, count);
      REQUIRE(count == std::min(k, u - 1));
      // Cost of a set of cuts (cut c: between unique values c - 1 and c).
      const auto cost = [&](const std::vector<int>& cuts) {
        double total = 0;
        int from = 0;
        for (int c : cuts) {
          std::uint32_t w = 0;
          for (int i = from; i < c; ++i) w += counts[static_cast<std::size_t>(i)];
          total -= (*gains)[w];
          from = c;
        }
        return total;
      };
      std::vector<int> mine;
      for (int i = 0; i < count; ++i) mine.push_back(static_cast<int>(std::ceil(out[static_cast<std::size_t>(i)])));
      mine.push_back(u);
      double best = std::numeric_limits<double>::infinity();
      for (std::uint32_t mask = 0; mask < (1u << (u - 1)); ++mask) {
        if (std::popcount(mask) != count) continue;
        std::vector<int> cuts;
        for (int g = 0; g < u - 1; ++g) {
          if ((mask >> g) & 1u) cuts.push_back(g + 1);
        }
        cuts.push_back(u);
        best = std::min(best, cost(cuts));
      }
      CHECK(cost(mine) <= best + 1e-9 * std::max(1.0, std::abs(best)));
    }
  }
}

TEST_CASE("bins: borders strictly below the value; NaN by mode; NaN borders at the ends", "[quantize]") {
  float b[4] = {1.0f, 2.0f, 3.0f, 0.0f};
  CHECK(q::bin_of(0.5f, b, 3, q::nan_mode::min) == 0);
  CHECK(q::bin_of(1.0f, b, 3, q::nan_mode::min) == 0);  // equal to a border: the lower bin
  CHECK(q::bin_of(1.5f, b, 3, q::nan_mode::min) == 1);
  CHECK(q::bin_of(3.5f, b, 3, q::nan_mode::min) == 3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(q::bin_of(nan, b, 3, q::nan_mode::min) == 0);
  CHECK(q::bin_of(nan, b, 3, q::nan_mode::max) == 3);
  CHECK(q::bin_of(nan, b, 3, q::nan_mode::forbidden) == 0);
  CHECK(q::add_nan_border(b, 3, q::nan_mode::max) == 4);
  CHECK(b[3] == std::numeric_limits<float>::max());
  float c[3] = {1.0f, 2.0f, 0.0f};
  CHECK(q::add_nan_border(c, 2, q::nan_mode::min) == 3);
  CHECK(c[0] == std::numeric_limits<float>::lowest());
  CHECK(c[2] == 2.0f);
  CHECK(q::search_border_budget(128, true) == 127);
  CHECK(q::effective_nan_mode(q::nan_mode::max, false) == q::nan_mode::forbidden);
}

TEST_CASE("bins from the border tree equal bins from the sorted borders", "[quantize]") {
  std::mt19937_64 rng(11);
  const float inf = std::numeric_limits<float>::infinity();
  const float special[] = {-inf,
                           inf,
                           0.0f,
                           -0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::max(),
                           1.0f,
                           -1.0f};
  std::uniform_int_distribution<int> pick(0, 99);
  std::normal_distribution<float> normal;
  const auto draw = [&] {
    const int c = pick(rng);
    if (c < 10) return special[static_cast<std::size_t>(c) % std::size(special)];
    if (c < 20) return std::round(normal(rng) * 4.0f);
    return normal(rng);
  };
  std::vector<float> tree(q::tree_slots);
  for (int trial = 0; trial < 400; ++trial) {
    const int wanted = trial % 256;
    std::vector<float> b;
    for (int i = 0; i < wanted; ++i) b.push_back(draw());
    std::sort(b.begin(), b.end());
    for (float& x : b) x = x == 0.0f ? 0.0f : x;  // borders hold +0.0 only
    b.erase(std::unique(b.begin(), b.end()), b.end());
    const int count = static_cast<int>(b.size());
    for (int i = 0; i < q::tree_slots; ++i) tree[static_cast<std::size_t>(i)] = q::tree_slot_value(b.data(), count, i);
    for (int i = 0; i < 200; ++i) {
      float v = i < count ? b[static_cast<std::size_t>(i)] : draw();  // every border itself too
      if (i % 50 == 49) v = std::numeric_limits<float>::quiet_NaN();
      for (const q::nan_mode mode : {q::nan_mode::min, q::nan_mode::max, q::nan_mode::forbidden}) {
        REQUIRE(q::bin_of_tree(v, tree.data(), count, mode) == q::bin_of(v, b.data(), count, mode));
      }
    }
  }
}

TEST_CASE("the border subset follows CatBoost's generator (values checked against catboost)", "[quantize]") {
  q::catboost_rng64 rng(0);
  CHECK(rng.next() == 12283622132691337806ULL);
  CHECK(rng.next() == 3889516499669787225ULL);
  CHECK(rng.next() == 1451891202141633645ULL);
  CHECK(q::border_subset(200000, 200000, 0).empty());
  struct expect {
    std::uint64_t n;
    std::uint32_t k;
    std::uint64_t seed;
    std::vector<std::uint32_t> head;
    std::uint64_t sum;
  };
  const std::vector<expect> cases = {
      {300000, 200000, 0, {0, 1, 2, 4}, 29998565736ULL},       // partial Fisher-Yates
      {3600000, 200000, 0, {3, 22, 23, 35}, 359956882324ULL},  // rejection into a set
      {250000, 200000, 7, {0, 2, 3, 4}, 25000819733ULL},
      {1000, 10, 3, {25, 59, 109, 124}, 2643ULL},
  };
  for (const expect& e : cases) {
    const std::vector<std::uint32_t> s = q::border_subset(e.n, e.k, e.seed);
    REQUIRE(s.size() == e.k);
    CHECK(std::vector<std::uint32_t>(s.begin(), s.begin() + 4) == e.head);
    CHECK(std::accumulate(s.begin(), s.end(), std::uint64_t{0}) == e.sum);
    CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
  }
}

TEST_CASE("host quantizer: settings, NaN modes, overrides, layout", "[quantize]") {
  const std::int64_t rows = 1000;
  std::vector<float> x = corpus(rows, 8, 11);
  cbg::test::fake_tensor t(x.data(), cbg::test::dl_float(32), {rows, 8}, {1, rows});
  cbg::pool_inputs in;
  in.features = t.as_borrowed();
  const cbg::pool p = cbg::pool::build(make_context(cbg::cpu_device), std::move(in));
  q::options o;
  o.border_count = 16;
  o.overrides.push_back({4, 8, static_cast<int>(q::nan_mode::max)});
  const q::host_quantized h = q::quantize_host(p, o);
  CHECK(h.padded_rows == 1024);
  CHECK(h.index.size() == 2u * 1024u);
  CHECK(h.border_count[0] == 16);
  CHECK(h.border_count[1] == 9);  // ten distinct integers
  CHECK(h.border_count[3] == 0);  // constant
  CHECK(h.border_count[7] == 1);  // two-valued: 1.5
  CHECK(borders_of(h, 7) == std::vector<float>{1.5f});
  // Feature 4 has NaNs: 7 searched borders + FLT_MAX last (Max, 8 borders in all).
  CHECK(h.border_count[4] == 8);
  CHECK(borders_of(h, 4).back() == std::numeric_limits<float>::max());
  CHECK(h.mode[4] == static_cast<std::uint8_t>(q::nan_mode::max));
  CHECK(h.mode[0] == static_cast<std::uint8_t>(q::nan_mode::forbidden));  // no NaN in the sample
  // Feature 5 is -0/+0/1: one border at 0.5, the zeros in bin 0 whatever their sign.
  CHECK(borders_of(h, 5) == std::vector<float>{0.5f});
  for (std::int64_t r = 0; r < rows; ++r) {
    const float v = x[static_cast<std::size_t>(4 * rows + r)];
    if (std::isnan(v)) CHECK(h.bin(r, 4) == 8u);
    CHECK(h.bin(r, 5) == (x[static_cast<std::size_t>(5 * rows + r)] == 1.0f ? 1u : 0u));
    CHECK(h.bin(r, 3) == 0u);
  }
  CHECK(h.index[1000] == 0u);  // padding rows are zero
  // Forbidden with a NaN in the sample is an error.
  q::options forbid;
  forbid.mode = q::nan_mode::forbidden;
  try {
    (void)q::quantize_host(p, forbid);
    FAIL("NaN accepted under Forbidden");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
  }
  q::options bad;
  bad.border_count = 256;
  CHECK_THROWS_AS(q::quantize_host(p, bad), cbg::error);
}

TEST_CASE("host quantizer: first_rows subset rule, border types, overrides", "[quantize]") {
  const std::int64_t rows = 3000;
  const std::int64_t head = 1000;
  std::vector<float> x = corpus(rows, 8, 13);
  cbg::test::fake_tensor all(x.data(), cbg::test::dl_float(32), {rows, 8}, {1, rows});
  cbg::test::fake_tensor first(x.data(), cbg::test::dl_float(32), {head, 8}, {1, rows});
  cbg::pool_inputs in_all, in_first;
  in_all.features = all.as_borrowed();
  in_first.features = first.as_borrowed();
  const auto ctx = make_context(cbg::cpu_device, 4);
  const cbg::pool p_all = cbg::pool::build(ctx, std::move(in_all));
  const cbg::pool p_first = cbg::pool::build(ctx, std::move(in_first));
  for (int t = 0; t < q::border_type_count; ++t) {
    CAPTURE(t);
    q::options o;
    o.border_count = 32;
    o.type = static_cast<q::border_type>(t);
    o.overrides.push_back({2, 0, -1, (t + 1) % q::border_type_count});  // another type for feature 2
    q::options sub = o;
    sub.max_subset_size = static_cast<std::uint32_t>(head);
    sub.subset = q::subset_rule::first_rows;
    const q::host_quantized h_first = q::quantize_host(p_first, o);  // every row of the head
    const q::host_quantized h_rule = q::quantize_host(p_all, sub);
    CHECK(h_rule.border_count == h_first.border_count);
    CHECK(h_rule.borders == h_first.borders);
    CHECK(h_rule.mode == h_first.mode);
    sub.subset = q::subset_rule::sampled;
    const q::host_quantized h_drawn = q::quantize_host(p_all, sub);
    CHECK(h_drawn.borders != h_first.borders);
  }
  // Bad settings.
  q::options bad;
  bad.type = static_cast<q::border_type>(7);
  CHECK_THROWS_AS(q::quantize_host(p_all, bad), cbg::error);
  bad = q::options{};
  bad.overrides.push_back({1, 0, -1, 12});
  CHECK_THROWS_AS(q::quantize_host(p_all, bad), cbg::error);
  // The exact types take at most 2^24 subset objects (CatBoost's float counts).
  q::feature_settings settings;
  settings.border_count = {8};
  settings.mode = {1};
  settings.type = {static_cast<std::uint8_t>(q::border_type::min_entropy)};
  q::options big;
  big.max_subset_size = (1u << 24) + 1;
  try {
    (void)q::border_subset_shape(std::uint64_t{1} << 25, big, settings);
    FAIL("exact type accepted more than 2^24 subset objects");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::unsupported);
  }
  settings.type = {static_cast<std::uint8_t>(q::border_type::median)};
  const q::subset_shape shape = q::border_subset_shape(std::uint64_t{1} << 25, big, settings);
  CHECK(shape.m == big.max_subset_size);
  CHECK(shape.drawn);
  big.subset = q::subset_rule::first_rows;
  CHECK_FALSE(q::border_subset_shape(std::uint64_t{1} << 25, big, settings).drawn);
}

TEST_CASE("staging: pageable columns packed as float32 pieces (host side)", "[quantize]") {
  const std::int64_t rows = 70000;
  const int features = 16;
  const std::vector<float> col = corpus(rows, features, 41);  // column-major, NaNs included
  std::vector<float> row(col.size());
  for (int f = 0; f < features; ++f) {
    for (std::int64_t r = 0; r < rows; ++r) {
      row[static_cast<std::size_t>(r * features + f)] = col[static_cast<std::size_t>(f * rows + r)];
    }
  }
  std::vector<double> f64(static_cast<std::size_t>(rows));
  std::vector<std::int32_t> i32(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    f64[static_cast<std::size_t>(r)] = r % 7 == 0 ? std::nan("") : 1.0 / (1.0 + static_cast<double>(r));
    i32[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r * 37 % 1001) - 500;
  }
  // Columns: row-major float32 (strided), column-major float32 (contiguous), float64, int32.
  std::vector<cbg::column_view> cols;
  for (int f = 0; f < features; ++f) {
    cbg::column_view c;
    c.data = row.data() + f;
    c.size = rows;
    c.stride = features;
    cols.push_back(c);
    c.data = col.data() + static_cast<std::size_t>(f) * rows;
    c.stride = 1;
    cols.push_back(c);
  }
  cbg::column_view d;
  d.data = f64.data();
  d.type = cbg::dtype::float64;
  d.size = rows;
  cols.push_back(d);
  d.data = i32.data();
  d.type = cbg::dtype::int32;
  cols.push_back(d);
  const auto expected = [&](std::int64_t j, std::int64_t r) {
    return q::to_feature_float(cols[static_cast<std::size_t>(j)].value(r));
  };
  for (const unsigned threads : {1u, 4u}) {
    for (const auto& [r0, r1] : {std::pair<std::int64_t, std::int64_t>{0, rows}, {1234, 69999}, {5, 6}}) {
      std::vector<std::int64_t> staged;
      const std::int64_t step = threads == 1 ? 1 : 3;  // all columns; or every third (no block)
      for (std::int64_t j = 0; j < static_cast<std::int64_t>(cols.size()); j += step) staged.push_back(j);
      const std::int64_t len = r1 - r0 + 3;  // floats per packed column
      std::vector<float> out(static_cast<std::size_t>(len) * staged.size(), -1.0f);
      q::detail::pack_rows(cols.data(), staged.data(), staged.size(), r0, r1, out.data(), static_cast<std::size_t>(len),
                           threads);
      std::size_t wrong = 0;  // bit for bit (a NaN may keep its payload)
      for (std::size_t k = 0; k < staged.size(); ++k) {
        for (std::int64_t r = r0; r < r1; ++r) {
          const float got = out[k * static_cast<std::size_t>(len) + static_cast<std::size_t>(r - r0)];
          const float want = expected(staged[k], r);
          wrong += bits(got) == bits(want) || (std::isnan(got) && std::isnan(want)) ? 0 : 1;
        }
      }
      CAPTURE(threads, r0, r1);
      CHECK(wrong == 0);
    }
  }
}

// ----------------------------------------------------------------------------------------------
// GPU == host
// ----------------------------------------------------------------------------------------------

namespace {

void check_equal(const q::host_quantized& h, const q::device_quantized& d, const cbg::context& ctx) {
  REQUIRE(h.rows == d.rows);
  REQUIRE(h.features == d.features);
  REQUIRE(h.padded_rows == d.padded_rows);
  std::vector<float> borders(d.borders.size());
  std::vector<std::int32_t> counts(d.border_count.size());
  std::vector<std::uint8_t> modes(d.mode.size());
  std::vector<std::uint32_t> index(d.index.size());
  ctx.sync();
  // Test-side reads (not through the library's accounting).
  CBG_CUDA_TRY(cudaMemcpy(borders.data(), d.borders.data(), d.borders.size_bytes(), cudaMemcpyDeviceToHost));
  CBG_CUDA_TRY(cudaMemcpy(counts.data(), d.border_count.data(), d.border_count.size_bytes(), cudaMemcpyDeviceToHost));
  CBG_CUDA_TRY(cudaMemcpy(modes.data(), d.mode.data(), d.mode.size_bytes(), cudaMemcpyDeviceToHost));
  CBG_CUDA_TRY(cudaMemcpy(index.data(), d.index.data(), d.index.size_bytes(), cudaMemcpyDeviceToHost));
  CHECK(counts == h.border_count);
  CHECK(modes == h.mode);
  std::size_t border_mismatch = 0;
  for (std::size_t f = 0; f < counts.size(); ++f) {
    for (int i = 0; i < counts[f]; ++i) {
      const std::size_t k = f * q::border_stride + static_cast<std::size_t>(i);
      border_mismatch += bits(borders[k]) != bits(h.borders[k]) ? 1 : 0;
    }
  }
  CHECK(border_mismatch == 0);
  std::size_t index_mismatch = 0;
  for (std::size_t i = 0; i < index.size(); ++i) index_mismatch += index[i] != h.index[i] ? 1 : 0;
  CHECK(index_mismatch == 0);
}

template <class T>
cbg::device_buffer<T> to_device(const std::vector<T>& host, const cbg::context& ctx) {
  cbg::device_buffer<T> d(host.size(), ctx.stream(), ctx.resource());
  CBG_CUDA_TRY(cudaMemcpyAsync(d.data(), host.data(), d.size_bytes(), cudaMemcpyHostToDevice, ctx.stream()));
  ctx.sync();
  return d;
}

}  // namespace

TEST_CASE("GPU quantizer equals the host reference bit for bit", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  struct shape {
    std::int64_t rows;
    int features;
    bool row_major;
    std::uint64_t seed;
    int border_count;
    q::nan_mode mode;
    std::uint32_t max_subset = q::default_max_subset_size;
  };
  const std::vector<shape> shapes = {
      {1, 8, false, 0, 128, q::nan_mode::min},
      {37, 8, true, 0, 5, q::nan_mode::max},
      {5000, 16, false, 0, 254, q::nan_mode::min},
      {5000, 16, true, 3, 128, q::nan_mode::max},
      {250000, 8, false, 0, 128, q::nan_mode::min},  // sampled subset (Fisher-Yates branch)
      {260000, 9, true, 42, 255, q::nan_mode::max},
      {3000, 80, true, 7, 128, q::nan_mode::min},  // many features: float4 rows
      {70000, 67, false, 1, 32, q::nan_mode::max},
      {50000, 12, true, 9, 128, q::nan_mode::min, 2000},  // subset by rejection: drawn on the GPU
      {120000, 8, false, 4, 64, q::nan_mode::max, 5000},
  };
  for (const shape& s : shapes) {
    CAPTURE(s.rows, s.features, s.row_major, s.seed, s.border_count);
    std::vector<float> col = corpus(s.rows, s.features, static_cast<std::uint32_t>(s.rows));
    std::vector<float> x(col.size());
    for (int f = 0; f < s.features; ++f) {
      for (std::int64_t r = 0; r < s.rows; ++r) {
        const std::size_t dst =
            s.row_major ? static_cast<std::size_t>(r * s.features + f) : static_cast<std::size_t>(f * s.rows + r);
        x[dst] = col[static_cast<std::size_t>(f * s.rows + r)];
      }
    }
    const std::vector<std::int64_t> strides =
        s.row_major ? std::vector<std::int64_t>{s.features, 1} : std::vector<std::int64_t>{1, s.rows};
    auto gctx = make_context(0, s.seed);
    auto hctx = make_context(cbg::cpu_device, s.seed);
    cbg::device_buffer<float> dx = to_device(x, *gctx);
    cbg::test::fake_tensor ht(x.data(), cbg::test::dl_float(32), {s.rows, s.features}, strides);
    cbg::test::fake_tensor dt(dx.data(), cbg::test::dl_float(32), {s.rows, s.features}, strides, DLDevice{kDLCUDA, 0});
    cbg::pool_inputs hin, din;
    hin.features = ht.as_borrowed();
    din.features = dt.as_borrowed();
    const cbg::pool hp = cbg::pool::build(hctx, std::move(hin));
    const cbg::pool dp = cbg::pool::build(gctx, std::move(din));
    q::options o;
    o.border_count = s.border_count;
    o.mode = s.mode;
    o.max_subset_size = s.max_subset;
    const q::host_quantized h = q::quantize_host(hp, o);
    for (const q::sort_method method : {q::sort_method::device_wide, q::sort_method::segmented}) {
      CAPTURE(static_cast<int>(method));
      o.sort = method;
      check_equal(h, q::quantize_device(dp, o), *gctx);
    }
  }
}

TEST_CASE("GPU subset draws equal the host's border subset", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  auto ctx = make_context(0);
  struct draw_case {
    std::uint64_t rows;
    std::uint32_t k;
    std::uint64_t seed;
    std::uint32_t draws;  // 0: the default margin; else so few that some repeats leave it short
  };
  const std::vector<draw_case> cases = {
      // rejection into a set; the first is checked against catboost above
      {3600000, 200000, 0, 0},
      {10500000, 200000, 0, 0},
      {1000000, 50000, 5, 0},
      {5000, 10, 3, 0},
      {400, 64, 1, 64},
      {400, 64, 2, 70},
      {400, 64, 3, 200},
      // partial Fisher-Yates; the first two are checked against catboost above
      {300000, 200000, 0, 0},
      {250000, 200000, 7, 0},
      {400000, 200000, 0, 0},
      {1000, 200, 3, 0},
      {3, 2, 1, 0},
      {70, 69, 11, 0},
  };
  const int no_status = 0x7fffffff;
  for (const draw_case& c : cases) {
    CAPTURE(c.rows, c.k, c.seed, c.draws);
    const auto plan = q::detail::plan_subset_draws(c.rows, c.k, c.draws);
    REQUIRE(plan.usable());
    REQUIRE(plan.shuffle == q::subset_by_shuffle(c.rows, c.k));
    cbg::device_buffer<unsigned char> scratch(plan.bytes(), ctx->stream(), ctx->resource());
    cbg::device_buffer<std::uint32_t> out(c.k, ctx->stream(), ctx->resource());
    // Draws that fall short leave the tail of `out` unwritten; the whole buffer is read back below.
    CBG_CUDA_TRY(cudaMemsetAsync(out.data(), 0xff, out.size_bytes(), ctx->stream()));
    cbg::device_buffer<int> status = to_device(std::vector<int>{no_status}, *ctx);
    q::detail::draw_subset(plan, scratch.data(), q::catboost_rng64(c.seed).streams(), c.rows, c.k, out.data(),
                           status.data(), ctx->stream());
    ctx->sync();
    int got_status = 0;
    std::vector<std::uint32_t> got(c.k);
    CBG_CUDA_TRY(cudaMemcpy(&got_status, status.data(), sizeof(int), cudaMemcpyDeviceToHost));
    CBG_CUDA_TRY(cudaMemcpy(got.data(), out.data(), out.size_bytes(), cudaMemcpyDeviceToHost));
    // The distinct rows among the draws made (a rejected draw gives none).
    q::catboost_rng64 rng(c.seed);
    const std::uint64_t limit = q::catboost_rng64::rejection_limit(c.rows);
    std::vector<bool> seen(c.rows);
    std::uint64_t distinct = plan.shuffle ? c.k : 0;
    for (std::uint32_t d = 0; d < plan.draws && !plan.shuffle; ++d) {
      const std::uint64_t r = rng.next();
      if (r < limit && !seen[r % c.rows]) {
        seen[r % c.rows] = true;
        ++distinct;
      }
    }
    if (distinct >= c.k) {
      CHECK(got_status == no_status);
      CHECK(got == q::border_subset(c.rows, c.k, c.seed));
    } else {
      CHECK(got_status == q::detail::subset_short);
    }
  }
}

TEST_CASE("GPU quantizer reads every dtype and per-column tensors like the host", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  const std::int64_t rows = 3000;
  std::mt19937 rng(5);
  std::vector<double> f64(rows);
  std::vector<std::int32_t> i32(rows);
  std::vector<std::uint16_t> f16(rows);
  std::vector<std::uint8_t> u8(rows);
  std::normal_distribution<double> normal;
  for (std::int64_t r = 0; r < rows; ++r) {
    f64[static_cast<std::size_t>(r)] = r % 17 == 0 ? std::nan("") : normal(rng) * 1e3;
    i32[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(rng() % 100000) - 50000;
    f16[static_cast<std::size_t>(r)] = static_cast<std::uint16_t>(0x3c00u + (rng() % 1024));  // [1, 2)
    u8[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(rng() % 7);
  }
  auto gctx = make_context(0);
  auto hctx = make_context(cbg::cpu_device);
  auto d64 = to_device(f64, *gctx);
  auto d32 = to_device(i32, *gctx);
  auto d16 = to_device(f16, *gctx);
  auto d8 = to_device(u8, *gctx);
  const DLDevice cuda{kDLCUDA, 0};
  cbg::test::fake_tensor h0(f64.data(), cbg::test::dl_float(64), {rows});
  cbg::test::fake_tensor h1(i32.data(), cbg::test::dl_int(32), {rows});
  cbg::test::fake_tensor h2(f16.data(), cbg::test::dl_float(16), {rows});
  cbg::test::fake_tensor h3(u8.data(), cbg::test::dl_uint(8), {rows});
  cbg::test::fake_tensor g0(d64.data(), cbg::test::dl_float(64), {rows}, {}, cuda);
  cbg::test::fake_tensor g1(d32.data(), cbg::test::dl_int(32), {rows}, {}, cuda);
  cbg::test::fake_tensor g2(d16.data(), cbg::test::dl_float(16), {rows}, {}, cuda);
  cbg::test::fake_tensor g3(d8.data(), cbg::test::dl_uint(8), {rows}, {}, cuda);
  cbg::pool_inputs hin, din;
  hin.columns = {h0.as_borrowed(), h1.as_borrowed(), h2.as_borrowed(), h3.as_borrowed()};
  din.columns = {g0.as_borrowed(), g1.as_borrowed(), g2.as_borrowed(), g3.as_borrowed()};
  const cbg::pool hp = cbg::pool::build(hctx, std::move(hin));
  const cbg::pool dp = cbg::pool::build(gctx, std::move(din));
  q::options o;
  o.border_count = 64;
  const q::host_quantized h = q::quantize_host(hp, o);
  CHECK(h.border_count[0] == 64);  // 63 searched + the NaN border
  CHECK(h.border_count[3] == 6);
  check_equal(h, q::quantize_device(dp, o), *gctx);
}

TEST_CASE("GPU quantizer in strict mode copies no feature data to the host", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  auto gctx = make_context(0, 0, /*strict=*/true);
  const std::int64_t rows = 300000;  // sampled: the subset indices go host -> device
  const int features = 8;
  std::vector<float> x = corpus(rows, features, 9);
  cbg::device_buffer<float> dx = to_device(x, *gctx);
  cbg::test::fake_tensor dt(dx.data(), cbg::test::dl_float(32), {rows, features}, {1, rows}, DLDevice{kDLCUDA, 0});
  cbg::pool_inputs in;
  in.features = dt.as_borrowed();
  const cbg::pool p = cbg::pool::build(gctx, std::move(in));
  gctx->copies().reset();
  const q::device_quantized d = q::quantize_device(p, q::options{});
  const cbg::copy_totals t = gctx->copies().totals();
  CHECK(t.bytes_in(copy_direction::d2h) == sizeof(int));  // only the error flag comes back
  CHECK(t.calls_in(copy_direction::d2h) == 1);
  CHECK(t.bytes_in(copy_direction::h2d) < 4u * 1024u * 1024u);  // descriptors, subset, log table
  CHECK(d.index.size() == 2u * static_cast<std::size_t>(q::padded_rows_of(rows)));
  // A Forbidden feature with NaNs fails on the GPU too, naming the first such feature.
  q::options forbid;
  forbid.mode = q::nan_mode::forbidden;
  try {
    (void)q::quantize_device(p, forbid);
    FAIL("NaN accepted under Forbidden");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
    CHECK(std::string(e.what()).find("feature 4") != std::string::npos);
  }
}

namespace {

// A pool over `x` ([rows, features] float32, column- or row-major) in host or device memory.
struct test_pool {
  std::unique_ptr<cbg::test::fake_tensor> tensor;
  std::unique_ptr<cbg::pool> pool;
};
test_pool make_pool(const std::shared_ptr<cbg::context>& ctx, const float* data, std::int64_t rows, int features,
                    bool row_major, bool on_device) {
  test_pool t;
  const std::vector<std::int64_t> strides =
      row_major ? std::vector<std::int64_t>{features, 1} : std::vector<std::int64_t>{1, rows};
  t.tensor = on_device ? std::make_unique<cbg::test::fake_tensor>(const_cast<float*>(data), cbg::test::dl_float(32),
                                                                  std::vector<std::int64_t>{rows, features}, strides,
                                                                  DLDevice{kDLCUDA, 0})
                       : std::make_unique<cbg::test::fake_tensor>(const_cast<float*>(data), cbg::test::dl_float(32),
                                                                  std::vector<std::int64_t>{rows, features}, strides);
  cbg::pool_inputs in;
  in.features = t.tensor->as_borrowed();
  t.pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
  return t;
}

std::vector<float> layout(const std::vector<float>& col_major, std::int64_t rows, int features, bool row_major) {
  if (!row_major) return col_major;
  std::vector<float> x(col_major.size());
  for (int f = 0; f < features; ++f) {
    for (std::int64_t r = 0; r < rows; ++r) {
      x[static_cast<std::size_t>(r * features + f)] = col_major[static_cast<std::size_t>(f * rows + r)];
    }
  }
  return x;
}

}  // namespace

TEST_CASE("GPU quantizer: every border type and the first_rows rule equal the host", "[gpu][quantize][parts]") {
  CBG_REQUIRE_GPU();
  struct shape {
    std::int64_t rows;
    int features;
    bool row_major;
    int border_count;
    q::nan_mode mode;
    std::uint32_t max_subset = q::default_max_subset_size;
    q::subset_rule rule = q::subset_rule::sampled;
    bool exact = true;  // also the exact types (slow with many distinct values and borders)
  };
  const std::vector<shape> shapes = {
      {1, 8, false, 128, q::nan_mode::min},
      {37, 8, true, 5, q::nan_mode::max},
      {5000, 16, false, 254, q::nan_mode::min},
      {5000, 16, true, 31, q::nan_mode::max},
      {250000, 8, false, 16, q::nan_mode::min},        // sampled subset
      {120000, 12, true, 64, q::nan_mode::max, 5000},  // drawn on the GPU
      {30000, 9, false, 128, q::nan_mode::min, 4000, q::subset_rule::first_rows},
      {260000, 70, true, 128, q::nan_mode::min, q::default_max_subset_size, q::subset_rule::sampled,
       false},  // segmented sort by default, greedy/median/uniform only
  };
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (!cbg::test::in_test_part(i)) continue;
    shape s = shapes[i];
    // Under CBGPU_TEST_SHRINK: sampled subsets stay smaller than the rows, still more than one chunk
    // of 8 features, and the exact types (whose kernels the tools slow the most) on the small shapes only.
    if (cbg::test::test_shrink()) {
      s.rows = std::min<std::int64_t>(s.rows, 60000);
      s.features = std::min(s.features, 20);
      s.max_subset = std::min<std::uint32_t>(s.max_subset, 20000);
      s.exact = s.exact && s.rows <= 5000;
    }
    const std::vector<float> x =
        layout(corpus(s.rows, s.features, static_cast<std::uint32_t>(s.rows) + 1), s.rows, s.features, s.row_major);
    auto gctx = make_context(0, 3);
    auto hctx = make_context(cbg::cpu_device, 3);
    cbg::device_buffer<float> dx = to_device(x, *gctx);
    const test_pool hp = make_pool(hctx, x.data(), s.rows, s.features, s.row_major, false);
    const test_pool dp = make_pool(gctx, dx.data(), s.rows, s.features, s.row_major, true);
    for (int t = 1; t <= q::border_type_count; ++t) {
      const auto type = static_cast<q::border_type>(t % q::border_type_count);
      if (!s.exact && q::is_exact(type)) continue;
      CAPTURE(s.rows, s.features, s.row_major, s.border_count, t);
      q::options o;
      o.border_count = s.border_count;
      o.mode = s.mode;
      o.type = type;
      o.max_subset_size = s.max_subset;
      o.subset = s.rule;
      // Mixed types: feature 1 greedy, feature 2 Median, feature 5 MaxLogSum (when exact is on).
      o.overrides.push_back({1, 0, -1, static_cast<int>(q::border_type::greedy_min_entropy)});
      o.overrides.push_back({2, 0, -1, static_cast<int>(q::border_type::median)});
      if (s.exact) o.overrides.push_back({5, 7, -1, static_cast<int>(q::border_type::max_log_sum)});
      const q::host_quantized h = q::quantize_host(*hp.pool, o);
      check_equal(h, q::quantize_device(*dp.pool, o), *gctx);
      if (s.features > 8 && t % 2 == 0) {  // device input in chunks of features too
        o.chunk_features = 8;
        check_equal(h, q::quantize_device(*dp.pool, o), *gctx);
      }
    }
  }
}

TEST_CASE("GPU quantizer: pageable host input staged through pinned memory equals the host", "[gpu][quantize]") {
  CBG_REQUIRE_GPU();
  const std::int64_t rows = cbg::test::shrunk<std::int64_t>(70001, 20001);  // > one 64 KiB piece per column
  const int features = 21;                                                  // 5 full groups and one of one feature
  const std::vector<float> col = corpus(rows, features, 31);
  for (const bool row_major : {false, true}) {
    const std::vector<float> x = layout(col, rows, features, row_major);
    auto gctx = make_context(0, 1);
    auto hctx = make_context(cbg::cpu_device, 1);
    const test_pool hp = make_pool(hctx, x.data(), rows, features, row_major, false);
    const test_pool gp = make_pool(gctx, x.data(), rows, features, row_major, false);  // pageable, GPU context
    // The exact type's kernels are slow under compute-sanitizer (CBGPU_TEST_SHRINK); staging is the same.
    const q::border_type exact_or_median =
        cbg::test::test_shrink() ? q::border_type::median : q::border_type::max_log_sum;
    struct knobs {
      std::int64_t chunk;
      std::size_t piece;
      q::border_type type;
    };
    for (const knobs& k : {knobs{0, 0, q::border_type::greedy_log_sum},          // automatic: one chunk
                           knobs{8, 64 * 1024, q::border_type::greedy_log_sum},  // 3 chunks, many pieces
                           knobs{4, 100000, q::border_type::median}, knobs{12, 1 << 20, exact_or_median}}) {
      CAPTURE(row_major, k.chunk, k.piece, static_cast<int>(k.type));
      q::options o;
      o.border_count = 32;
      o.type = k.type;
      o.chunk_features = k.chunk;
      o.staging_piece_bytes = k.piece;
      const q::host_quantized h = q::quantize_host(*hp.pool, o);
      gctx->copies().reset();
      const q::device_quantized d = q::quantize_device(*gp.pool, o);
      const cbg::copy_totals t = gctx->copies().totals();
      CHECK(t.bytes_in(copy_direction::d2h) == sizeof(int));  // the status word only
      // Every value crossed once as float32 (plus the settings image).
      CHECK(t.bytes_in(copy_direction::h2d) >= static_cast<std::uint64_t>(rows * features) * 4);
      CHECK(t.bytes_in(copy_direction::h2d) < static_cast<std::uint64_t>(rows * features) * 4 + (8u << 20));
      check_equal(h, d, *gctx);
    }
  }
  // Per-column tensors of several dtypes, some pageable and some on the device, on a GPU context.
  const std::int64_t n = 5000;
  std::vector<double> f64(n);
  std::vector<std::int32_t> i32(n);
  std::vector<float> f32(n);
  std::mt19937 rng(8);
  std::normal_distribution<double> normal;
  for (std::int64_t r = 0; r < n; ++r) {
    f64[static_cast<std::size_t>(r)] = r % 13 == 0 ? std::nan("") : normal(rng);
    i32[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(rng() % 1000);
    f32[static_cast<std::size_t>(r)] = static_cast<float>(normal(rng));
  }
  auto gctx = make_context(0);
  auto hctx = make_context(cbg::cpu_device);
  auto d32 = to_device(f32, *gctx);
  cbg::test::fake_tensor h0(f64.data(), cbg::test::dl_float(64), {n});
  cbg::test::fake_tensor h1(i32.data(), cbg::test::dl_int(32), {n});
  cbg::test::fake_tensor h2(f32.data(), cbg::test::dl_float(32), {n});
  cbg::test::fake_tensor g2(d32.data(), cbg::test::dl_float(32), {n}, {}, DLDevice{kDLCUDA, 0});
  cbg::pool_inputs hin, gin;
  hin.columns = {h0.as_borrowed(), h1.as_borrowed(), h2.as_borrowed()};
  gin.columns = {h0.as_borrowed(), h1.as_borrowed(), g2.as_borrowed()};
  const cbg::pool hp = cbg::pool::build(hctx, std::move(hin));
  const cbg::pool gp = cbg::pool::build(gctx, std::move(gin));
  q::options o;
  o.border_count = 50;
  check_equal(q::quantize_host(hp, o), q::quantize_device(gp, o), *gctx);
}
