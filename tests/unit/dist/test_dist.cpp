// SPDX-License-Identifier: Apache-2.0
// Multi-GPU (issue 9), host side: device lists, row splits, why gathered tile sums fold to the
// single-GPU ordered sum, and NCCL loading. The GPU side is tests/unit/dist/test_dist_gpu.cpp.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "cbgpu/cbgpu.h"

#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/train/reduce_math.hpp"
#include "support/catch.hpp"

namespace cd = cbg::dist;

namespace {

cbg::status status_of(const std::string& devices, int visible) {
  try {
    (void)cd::parse_devices(devices, visible);
  } catch (const cbg::error& e) {
    return e.code();
  }
  return cbg::status::ok;
}

}  // namespace

TEST_CASE("devices: CatBoost's syntax", "[dist]") {
  CHECK(cd::parse_devices("", 4).empty());
  CHECK(cd::parse_devices("0", 4) == std::vector<int>{0});
  CHECK(cd::parse_devices("2", 4) == std::vector<int>{2});
  CHECK(cd::parse_devices("0:1", 4) == std::vector<int>{0, 1});
  CHECK(cd::parse_devices("0:1:3", 4) == std::vector<int>{0, 1, 3});
  CHECK(cd::parse_devices("0-3", 4) == std::vector<int>{0, 1, 2, 3});
  CHECK(cd::parse_devices("1-2", 4) == std::vector<int>{1, 2});
  CHECK(cd::parse_devices("0:2-3", 4) == std::vector<int>{0, 2, 3});
  CHECK(cd::parse_devices(" 1 : 0 ", 4) == std::vector<int>{1, 0});
  CHECK(cd::parse_devices("0:0:1", 4) == std::vector<int>{0, 1});
  CHECK(cd::parse_devices("-1", 3) == std::vector<int>{0, 1, 2});
  CHECK(status_of("a", 4) == cbg::status::invalid_argument);
  CHECK(status_of("0:", 4) == cbg::status::invalid_argument);
  CHECK(status_of("3-1", 4) == cbg::status::invalid_argument);
  CHECK(status_of("0,1", 4) == cbg::status::invalid_argument);
  CHECK(status_of("-2", 4) == cbg::status::invalid_argument);
  CHECK(status_of("4", 4) == cbg::status::no_device);
  CHECK(status_of("0-4", 4) == cbg::status::no_device);
  CHECK(status_of("-1", 0) == cbg::status::no_device);
  CHECK(status_of("0", 0) == cbg::status::no_device);
}

TEST_CASE("row splits: blocks of whole tiles, the rest on the last rank", "[dist]") {
  const std::int64_t tile = cbg::train::sum_tile;
  const cd::row_split a = cd::even_split(10000, 2, tile);
  CHECK(a.counts == std::vector<std::int64_t>{8192, 1808});
  CHECK(a.total() == 10000);
  CHECK(a.first(1) == 8192);
  CHECK(a.max_count() == 8192);
  CHECK(a.aligned(tile));
  const cd::row_split b = cd::even_split(50000, 4, tile);
  CHECK(b.counts == std::vector<std::int64_t>{16384, 16384, 16384, 848});
  CHECK(b.aligned(tile));
  const cd::row_split c = cd::even_split(10000, 4, tile);
  CHECK(c.counts == std::vector<std::int64_t>{4096, 4096, 1808, 0});
  const cd::row_split d = cd::even_split(7, 3, 1);
  CHECK(d.counts == std::vector<std::int64_t>{3, 3, 1});
  CHECK(cd::even_split(0, 2, tile).total() == 0);
  cd::row_split e;
  e.counts = {5000, 3192};
  CHECK_FALSE(e.aligned(tile));
}

