// SPDX-License-Identifier: Apache-2.0
// Feature combinations (issue #5, include/cbg/ctr/combinations.hpp): the combination key against
// the evaluator's projection hash, the candidate rule, and training on data whose label depends on
// two categorical features jointly: the model gets combination CTR features whose tables hold the
// brute-force counts under the evaluator's keys, the trainer's eval metric is the model's own
// prediction, the .cbm round trip keeps them, and ([gpu]) a GPU context refuses
// max_ctr_complexity > 1 by name for categorical data in pageable host memory (GPU training with
// combinations: test_combinations_device.cpp). Parity with CatBoost itself: tests/python/test_ctr_combinations.py.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbgpu/cbgpu.h"
#include "cbg/ctr/combinations.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/model/hash.hpp"
#include "cbg/model/io.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/trainer.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"
#include "unit/ctr/joint_data.hpp"
#include "unit/ctr/predict_util.hpp"
#include "src/ctr/combination_book.hpp"

namespace {

using cbg::test::hashes_of;
using cbg::test::joint_data;
using cbg::test::make_joint;
using cbg::test::predict;
using cats_t = std::vector<std::int32_t>;

std::shared_ptr<cbg::context> cpu_context() {
  cbg::context_options o;
  o.device = CBG_DEVICE_CPU;
  return cbg::context::create(o);
}

}  // namespace

TEST_CASE("The combination key is the evaluator's projection hash", "[ctr]") {
  namespace cm = cbg::model;
  const std::uint32_t female = cm::cat_hash("Female", 6), priv = cm::cat_hash("Private", 7);
  const std::uint32_t two[2] = {female, priv};
  // catboost-model-format.md §5.1 (computed there with the same rule, sign-extended hashes).
  CHECK(cbg::ctr::combination_key(two, 2) == 17906208341120126160ULL);
  // The evaluator's projection_key over the same cats (no float or one-hot splits).
  const std::int32_t idx[3] = {0, 1, 2};
  std::mt19937 rng(5);
  for (int trial = 0; trial < 100; ++trial) {
    const std::uint32_t h[3] = {static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()),
                                static_cast<std::uint32_t>(rng())};
    const auto cat = [&](std::int32_t c) { return h[c]; };
    const auto value = [](std::int32_t) { return 0.f; };
    const std::uint64_t expected = cm::projection_key(idx, 3, static_cast<const cm::float_split*>(nullptr), 0,
                                                      static_cast<const cm::one_hot_split*>(nullptr), 0, cat, value);
    REQUIRE(cbg::ctr::combination_key(h, 3) == expected);
    REQUIRE(cbg::ctr::combination_key(h, 1) == cm::projection_add_cat(0, h[0]));
  }
}

TEST_CASE("Combination candidates: a tree's projection plus one more feature, up to the complexity", "[ctr]") {
  namespace cm = cbg::model;
  using cbg::ctr::combination_candidates;
  const auto cats = [](cats_t c) {
    cm::projection p;
    p.cat_features = std::move(c);
    return p;
  };
  const auto cat_lists = [](const std::vector<cm::projection>& ps) {
    std::vector<cats_t> out;
    for (const auto& p : ps) out.push_back(p.cat_features);
    return out;
  };
  const cats_t all{0, 1, 2, 4};
  CHECK(combination_candidates({}, all, 4).empty());
  CHECK(combination_candidates({cats({})}, all, 4).empty());
  CHECK(combination_candidates({cats({1})}, all, 1).empty());
  CHECK(cat_lists(combination_candidates({cats({1})}, all, 2)) == std::vector<cats_t>{{0, 1}, {1, 2}, {1, 4}});
  // Two bases, duplicates merged, sorted projections in ascending order; {0,1,2} is at the limit.
  CHECK(cat_lists(combination_candidates({cats({2}), cats({0, 1}), cats({2})}, all, 3)) ==
        std::vector<cats_t>{{0, 1, 2}, {0, 1, 4}, {0, 2}, {1, 2}, {2, 4}});
  CHECK(combination_candidates({cats({0, 1, 2})}, all, 3).empty());
  // A base of float and one-hot splits: the splits count towards the complexity.
  cm::projection binary;
  binary.float_splits.push_back({0, 0.5f});
  binary.one_hot_splits.push_back({3, 77});
  const auto with_binary = combination_candidates({binary}, all, 3);
  REQUIRE(with_binary.size() == 4);
  CHECK(with_binary[0].cat_features == cats_t{0});
  CHECK(with_binary[0].float_splits == binary.float_splits);
  CHECK(with_binary[0].one_hot_splits == binary.one_hot_splits);
  CHECK(combination_candidates({binary}, all, 2).empty());
  CHECK(cbg::ctr::projection_length(with_binary[3]) == 3);
  CHECK(cbg::ctr::max_ctr_complexity_of(cbg::ctr::options{}, 199) == 1);
  CHECK(cbg::ctr::max_ctr_complexity_of(cbg::ctr::options{}, 200) == 4);
  cbg::ctr::options o;
  o.max_ctr_complexity = 2;
  CHECK(cbg::ctr::max_ctr_complexity_of(o, 10) == 2);
}

