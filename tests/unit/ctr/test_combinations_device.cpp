// SPDX-License-Identifier: Apache-2.0
// Feature combinations from device data (include/cbg/ctr/combinations_device.hpp): the shared
// candidate metadata on the host (combination_bases, projection_features), and ([gpu]) the device
// extension against the host extension for the same split sequences: the same candidate columns
// (border counts, every learn row's bin), the same committed feature ids, borders, CTR tables
// (keys, buckets, counts, means) and eval values, for max_ctr_complexity 2..4 over projections with
// float and one-hot splits, binary and regression targets, and in strict mode; and GPU training with
// combinations giving the host's model byte for byte (with an eval set, in strict mode).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbgpu/cbgpu.h"
#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/combinations_device.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/ctr/options.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/model/io.hpp"
#include "cbg/train/boosting.hpp"
#include "cbg/train/trainer.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "support/dlpack_fixtures.hpp"
#include "support/shrink.hpp"
#include "unit/ctr/cat_data.hpp"
#include "unit/ctr/combo_data.hpp"
#include "unit/ctr/ctr_compare.hpp"

namespace {

namespace ctr = cbg::ctr;
namespace model = cbg::model;
using cbg::test::make_combo_data;

using cbg::test::make_context;

TEST_CASE("Combination bases: float and one-hot splits sorted into one, then each CTR split's projection",
          "[ctr][combinations]") {
  ctr::prepared_data p;
  p.float_count = 2;
  ctr::derived_feature oh;
  oh.kind = ctr::derived_kind::one_hot;
  oh.cat_index = 0;
  oh.value = 7;
  ctr::derived_feature c1;
  c1.kind = ctr::derived_kind::ctr;
  c1.cat_index = 1;
  c1.ctr.base.proj.cat_features = {1};
  ctr::derived_feature c12 = c1;
  c12.ctr.base.proj.cat_features = {1, 2};
  ctr::derived_feature c3 = c1;
  c3.cat_index = 3;
  c3.ctr.base.proj.cat_features = {3};
  p.derived = {oh, c1, c12, c3};
  const auto border = [](std::int32_t f, std::int32_t bin) { return static_cast<float>(f * 100 + bin); };
  const std::vector<cbg::train::split> chosen{{1, 3}, {3, 0}, {2, 0}, {0, 1}, {4, 2}};
  const std::vector<model::projection> bases = ctr::combination_bases(chosen, p, border);
  REQUIRE(bases.size() == 3);
  REQUIRE(bases[0].float_splits.size() == 2);
  CHECK(bases[0].float_splits[0].float_index == 0);
  CHECK(bases[0].float_splits[0].border == 1.f);
  CHECK(bases[0].float_splits[1].float_index == 1);
  CHECK(bases[0].float_splits[1].border == 103.f);
  REQUIRE(bases[0].one_hot_splits.size() == 1);
  CHECK(bases[0].one_hot_splits[0].cat_index == 0);
  CHECK(bases[0].one_hot_splits[0].value == 7);
  CHECK(bases[0].cat_features.empty());
  CHECK(bases[1].cat_features == std::vector<std::int32_t>{1});
  CHECK(bases[2].cat_features == std::vector<std::int32_t>{1, 2});
  CHECK(ctr::combination_cats(p) == std::vector<std::int32_t>{1, 3});  // single-feature CTRs only
  // No splits: the empty base only (which combines nothing).
  const std::vector<model::projection> none = ctr::combination_bases({}, p, border);
  REQUIRE(none.size() == 1);
  CHECK(ctr::projection_length(none[0]) == 0);
  CHECK(ctr::combination_candidates(none, {1, 3}, 4).empty());
}

TEST_CASE("Projection features: per spec, per target feature, per prior, repeats skipped", "[ctr][combinations]") {
  model::projection proj;
  proj.cat_features = {2, 5};
  const std::vector<ctr::ctr_spec> specs{ctr::parse_ctr_spec("Borders:Prior=0/1:Prior=0.5/1", "x"),
                                         ctr::parse_ctr_spec("FeatureFreq", "x"),
                                         ctr::parse_ctr_spec("Borders:Prior=0.5/1", "x")};
  const std::vector<ctr::combination_feature> f = ctr::projection_features(proj, specs, 3);
  // Borders over 3 classes: target borders 0 and 1, two priors each; FeatureFreq one; the last
  // spec repeats (Borders, border 0 and 1, prior 0.5) and adds nothing.
  REQUIRE(f.size() == 5);
  CHECK(f[0].desc.target_border_idx == 0);
  CHECK(f[0].desc.prior_num == 0.f);
  CHECK(f[1].desc.target_border_idx == 0);
  CHECK(f[1].desc.prior_num == 0.5f);
  CHECK(f[2].desc.target_border_idx == 1);
  CHECK(f[3].desc.target_border_idx == 1);
  CHECK(f[4].desc.base.type == model::ctr_type::feature_freq);
  CHECK(f[4].spec == 1);
  for (const auto& x : f) CHECK(x.desc.base.proj == proj);
}

// After the work queued on `ctx`'s stream (a non-blocking stream: cudaMemcpy alone would not wait for it).
template <class T>
std::vector<T> to_host(const cbg::context& ctx, const T* d, std::size_t n) {
  std::vector<T> v(n);
  REQUIRE(cudaStreamSynchronize(ctx.stream()) == cudaSuccess);
  if (n > 0) REQUIRE(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return v;
}

void check_tables(const ctr::prepared_data& h, const ctr::prepared_data& d) {
  REQUIRE(d.derived.size() == h.derived.size());
  for (std::size_t k = 0; k < h.derived.size(); ++k) {
    CHECK(d.derived[k].kind == h.derived[k].kind);
    CHECK(d.derived[k].cat_index == h.derived[k].cat_index);
    CHECK(d.derived[k].ctr == h.derived[k].ctr);
  }
  // The tables of the CTR features (the host extension also keeps those of candidate counter
  // columns it never committed; the model stores only the used ones).
  const auto used = [](const ctr::prepared_data& p) {
    std::vector<model::ctr_table> out;
    for (const ctr::derived_feature& f : p.derived) {
      if (f.kind != ctr::derived_kind::ctr) continue;
      const bool have =
          std::any_of(out.begin(), out.end(), [&](const model::ctr_table& t) { return t.base == f.ctr.base; });
      const auto t = std::find_if(p.tables.begin(), p.tables.end(),
                                  [&](const model::ctr_table& x) { return x.base == f.ctr.base; });
      REQUIRE(t != p.tables.end());
      if (!have) out.push_back(*t);
    }
    return out;
  };
  cbg::test::check_same_tables(used(h), used(d));
}

// Drives the host and the device extensions through the same levels; `compare_bins` downloads the
// device bins (not in strict mode).
void run_levels(int complexity, bool binary, bool strict, std::int64_t rows) {
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0, strict);
  auto hl = make_combo_data(cpu, rows, binary, 31, false);
  // The eval set has values the learn set lacks: counter_calc Full makes them table keys.
  auto he = make_combo_data(cpu, rows / 4, binary, 32, false, 2, true);
  auto dl = make_combo_data(gpu, rows, binary, 31, true);
  auto de = make_combo_data(gpu, rows / 4, binary, 32, true, 2, true);
  ctr::options o;
  o.one_hot_max_size = 3;
  o.simple_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders", "x")};
  o.combinations_ctr = std::vector<ctr::ctr_spec>{ctr::parse_ctr_spec("Borders:Prior=0.5/1:Prior=1/1", "x"),
                                                  ctr::parse_ctr_spec("FeatureFreq:CtrBorderType=Median", "x"),
                                                  ctr::parse_ctr_spec("Counter", "x")};
  o.counter_calc_method = ctr::counter_calc::full;
  cbg::train::target_rule rule;
  rule.loss = binary ? cbg::train::loss_kind::logloss : cbg::train::loss_kind::rmse;
  ctr::ctr_targets t;
  t.learn = &hl->label;
  t.binarize = !binary;
  ctr::prepared_data h = ctr::prepare_categorical_host(*hl->pool, he->pool.get(), o, t, 7);
  ctr::prepared_data d = ctr::prepare_categorical_device(*dl->pool, de->pool.get(), o, rule, !binary, 7);
  REQUIRE(h.float_count == 2);
  cbg::quantize::options qo;
  qo.border_count = 16;
  qo.overrides = h.overrides;
  const cbg::quantize::host_quantized q = cbg::quantize::quantize_host(*h.learn, qo);
  auto hx = ctr::make_combinations_host(*hl->pool, he->pool.get(), o, t, 7, complexity, h);
  auto dx = ctr::make_combinations_device(*dl->pool, de->pool.get(), o, rule, !binary, 7, complexity, q.mode, d);
  hx->set_nan_modes(q.mode);
  const auto border = [&](std::int32_t f, std::int32_t bin) {
    return q.borders[static_cast<std::size_t>(f) * cbg::quantize::border_stride + static_cast<std::size_t>(bin)];
  };
  std::int32_t one_hot = -1;  // the first one-hot column's feature id
  for (std::size_t k = 0; k < h.derived.size() && one_hot < 0; ++k) {
    if (h.derived[k].kind == ctr::derived_kind::one_hot)
      one_hot = static_cast<std::int32_t>(h.float_count) + static_cast<std::int32_t>(k);
  }
  REQUIRE(one_hot >= 0);

  std::vector<cbg::train::split> chosen;
  std::vector<std::int32_t> committed;
  // The levels: nothing, a float split, a won combination, a one-hot split, a second float split
  // (NaNs in it), a second won combination.
  for (int level = 0; level < 6; ++level) {
    const auto hc = hx->candidates(chosen, border);
    const auto dc = dx->candidates(chosen, border);
    REQUIRE(dc.size() == hc.size());
    if (level == 0) CHECK(hc.empty());
    for (std::size_t k = 0; k < hc.size(); ++k) {
      CHECK(dc[k].border_count == hc[k].border_count);
      if (!strict) {
        const std::vector<std::uint8_t> bins = to_host(*gpu, dc[k].bins, static_cast<std::size_t>(rows));
        CHECK(std::equal(bins.begin(), bins.end(), hc[k].bins));
      }
    }
    if (level == 0) {
      chosen.push_back(cbg::train::split{0, 5});
    } else if ((level == 1 || level == 5) && !hc.empty()) {
      const std::size_t pick = level == 1 ? hc.size() / 2 : hc.size() - 1;
      const std::int32_t a = hx->commit(pick);
      const std::int32_t b = dx->commit(pick);
      CHECK(a == b);
      committed.push_back(a);
      chosen.push_back(cbg::train::split{a, std::min(1, hc[pick].border_count - 1)});
    } else if (level == 2) {
      chosen.push_back(cbg::train::split{one_hot, 0});
    } else if (level == 3) {
      chosen.push_back(cbg::train::split{1, 7});
    } else if (level == 4 && !hc.empty()) {
      CHECK(hx->commit(0) == dx->commit(0));
    }
  }
  REQUIRE(!committed.empty());
  check_tables(h, d);
  for (const std::int32_t f : committed) {
    const auto k = static_cast<std::size_t>(f - h.float_count);
    for (std::int32_t bin = 0; bin < 3; ++bin) CHECK(dx->border(f, bin) == hx->border(f, bin));
    REQUIRE(hx->eval_values(f) != nullptr);
    REQUIRE(dx->eval_values(f) != nullptr);
    if (!strict) {
      const std::vector<float> ev = to_host(*gpu, dx->eval_values(f), static_cast<std::size_t>(rows / 4));
      CHECK(std::equal(ev.begin(), ev.end(), hx->eval_values(f)));
    }
    CHECK(h.derived[k].ctr.base.proj.cat_features.size() + h.derived[k].ctr.base.proj.float_splits.size() +
              h.derived[k].ctr.base.proj.one_hot_splits.size() <=
          static_cast<std::size_t>(complexity));
  }
}

TEST_CASE("GPU feature combinations equal the host's: candidates, bins, tables, eval values", "[ctr][gpu][parts]") {
  CBG_REQUIRE_GPU();
  std::size_t variant = 0;
  for (const int complexity : {2, 3, 4}) {
    for (const bool binary : {true, false}) {
      if (!cbg::test::in_test_part(variant++)) continue;
      INFO("max_ctr_complexity " << complexity << (binary ? ", binary" : ", regression"));
      run_levels(complexity, binary, false, 6000);
    }
  }
}

TEST_CASE("GPU feature combinations work in strict mode (no dataset-sized copy back)", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  // Every learn column 200 KB (80 KB under CBGPU_TEST_SHRINK): above the strict limit.
  run_levels(4, true, true, cbg::test::shrunk<std::int64_t>(50000, 20000));
}

// Training with combinations on the host and on the GPU: the same .cbm bytes; the model has
// combination features with float and one-hot splits.
// `policy`: the A/B choices of both contexts (the model must not depend on them).
void train_both(int complexity, bool binary, bool strict, std::int64_t rows, const std::string& extra, int classes = 2,
                const cbg::policy& policy = {}) {
  namespace cm = cbg::model;
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0, strict);
  cbg::set_policy(*cpu, policy);
  cbg::set_policy(*gpu, policy);
  auto hl = make_combo_data(cpu, rows, binary, 41, false, classes);
  auto he = make_combo_data(cpu, rows / 4, binary, 42, false, classes);
  auto dl = make_combo_data(gpu, rows, binary, 41, true, classes);
  auto de = make_combo_data(gpu, rows / 4, binary, 42, true, classes);
  // CBGPU_TEST_SHRINK: fewer trees (the tools slow every level's candidate columns down).
  const std::string params = std::string(R"({"iterations": )") + std::to_string(cbg::test::shrunk(25, 6)) +
                             R"(, "depth": 5, "verbose": false, "one_hot_max_size": 3,
      "learning_rate": 0.2, "loss_function": ")" +
                             std::string(classes > 2 ? "MultiClass"
                                         : binary    ? "Logloss"
                                                     : "RMSE") +
                             R"(", "max_ctr_complexity": )" + std::to_string(complexity) + extra + "}";
  cbg::train::train_options ho, go;
  ho.eval = he->pool.get();
  go.eval = de->pool.get();
  const cm::model a = cbg::train::train(*hl->pool, cbg::train::parse_params(params), ho);
  const cm::model c = cbg::train::train(*dl->pool, cbg::train::parse_params(params), go);
  std::size_t combos = 0;
  for (const cm::ctr_feature& f : a.ctr_features) {
    if (ctr::projection_length(f.ctr.base.proj) > 1) ++combos;
    CHECK(static_cast<int>(ctr::projection_length(f.ctr.base.proj)) <= complexity);
  }
  CHECK(combos > 0);
  CHECK(cm::write_cbm(a) == cm::write_cbm(c));
}

