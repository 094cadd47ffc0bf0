// SPDX-License-Identifier: Apache-2.0
// The model-size regularization of CTR features (model_size_reg): the distinct-value bounds of
// projections and CatBoost's weights (1 + u / u_max)^-model_size_reg, for the pool's CTR features
// and for feature combinations' columns, as CTR features join the model.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "cbg/ctr/features.hpp"
#include "cbg/ctr/unique_values.hpp"
#include "cbg/train/search_extension.hpp"
#include "src/train/ctr_size_penalty.hpp"
#include "support/catch.hpp"

namespace ctr = cbg::ctr;
namespace cm = cbg::model;
namespace tr = cbg::train;

namespace {

cm::projection single(std::int32_t cat) {
  cm::projection p;
  p.cat_features.push_back(cat);
  return p;
}

ctr::derived_feature ctr_feature(const cm::projection& proj, float prior) {
  ctr::derived_feature f;
  f.kind = ctr::derived_kind::ctr;
  f.cat_index = proj.cat_features.front();
  f.ctr.base.proj = proj;
  f.ctr.base.type = cm::ctr_type::borders;
  f.ctr.prior_num = prior;
  return f;
}

cm::projection combination() {
  cm::projection p = single(0);
  p.cat_features.push_back(1);
  return p;
}

// One float feature and categorical features 0 (10 learn values) and 1 (100): pool features 0
// (float), 1 (a CTR of 0), 2 and 3 (two priors of one CTR of 1, one table), 4 (one-hot); then a
// committed combination of 0 and 1 (feature 5, not a pool feature).
ctr::prepared_data prepared() {
  ctr::prepared_data d;
  d.float_count = 1;
  d.float_flat = {0};
  d.cat_flat = {1, 2};
  d.derived = {ctr_feature(single(0), 0.0f), ctr_feature(single(1), 0.0f), ctr_feature(single(1), 1.0f)};
  for (std::int32_t c = 0; c < 2; ++c) {
    cm::ctr_table t;
    t.base = d.derived[static_cast<std::size_t>(c)].ctr.base;
    t.target_classes_count = 2;
    t.counts.assign(c == 0 ? 20 : 200, 1);
    d.tables.push_back(t);
  }
  ctr::derived_feature oh;
  oh.kind = ctr::derived_kind::one_hot;
  d.derived.push_back(oh);
  d.derived.push_back(ctr_feature(combination(), 0.0f));
  return d;
}

float catboost_weight(double u, double u_max, double reg) {
  return static_cast<float>(std::pow(1.0f + static_cast<float>(u) / static_cast<float>(u_max), -reg));
}

// An extension whose last candidates are given columns (distinct-value bound, table).
class fake_extension final : public tr::search_extension {
 public:
  std::vector<std::uint64_t> unique;
  std::vector<cm::ctr_base> bases;
  void set_nan_modes(const std::vector<std::uint8_t>&) override {}
  std::vector<column> candidates(const std::vector<tr::split>&,
                                 const std::function<float(std::int32_t, std::int32_t)>&) override {
    return {};
  }
  std::int32_t commit(std::size_t) override { return -1; }
  [[nodiscard]] float border(std::int32_t, std::int32_t) const override { return 0.0f; }
  [[nodiscard]] const float* eval_values(std::int32_t) const override { return nullptr; }
  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override { return unique[k]; }
  [[nodiscard]] const cm::ctr_base* column_base(std::size_t k) const override { return &bases[k]; }
};

}  // namespace

TEST_CASE("CTR distinct-value bounds: categorical features' values times 2 per split, at most the rows",
          "[train][ctr]") {
  const ctr::prepared_data d = prepared();
  const std::vector<std::uint64_t> cats = ctr::cat_unique_values(d);
  CHECK(cats == std::vector<std::uint64_t>{10, 100});
  cm::projection p = single(0);
  CHECK(ctr::projection_unique_values(p, cats, 100000) == 10);
  p.cat_features.push_back(1);
  CHECK(ctr::projection_unique_values(p, cats, 100000) == 1000);
  p.float_splits.push_back({0, 0.5f});
  p.one_hot_splits.push_back({1, 7});
  CHECK(ctr::projection_unique_values(p, cats, 100000) == 4000);
  CHECK(ctr::projection_unique_values(p, cats, 3000) == 3000);
}

TEST_CASE("model_size_reg: CatBoost's weights of CTRs whose table is not in the model", "[train][ctr]") {
  const ctr::prepared_data d = prepared();
  tr::ctr_size_penalty none(&d, 5, 1000, 0.0);
  CHECK_FALSE(none.active());
  CHECK(none.pool_weights().empty());

  tr::ctr_size_penalty pen(&d, 5, 1000, 0.5);
  REQUIRE(pen.active());
  // u_max: the largest CTR candidate (100); float and one-hot features weigh 1.
  const float w10 = catboost_weight(10, 100, 0.5);
  const float w100 = catboost_weight(100, 100, 0.5);
  CHECK(pen.pool_weights() == std::vector<float>{1.0f, w10, w100, w100, 1.0f});
  CHECK(w100 == Approx(1.0 / std::sqrt(2.0)).epsilon(1e-6));

  // Combination columns of a level: u_max also over the level's columns; a column whose table a
  // split of the tree reads weighs 1.
  fake_extension ext;
  ext.unique = {1000, 400};
  ext.bases = {d.derived[4].ctr.base, d.derived[4].ctr.base};
  ext.bases[1].proj.float_splits.push_back({0, 0.5f});
  const std::vector<float> level = {catboost_weight(1000, 1000, 0.5), catboost_weight(400, 1000, 0.5)};
  CHECK(pen.column_weights(ext, {}, 2) == level);
  CHECK(pen.column_weights(ext, {{5, 0}}, 2) == std::vector<float>{1.0f, level[1]});

  // A tree split on feature 2 (prior 0 of the table of 1) and on the combination: the table of 1
  // is in the model for both priors, the combination's too; u_max stays the largest candidate.
  pen.add_tree({{2, 3}, {0, 1}, {5, 0}});
  CHECK(pen.pool_weights() == std::vector<float>{1.0f, w10, 1.0f, 1.0f, 1.0f});
  CHECK(pen.column_weights(ext, {}, 2) == std::vector<float>{1.0f, level[1]});
}