TEST_CASE("The projection cache keeps the projections wanted most recently, within its limits", "[ctr]") {
  namespace cm = cbg::model;
  struct fake_column {
    cm::ctr_description desc;
    std::vector<float> borders{0.5f};
    std::vector<std::uint8_t> bins = std::vector<std::uint8_t>(8);
  };
  struct fake_projection {
    std::vector<fake_column> columns{1};
  };
  struct fake_committed {
    std::vector<float> borders;
  };
  struct column {
    const std::uint8_t* bins;
    std::int32_t borders;
  };
  const auto proj = [](std::int32_t k) {
    cm::projection p;
    p.cat_features = {0, k};
    return p;
  };
  cbg::ctr::prepared_data prepared;
  cbg::ctr::combination_book<fake_projection, fake_committed> book(prepared);
  std::vector<cm::projection> made;
  const auto make_many = [&](const std::vector<cm::projection>& ps) {
    std::vector<std::unique_ptr<fake_projection>> out;
    for (const cm::projection& p : ps) {
      made.push_back(p);
      out.push_back(std::make_unique<fake_projection>());
    }
    return out;
  };
  const auto bytes_of = [](const fake_projection& p) { return p.columns.front().bins.size(); };
  // What a level makes (the projections not cached), given the projections it wants.
  const auto level = [&](std::vector<std::int32_t> ks) {
    std::vector<cm::projection> wanted;
    for (const std::int32_t k : ks) wanted.push_back(proj(k));
    made.clear();
    const std::vector<column> cols = book.level<column>(wanted, make_many, bytes_of);
    CHECK(cols.size() == wanted.size());
    std::vector<std::int32_t> out;
    for (const cm::projection& p : made) out.push_back(p.cat_features.back());
    return out;
  };
  book.set_cache_limit(2);
  CHECK(level({1, 2}) == cats_t{1, 2});
  CHECK(level({3}) == cats_t{3});
  CHECK(level({4}) == cats_t{4});  // 1 and 2 were wanted last equally long ago: 1 goes
  CHECK(level({2}).empty());
  CHECK(level({1, 4}) == cats_t{1});  // 2 and 3 stay beyond the level's
  CHECK(level({2, 4}).empty());
  // The byte limit: one projection's bins (8 bytes) beyond the level's.
  book.set_cache_bytes(12);
  CHECK(level({5}) == cats_t{5});  // 3, 1 and 2 go (least recently wanted first; 2 before 4 on a tie)
  CHECK(level({4}).empty());
  CHECK(level({1, 5}) == cats_t{1});
  CHECK(level({3}) == cats_t{3});  // 4, then 1 go
  CHECK(level({5}).empty());
  // No projection kept beyond a level's.
  book.set_cache_limit(0);
  CHECK(level({4}) == cats_t{4});
  CHECK(level({4}).empty());
}

