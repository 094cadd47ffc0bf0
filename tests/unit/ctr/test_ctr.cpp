// SPDX-License-Identifier: Apache-2.0
// Categorical features in training (issue #5): CTR option parsing with CatBoost's syntax, the host
// reference of one-hot and CTR columns against brute-force definitions (ordered prefix statistics,
// counters, the final tables and the eval values the model computes), the trainer end to end (the
// model's one-hot and CTR features, its predictions on the eval set equal the trainer's eval
// metric), and ([gpu]) the GPU boosting loop on categorical data equal to the host reference byte
// for byte. Parity with CatBoost itself: tests/python/test_train_ctr.py.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbg/core/error.hpp"
#include "cbgpu/cbgpu.h"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/ctr/options.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/model/hash.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/io.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/trainer.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "support/status_of.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/shrink.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/leaf_count_limit.hpp"
#include "unit/ctr/cat_data.hpp"
#include "unit/ctr/ctr_compare.hpp"
#include "unit/ctr/predict_util.hpp"

namespace {

using cbg::test::make_context;

using cbg::test::status_of;

using cbg::test::cat_data;
using cbg::test::make_cat_data;
using cbg::test::upload;

// The test's own read-back of device results for comparison: not a copy of the library's, so it is
// made under non-strict rules even when `ctx` is strict (CBGPU_STRICT_NO_D2H=1 makes every context
// strict; a 20 000-row float column is 80 KB, above strict mode's 64 KiB limit). The library calls
// before it still run under the context's own rules.
template <class T>
std::vector<T> download(const T* d, std::size_t n, const cbg::context& ctx) {
  std::vector<T> v(n);
  const cbg::copy_rules test_rules{};  // non-strict
  cbg::copy_bytes(v.data(), cbg::memory_kind::host, d, cbg::memory_kind::device, n * sizeof(T), ctx.stream(),
                  ctx.copies(), test_rules, CBG_COPY_SITE("test download"));
  REQUIRE(cudaStreamSynchronize(ctx.stream()) == cudaSuccess);
  return v;
}

std::vector<double> predict(const cbg::model::model& m, const cat_data& d, int dims = 1) {
  std::vector<std::uint32_t> cats;
  for (std::int64_t r = 0; r < d.rows; ++r) {
    cats.push_back(cbg::model::cat_hash_int(d.a[static_cast<std::size_t>(r)]));
    cats.push_back(cbg::model::cat_hash_int(d.b[static_cast<std::size_t>(r)]));
  }
  return cbg::test::predict_raw(m, d.x.data(), cats, 2, d.rows, dims);
}

// Each row's position in the permutation of `seed` (ascending (key, row)).
std::vector<std::int64_t> positions_of(std::uint64_t seed, std::int64_t rows) {
  std::vector<std::pair<std::uint64_t, std::int64_t>> keyed;
  for (std::int64_t r = 0; r < rows; ++r)
    keyed.emplace_back(cbg::ctr::permutation_key(seed, static_cast<std::uint64_t>(r)), r);
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int64_t> pos(static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < keyed.size(); ++i)
    pos[static_cast<std::size_t>(keyed[i].second)] = static_cast<std::int64_t>(i);
  return pos;
}

}  // namespace

