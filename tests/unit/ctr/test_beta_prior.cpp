// SPDX-License-Identifier: Apache-2.0
// PriorEstimation=BetaPrior (beta_prior.hpp): CatBoost's digamma, trigamma and beta-prior estimator
// against known values, the estimate is the likelihood's maximum, the trainer puts it into the
// model's Borders CTRs as CatBoost's GPU trainer does, refusals by name, and ([gpu]) the GPU build
// equals the host reference byte for byte.
//
// The known values come from a line-by-line Python transcription of CatBoost's code
// (catboost/cuda/ctrs/prior_estimator.h, contrib/libs/gamma_function_apache_math_port/
// gamma_function.cpp), run in IEEE double arithmetic: Digamma(x) = Digamma(x + 1) - 1/x below 49,
// log(x) - 1/(2x) - 1/(12x^2) + 1/(120x^4) - 1/(252x^6) from 49; EstimateBetaPrior starts at
// alpha = share of class 1, beta = 1 - alpha and takes up to 50 damped Newton steps (l2 0.01); the
// model's prior is (float)alpha / (float)(alpha + beta).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/ctr/beta_prior.hpp"
#include "cbg/ctr/options.hpp"
#include "cbg/model/hash.hpp"
#include "cbg/model/io.hpp"
#include "cbg/model/model.hpp"
#include "cbg/train/params.hpp"
#include "cbg/train/trainer.hpp"
#include "cbgpu/cbgpu.h"
#include "support/catch.hpp"
#include "support/test_context.hpp"
#include "support/status_of.hpp"
#include "unit/ctr/cat_data.hpp"
#include "unit/ctr/predict_util.hpp"

namespace {

using cbg::ctr::beta_prior;
using cbg::ctr::estimate_beta_prior;
using cbg::test::status_of;

using cbg::test::make_context;

bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }

// [key][2] counts (class 0, class 1).
std::vector<std::int32_t> flat_counts(const std::vector<std::pair<int, int>>& c) {
  std::vector<std::int32_t> out;
  for (const auto& [c0, c1] : c) {
    out.push_back(c0);
    out.push_back(c1);
  }
  return out;
}

// The beta-binomial log-likelihood of the counts (up to the binomial coefficients) at (a, b).
double log_likelihood(const std::vector<std::int32_t>& counts, double a, double b) {
  double ll = 0;
  const std::size_t k = counts.size() / 2;
  for (std::size_t i = 0; i < k; ++i) {
    const double first = counts[2 * i + 1], n = counts[2 * i] + first, second = n - first;
    ll += std::lgamma(first + a) + std::lgamma(second + b) - std::lgamma(n + a + b);
  }
  return ll + static_cast<double>(k) * (std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b));
}

const std::vector<std::pair<int, int>> small = {{3, 1}, {0, 2}, {5, 5}, {1, 0}, {7, 2}};
const std::vector<std::pair<int, int>> skewed = {{40, 2}, {30, 9}, {12, 1}, {1, 1}, {0, 3}, {25, 0}, {8, 8}, {60, 4}};
std::vector<std::pair<int, int>> big() {
  std::vector<std::pair<int, int>> c;
  for (int i = 0; i < 300; ++i) c.emplace_back((i * 7919) % 53 + 1, (i * 104729) % 17);
  return c;
}

}  // namespace

TEST_CASE("CatBoost's digamma and trigamma", "[ctr]") {
  // {x, Digamma(x), Trigamma(x)} from the transcription of gamma_function.cpp.
  const double table[][3] = {
      {1e-6, -1000000.5772156649, 1000000000000.0},      {0.3, -3.502524225020958, 12.245364546107663},
      {1.0, -0.5772156677920679, 1.6449340668481562},    {2.5, 0.7031566378697297, 0.4903577561001695},
      {48.9, 3.8795175965152686, 0.020660422142412697},  {49.0, 3.8815815072720508, 0.020617826354490325},
      {1234.5, 7.118016231827991, 0.0008103727271269667}};
  for (const auto& row : table) {
    CHECK(close(cbg::ctr::catboost_digamma(row[0]), row[1], 1e-15));
    CHECK(close(cbg::ctr::catboost_trigamma(row[0]), row[2], 1e-15));
  }
  // The functions themselves: -Euler's constant and pi^2/6 at 1 (CatBoost's series is accurate to ~1e-8).
  CHECK(std::fabs(cbg::ctr::catboost_digamma(1.0) + 0.5772156649015329) < 1e-8);
  CHECK(std::fabs(cbg::ctr::catboost_trigamma(1.0) - 1.6449340668482264) < 1e-8);
}