TEST_CASE("The GPU comparison's data gives the host model combinations with float and one-hot splits",
          "[ctr][combinations]") {
  namespace cm = cbg::model;
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto hl = make_combo_data(cpu, 4000, true, 41, false);
  const cm::model m =
      cbg::train::train(*hl->pool, cbg::train::parse_params(R"({"iterations": 25, "depth": 5, "verbose": false,
      "one_hot_max_size": 3, "learning_rate": 0.2, "loss_function": "Logloss", "max_ctr_complexity": 4})"),
                        {});
  std::size_t cats = 0, floats = 0, one_hots = 0;
  for (const cm::ctr_feature& f : m.ctr_features) {
    const auto& proj = f.ctr.base.proj;
    CHECK(ctr::projection_length(proj) <= 4);
    if (proj.cat_features.size() > 1) ++cats;
    if (!proj.float_splits.empty()) ++floats;
    if (!proj.one_hot_splits.empty()) ++one_hots;
  }
  CHECK(cats > 0);
  CHECK(floats > 0);
  CHECK(one_hots > 0);
}

TEST_CASE("Feature combinations: the projection cache's size (a policy field) does not change the model",
          "[ctr][combinations]") {
  namespace cm = cbg::model;
  auto cached = make_context(CBG_DEVICE_CPU);
  auto uncached = make_context(CBG_DEVICE_CPU);
  cbg::policy policy;
  policy.combo_cache_projections = 0;
  cbg::set_policy(*uncached, policy);
  const std::string params = R"({"iterations": 10, "depth": 4, "verbose": false, "one_hot_max_size": 3,
      "learning_rate": 0.2, "loss_function": "Logloss", "max_ctr_complexity": 3})";
  auto a = make_combo_data(cached, 2000, true, 61, false);
  auto b = make_combo_data(uncached, 2000, true, 61, false);
  const cm::model ma = cbg::train::train(*a->pool, cbg::train::parse_params(params), {});
  const cm::model mb = cbg::train::train(*b->pool, cbg::train::parse_params(params), {});
  std::size_t combos = 0;
  for (const cm::ctr_feature& f : ma.ctr_features) combos += ctr::projection_length(f.ctr.base.proj) > 1 ? 1 : 0;
  CHECK(combos > 0);
  CHECK(cm::write_cbm(ma) == cm::write_cbm(mb));
}