TEST_CASE("CTR options parse CatBoost's syntax and refuse bad values by name", "[ctr]") {
  namespace ctr = cbg::ctr;
  const ctr::ctr_spec s = ctr::parse_ctr_spec("Borders:CtrBorderCount=10:Prior=0.5/2:Prior=1", "simple_ctr");
  CHECK(s.type == cbg::model::ctr_type::borders);
  CHECK(s.ctr_border_count == 10);
  REQUIRE(s.priors.size() == 2);
  CHECK(s.priors[0] == ctr::prior{0.5f, 2.f});
  CHECK(s.priors[1] == ctr::prior{1.f, 1.f});
  CHECK(ctr::parse_ctr_spec("Counter", "x").priors == std::vector<ctr::prior>{{0.f, 1.f}});
  CHECK(ctr::parse_ctr_spec("Borders", "x").priors.size() == 3);
  CHECK(ctr::parse_ctr_spec("FeatureFreq", "x").ctr_border_type == cbg::quantize::border_type::min_entropy);

  const auto p = cbg::train::parse_params(
      R"({"simple_ctr": ["Borders:Prior=0.2", "Counter"], "one_hot_max_size": 4,
          "per_feature_ctr": ["2:FeatureFreq;Borders:CtrBorderType=Median"], "counter_calc_method": "Full",
          "max_ctr_complexity": 1, "combinations_ctr": "Borders"})");
  CHECK(p.ctr.one_hot_max_size == 4);
  REQUIRE(p.ctr.simple_ctr.has_value());
  CHECK(p.ctr.simple_ctr->size() == 2);
  CHECK(p.ctr.counter_calc_method == ctr::counter_calc::full);
  REQUIRE(p.ctr.per_feature_ctr.count(2) == 1);
  CHECK(p.ctr.per_feature_ctr.at(2).size() == 2);
  CHECK(p.ctr.per_feature_ctr.at(2)[1].ctr_border_type == cbg::quantize::border_type::median);
  CHECK(ctr::simple_ctrs_of(p.ctr, 2).size() == 2);
  CHECK(ctr::simple_ctrs_of(p.ctr, 0)[0].priors[0].num == 0.2f);
  CHECK(ctr::simple_ctrs_of(cbg::train::parse_params("{}").ctr, 0) == ctr::default_ctrs(false));

  using cbg::status;
  const auto bad = [](const char* json) { return status_of([&] { (void)cbg::train::parse_params(json); }); };
  CHECK(bad(R"({"simple_ctr": "Nope"})") == status::invalid_argument);
  CHECK(bad(R"({"simple_ctr": ["Borders:Prior=x"]})") == status::invalid_argument);
  CHECK(bad(R"({"simple_ctr": ["Borders:Color=1"]})") == status::invalid_argument);
  CHECK(bad(R"({"simple_ctr": ["Counter:TargetBorderCount=1"]})") == status::invalid_argument);
  CHECK(bad(R"({"one_hot_max_size": 300})") == status::invalid_argument);
  CHECK(bad(R"({"counter_calc_method": "Half"})") == status::invalid_argument);
  CHECK(bad(R"({"per_feature_ctr": ["Borders"]})") == status::invalid_argument);
  CHECK(bad(R"({"simple_ctr": ["Borders:TargetBorderCount=2"]})") == status::not_implemented);
  CHECK(bad(R"({"simple_ctr": ["Borders:PriorEstimation=BetaPrior"]})") == status::ok);  // test_beta_prior.cpp
  CHECK(bad(R"({"simple_ctr": ["Borders:PriorEstimation=Beta"]})") == status::invalid_argument);
  CHECK(bad(R"({"simple_ctr": ["Borders:PriorEstimation=No"]})") == status::ok);
  // ctr_target_border_count: CatBoost's regression losses; MultiClass not implemented; others refused.
  CHECK(bad(R"({"ctr_target_border_count": 3})") == status::ok);
  CHECK(bad(R"({"ctr_target_border_count": 3, "loss_function": "Poisson"})") == status::ok);
  CHECK(bad(R"({"ctr_target_border_count": 3, "loss_function": "MultiClass"})") == status::not_implemented);
  CHECK(bad(R"({"ctr_target_border_count": 3, "loss_function": "Logloss"})") == status::invalid_argument);
  CHECK(bad(R"({"ctr_target_border_count": 255})") == status::invalid_argument);
  const auto q = cbg::train::parse_params(
      R"({"ctr_target_border_count": 4, "simple_ctr": ["Borders", "Counter"], "per_feature_ctr": ["1:Buckets"]})");
  CHECK(ctr::simple_ctrs_of(q.ctr, 0)[0].target_border_count == 4);
  CHECK(ctr::simple_ctrs_of(q.ctr, 0)[1].target_border_count == 1);  // Counter takes no target
  CHECK(ctr::simple_ctrs_of(q.ctr, 1)[0].target_border_count == 4);
  REQUIRE(q.ctr.combinations_ctr.has_value());  // the defaults, with the count
  CHECK((*q.ctr.combinations_ctr)[0].type == cbg::model::ctr_type::borders);
  CHECK((*q.ctr.combinations_ctr)[0].target_border_count == 4);
  CHECK(bad(R"({"max_ctr_complexity": 0})") == status::invalid_argument);  // above 1: combinations.hpp
  // CatBoost's CPU-only table bounds: parsed here, refused on a GPU context by the trainer.
  CHECK(bad(R"({"ctr_leaf_count_limit": 18446744073709551615, "store_all_simple_ctr": false})") == status::ok);
  CHECK(bad(R"({"ctr_leaf_count_limit": 64, "store_all_simple_ctr": true})") == status::ok);
  CHECK(bad(R"({"ctr_leaf_count_limit": "64", "store_all_simple_ctr": "false"})") == status::ok);
  CHECK(bad(R"({"ctr_leaf_count_limit": 0})") == status::invalid_argument);
  CHECK(bad(R"({"ctr_leaf_count_limit": -3})") == status::invalid_argument);
  CHECK(bad(R"({"ctr_leaf_count_limit": 2.5})") == status::invalid_argument);
  CHECK(bad(R"({"store_all_simple_ctr": "yes"})") == status::invalid_argument);
  const auto bounded = cbg::train::parse_params(R"({"ctr_leaf_count_limit": 64, "store_all_simple_ctr": true})");
  CHECK(bounded.ctr.ctr_leaf_count_limit == 64);
  CHECK(bounded.ctr.store_all_simple_ctr);
  CHECK(cbg::train::parse_params("{}").ctr.ctr_leaf_count_limit == ctr::options::no_leaf_count_limit);
  cbg::model::projection single, pair, with_split;
  single.cat_features = {1};
  pair.cat_features = {0, 1};
  with_split.cat_features = {1};
  with_split.float_splits.push_back({0, 0.5f});
  CHECK(ctr::leaf_count_limit_of(bounded.ctr, single) == ctr::options::no_leaf_count_limit);
  CHECK(ctr::leaf_count_limit_of(bounded.ctr, pair) == 64);
  CHECK(ctr::leaf_count_limit_of(bounded.ctr, with_split) == 64);  // not a single categorical feature
  ctr::options limit_only;
  limit_only.ctr_leaf_count_limit = 64;
  CHECK(ctr::leaf_count_limit_of(limit_only, single) == 64);
  // A GPU context refuses them by name, as CatBoost's GPU trainer; a CPU context takes them.
  for (const ctr::options& o : {bounded.ctr, limit_only}) {
    CHECK_NOTHROW(ctr::check_table_bounds_supported(o, true));
    try {
      ctr::check_table_bounds_supported(o, false);
      FAIL("accepted on a GPU");
    } catch (const cbg::error& e) {
      CHECK(e.code() == status::not_implemented);
      CHECK(std::string(e.what()).find("ctr_leaf_count_limit") != std::string::npos);
      CHECK(std::string(e.what()).find("CPU context") != std::string::npos);
    }
  }
  ctr::options store_only;
  store_only.store_all_simple_ctr = true;
  try {
    ctr::check_table_bounds_supported(store_only, false);
    FAIL("accepted on a GPU");
  } catch (const cbg::error& e) {
    CHECK(std::string(e.what()).find("store_all_simple_ctr") != std::string::npos);
  }
  CHECK_NOTHROW(ctr::check_table_bounds_supported(ctr::options{}, false));
  try {
    (void)cbg::train::parse_params(R"({"simple_ctr": ["Borders:CtrBorderCount=0"]})");
    FAIL("accepted");
  } catch (const cbg::error& e) {
    CHECK(std::string(e.what()).find("simple_ctr") != std::string::npos);
  }
}

