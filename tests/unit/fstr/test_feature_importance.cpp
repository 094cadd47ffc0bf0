// SPDX-License-Identifier: Apache-2.0
// Properties of the feature importances on random models (the values themselves are checked against
// the catboost package in tests/python/test_feature_importance.py): SHAP values add up to the raw
// prediction, PredictionValuesChange and Interaction to 100, and missing leaf weights are refused.
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/fstr/feature_importance.hpp"
#include "support/catch.hpp"
#include "support/random_model.hpp"

namespace {

using namespace cbg;

struct case_data {
  model::model m;
  fstr::pool_leaves rows;
};

case_data make_case(int dim, int n_cat, int n_ctr, std::uint64_t seed) {
  test::random_model_spec s;
  s.dim = dim;
  s.n_cat = n_cat;
  s.n_one_hot = n_cat > 0 ? 1 : 0;
  s.n_ctr = n_ctr;
  s.n_trees = 12;
  s.bias = true;
  s.loss = dim > 1 ? "MultiClassOneVsAll" : "RMSE";
  s.seed = seed;
  case_data c{test::random_model(s), {}};
  std::mt19937_64 rng(seed + 100);
  std::uniform_real_distribution<double> weight(0.1, 3.0);
  std::size_t leaves = 0;
  for (std::int32_t d : c.m.tree_sizes) leaves += std::size_t{1} << d;
  c.m.leaf_weights.resize(leaves);
  for (double& w : c.m.leaf_weights) w = weight(rng);
  c.rows.rows = 50;
  for (std::size_t r = 0; r < c.rows.rows; ++r) {
    for (std::int32_t d : c.m.tree_sizes) {
      c.rows.leaves.push_back(static_cast<std::uint32_t>(rng() % (std::uint64_t{1} << d)));
    }
  }
  return c;
}

}  // namespace

TEST_CASE("SHAP values of a row add up to its raw prediction", "[fstr]") {
  for (const auto& [dim, cats, ctrs] : {std::tuple{1, 0, 0}, std::tuple{1, 3, 4}, std::tuple{3, 2, 3}}) {
    const case_data c = make_case(dim, cats, ctrs, 7 + static_cast<std::uint64_t>(dim + cats));
    const auto features = static_cast<std::int64_t>(c.m.flat_feature_count());
    std::vector<double> shap(c.rows.rows * static_cast<std::size_t>(dim) * static_cast<std::size_t>(features + 1));
    fstr::shap_values(c.m, fstr::shap_leaf_weights(c.m, nullptr), c.rows, features, shap.data());
    const std::size_t trees = c.m.tree_count();
    for (std::size_t r = 0; r < c.rows.rows; ++r) {
      for (int k = 0; k < dim; ++k) {
        double raw = c.m.bias[static_cast<std::size_t>(k)];
        std::size_t first = 0;
        for (std::size_t t = 0; t < trees; ++t) {
          raw += c.m.leaf_values[(first + c.rows.leaves[r * trees + t]) * static_cast<std::size_t>(dim) +
                                 static_cast<std::size_t>(k)];
          first += std::size_t{1} << c.m.tree_sizes[t];
        }
        double sum = 0;
        const double* row = shap.data() + (r * static_cast<std::size_t>(dim) + static_cast<std::size_t>(k)) *
                                              static_cast<std::size_t>(features + 1);
        for (std::int64_t j = 0; j <= features; ++j) sum += row[j];
        CHECK(sum == Approx(raw).margin(1e-9));
      }
    }
  }
}

TEST_CASE("PredictionValuesChange and Interaction are shares of 100", "[fstr]") {
  const case_data c = make_case(1, 3, 4, 11);
  const std::vector<double> pvc = fstr::prediction_values_change(c.m, c.m.leaf_weights);
  double total = 0;
  for (double v : pvc) {
    CHECK(v >= 0);
    total += v;
  }
  CHECK(total == Approx(100.0).margin(1e-9));
  const std::vector<double> counted = fstr::prediction_values_change(c.m, fstr::pool_leaf_weights(c.m, c.rows));
  CHECK(counted != pvc);  // the pool's leaf counts replace the model's weights

  const case_data numeric = make_case(1, 0, 0, 12);
  double pairs = 0;
  for (const auto& p : fstr::interaction(numeric.m)) {
    CHECK(p.first < p.second);
    pairs += p.score;
  }
  CHECK(pairs == Approx(100.0).margin(1e-9));
}

TEST_CASE("feature importances refuse what they cannot compute", "[fstr]") {
  case_data c = make_case(1, 0, 0, 13);
  c.m.leaf_weights.clear();
  CHECK_THROWS_AS(fstr::prediction_values_change(c.m, c.m.leaf_weights), cbg::error);
  CHECK_THROWS_AS(fstr::shap_leaf_weights(c.m, nullptr), cbg::error);
  CHECK(fstr::shap_leaf_weights(c.m, &c.rows).size() == fstr::pool_leaf_weights(c.m, c.rows).size());
}
