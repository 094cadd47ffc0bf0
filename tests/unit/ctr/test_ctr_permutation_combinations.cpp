// SPDX-License-Identifier: Apache-2.0
// Several permutations of the ordered CTRs with feature combinations (permutation_count > 1,
// max_ctr_complexity > 1): each permutation's combination extension computes its own ordered
// values; a committed column's borders are those of the first permutation that committed it, for
// all; a committed combination has one feature id and one table whichever permutation commits it; the
// trainer's eval metric is the model's prediction; ([gpu]) the GPU equals the host byte for byte.
// Quality against CatBoost: tests/python/test_ctr_permutations.py.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cbgpu/cbgpu.h"
#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/ctr/permutation_scheme.hpp"
#include "cbg/model/io.hpp"
#include "cbg/model/model.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/trainer.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "unit/ctr/joint_data.hpp"
#include "unit/ctr/predict_util.hpp"

namespace {

namespace ctr = cbg::ctr;
using cbg::test::make_joint;

using cbg::test::make_context;

std::string params_of(int permutations, int complexity, const char* loss = "Logloss") {
  return std::string(R"({"iterations": 30, "depth": 4, "learning_rate": 0.3, "verbose": false, "loss_function": ")") +
         loss + R"(", "use_best_model": false, "max_ctr_complexity": )" + std::to_string(complexity) +
         R"(, "permutation_count": )" + std::to_string(permutations) + "}";
}