TEST_CASE("The beta-prior estimate is CatBoost's, float for float", "[ctr]") {
  // `finite`: the likelihood has a finite maximum; otherwise (less spread between the categories than
  // a binomial's) it grows along alpha / (alpha + beta) fixed, and CatBoost stops after 50 iterations.
  struct known {
    std::vector<std::pair<int, int>> counts;
    double alpha, beta;
    float num, denom;
    bool finite;
  };
  const known cases[] = {
      {small, 15.176181782024859, 24.012612673172764, 15.17618179321289f, 39.18879318237305f, false},
      {skewed, 0.6125473591319974, 1.7672863197497357, 0.6125473380088806f, 2.379833698272705f, true},
      {big(), 1.4532088821372444, 4.093228058466266, 1.4532089233398438f, 5.546436786651611f, true},
  };
  for (const known& c : cases) {
    const std::vector<std::int32_t> counts = flat_counts(c.counts);
    const beta_prior b = estimate_beta_prior(counts.data(), c.counts.size());
    CHECK(close(b.alpha, c.alpha, 1e-13));
    CHECK(close(b.beta, c.beta, 1e-13));
    // The model's prior: what CatBoost writes.
    CHECK(static_cast<float>(b.alpha) == c.num);
    CHECK(static_cast<float>(b.alpha + b.beta) == c.denom);
    // The estimate maximizes the beta-binomial likelihood (where it has a finite maximum).
    const double at = log_likelihood(counts, b.alpha, b.beta);
    if (c.finite) {
      for (const double h : {1e-3, -1e-3}) {
        CHECK(log_likelihood(counts, b.alpha * (1 + h), b.beta) < at);
        CHECK(log_likelihood(counts, b.alpha, b.beta * (1 + h)) < at);
      }
    } else {
      CHECK(log_likelihood(counts, 2 * b.alpha, 2 * b.beta) > at);
    }
  }
}

TEST_CASE("The beta-prior estimate refuses a constant class, as CatBoost", "[ctr]") {
  const std::vector<std::int32_t> zeros = flat_counts({{3, 0}, {5, 0}});
  const std::vector<std::int32_t> ones = flat_counts({{0, 3}, {0, 1}});
  CHECK(status_of([&] { (void)estimate_beta_prior(zeros.data(), 2); }) == cbg::status::bad_data);
  CHECK(status_of([&] { (void)estimate_beta_prior(ones.data(), 2); }) == cbg::status::bad_data);
}