TEST_CASE("One-hot and CTR columns equal their definitions", "[ctr]") {
  namespace ctr = cbg::ctr;
  namespace cm = cbg::model;
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 600, true, 3);
  auto eval = make_cat_data(ctx, 200, true, 4);
  eval->b[0] = 999;  // a category the learn set never saw
  // has_time: the rows are visited in the data's order, whatever the seed.
  const bool has_time = GENERATE(false, true);
  INFO("has_time " << has_time);
  ctr::options o;
  o.one_hot_max_size = 3;
  o.has_time = has_time;
  const std::vector<float> targets = learn->label;
  ctr::ctr_targets t;
  t.learn = &targets;
  const std::uint64_t seed = 11;
  const ctr::prepared_data p = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), o, t, seed);
  if (has_time) {
    const ctr::prepared_data other = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), o, t, seed + 1);
    CHECK(other.learn_columns == p.learn_columns);
  }

  REQUIRE(p.float_count == 1);
  REQUIRE(p.cat_flat == std::vector<std::int32_t>{1, 2});
  // a: 3 values -> 3 one-hot columns (values ascending as int32); b: 3 Borders priors + FeatureFreq.
  REQUIRE(p.derived.size() == 7);
  for (int k = 0; k < 3; ++k) CHECK(p.derived[static_cast<std::size_t>(k)].kind == ctr::derived_kind::one_hot);
  CHECK(p.derived[0].value < p.derived[1].value);
  CHECK(p.learn->num_features() == 8);
  CHECK(p.eval->num_features() == 8);
  REQUIRE(p.tables.size() == 2);

  std::vector<std::int64_t> pos = positions_of(seed, learn->rows);
  if (has_time) std::iota(pos.begin(), pos.end(), std::int64_t{0});

  std::map<std::int32_t, std::int32_t> count_of;
  std::map<std::int32_t, std::int32_t> good_of;
  for (std::int64_t r = 0; r < learn->rows; ++r) {
    ++count_of[learn->b[static_cast<std::size_t>(r)]];
    good_of[learn->b[static_cast<std::size_t>(r)]] += learn->label[static_cast<std::size_t>(r)] > 0.5f ? 1 : 0;
  }
  for (std::size_t k = 0; k < p.derived.size(); ++k) {
    const ctr::derived_feature& d = p.derived[k];
    const std::vector<float>& col = p.learn_columns[k];
    const std::vector<float>& ecol = p.eval_columns[k];
    if (d.kind == ctr::derived_kind::one_hot) {
      for (std::int64_t r = 0; r < learn->rows; ++r) {
        const bool eq = static_cast<std::int32_t>(cm::cat_hash_int(learn->a[static_cast<std::size_t>(r)])) == d.value;
        REQUIRE(col[static_cast<std::size_t>(r)] == (eq ? 1.f : 0.f));
      }
      continue;
    }
    CHECK(d.cat_index == 1);
    const float num = d.ctr.prior_num, den = d.ctr.prior_denom;
    for (std::int64_t r = 0; r < learn->rows; ++r) {
      const std::int32_t v = learn->b[static_cast<std::size_t>(r)];
      float expected = 0;
      if (d.ctr.base.type == cm::ctr_type::borders) {
        std::uint32_t good = 0, total = 0;
        for (std::int64_t s = 0; s < learn->rows; ++s) {
          if (learn->b[static_cast<std::size_t>(s)] == v &&
              pos[static_cast<std::size_t>(s)] < pos[static_cast<std::size_t>(r)]) {
            ++total;
            good += learn->label[static_cast<std::size_t>(s)] > 0.5f ? 1 : 0;
          }
        }
        expected = (static_cast<float>(good) + num) / (static_cast<float>(total) + den);
      } else {
        REQUIRE(d.ctr.base.type == cm::ctr_type::feature_freq);
        expected = (static_cast<float>(count_of[v]) + num) / (static_cast<float>(learn->rows) + den);
      }
      REQUIRE(col[static_cast<std::size_t>(r)] == expected);
    }
    // Eval rows: the full learn statistics; the unseen category gets the prior alone.
    for (std::int64_t r = 0; r < eval->rows; ++r) {
      const std::int32_t v = eval->b[static_cast<std::size_t>(r)];
      const bool seen = count_of.count(v) != 0;
      float expected = 0;
      if (d.ctr.base.type == cm::ctr_type::borders) {
        expected = seen ? (static_cast<float>(good_of[v]) + num) / (static_cast<float>(count_of[v]) + den) : num / den;
      } else {
        expected = ((seen ? static_cast<float>(count_of[v]) : 0.f) + num) / (static_cast<float>(learn->rows) + den);
      }
      REQUIRE(ecol[static_cast<std::size_t>(r)] == expected);
    }
  }
}

TEST_CASE("fold_permutation_block: CatBoost's GPU block size, blocks of consecutive rows shuffled", "[ctr]") {
  namespace ctr = cbg::ctr;
  // CatBoost's GetPermutationBlockSize after UpdateGpuSpecificDefaults: 0 means 64; below 50 000 rows
  // 1; else rounded up to a power of two (IntLog2 is a ceiling) and halved while 128 blocks exceed the rows.
  CHECK(ctr::permutation_block_size(0, 49999) == 1);
  CHECK(ctr::permutation_block_size(1000, 49999) == 1);
  CHECK(ctr::permutation_block_size(0, 50000) == 64);
  CHECK(ctr::permutation_block_size(64, 1000000) == 64);
  CHECK(ctr::permutation_block_size(1, 1000000) == 1);
  CHECK(ctr::permutation_block_size(3, 1000000) == 4);
  CHECK(ctr::permutation_block_size(100, 1000000) == 128);
  CHECK(ctr::permutation_block_size(1000, 50000) == 256);  // 1024 -> 512 -> 256 (256 * 128 <= 50 000)
  CHECK(ctr::permutation_block_size(1u << 30, 1000000) == 4096);

  // The order: whole blocks in a seeded order, rows ascending inside; the last block may be short.
  const std::int64_t rows = 1003;
  const std::vector<std::uint32_t> order = ctr::permutation_order(ctr::permutation_rule{5, 8, false}, rows);
  REQUIRE(order.size() == static_cast<std::size_t>(rows));
  std::vector<std::uint32_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == i);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> blocks;
  for (std::uint32_t b = 0; b * 8 < rows; ++b) blocks.emplace_back(cbg::ctr::permutation_key(5, b), b);
  std::sort(blocks.begin(), blocks.end());
  std::vector<std::uint32_t> expected;
  for (const auto& [key, b] : blocks) {
    for (std::uint32_t r = b * 8; r < std::min<std::uint32_t>(b * 8 + 8, rows); ++r) expected.push_back(r);
  }
  CHECK(order == expected);
  CHECK(blocks.front().second != 0);  // shuffled (for this seed)
  // Block 1 is the row permutation; has_time the identity.
  const std::vector<std::int64_t> pos = positions_of(5, rows);
  const std::vector<std::uint32_t> one = ctr::permutation_order(ctr::permutation_rule{5, 1, false}, rows);
  for (std::size_t i = 0; i < one.size(); ++i) REQUIRE(pos[one[i]] == static_cast<std::int64_t>(i));
  const std::vector<std::uint32_t> identity = ctr::permutation_order(ctr::permutation_rule{5, 8, true}, rows);
  for (std::size_t i = 0; i < identity.size(); ++i) REQUIRE(identity[i] == i);

  // Preparation follows the option (60 000 rows: the block counts): each Borders column is the ordered
  // statistic over that order; the default (64) and an explicit 1 give other columns.
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 60000, true, 13);
  const std::vector<float> targets = learn->label;
  ctr::ctr_targets t;
  t.learn = &targets;
  ctr::options o;
  o.one_hot_max_size = 3;
  o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders:Prior=0.5/1", "x")};
  std::vector<std::vector<float>> columns;
  for (const std::uint32_t block : {16u, 0u, 1u}) {
    o.fold_permutation_block = block;
    const ctr::prepared_data p = ctr::prepare_categorical_host(*learn->pool, nullptr, o, t, 9);
    REQUIRE(p.derived.size() == 4);  // a: 3 one-hot columns; b: one Borders column
    const std::vector<float>& col = p.learn_columns[3];
    columns.push_back(col);
    const std::uint32_t size = ctr::permutation_block_size(block, learn->rows);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
    for (std::uint32_t b = 0; b * size < learn->rows; ++b) keyed.emplace_back(cbg::ctr::permutation_key(9, b), b);
    std::sort(keyed.begin(), keyed.end());
    std::map<std::int32_t, std::pair<std::uint32_t, std::uint32_t>> seen;  // category: (good, total) so far
    for (const auto& [key, b] : keyed) {
      for (std::int64_t r = std::int64_t{b} * size;
           r < std::min<std::int64_t>((b + 1) * std::int64_t{size}, learn->rows); ++r) {
        auto& [good, total] = seen[learn->b[static_cast<std::size_t>(r)]];
        REQUIRE(col[static_cast<std::size_t>(r)] ==
                (static_cast<float>(good) + 0.5f) / (static_cast<float>(total) + 1.f));
        good += learn->label[static_cast<std::size_t>(r)] > 0.5f ? 1 : 0;
        ++total;
      }
    }
  }
  CHECK(columns[0] != columns[1]);
  CHECK(columns[1] != columns[2]);
}