std::size_t combinations_in(const cbg::model::model& m) {
  std::size_t n = 0;
  for (const auto& f : m.ctr_features) n += f.ctr.base.proj.cat_features.size() > 1 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("Combinations of several permutations: one id, one table, the first borders; each its own values", "[ctr]") {
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto learn = make_joint(cpu, 3000, 1);
  auto eval = make_joint(cpu, 800, 2);
  const cbg::train::train_params p = cbg::train::parse_params(params_of(4, 2));
  ctr::prepared_data prepared = ctr::prepare_for_training(*learn->pool, eval->pool.get(), p);
  const auto shared = std::make_shared<ctr::combination_borders>();
  const auto extension = [&](int k) {
    cbg::train::train_params pk = p;
    pk.random_seed = ctr::permutation_seed(p.random_seed, k);
    auto e = ctr::combinations_for_training(*learn->pool, eval->pool.get(), pk, prepared, shared);
    REQUIRE(e != nullptr);
    e->set_nan_modes(std::vector<std::uint8_t>(static_cast<std::size_t>(prepared.float_count) + prepared.derived.size(),
                                               static_cast<std::uint8_t>(cbg::quantize::nan_mode::min)));
    return e;
  };
  // A tree with a split on the first categorical feature's first CTR column: candidates (a, b), (a, c).
  std::int32_t first_ctr = -1;
  for (std::size_t j = 0; j < prepared.derived.size() && first_ctr < 0; ++j) {
    if (prepared.derived[j].kind == ctr::derived_kind::ctr && prepared.derived[j].cat_index == 0) {
      first_ctr = static_cast<std::int32_t>(prepared.float_count + static_cast<std::int64_t>(j));
    }
  }
  REQUIRE(first_ctr >= 0);
  const std::vector<cbg::train::split> chosen{{first_ctr, 0}};
  const auto no_float = [](std::int32_t, std::int32_t) { return 0.f; };
  const auto bins_of = [&](const std::uint8_t* b) { return std::vector<std::uint8_t>(b, b + learn->rows); };

  auto e0 = extension(0);
  const std::vector<cbg::train::search_extension::column> c0 = e0->candidates(chosen, no_float);
  REQUIRE(!c0.empty());
  const std::vector<std::uint8_t> bins0 = bins_of(c0[0].bins);
  const std::size_t derived_before = prepared.derived.size();
  const std::int32_t id = e0->commit(0);
  CHECK(prepared.derived.size() == derived_before + 1);
  CHECK(shared->size() == 1);  // the committed column's borders

  // Another permutation: the same columns, the committed one binned with the committing
  // permutation's borders, its own ordered values; the same id.
  auto e1 = extension(1);
  const std::vector<cbg::train::search_extension::column> c1 = e1->candidates(chosen, no_float);
  REQUIRE(c1.size() == c0.size());
  CHECK(c1[0].border_count == c0[0].border_count);
  const std::vector<std::uint8_t> bins1 = bins_of(c1[0].bins);
  CHECK(bins1 != bins0);
  CHECK(e1->commit(0) == id);
  CHECK(prepared.derived.size() == derived_before + 1);
  for (std::int32_t b = 0; b < c0[0].border_count; ++b) CHECK(e1->border(id, b) == e0->border(id, b));

  // Permutations that never searched it: the committed column's bins under their own seed, the
  // committing permutation's borders, the one table's eval values.
  auto again0 = extension(0);
  CHECK(bins_of(again0->committed_bins({id}).front()) == bins0);
  auto again1 = extension(1);
  CHECK(bins_of(again1->committed_bins({id}).front()) == bins1);
  const float* ev0 = e0->eval_values(id);
  const float* ev1 = again1->eval_values(id);
  REQUIRE(ev0 != nullptr);
  REQUIRE(ev1 != nullptr);
  CHECK(std::memcmp(ev0, ev1, static_cast<std::size_t>(eval->rows) * sizeof(float)) == 0);
  CHECK(again1->border(id, 0) == e0->border(id, 0));
  CHECK(prepared.derived.size() == derived_before + 1);
  // One table per base, whichever permutation asked for it first.
  for (std::size_t i = 0; i < prepared.tables.size(); ++i) {
    for (std::size_t j = i + 1; j < prepared.tables.size(); ++j)
      CHECK(!(prepared.tables[i].base == prepared.tables[j].base));
  }
}

TEST_CASE("permutation_count > 1 trains feature combinations: the model predicts the trainer's eval metric", "[ctr]") {
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto learn = make_joint(cpu, 3000, 3);
  auto eval = make_joint(cpu, 800, 4);
  for (const int complexity : {2, 4}) {
    const auto [one, one_eval] = cbg::test::train_with_eval(*learn->pool, params_of(1, complexity), *eval->pool);
    for (const int count : {2, 4}) {
      INFO("max_ctr_complexity " << complexity << ", permutation_count " << count);
      const auto [m, last] = cbg::test::train_with_eval(*learn->pool, params_of(count, complexity), *eval->pool);
      const auto [again, again_last] =
          cbg::test::train_with_eval(*learn->pool, params_of(count, complexity), *eval->pool);
      cbg::model::validate(m);
      CHECK(cbg::model::write_cbm(m) == cbg::model::write_cbm(again));  // deterministic
      CHECK(cbg::model::write_cbm(m) != cbg::model::write_cbm(one));
      CHECK(combinations_in(m) > 0);  // the label needs (a, b) together
      const std::vector<double> pred = cbg::test::predict(m, *eval);
      const double loss = cbg::test::mean_logloss(pred, eval->label);
      CHECK(std::fabs(loss - last) < 1e-6);
      CHECK(last < one_eval * 1.05);  // as good as one permutation, give or take
    }
  }
}

TEST_CASE("GPU training of combinations with several permutations equals the host reference byte for byte",
          "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0);
  auto hl = make_joint(cpu, 4000, 5);
  auto he = make_joint(cpu, 1000, 6);
  auto gl = make_joint(gpu, 4000, 5);  // pageable: staged to the device, the GPU combinations
  auto ge = make_joint(gpu, 1000, 6);
  for (const char* loss : {"Logloss", "RMSE"}) {
    for (const int complexity : {2, 4}) {
      for (const int count : {2, 4}) {
        INFO(loss << ", max_ctr_complexity " << complexity << ", permutation_count " << count);
        const std::string params = params_of(count, complexity, loss);
        cbg::train::train_options ho, go;
        ho.eval = he->pool.get();
        go.eval = ge->pool.get();
        const cbg::model::model host = cbg::train::train(*hl->pool, cbg::train::parse_params(params), ho);
        CHECK(combinations_in(host) > 0);
        CHECK(cbg::model::write_cbm(host) ==
              cbg::model::write_cbm(cbg::train::train(*gl->pool, cbg::train::parse_params(params), go)));
      }
    }
  }
}
