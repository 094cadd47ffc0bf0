// SPDX-License-Identifier: Apache-2.0
// Several permutations of the ordered CTRs (permutation_count > 1, ctr/permutation_scheme.hpp):
// CatBoost's GPU scheme (the estimation permutation, the search permutation of each iteration),
// each permutation's CTR columns equal to the one-permutation preparation with that permutation's
// seed and binned with permutation 0's borders, the model's CTR tables (which no permutation
// changes), the model's eval predictions equal to the trainer's, and ([gpu]) the GPU equal to the
// host reference byte for byte. With feature combinations: test_ctr_permutation_combinations.cpp. Quality against
// CatBoost: tests/python/test_ctr_permutations.py.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "cbgpu/cbgpu.h"
#include "cbg/ctr/features.hpp"
#include "cbg/ctr/permutation_scheme.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/model/io.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/train/dataset.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/trainer.hpp"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "unit/ctr/cat_data.hpp"
#include "unit/ctr/ctr_compare.hpp"
#include "unit/ctr/predict_util.hpp"

namespace {

namespace ctr = cbg::ctr;
using cbg::test::make_cat_data;

using cbg::test::make_context;

std::vector<double> predict(const cbg::model::model& m, const cbg::test::cat_data& d) {
  std::vector<std::uint32_t> cats;
  for (std::int64_t r = 0; r < d.rows; ++r) {
    cats.push_back(cbg::model::cat_hash_int(d.a[static_cast<std::size_t>(r)]));
    cats.push_back(cbg::model::cat_hash_int(d.b[static_cast<std::size_t>(r)]));
  }
  return cbg::test::predict_raw(m, d.x.data(), cats, 2, d.rows);
}

const char* const logloss_params = R"({"iterations": 30, "depth": 4, "learning_rate": 0.2, "verbose": false,
    "loss_function": "Logloss", "use_best_model": false, "one_hot_max_size": 3, "max_ctr_complexity": 1,
    "simple_ctr": ["Borders", "Counter", "FloatTargetMeanValue"])";

std::string with_permutations(int count) {
  return std::string(logloss_params) + R"(, "permutation_count": )" + std::to_string(count) + "}";
}

}  // namespace

TEST_CASE("Permutation scheme: the last permutation estimates, a draw among the others but the last searches",
          "[ctr]") {
  CHECK(ctr::estimation_permutation(1) == 0);
  CHECK(ctr::estimation_permutation(4) == 3);
  CHECK(ctr::learn_permutation_count(1) == 1);
  CHECK(ctr::learn_permutation_count(2) == 1);
  CHECK(ctr::learn_permutation_count(4) == 3);
  for (int it = 0; it < 100; ++it) {
    // CatBoost: rand % (L - 1) for L > 1 learn permutations, else 0: permutation 0 for P <= 3.
    for (const int count : {1, 2, 3}) CHECK(ctr::search_permutation(42, it, count) == 0);
  }
  for (const int count : {4, 6}) {
    std::set<int> seen;
    for (int it = 0; it < 200; ++it) seen.insert(ctr::search_permutation(42, it, count));
    std::set<int> all;
    for (int k = 0; k < ctr::learn_permutation_count(count) - 1; ++k) all.insert(k);
    CHECK(seen == all);  // never the last learn permutation, never the estimation one
  }
  // Permutation 0 keeps the training's seed: one permutation trains as before.
  CHECK(ctr::permutation_seed(7, 0) == 7);
  CHECK(ctr::permutation_seed(7, 1) != 7);
  CHECK(ctr::permutation_seed(7, 1) != ctr::permutation_seed(7, 2));
}