TEST_CASE("Buckets, BinarizedTargetMeanValue and Borders over multiclass targets equal their definitions", "[ctr]") {
  namespace ctr = cbg::ctr;
  namespace cm = cbg::model;
  auto ctx = make_context(CBG_DEVICE_CPU);
  for (const int classes : {2, 3}) {
    auto learn = make_cat_data(ctx, 400, true, 13, false, classes);
    auto eval = make_cat_data(ctx, 100, true, 14, false, classes);
    ctr::options o;
    o.one_hot_max_size = 3;
    o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders:Prior=0.5", "x"),
                                              ctr::parse_ctr_spec("Buckets:Prior=1/3", "x"),
                                              ctr::parse_ctr_spec("BinarizedTargetMeanValue:Prior=0.25", "x")};
    const std::vector<float> targets = learn->label;
    ctr::ctr_targets t;
    t.learn = &targets;
    t.multiclass = classes > 2;
    t.classes = classes;
    const ctr::prepared_data p = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), o, t, 3);
    // b: Borders C-1, Buckets C, mean 1 features.
    REQUIRE(p.derived.size() == static_cast<std::size_t>(3 + (classes - 1) + classes + 1));
    const std::vector<std::int64_t> pos = positions_of(3, learn->rows);
    const auto term = [&](cm::ctr_type type, int j, int c) -> std::uint32_t {
      if (type == cm::ctr_type::borders) return c > j ? 1 : 0;
      if (type == cm::ctr_type::buckets) return c == j ? 1 : 0;
      return static_cast<std::uint32_t>(c);
    };
    const auto value = [&](cm::ctr_type type, std::uint32_t s, std::uint32_t total, float num, float den) {
      const float a = type == cm::ctr_type::binarized_target_mean_value
                          ? static_cast<float>(s) / static_cast<float>(classes - 1)
                          : static_cast<float>(s);
      return (a + num) / (static_cast<float>(total) + den);
    };
    for (std::size_t k = 3; k < p.derived.size(); ++k) {
      const cm::ctr_description& dsc = p.derived[k].ctr;
      const cm::ctr_type type = dsc.base.type;
      for (std::int64_t r = 0; r < learn->rows; ++r) {
        std::uint32_t s = 0, total = 0;
        for (std::int64_t q = 0; q < learn->rows; ++q) {
          if (learn->b[static_cast<std::size_t>(q)] == learn->b[static_cast<std::size_t>(r)] &&
              pos[static_cast<std::size_t>(q)] < pos[static_cast<std::size_t>(r)]) {
            ++total;
            s += term(type, dsc.target_border_idx, static_cast<int>(learn->label[static_cast<std::size_t>(q)]));
          }
        }
        REQUIRE(p.learn_columns[k][static_cast<std::size_t>(r)] ==
                value(type, s, total, dsc.prior_num, dsc.prior_denom));
      }
      for (std::int64_t r = 0; r < eval->rows; ++r) {
        std::uint32_t s = 0, total = 0;
        for (std::int64_t q = 0; q < learn->rows; ++q) {
          if (learn->b[static_cast<std::size_t>(q)] == eval->b[static_cast<std::size_t>(r)]) {
            ++total;
            s += term(type, dsc.target_border_idx, static_cast<int>(learn->label[static_cast<std::size_t>(q)]));
          }
        }
        REQUIRE(p.eval_columns[k][static_cast<std::size_t>(r)] ==
                value(type, s, total, dsc.prior_num, dsc.prior_denom));
      }
    }
  }
}

TEST_CASE("FloatTargetMeanValue is the ordered mean of the raw targets", "[ctr]") {
  namespace ctr = cbg::ctr;
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 500, false, 31);
  auto eval = make_cat_data(ctx, 100, false, 32);
  ctr::options o;
  o.one_hot_max_size = 3;
  o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("FloatTargetMeanValue:Prior=0.5", "x")};
  ctr::ctr_targets t;
  t.learn = &learn->label;
  t.binarize = true;
  const ctr::prepared_data p = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), o, t, 8);
  REQUIRE(p.derived.size() == 4);
  const std::vector<std::int64_t> pos = positions_of(8, learn->rows);
  for (std::int64_t r = 0; r < learn->rows; ++r) {
    double sum = 0;
    int total = 0;
    for (std::int64_t q = 0; q < learn->rows; ++q) {
      if (learn->b[static_cast<std::size_t>(q)] == learn->b[static_cast<std::size_t>(r)] &&
          pos[static_cast<std::size_t>(q)] < pos[static_cast<std::size_t>(r)]) {
        sum += learn->label[static_cast<std::size_t>(q)];
        ++total;
      }
    }
    const double expected = (sum + 0.5) / (total + 1.0);
    REQUIRE(std::fabs(p.learn_columns[3][static_cast<std::size_t>(r)] - expected) <=
            1e-5 * std::max(1.0, std::fabs(expected)));
  }
}