TEST_CASE("GPU training with feature combinations equals the host reference byte for byte", "[ctr][gpu][parts]") {
  CBG_REQUIRE_GPU();
  std::size_t variant = 0;
  for (const int complexity : {2, 3, 4}) {
    for (const bool binary : {true, false}) {
      if (!cbg::test::in_test_part(variant++)) continue;
      INFO("max_ctr_complexity " << complexity << (binary ? ", Logloss" : ", RMSE"));
      train_both(complexity, binary, false, 4000, "");
    }
  }
  // Score noise on the combination columns (Cosine, random_strength); three classes (three der
  // channels in the columns' histograms, Borders over two target borders).
  if (cbg::test::in_test_part(variant++)) {
    train_both(3, true, false, 4000, R"(, "random_strength": 2, "score_function": "Cosine")");
  }
  if (cbg::test::in_test_part(variant++)) train_both(2, true, false, 4000, "", 3);
  // Five classes: six channels, more than the histogram kernel keeps in registers.
  if (cbg::test::in_test_part(variant++)) train_both(2, true, false, 4000, "", 5);
  // The rows in the data's order (has_time), and blocks of rows shuffled (fold_permutation_block counts
  // from 50 000 rows).
  if (cbg::test::in_test_part(variant++)) train_both(2, true, false, 4000, R"(, "has_time": true)");
  if (cbg::test::in_test_part(variant++)) train_both(2, false, false, 50000, R"(, "fold_permutation_block": 4)");
}