TEST_CASE("Each permutation's CTR columns are the one-permutation preparation with its seed, binned by permutation 0",
          "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 2000, true, 5);
  auto eval = make_cat_data(ctx, 500, true, 6);
  const cbg::train::train_params p = cbg::train::parse_params(with_permutations(3));
  cbg::train::dataset data(*learn->pool, eval->pool.get(), p);
  REQUIRE(data.permutation_count() == 3);
  ctr::ctr_targets t;
  t.learn = &learn->label;
  const cbg::train::backend_inputs first = data.take_permutation_inputs(0, true);
  REQUIRE(first.host_quantized != nullptr);
  const cbg::quantize::host_quantized q0 = *first.host_quantized;
  std::set<std::vector<std::uint32_t>> indexes;
  for (int k = 0; k < 3; ++k) {
    INFO("permutation " << k);
    const cbg::train::backend_inputs in = k == 0 ? first : data.take_permutation_inputs(k, false);
    CHECK((in.eval != nullptr) == (k == 0));
    const ctr::prepared_data one = ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), p.ctr, t,
                                                                 ctr::permutation_seed(p.random_seed, k));
    const std::size_t floats = static_cast<std::size_t>(one.float_count);
    REQUIRE(in.learn->num_features() == static_cast<std::int64_t>(floats + one.derived.size()));
    for (std::size_t j = 0; j < one.derived.size(); ++j) {
      const cbg::column_view& c = in.learn->features()[floats + j];
      bool same = true;
      for (std::int64_t r = 0; r < learn->rows; ++r) {
        const auto v = static_cast<float>(c.value(r));
        same = same && std::memcmp(&v, &one.learn_columns[j][static_cast<std::size_t>(r)], sizeof v) == 0;
      }
      CHECK(same);
    }
    // The model's tables hold full learn statistics: no permutation changes them.
    cbg::test::check_same_tables(data.categorical()->tables, one.tables);
    const cbg::quantize::host_quantized& q = k == 0 ? q0 : *in.host_quantized;
    CHECK(q.borders == q0.borders);
    CHECK(q.index == cbg::quantize::binarize_host(*in.learn, q0).index);
    indexes.insert(q.index);
  }
  CHECK(indexes.size() == 3);  // three permutations, three different ordered CTR columns
}

TEST_CASE("permutation_count > 1 trains CatBoost's scheme: the estimation permutation's leaves in the model", "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 3000, true, 7);
  auto eval = make_cat_data(ctx, 800, true, 8);
  const auto [one, one_eval] = cbg::test::train_with_eval(*learn->pool, with_permutations(1), *eval->pool);
  const auto [four, four_eval] = cbg::test::train_with_eval(*learn->pool, with_permutations(4), *eval->pool);
  const auto [again, again_eval] = cbg::test::train_with_eval(*learn->pool, with_permutations(4), *eval->pool);
  CHECK(cbg::model::write_cbm(four) == cbg::model::write_cbm(again));  // deterministic
  CHECK(cbg::model::write_cbm(four) != cbg::model::write_cbm(one));
  CHECK(!four.ctr_features.empty());
  // Its tables are the preparation's (every permutation has the same).
  ctr::ctr_targets t;
  t.learn = &learn->label;
  const cbg::train::train_params p = cbg::train::parse_params(with_permutations(4));
  const ctr::prepared_data prep =
      ctr::prepare_categorical_host(*learn->pool, eval->pool.get(), p.ctr, t, p.random_seed);
  for (const auto& table : four.ctr_tables) {
    bool found = false;
    for (const auto& h : prep.tables) {
      if (h.base == table.base) {
        cbg::test::check_same_tables(std::vector<cbg::model::ctr_table>{h}, std::vector<cbg::model::ctr_table>{table});
        found = true;
      }
    }
    CHECK(found);
  }
  // The trainer's eval metric is the model's own prediction: the eval set took the estimation
  // permutation's leaves, which the model keeps.
  const std::vector<double> pred = predict(four, *eval);
  const double loss = cbg::test::mean_logloss(pred, eval->label);
  CHECK(std::fabs(loss - four_eval) < 1e-6);
  CHECK(four_eval < one_eval * 1.05);  // as good as one permutation, give or take
  // RMSE and the exact leaves of Quantile take the same path.
  auto rl = make_cat_data(ctx, 2000, false, 9);
  auto re = make_cat_data(ctx, 500, false, 10);
  for (const char* loss_name : {"RMSE", "Quantile:alpha=0.5"}) {
    INFO(loss_name);
    const std::string params = std::string(R"({"iterations": 20, "depth": 4, "verbose": false, "loss_function": ")") +
                               loss_name + R"(", "use_best_model": false, "max_ctr_complexity": 1,
        "permutation_count": 3})";
    const auto [m, last] = cbg::test::train_with_eval(*rl->pool, params, *re->pool);
    const std::vector<double> pr = predict(m, *re);
    double metric = 0;
    for (std::int64_t r = 0; r < re->rows; ++r) {
      const double d = pr[static_cast<std::size_t>(r)] - re->label[static_cast<std::size_t>(r)];
      metric += std::string(loss_name) == "RMSE" ? d * d : 0.5 * std::fabs(d);
    }
    metric /= static_cast<double>(re->rows);
    if (std::string(loss_name) == "RMSE") metric = std::sqrt(metric);
    CHECK(std::fabs(metric - last) < 1e-6 * std::max(1.0, metric));
  }
}