TEST_CASE("Counter CTRs divide by the largest category count; Full counts the eval rows", "[ctr]") {
  namespace ctr = cbg::ctr;
  namespace cm = cbg::model;
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 300, false, 5);
  auto eval = make_cat_data(ctx, 100, false, 6, false, 2, true);
  for (const bool full : {false, true}) {
    ctr::options o;
    o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Counter", "simple_ctr")};
    o.counter_calc_method = full ? ctr::counter_calc::full : ctr::counter_calc::skip_test;
    ctr::ctr_targets t;  // counters need no target
    const ctr::prepared_data p = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), o, t, 0);
    REQUIRE(p.derived.size() == 2);  // a (3 values > one_hot_max_size 2) and b
    std::map<std::int32_t, std::int32_t> counts;
    for (auto v : learn->b) ++counts[v];
    // Full (CatBoost's tables): every eval row counts, and the eval values the learn rows lack are
    // keys after the learn ones, in order of first appearance.
    std::vector<std::int32_t> eval_only;
    if (full) {
      for (auto v : eval->b) {
        if (counts.count(v) == 0 && std::find(eval_only.begin(), eval_only.end(), v) == eval_only.end())
          eval_only.push_back(v);
      }
      for (auto v : eval->b) ++counts[v];
    }
    REQUIRE(eval_only.size() == (full ? 3u : 0u));
    std::int32_t mx = 0;
    for (const auto& [v, c] : counts) mx = std::max(mx, c);
    const cm::ctr_table& tb = p.tables[1];
    CHECK(tb.counter_denominator == mx);
    REQUIRE(tb.key_count() == counts.size());
    const std::size_t learn_keys = counts.size() - eval_only.size();
    for (const auto& [v, c] : counts) {
      const std::uint64_t key = cm::projection_add_cat(0, cm::cat_hash_int(v));
      const std::uint32_t idx =
          cm::ctr_lookup(tb.bucket_hashes.data(), tb.bucket_indices.data(), tb.bucket_hashes.size(), key);
      REQUIRE(idx != cm::ctr_not_found);
      CHECK(tb.counts[idx] == c);
      const auto at = std::find(eval_only.begin(), eval_only.end(), v);
      if (at != eval_only.end()) CHECK(idx == learn_keys + static_cast<std::size_t>(at - eval_only.begin()));
    }
    for (std::int64_t r = 0; r < learn->rows; ++r) {
      const float expected =
          static_cast<float>(counts[learn->b[static_cast<std::size_t>(r)]]) / (static_cast<float>(mx) + 1.f);
      REQUIRE(p.learn_columns[1][static_cast<std::size_t>(r)] == expected);
    }
  }
}

TEST_CASE("ctr_leaf_count_limit keeps a table's most frequent categories, the rest join the last kept", "[ctr]") {
  namespace ctr = cbg::ctr;
  namespace cm = cbg::model;
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 600, true, 21);
  auto eval = make_cat_data(ctx, 200, true, 22);
  eval->b[0] = 999;  // a category the learn set never saw
  const std::vector<float> targets = learn->label;
  ctr::ctr_targets t;
  t.learn = &targets;
  const std::uint64_t seed = 5, limit = 12;
  // CatBoost's CPU rule (online_ctr.cpp): `limit` of the most frequent learn values keep their
  // entries, the others' rows count in one kept value (the choice at ties: the test above). Here:
  // whatever the limit chose, the counts, columns and eval values must follow from it.
  std::vector<std::int32_t> first_seen;
  std::map<std::int32_t, std::int64_t> count_of;
  for (std::int32_t v : learn->b) {
    if (count_of[v]++ == 0) first_seen.push_back(v);
  }
  REQUIRE(first_seen.size() == 40);
  std::vector<std::uint32_t> ids;
  for (std::int32_t v : learn->b) {
    ids.push_back(static_cast<std::uint32_t>(std::find(first_seen.begin(), first_seen.end(), v) - first_seen.begin()));
  }
  const std::vector<std::uint32_t> before = ids;
  const std::vector<std::uint32_t> kept = ctr::apply_leaf_count_limit(ids, first_seen.size(), limit);
  REQUIRE(kept.size() == limit);
  std::map<std::int32_t, std::int32_t> joins;  // learn value -> the value whose entry counts it
  for (std::size_t r = 0; r < ids.size(); ++r) {
    joins[first_seen[before[r]]] = first_seen[kept[ids[r]]];
  }
  // The kept values are among the most frequent: none dropped is more frequent than one kept.
  std::int64_t least_kept = learn->rows, most_dropped = 0;
  std::set<std::int32_t> joined;
  for (const auto& [v, into] : joins) {
    if (into == v) {
      least_kept = std::min(least_kept, count_of[v]);
    } else {
      most_dropped = std::max(most_dropped, count_of[v]);
      joined.insert(into);
    }
  }
  CHECK(most_dropped <= least_kept);
  CHECK(joined.size() == 1);
  for (const bool store_all : {false, true}) {
    ctr::options o;
    o.one_hot_max_size = 3;
    o.simple_ctr =
        std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders:Prior=0.5", "x"), ctr::parse_ctr_spec("Counter", "x")};
    o.ctr_leaf_count_limit = limit;
    o.store_all_simple_ctr = store_all;
    const ctr::prepared_data p = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), o, t, seed);
    REQUIRE(p.derived.size() == 3 + 2);
    REQUIRE(p.tables.size() == 2);
    // The value whose entry a learn or eval value reads (nullopt: not a key, the prior alone).
    const auto entry = [&](std::int32_t v) -> std::optional<std::int32_t> {
      if (store_all) return count_of.count(v) != 0 ? std::optional<std::int32_t>(v) : std::nullopt;
      const auto it = joins.find(v);
      return it != joins.end() && it->second == v ? std::optional<std::int32_t>(v) : std::nullopt;
    };
    const auto learn_entry = [&](std::int32_t v) { return store_all ? v : joins.at(v); };
    for (const cm::ctr_table& tb : p.tables) {
      CHECK(tb.key_count() == (store_all ? 40 : limit));
      std::map<std::uint64_t, std::uint32_t> index_of;
      for (std::size_t b = 0; b < tb.bucket_hashes.size(); ++b) {
        if (tb.bucket_hashes[b] != cm::ctr_empty_hash) index_of[tb.bucket_hashes[b]] = tb.bucket_indices[b];
      }
      CHECK(index_of.size() == tb.key_count());
      std::int64_t largest = 0;
      for (const auto& [v, c] : count_of) {
        const std::uint64_t key = cm::projection_add_cat(0, cm::cat_hash_int(v));
        if (!entry(v)) {
          CHECK(index_of.count(key) == 0);
          continue;
        }
        REQUIRE(index_of.count(key) == 1);
        const std::uint32_t i = index_of[key];
        std::int32_t rows = 0, good = 0;
        for (std::int64_t r = 0; r < learn->rows; ++r) {
          if (learn_entry(learn->b[static_cast<std::size_t>(r)]) != v) continue;
          ++rows;
          good += learn->label[static_cast<std::size_t>(r)] > 0.5f ? 1 : 0;
        }
        largest = std::max<std::int64_t>(largest, rows);
        if (tb.base.type == cm::ctr_type::counter) {
          CHECK(tb.counts[i] == rows);
        } else {
          CHECK(tb.counts[2 * i] == rows - good);
          CHECK(tb.counts[2 * i + 1] == good);
        }
      }
      if (tb.base.type == cm::ctr_type::counter) CHECK(tb.counter_denominator == largest);
    }
    // The learn columns: ordered statistics over the joined categories; the eval columns: the
    // table's, the prior alone for a value that is not a key.
    const std::vector<std::int64_t> pos = positions_of(seed, learn->rows);
    const cm::ctr_table& counter = p.tables[1].base.type == cm::ctr_type::counter ? p.tables[1] : p.tables[0];
    const float den_counter = static_cast<float>(counter.counter_denominator);
    for (std::size_t k = 3; k < p.derived.size(); ++k) {
      const cm::ctr_description& d = p.derived[k].ctr;
      const float num = d.prior_num, den = d.prior_denom;
      const auto stats = [&](std::int32_t v, std::int64_t before) {
        std::uint32_t good = 0, total = 0;
        for (std::int64_t q = 0; q < learn->rows; ++q) {
          if (learn_entry(learn->b[static_cast<std::size_t>(q)]) != v || pos[static_cast<std::size_t>(q)] >= before)
            continue;
          ++total;
          good += learn->label[static_cast<std::size_t>(q)] > 0.5f ? 1 : 0;
        }
        return std::make_pair(good, total);
      };
      for (std::int64_t r = 0; r < learn->rows; ++r) {
        const std::int32_t v = learn_entry(learn->b[static_cast<std::size_t>(r)]);
        float expected = 0;
        if (d.base.type == cm::ctr_type::borders) {
          const auto [good, total] = stats(v, pos[static_cast<std::size_t>(r)]);
          expected = (static_cast<float>(good) + num) / (static_cast<float>(total) + den);
        } else {
          const auto [good, total] = stats(v, learn->rows);
          expected = (static_cast<float>(total) + num) / (den_counter + den);
        }
        REQUIRE(p.learn_columns[k][static_cast<std::size_t>(r)] == expected);
      }
      for (std::int64_t r = 0; r < eval->rows; ++r) {
        const std::optional<std::int32_t> v = entry(eval->b[static_cast<std::size_t>(r)]);
        const auto [good, total] = v ? stats(*v, learn->rows) : std::make_pair(0u, 0u);
        const float expected = d.base.type == cm::ctr_type::borders
                                   ? (static_cast<float>(good) + num) / (static_cast<float>(total) + den)
                                   : (static_cast<float>(total) + num) / (den_counter + den);
        REQUIRE(p.eval_columns[k][static_cast<std::size_t>(r)] == expected);
      }
    }
  }
}