TEST_CASE("PriorEstimation parses for Borders of single features and is refused elsewhere by name", "[ctr]") {
  namespace ctr = cbg::ctr;
  CHECK(ctr::parse_ctr_spec("Borders:PriorEstimation=BetaPrior", "simple_ctr").estimation ==
        ctr::prior_estimation::beta_prior);
  CHECK(ctr::parse_ctr_spec("Borders:PriorEstimation=No", "simple_ctr").estimation == ctr::prior_estimation::no);
  const auto bad = [](const char* json) { return status_of([&] { (void)cbg::train::parse_params(json); }); };
  using cbg::status;
  CHECK(bad(R"({"simple_ctr": ["Borders:PriorEstimation=BetaPrior"]})") == status::ok);
  CHECK(bad(R"({"per_feature_ctr": ["2:Borders:PriorEstimation=BetaPrior;Counter"]})") == status::ok);
  // CatBoost's ValidateCtr: other types and combinations are invalid options.
  for (const char* type : {"Buckets", "Counter", "FeatureFreq", "BinarizedTargetMeanValue", "FloatTargetMeanValue"}) {
    const std::string json = std::string(R"({"simple_ctr": [")") + type + R"(:PriorEstimation=BetaPrior"]})";
    CHECK(bad(json.c_str()) == status::invalid_argument);
  }
  CHECK(bad(R"({"combinations_ctr": ["Borders:PriorEstimation=BetaPrior"]})") == status::invalid_argument);
  CHECK(bad(R"({"simple_ctr": ["Borders:PriorEstimation=Beta"]})") == status::invalid_argument);
}

TEST_CASE("Training with PriorEstimation=BetaPrior: the Borders CTRs carry the estimated prior", "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = cbg::test::make_cat_data(ctx, 3000, true, 41);
  auto eval = cbg::test::make_cat_data(ctx, 500, true, 42);
  // Feature 1 (3 values) keeps its own description; feature 2 (40 values) takes simple_ctr's.
  const std::string params = R"({"iterations": 30, "depth": 4, "verbose": false, "loss_function": "Logloss",
      "use_best_model": false, "simple_ctr": ["Borders:PriorEstimation=BetaPrior", "Counter"],
      "per_feature_ctr": ["1:Borders:Prior=0.3"]})";
  const auto [m, last_eval] = cbg::test::train_with_eval(*learn->pool, params, *eval->pool);

  // The estimate from the learn rows' counts of feature 2 (ids in order of first appearance, class 1:
  // label 1), computed here from the data.
  std::vector<std::int32_t> order, counts;
  for (std::int64_t r = 0; r < learn->rows; ++r) {
    const std::int32_t v = learn->b[static_cast<std::size_t>(r)];
    std::size_t id = 0;
    while (id < order.size() && order[id] != v) ++id;
    if (id == order.size()) {
      order.push_back(v);
      counts.resize(counts.size() + 2, 0);
    }
    ++counts[2 * id + (learn->label[static_cast<std::size_t>(r)] > 0.5f ? 1 : 0)];
  }
  const beta_prior b = estimate_beta_prior(counts.data(), order.size());
  int estimated = 0, own = 0;
  for (const cbg::model::ctr_feature& f : m.ctr_features) {
    if (f.ctr.base.type != cbg::model::ctr_type::borders) continue;
    REQUIRE(f.ctr.base.proj.cat_features.size() == 1);
    if (f.ctr.base.proj.cat_features[0] == 1) {  // per-type index of flat feature 2
      CHECK(f.ctr.prior_num == static_cast<float>(b.alpha));
      CHECK(f.ctr.prior_denom == static_cast<float>(b.alpha + b.beta));
      ++estimated;
    } else {
      CHECK(f.ctr.prior_num == 0.3f);
      CHECK(f.ctr.prior_denom == 1.f);
      ++own;
    }
  }
  CHECK(estimated > 0);
  CHECK(own > 0);
  // The model's eval predictions are the trainer's (Logloss).
  std::vector<std::uint32_t> cats;
  for (std::int64_t r = 0; r < eval->rows; ++r) {
    cats.push_back(cbg::model::cat_hash_int(eval->a[static_cast<std::size_t>(r)]));
    cats.push_back(cbg::model::cat_hash_int(eval->b[static_cast<std::size_t>(r)]));
  }
  const std::vector<double> pred = cbg::test::predict_raw(m, eval->x.data(), cats, 2, eval->rows);
  CHECK(std::fabs(cbg::test::mean_logloss(pred, eval->label) - last_eval) < 1e-6);
}

TEST_CASE("PriorEstimation=BetaPrior with several target classes keeps the description's priors, as CatBoost",
          "[ctr]") {
  auto ctx = make_context(CBG_DEVICE_CPU);
  auto learn = cbg::test::make_cat_data(ctx, 1500, true, 43, false, 3);
  const std::string params = R"({"iterations": 10, "depth": 4, "verbose": false, "loss_function": "MultiClass",
      "simple_ctr": ["Borders:PriorEstimation=BetaPrior:Prior=0.25/2"]})";
  const cbg::model::model m = cbg::train::train(*learn->pool, cbg::train::parse_params(params), {});
  REQUIRE(!m.ctr_features.empty());
  for (const cbg::model::ctr_feature& f : m.ctr_features) {
    CHECK(f.ctr.prior_num == 0.25f);
    CHECK(f.ctr.prior_denom == 2.f);
  }
}

TEST_CASE("GPU training with PriorEstimation=BetaPrior equals the host reference byte for byte", "[ctr][gpu]") {
  CBG_REQUIRE_GPU();
  auto cpu = make_context(CBG_DEVICE_CPU);
  auto gpu = make_context(0);
  for (const bool binary : {true, false}) {
    auto host_data = cbg::test::make_cat_data(cpu, 5000, binary, 44);
    auto device_data = cbg::test::make_cat_data(gpu, 5000, binary, 44, true);  // the GPU CTR path
    const std::string params = std::string(R"({"iterations": 20, "depth": 5, "verbose": false, "loss_function": ")") +
                               (binary ? "Logloss" : "RMSE") +
                               R"(", "simple_ctr": ["Borders:PriorEstimation=BetaPrior", "Counter"]})";
    const cbg::model::model a = cbg::train::train(*host_data->pool, cbg::train::parse_params(params), {});
    const cbg::model::model c = cbg::train::train(*device_data->pool, cbg::train::parse_params(params), {});
    CHECK(cbg::model::write_cbm(a) == cbg::model::write_cbm(c));
    bool estimated = false;
    for (const auto& f : a.ctr_features) {
      estimated = estimated || (f.ctr.base.type == cbg::model::ctr_type::borders && f.ctr.prior_denom != 1.f);
    }
    CHECK(estimated);
  }
}