TEST_CASE("permutation_count > 1: one permutation without CTR columns or with has_time", "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = make_cat_data(ctx, 1000, true, 11);
  // The models' predictions (their parameters record the count).
  const auto predictions = [&](const std::string& extra) {
    return predict(cbg::train::train(*learn->pool,
                                     cbg::train::parse_params(R"({"iterations": 5, "depth": 3, "verbose": false, )"
                                                              R"("max_ctr_complexity": 1)" +
                                                              extra + "}"),
                                     {}),
                   *learn);
  };
  // has_time: one permutation, the data's order, whatever the count.
  CHECK(predictions(R"(, "has_time": true, "permutation_count": 4)") == predictions(R"(, "has_time": true)"));
  // Only one-hot features: nothing depends on a permutation.
  CHECK(predictions(R"(, "one_hot_max_size": 255, "permutation_count": 4)") ==
        predictions(R"(, "one_hot_max_size": 255)"));
}

TEST_CASE("GPU training with several permutations equals the host reference byte for byte", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0);
  for (const bool binary : {true, false}) {
    INFO("binary " << binary);
    auto hl = make_cat_data(cpu, 5000, binary, 19);
    auto he = make_cat_data(cpu, 1000, binary, 20);
    auto dl = make_cat_data(gpu, 5000, binary, 19, true);  // device memory: the GPU CTR path
    auto de = make_cat_data(gpu, 1000, binary, 20, true);
    auto pl = make_cat_data(gpu, 5000, binary, 19);  // pageable host memory on a GPU: the host CTR path
    auto pe = make_cat_data(gpu, 1000, binary, 20);
    for (const int count : {2, 4}) {
      INFO("permutation_count " << count);
      const std::string params = std::string(R"({"iterations": 25, "depth": 5, "verbose": false, "loss_function": ")") +
                                 (binary ? "Logloss" : "RMSE") +
                                 R"(", "max_ctr_complexity": 1, "permutation_count": )" + std::to_string(count) +
                                 R"(, "simple_ctr": ["Borders", "Counter", "FeatureFreq"]})";
      cbg::train::train_options ho, go, po;
      ho.eval = he->pool.get();
      go.eval = de->pool.get();
      po.eval = pe->pool.get();
      const auto host = cbg::model::write_cbm(cbg::train::train(*hl->pool, cbg::train::parse_params(params), ho));
      CHECK(host == cbg::model::write_cbm(cbg::train::train(*dl->pool, cbg::train::parse_params(params), go)));
      CHECK(host == cbg::model::write_cbm(cbg::train::train(*pl->pool, cbg::train::parse_params(params), po)));
    }
  }
  // binarize_device: the quantizer's own bins from its own borders.
  auto dd = make_cat_data(gpu, 4000, false, 21, true);
  const cbg::train::train_params p = cbg::train::parse_params(R"({"max_ctr_complexity": 1})");
  cbg::train::dataset data(*dd->pool, nullptr, p);
  const cbg::train::backend_inputs in = data.take_backend_inputs();
  REQUIRE(in.device_quantized != nullptr);
  const cbg::quantize::device_quantized b = cbg::quantize::binarize_device(*in.learn, *in.device_quantized);
  std::vector<std::uint32_t> got(b.index.size()), want(b.index.size());
  REQUIRE(in.device_quantized->index.size() == want.size());
  const std::uint32_t* from[2] = {b.index.data(), in.device_quantized->index.data()};
  std::uint32_t* to[2] = {got.data(), want.data()};
  for (int k = 0; k < 2; ++k) {
    cbg::copy_bytes(to[k], cbg::memory_kind::host, from[k], cbg::memory_kind::device,
                    got.size() * sizeof(std::uint32_t), gpu->stream(), gpu->copies(), cbg::copy_rules{},
                    CBG_COPY_SITE("test download"));
  }
  REQUIRE(cudaStreamSynchronize(gpu->stream()) == cudaSuccess);
  CHECK(got == want);
}