TEST_CASE("ctr_leaf_count_limit keeps the most frequent, the first seen at ties; the rest join the last kept",
          "[ctr]") {
  // Values 0..5 (ids in order of first appearance) counted 2, 3, 3, 1, 3, 2 times.
  const std::vector<std::uint32_t> rows = {0, 1, 2, 1, 3, 4, 2, 4, 1, 2, 5, 0, 4, 5};
  struct expectation {
    std::uint64_t limit;
    std::vector<std::uint32_t> kept;
    std::uint32_t joined;  // old id the dropped values' rows count in
  };
  // limit 3: the three values counted 3 times, the last of them (4) takes the rest; limit 4: value 0
  // (count 2, seen before 5) is kept and takes the rest; limit 1: value 1 alone.
  for (const expectation& e : std::vector<expectation>{{3, {1, 2, 4}, 4}, {4, {0, 1, 2, 4}, 0}, {1, {1}, 1}}) {
    std::vector<std::uint32_t> ids = rows;
    const std::vector<std::uint32_t> kept = cbg::ctr::apply_leaf_count_limit(ids, 6, e.limit);
    REQUIRE(kept == e.kept);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const bool stays = std::find(e.kept.begin(), e.kept.end(), rows[r]) != e.kept.end();
      CHECK(kept[ids[r]] == (stays ? rows[r] : e.joined));
    }
  }
  // At most `limit` values: nothing changes.
  std::vector<std::uint32_t> ids = {0, 1, 0, 2};
  CHECK(cbg::ctr::apply_leaf_count_limit(ids, 3, 3).empty());
  CHECK(ids == std::vector<std::uint32_t>{0, 1, 0, 2});
}

TEST_CASE("ctr_leaf_count_limit in training: the model's tables are bounded, its eval predictions the trainer's",
          "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 1500, true, 31);
  auto eval = make_cat_data(ctx, 400, true, 32);
  for (const bool store_all : {false, true}) {
    const std::string params =
        std::string(R"({"iterations": 40, "depth": 6, "verbose": false, "loss_function": "Logloss",
        "use_best_model": false, "model_size_reg": 0, "one_hot_max_size": 1, "max_ctr_complexity": 2,
        "ctr_leaf_count_limit": 7, "store_all_simple_ctr": )") +
        (store_all ? "true" : "false") + "}";
    const auto [m, last_eval] = cbg::test::train_with_eval(*learn->pool, params, *eval->pool);
    REQUIRE(!m.ctr_tables.empty());
    bool combination = false;
    for (const cbg::model::ctr_table& tb : m.ctr_tables) {
      const bool single = tb.base.proj.cat_features.size() == 1 && tb.base.proj.float_splits.empty() &&
                          tb.base.proj.one_hot_splits.empty();
      combination = combination || !single;
      // a has 3 values, b 40; their pairs 120 (of 1500 rows, every one seen).
      const std::size_t unbounded = single ? (tb.base.proj.cat_features[0] == 0 ? 3 : 40) : 0;
      if (single && store_all)
        CHECK(tb.key_count() == unbounded);
      else
        CHECK(tb.key_count() <= 7);
    }
    CHECK(combination);
    const std::vector<double> pred = predict(m, *eval);
    const double metric = cbg::test::mean_logloss(pred, eval->label);
    CHECK(std::fabs(metric - last_eval) < 1e-6);
  }
  // Counter with counter_calc_method Full bounds its table over the learn and eval rows in CatBoost:
  // not implemented with an eval set.
  const auto full = [&] {
    (void)cbg::test::train_with_eval(*learn->pool,
                                     R"({"iterations": 2, "verbose": false, "one_hot_max_size": 1,
        "simple_ctr": ["Counter"], "counter_calc_method": "Full", "max_ctr_complexity": 1,
        "ctr_leaf_count_limit": 7})",
                                     *eval->pool);
  };
  CHECK(status_of(full) == cbg::status::not_implemented);
}

