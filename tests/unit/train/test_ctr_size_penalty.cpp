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

// One float feature, categorical features 0 (10 learn values) and 1 (100), a CTR column of each
// and a one-hot column: pool features 0 (float), 1 (CTR of 0), 2 (CTR of 1), 3 (one-hot).
ctr::prepared_data prepared() {
  ctr::prepared_data d;
  d.float_count = 1;
  d.float_flat = {0};
  d.cat_flat = {1, 2};
  for (std::int32_t c = 0; c < 2; ++c) {
    ctr::derived_feature f;
    f.kind = ctr::derived_kind::ctr;
    f.cat_index = c;
    f.ctr.base.proj = single(c);
    f.ctr.base.type = cm::ctr_type::counter;
    d.derived.push_back(f);
    cm::ctr_table t;
    t.base = f.ctr.base;
    t.counts.assign(c == 0 ? 10 : 100, 1);
    d.tables.push_back(t);
  }
  ctr::derived_feature oh;
  oh.kind = ctr::derived_kind::one_hot;
  d.derived.push_back(oh);
  return d;
}

float catboost_weight(double u, double u_max, double reg) {
  return static_cast<float>(std::pow(1.0f + static_cast<float>(u) / static_cast<float>(u_max), -reg));
}

// An extension whose last candidates are given columns (projection bound, committed id).
class fake_extension final : public tr::search_extension {
 public:
  std::vector<std::uint64_t> unique;
  std::vector<std::int32_t> ids;
  void set_nan_modes(const std::vector<std::uint8_t>&) override {}
  std::vector<column> candidates(const std::vector<tr::split>&,
                                 const std::function<float(std::int32_t, std::int32_t)>&) override {
    return {};
  }
  std::int32_t commit(std::size_t k) override { return ids[k]; }
  [[nodiscard]] float border(std::int32_t, std::int32_t) const override { return 0.0f; }
  [[nodiscard]] const float* eval_values(std::int32_t) const override { return nullptr; }
  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override { return unique[k]; }
  [[nodiscard]] std::int32_t column_feature(std::size_t k) const override { return ids[k]; }
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

TEST_CASE("model_size_reg: CatBoost's weights of CTR features not in the model", "[train][ctr]") {
  const ctr::prepared_data d = prepared();
  tr::ctr_size_penalty none(&d, 4, 1000, 0.0);
  CHECK_FALSE(none.active());
  CHECK(none.pool_weights().empty());

  tr::ctr_size_penalty pen(&d, 4, 1000, 0.5);
  REQUIRE(pen.active());
  // u_max: the larger unused CTR (100); float and one-hot features weigh 1.
  CHECK(pen.pool_weights() ==
        std::vector<float>{1.0f, catboost_weight(10, 100, 0.5), catboost_weight(100, 100, 0.5), 1.0f});
  CHECK(pen.pool_weights()[2] == Approx(1.0 / std::sqrt(2.0)).epsilon(1e-6));

  // Combination columns of a level: u_max over the pool's unused CTRs and the level's unused columns;
  // a column committed earlier and in the tree or the model weighs 1.
  fake_extension ext;
  ext.unique = {1000, 50, 400};
  ext.ids = {-1, 9, 8};
  CHECK(pen.column_weights(ext, {}, 3) == std::vector<float>{catboost_weight(1000, 1000, 0.5),
                                                             catboost_weight(50, 1000, 0.5),
                                                             catboost_weight(400, 1000, 0.5)});
  CHECK(pen.column_weights(ext, {{9, 0}}, 3)[1] == 1.0f);

  // The tree with CTR feature 2 and column 8 joined the model: u_max is now 10 for the pool.
  pen.add_tree({{2, 3}, {0, 1}, {8, 0}});
  CHECK(pen.pool_weights() == std::vector<float>{1.0f, catboost_weight(10, 10, 0.5), 1.0f, 1.0f});
  const std::vector<float> cols = pen.column_weights(ext, {}, 3);
  CHECK(cols == std::vector<float>{catboost_weight(1000, 1000, 0.5), catboost_weight(50, 1000, 0.5), 1.0f});
}