// What makes sharded metric sums exact: with shards of whole tiles, each shard's tile sums are the
// single-GPU tile sums, so folding the gathered tile sums gives the single-GPU ordered sum.
TEST_CASE("gathered tile sums of aligned shards fold to the single-GPU ordered sum", "[dist]") {
  namespace tr = cbg::train;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{4095}, std::int64_t{50000}, std::int64_t{70001}}) {
    for (const int ranks : {2, 3, 4}) {
      std::vector<double> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = u(rng) * std::exp(u(rng) / 100);
      double whole = 0;
      tr::ordered_sum_host<1>(
          n, [&](std::int64_t r, double* o) { o[0] = x[static_cast<std::size_t>(r)]; }, &whole);
      const cd::row_split s = cd::even_split(n, ranks, tr::sum_tile);
      std::vector<double> tiles;
      for (int k = 0; k < ranks; ++k) {
        const std::int64_t first = s.first(k);
        const auto part = tr::tile_sums_host<1>(s.counts[static_cast<std::size_t>(k)], [&](std::int64_t r, double* o) {
          o[0] = x[static_cast<std::size_t>(first + r)];
        });
        tiles.insert(tiles.end(), part.begin(), part.end());
      }
      double folded = 0;
      tr::ordered_sum_host<1>(
          static_cast<std::int64_t>(tiles.size()),
          [&](std::int64_t r, double* o) { o[0] = tiles[static_cast<std::size_t>(r)]; }, &folded);
      // ordered_sum_host folds the tile sums the same way after its first level.
      double reference = 0;
      const auto level =
          tr::tile_sums_host<1>(n, [&](std::int64_t r, double* o) { o[0] = x[static_cast<std::size_t>(r)]; });
      tr::ordered_sum_host<1>(
          static_cast<std::int64_t>(level.size()),
          [&](std::int64_t r, double* o) { o[0] = level[static_cast<std::size_t>(r)]; }, &reference);
      CAPTURE(n, ranks);
      CHECK(tiles == level);
      CHECK(folded == reference);
      CHECK(reference == whole);
    }
  }
}

TEST_CASE("NCCL is loaded at run time, and its absence is reported", "[dist]") {
  std::string why;
  const bool ok = cd::nccl_available(&why);
  if (ok) {
    CHECK(why.empty());
  } else {
    CHECK(why.find("NCCL") != std::string::npos);
    try {
      (void)cd::make_local_reducers({0, 1});
      FAIL("make_local_reducers should refuse without NCCL");
    } catch (const cbg::error& e) {
      CHECK(e.code() == cbg::status::unsupported);
      CHECK(std::string(e.what()).find("NCCL") != std::string::npos);
    }
  }
  try {
    (void)cd::make_comm_reducer(nullptr, 0, 2);
    FAIL("a NULL communicator should be refused");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::null_pointer);
  }
}

TEST_CASE("C ABI: a context's communicator fields are checked; build info reports NCCL", "[dist]") {
  cbg_context_desc_t d;
  REQUIRE(cbg_context_desc_init(&d) == CBG_OK);
  CHECK(d.nccl_comm == nullptr);
  CHECK(d.nccl_size == 0);
  d.device = CBG_DEVICE_CPU;
  cbg_context_t* ctx = nullptr;
  d.nccl_size = 2;  // a size without a communicator
  CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_INVALID_ARGUMENT);
  CHECK(std::string(cbg_last_error()).find("nccl_comm") != std::string::npos);
  CHECK(ctx == nullptr);
  int not_a_comm = 0;
  d.nccl_comm = &not_a_comm;
  d.nccl_size = 0;  // a communicator without a size
  CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_INVALID_ARGUMENT);
  if (!cd::nccl_available()) {
    d.nccl_size = 2;
    CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_UNSUPPORTED);
    CHECK(std::string(cbg_last_error()).find("NCCL") != std::string::npos);
    CHECK(ctx == nullptr);
  }
  // An old caller's struct (without the communicator fields) is still accepted.
  cbg_context_desc_t old;
  REQUIRE(cbg_context_desc_init(&old) == CBG_OK);
  old.struct_size = offsetof(cbg_context_desc_t, nccl_comm);
  old.device = CBG_DEVICE_CPU;
  REQUIRE(cbg_context_create(&old, &ctx) == CBG_OK);
  CHECK(cbg_context_free(ctx) == CBG_OK);
  const char* info = nullptr;
  REQUIRE(cbg_build_info(&info) == CBG_OK);
  CHECK(std::string(info).find("\"nccl\"") != std::string::npos);
}