TEST_CASE("Training with categorical features: model features, tables and eval predictions", "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  for (const bool binary : {true, false}) {
    auto learn = make_cat_data(ctx, 2000, binary, 7);
    auto eval = make_cat_data(ctx, 500, binary, 8);
    const std::string params = std::string(R"({"iterations": 40, "depth": 4, "learning_rate": 0.2, "verbose": false,
        "bootstrap_type": "No", "random_strength": 0, "use_best_model": false, "loss_function": ")") +
                               (binary ? "Logloss" : "RMSE") + R"(", "one_hot_max_size": 3})";
    const auto [m, last_eval] = cbg::test::train_with_eval(*learn->pool, params, *eval->pool);
    CHECK(m.float_features.size() == 1);
    REQUIRE(m.cat_features.size() == 2);
    CHECK(m.cat_features[1].flat_index == 2);
    CHECK(!m.ctr_features.empty());
    CHECK(!m.ctr_tables.empty());
    cbg::model::validate(m);
    // The trainer's eval metric is the model's own prediction on the eval set.
    const std::vector<double> pred = predict(m, *eval);
    double metric = 0;
    for (std::int64_t r = 0; r < eval->rows; ++r) {
      const double y = eval->label[static_cast<std::size_t>(r)];
      const double a = pred[static_cast<std::size_t>(r)];
      metric += binary ? (std::log1p(std::exp(-std::fabs(a))) + std::max(a, 0.0) - y * a) : (a - y) * (a - y);
    }
    metric /= static_cast<double>(eval->rows);
    if (!binary) metric = std::sqrt(metric);
    CHECK(std::fabs(metric - last_eval) < 1e-6 * std::max(1.0, std::fabs(metric)));
    // The .cbm round trip keeps every CTR table.
    const std::vector<std::uint8_t> bytes = cbg::model::write_cbm(m);
    const cbg::model::model back = cbg::model::read_cbm(bytes.data(), bytes.size());
    CHECK(predict(back, *eval) == pred);
  }
}

TEST_CASE("MultiClass training with target CTRs: the model's eval predictions are the trainer's", "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 1500, true, 17, false, 3);
  auto eval = make_cat_data(ctx, 400, true, 18, false, 3);
  const std::string params = R"({"iterations": 20, "depth": 4, "verbose": false, "loss_function": "MultiClass",
      "use_best_model": false, "simple_ctr": ["Borders", "Buckets", "BinarizedTargetMeanValue", "Counter"]})";
  const auto [m, last_eval] = cbg::test::train_with_eval(*learn->pool, params, *eval->pool);
  CHECK(!m.ctr_features.empty());
  const std::vector<double> raw = predict(m, *eval, 3);
  double loss = 0;
  for (std::int64_t r = 0; r < eval->rows; ++r) {
    const double* a = raw.data() + r * 3;
    const double mx = std::max({a[0], a[1], a[2]});
    const double lse = mx + std::log(std::exp(a[0] - mx) + std::exp(a[1] - mx) + std::exp(a[2] - mx));
    loss += lse - a[static_cast<int>(eval->label[static_cast<std::size_t>(r)])];
  }
  loss /= static_cast<double>(eval->rows);
  CHECK(std::fabs(loss - last_eval) < 1e-6);
}

TEST_CASE("ctr_target_border_count: a regression target split by several borders", "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 1500, false, 31);
  auto eval = make_cat_data(ctx, 400, false, 32);
  const std::string params = R"({"iterations": 20, "depth": 4, "verbose": false, "loss_function": "RMSE",
      "use_best_model": false, "ctr_target_border_count": 3,
      "simple_ctr": ["Borders", "Buckets", "BinarizedTargetMeanValue", "Counter"]})";
  const auto [m, last_eval] = cbg::test::train_with_eval(*learn->pool, params, *eval->pool);
  std::set<int> border_indexes;
  for (const auto& f : m.ctr_features) {
    if (f.ctr.base.type == cbg::model::ctr_type::borders) border_indexes.insert(f.ctr.target_border_idx);
  }
  CHECK(border_indexes.size() > 1);
  CHECK(*border_indexes.rbegin() <= 2);
  for (const auto& t : m.ctr_tables) {
    const bool classes = t.base.type == cbg::model::ctr_type::borders || t.base.type == cbg::model::ctr_type::buckets;
    if (classes) CHECK(t.target_classes_count == 4);
  }
  // The trainer's eval RMSE is the model's own prediction on the eval set.
  const std::vector<double> pred = predict(m, *eval);
  double se = 0;
  for (std::int64_t r = 0; r < eval->rows; ++r) {
    const double d = pred[static_cast<std::size_t>(r)] - eval->label[static_cast<std::size_t>(r)];
    se += d * d;
  }
  CHECK(std::fabs(std::sqrt(se / static_cast<double>(eval->rows)) - last_eval) < 1e-6);
}

TEST_CASE("GPU training on categorical data equals the host reference byte for byte", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0);
  for (const bool binary : {true, false}) {
    auto host_data = make_cat_data(cpu, 5000, binary, 9);
    auto host_eval = make_cat_data(cpu, 1000, binary, 10);
    auto device_data = make_cat_data(gpu, 5000, binary, 9, true);  // device memory: the GPU CTR path
    auto device_eval = make_cat_data(gpu, 1000, binary, 10, true);
    const std::string params = std::string(R"({"iterations": 30, "depth": 5, "verbose": false, "loss_function": ")") +
                               (binary ? "Logloss" : "RMSE") +
                               R"(", "simple_ctr": ["Borders", "Counter", "FeatureFreq"]})";
    cbg::train::train_options ho, go;
    ho.eval = host_eval->pool.get();
    go.eval = device_eval->pool.get();
    const cbg::model::model a = cbg::train::train(*host_data->pool, cbg::train::parse_params(params), ho);
    const cbg::model::model c = cbg::train::train(*device_data->pool, cbg::train::parse_params(params), go);
    // With an eval set the model keeps the best iteration: both paths pick the same one.
    CHECK(cbg::model::write_cbm(a) == cbg::model::write_cbm(c));
    if (!binary) {  // several target borders
      const std::string more = R"({"iterations": 20, "depth": 5, "verbose": false, "loss_function": "RMSE",
          "ctr_target_border_count": 4, "simple_ctr": ["Borders", "Buckets", "BinarizedTargetMeanValue"]})";
      CHECK(cbg::model::write_cbm(cbg::train::train(*host_data->pool, cbg::train::parse_params(more), ho)) ==
            cbg::model::write_cbm(cbg::train::train(*device_data->pool, cbg::train::parse_params(more), go)));
    }
  }
}