TEST_CASE("GPU training with feature combinations: the policy's A/B choices give the same model", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  // Global-memory histograms of the candidate columns, and no projection kept beyond a level's.
  cbg::policy policy;
  policy.combo_global_histograms = true;
  policy.combo_cache_projections = 0;
  train_both(3, true, false, 4000, "", 2, policy);
}

TEST_CASE("GPU training with feature combinations works in strict mode", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  train_both(4, true, true, cbg::test::shrunk<std::int64_t>(50000, 20000), "");
}

}  // namespace

TEST_CASE("On a GPU an unset max_ctr_complexity is CatBoost's default: 4 from 200 iterations, else 1", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  auto gpu = make_context(0);
  auto dl = make_combo_data(gpu, 2000, true, 51, true);
  for (const int iterations : {199, 200}) {
    const cbg::model::model m =
        cbg::train::train(*dl->pool,
                          cbg::train::parse_params(R"({"iterations": )" + std::to_string(iterations) +
                                                   R"(, "depth": 3, "verbose": false, "loss_function": "Logloss"})"),
                          {});
    REQUIRE(!m.ctr_features.empty());
    std::size_t longest = 0;
    for (const auto& f : m.ctr_features) longest = std::max(longest, ctr::projection_length(f.ctr.base.proj));
    if (iterations < 200) {
      CHECK(longest == 1);
    } else {
      CHECK(longest > 1);
      CHECK(longest <= 4);
    }
  }
}