TEST_CASE("Training with feature combinations: tables, eval predictions and the .cbm round trip", "[ctr]") {
  namespace cm = cbg::model;
  auto ctx = cpu_context();
  auto learn = make_joint(ctx, 3000, 1);
  auto eval = make_joint(ctx, 800, 2);
  for (const int complexity : {1, 2, 3}) {
    const std::string params = R"({"iterations": 30, "depth": 4, "learning_rate": 0.3, "verbose": false,
        "loss_function": "Logloss", "use_best_model": false, "max_ctr_complexity": )" +
                               std::to_string(complexity) + "}";
    const auto [m, last_eval] = cbg::test::train_with_eval(*learn->pool, params, *eval->pool);
    cm::validate(m);
    std::size_t combos = 0, with_float = 0;
    for (const cm::ctr_feature& f : m.ctr_features) {
      const auto& cats = f.ctr.base.proj.cat_features;
      REQUIRE(std::is_sorted(cats.begin(), cats.end()));
      REQUIRE(static_cast<int>(cbg::ctr::projection_length(f.ctr.base.proj)) <= complexity);
      if (cats.size() > 1) ++combos;
      if (!f.ctr.base.proj.float_splits.empty()) ++with_float;
    }
    if (complexity == 1) CHECK(combos == 0);
    if (complexity > 1) CHECK(combos > 0);      // the label needs (a, b) together
    if (complexity > 1) CHECK(with_float > 0);  // the eval keys below then hold float split bits too

    // Every combination table (of categorical features only) holds the learn counts under the
    // evaluator's keys.
    for (const cm::ctr_table& t : m.ctr_tables) {
      const auto& cats = t.base.proj.cat_features;
      if (cats.size() < 2 || cbg::ctr::projection_length(t.base.proj) != cats.size() ||
          t.base.type != cm::ctr_type::borders) {
        continue;
      }
      std::map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> expected;  // key -> (class 0, class 1)
      for (std::int64_t r = 0; r < learn->rows; ++r) {
        const std::vector<std::uint32_t> h = hashes_of(*learn, r);
        std::vector<std::uint32_t> v;
        for (std::int32_t c : cats) v.push_back(h[static_cast<std::size_t>(c)]);
        auto& e = expected[cbg::ctr::combination_key(v.data(), v.size())];
        (learn->label[static_cast<std::size_t>(r)] > 0.5f ? e.second : e.first) += 1;
      }
      REQUIRE(t.key_count() == expected.size());
      REQUIRE(t.target_classes_count == 2);
      for (const auto& [key, counts] : expected) {
        const std::uint32_t idx =
            cm::ctr_lookup(t.bucket_hashes.data(), t.bucket_indices.data(), t.bucket_hashes.size(), key);
        REQUIRE(idx != cm::ctr_not_found);
        CHECK(t.counts[idx * 2] == counts.first);
        CHECK(t.counts[idx * 2 + 1] == counts.second);
      }
    }

    // The trainer's eval metric (combination values from the full tables) is the model's prediction.
    const std::vector<double> pred = predict(m, *eval);
    const double loss = cbg::test::mean_logloss(pred, eval->label);
    CHECK(std::fabs(loss - last_eval) < 1e-6);
    const std::vector<std::uint8_t> bytes = cm::write_cbm(m);
    CHECK(predict(cm::read_cbm(bytes.data(), bytes.size()), *eval) == pred);
    // The same training twice gives the same bytes.
    CHECK(cm::write_cbm(cbg::test::train_with_eval(*learn->pool, params, *eval->pool).first) == bytes);
  }
}

TEST_CASE("A GPU context trains feature combinations from host-memory data: the host context's model", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  namespace cm = cbg::model;
  cbg::context_options o;
  o.device = 0;
  auto gpu = cbg::context::create(o);
  auto cpu = cpu_context();
  // Pageable columns and label on the GPU context (staged to the device for the combinations) against
  // the host path, explicitly and by CatBoost's default (4 from 200 iterations).
  for (const char* params : {R"({"iterations": 30, "depth": 4, "verbose": false, "max_ctr_complexity": 2})",
                             R"({"iterations": 200, "depth": 3, "verbose": false})"}) {
    INFO(params);
    auto on_gpu = make_joint(gpu, 600, 3);
    auto on_cpu = make_joint(cpu, 600, 3);
    const cm::model mg = cbg::train::train(*on_gpu->pool, cbg::train::parse_params(params), {});
    const cm::model mc = cbg::train::train(*on_cpu->pool, cbg::train::parse_params(params), {});
    std::size_t combos = 0;
    for (const cm::ctr_feature& f : mg.ctr_features) combos += f.ctr.base.proj.cat_features.size() > 1 ? 1 : 0;
    CHECK(combos > 0);
    CHECK(cm::write_cbm(mg) == cm::write_cbm(mc));
  }
}