TEST_CASE("GPU training on categorical data works in strict mode (no dataset-sized copy back)", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  cbg::context_options so;
  so.device = 0;
  so.strict_no_d2h = true;
  auto strict = cbg::context::create(so);
  auto cpu = make_context(CBG_DEVICE_CPU);
  // 200 000 rows: the 40-value column's CTR tables are small, every column is 800 KB.
  const std::int64_t rows = cbg::test::shrunk<std::int64_t>(200000, 20000);
  auto d = make_cat_data(strict, rows, true, 41, true);
  auto h = make_cat_data(cpu, rows, true, 41);
  const std::string params = R"({"iterations": 10, "depth": 6, "verbose": false, "loss_function": "Logloss"})";
  const cbg::model::model m = cbg::train::train(*d->pool, cbg::train::parse_params(params), {});
  CHECK(cbg::model::write_cbm(m) ==
        cbg::model::write_cbm(cbg::train::train(*h->pool, cbg::train::parse_params(params), {})));
}

TEST_CASE("GPU CTR preparation equals the host reference bit for bit", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  namespace ctr = cbg::ctr;
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0);
  for (const int kind : {0, 1, 2, 3}) {  // binary, regression, 3 classes, regression with 3 target borders
    const bool binary = kind != 1 && kind != 3;
    const int classes = kind == 2 ? 3 : 2;
    auto hl = make_cat_data(cpu, 20000, binary, 21, false, classes);
    // The eval set has categories the learn set lacks (counter_calc Full makes them table keys).
    auto he = make_cat_data(cpu, 3000, binary, 22, false, classes, true);
    auto dl = make_cat_data(gpu, 20000, binary, 21, true, classes);
    auto de = make_cat_data(gpu, 3000, binary, 22, true, classes, true);
    ctr::options o;
    o.one_hot_max_size = 3;
    o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders:Prior=0.3/2:Prior=1", "x"),
                                              ctr::parse_ctr_spec("Counter", "x"),
                                              ctr::parse_ctr_spec("Buckets", "x"),
                                              ctr::parse_ctr_spec("BinarizedTargetMeanValue", "x"),
                                              ctr::parse_ctr_spec("FloatTargetMeanValue:Prior=0.5:Prior=2/3", "x"),
                                              ctr::parse_ctr_spec("FeatureFreq:Prior=1", "x")};
    o.counter_calc_method = binary ? ctr::counter_calc::full : ctr::counter_calc::skip_test;
    if (kind == 3) {
      o.ctr_target_border_count = 3;
      ctr::apply_target_border_count(o);
    }
    cbg::train::target_rule rule;
    rule.loss = kind == 2 ? cbg::train::loss_kind::multiclass
                : binary  ? cbg::train::loss_kind::logloss
                          : cbg::train::loss_kind::rmse;
    ctr::ctr_targets t;
    t.learn = &hl->label;
    t.binarize = !binary;
    t.multiclass = kind == 2;
    t.classes = classes;
    const ctr::prepared_data h = ctr::prepare_categorical_host(*hl->pool, he->pool.get(), o, t, 5);
    const ctr::prepared_data d = ctr::prepare_categorical_device(*dl->pool, de->pool.get(), o, rule, !binary, 5);
    REQUIRE(d.derived.size() == h.derived.size());
    if (kind == 3) {  // three target borders: four classes
      for (const auto& table : h.tables) {
        if (table.base.type == cbg::model::ctr_type::borders) CHECK(table.target_classes_count == 4);
      }
    }
    cbg::test::check_same_tables(h.tables, d.tables);
    for (std::size_t k = 0; k < h.derived.size(); ++k) {
      CHECK(d.derived[k].ctr == h.derived[k].ctr);
      CHECK(d.derived[k].value == h.derived[k].value);
      const auto lc = download(d.learn_device_columns[k].data(), h.learn_columns[k].size(), *gpu);
      const auto ec = download(d.eval_device_columns[k].data(), h.eval_columns[k].size(), *gpu);
      CHECK(std::memcmp(lc.data(), h.learn_columns[k].data(), lc.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(ec.data(), h.eval_columns[k].data(), ec.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("GPU CTRs follow has_time and fold_permutation_block as the host reference, bit for bit", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  namespace ctr = cbg::ctr;
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0);
  // 60 000 rows: a block above 1 counts (CatBoost's rule gives 1 below 50 000 rows).
  auto hl = make_cat_data(cpu, 60000, true, 23);
  auto he = make_cat_data(cpu, 3000, true, 24);
  auto dl = make_cat_data(gpu, 60000, true, 23, true);
  auto de = make_cat_data(gpu, 3000, true, 24, true);
  cbg::train::target_rule rule;
  rule.loss = cbg::train::loss_kind::logloss;
  ctr::ctr_targets t;
  t.learn = &hl->label;
  for (const int variant : {0, 1, 2}) {  // has_time; block 16; the default block (64)
    ctr::options o;
    o.one_hot_max_size = 3;
    o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders", "x"),
                                              ctr::parse_ctr_spec("FloatTargetMeanValue", "x")};
    o.has_time = variant == 0;
    o.fold_permutation_block = variant == 1 ? 16 : 0;
    INFO("variant " << variant);
    const ctr::prepared_data h = ctr::prepare_categorical_host(*hl->pool, he->pool.get(), o, t, 5);
    const ctr::prepared_data d = ctr::prepare_categorical_device(*dl->pool, de->pool.get(), o, rule, false, 5);
    REQUIRE(d.derived.size() == h.derived.size());
    cbg::test::check_same_tables(h.tables, d.tables);
    for (std::size_t k = 0; k < h.derived.size(); ++k) {
      const auto lc = download(d.learn_device_columns[k].data(), h.learn_columns[k].size(), *gpu);
      CHECK(std::memcmp(lc.data(), h.learn_columns[k].data(), lc.size() * sizeof(float)) == 0);
    }
  }
  // Training: the GPU's model is the host's with has_time and with a block.
  for (const char* extra : {R"(, "has_time": true)", R"(, "fold_permutation_block": 8)"}) {
    INFO(extra);
    const std::string params =
        std::string(R"({"iterations": 15, "depth": 5, "verbose": false, "loss_function": "Logloss")") + extra + "}";
    cbg::train::train_options ho, go;
    ho.eval = he->pool.get();
    go.eval = de->pool.get();
    CHECK(cbg::model::write_cbm(cbg::train::train(*hl->pool, cbg::train::parse_params(params), ho)) ==
          cbg::model::write_cbm(cbg::train::train(*dl->pool, cbg::train::parse_params(params), go)));
  }
}