TEST_CASE("C ABI: a communicator from a unique id: fields checked, the id needs NCCL, abort is safe", "[dist]") {
  cbg_context_desc_t d;
  REQUIRE(cbg_context_desc_init(&d) == CBG_OK);
  CHECK(d.nccl_id_size == 0);
  CHECK(d.nccl_id_rank == 0);
  CHECK(d.nccl_timeout_ms == 600000);
  d.device = CBG_DEVICE_CPU;
  cbg_context_t* ctx = nullptr;
  d.nccl_id_size = 2;
  d.nccl_id_rank = 2;  // out of range
  CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_INVALID_ARGUMENT);
  CHECK(std::string(cbg_last_error()).find("nccl_id_rank 2 of nccl_id_size 2") != std::string::npos);
  d.nccl_id_rank = 1;
  int not_a_comm = 0;
  d.nccl_comm = &not_a_comm;  // both ways at once
  d.nccl_size = 2;
  CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_INVALID_ARGUMENT);
  CHECK(std::string(cbg_last_error()).find("not both") != std::string::npos);
  d.nccl_comm = nullptr;
  d.nccl_size = 0;
  d.nccl_timeout_ms = 0;
  CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_INVALID_ARGUMENT);
  CHECK(std::string(cbg_last_error()).find("nccl_timeout_ms") != std::string::npos);
  d.nccl_timeout_ms = 1000;
  CHECK(cbg_context_create(&d, &ctx) == CBG_ERR_INVALID_ARGUMENT);  // the CPU makes no communicator
  CHECK(std::string(cbg_last_error()).find("GPU context") != std::string::npos);
  CHECK(ctx == nullptr);
  // An older caller's struct (up to `profile`) is still accepted, with the defaults after it.
  cbg_context_desc_t old;
  REQUIRE(cbg_context_desc_init(&old) == CBG_OK);
  old.struct_size = offsetof(cbg_context_desc_t, nccl_id);
  old.device = CBG_DEVICE_CPU;
  old.nccl_timeout_ms = -5;  // beyond the old struct: not read
  REQUIRE(cbg_context_create(&old, &ctx) == CBG_OK);
  CHECK(cbg_context_abort(ctx) == CBG_OK);  // no communicator: nothing to abort
  CHECK(cbg_context_free(ctx) == CBG_OK);
  CHECK(cbg_context_abort(nullptr) != CBG_OK);
  CHECK(cbg_nccl_unique_id(nullptr) == CBG_ERR_NULL_POINTER);
  std::uint8_t id[128] = {};
  if (cd::nccl_available()) {
    REQUIRE(cbg_nccl_unique_id(id) == CBG_OK);
    CHECK(std::any_of(std::begin(id), std::end(id), [](std::uint8_t b) { return b != 0; }));
  } else {
    CHECK(cbg_nccl_unique_id(id) == CBG_ERR_UNSUPPORTED);
    CHECK(std::string(cbg_last_error()).find("NCCL") != std::string::npos);
  }
}

TEST_CASE("feature slices: contiguous, covering, balanced by columns, padded to the widest", "[dist]") {
  // Offsets of the tree search's layout: features of 3, 0 (no borders), 5, 5, 2 and 1 bins.
  const std::vector<std::int64_t> offset = {0, 3, 3, 8, 13, 15};
  const std::int64_t total = 16;
  for (int ranks = 1; ranks <= 8; ++ranks) {
    INFO(ranks << " ranks");
    const cd::feature_slices s = cd::slice_features(offset, total, ranks);
    REQUIRE(s.begin.size() == static_cast<std::size_t>(ranks) + 1);
    REQUIRE(s.column.size() == s.begin.size());
    CHECK(s.begin.front() == 0);
    CHECK(s.begin.back() == static_cast<std::int64_t>(offset.size()));
    CHECK(s.column.back() == total);
    std::int64_t widest = 0;
    for (std::size_t r = 0; r + 1 < s.begin.size(); ++r) {
      CHECK(s.begin[r] <= s.begin[r + 1]);
      CHECK(s.column[r] == (s.begin[r] < 6 ? offset[static_cast<std::size_t>(s.begin[r])] : total));
      widest = std::max(widest, s.column[r + 1] - s.column[r]);
    }
    CHECK(s.width == widest);
  }
  // Two ranks: the boundary nearest to 8 columns is feature 3 (column 8).
  CHECK(cd::slice_features(offset, total, 2).begin == std::vector<std::int64_t>{0, 3, 6});
  CHECK(cd::slice_features(offset, total, 2).width == 8);
  // Four ranks over 28 equal features (the Higgs shape): 7 each.
  std::vector<std::int64_t> even(28);
  for (std::size_t f = 0; f < even.size(); ++f) even[f] = static_cast<std::int64_t>(f) * 129;
  const cd::feature_slices e = cd::slice_features(even, 28 * 129, 4);
  CHECK(e.begin == std::vector<std::int64_t>{0, 7, 14, 21, 28});
  CHECK(e.width == 7 * 129);
  // More ranks than features: empty slices, still covering.
  const cd::feature_slices m = cd::slice_features({0, 4}, 8, 4);
  CHECK(m.begin.front() == 0);
  CHECK(m.begin.back() == 2);
  CHECK(m.width == 4);
  // No features at all.
  CHECK(cd::slice_features({}, 0, 3).width == 0);
  CHECK_THROWS_AS(cd::slice_features(offset, total, 0), cbg::error);
  CHECK_THROWS_AS(cd::slice_features({0, 5, 3}, 8, 2), cbg::error);
}
