// SPDX-License-Identifier: Apache-2.0
// Categorical features over several processes, host side (src/dist/all_rows.hpp): a rank's part of
// the pools prepared over every rank's rows (its own float columns, its rows of the derived ones,
// its label, weight and baseline) and of the feature combinations' columns and eval values. The
// gathers themselves run on the GPU (tests/unit/dist/test_dist_gpu.cpp).
#include <cstdint>
#include <memory>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/runtime/context.hpp"
#include "src/dist/all_rows.hpp"
#include "support/catch.hpp"

namespace {

std::shared_ptr<cbg::context> cpu_context() {
  cbg::context_options o;
  o.device = cbg::cpu_device;
  return cbg::context::create(o);
}

cbg::column_view host_column(const float* data, std::int64_t rows, std::int64_t stride = 1) {
  cbg::column_view c;
  c.data = data;
  c.type = cbg::dtype::float32;
  c.size = rows;
  c.stride = stride;
  return c;
}

cbg::tensor_view host_vector(const float* data, std::int64_t rows) {
  cbg::tensor_view t;
  t.data = data;
  t.rank = 1;
  t.shape[0] = rows;
  t.strides[0] = 1;
  return t;
}

float at(const cbg::column_view& c, std::int64_t i) { return static_cast<float>(c.value(i)); }

// A search extension over `rows` learn rows and `eval_rows` eval rows: bins and eval values are the
// row numbers; it records what was forwarded to it.
class counting_extension final : public cbg::train::search_extension {
 public:
  counting_extension(std::int64_t rows, std::int64_t eval_rows) : bins_(static_cast<std::size_t>(rows)) {
    for (std::size_t i = 0; i < bins_.size(); ++i) bins_[i] = static_cast<std::uint8_t>(i);
    for (std::int64_t i = 0; i < eval_rows; ++i) eval_.push_back(static_cast<float>(i));
  }
  void set_nan_modes(const std::vector<std::uint8_t>& modes) override { modes_ = modes; }
  std::vector<column> candidates(const std::vector<cbg::train::split>&,
                                 const std::function<float(std::int32_t, std::int32_t)>&) override {
    return {column{bins_.data(), 7}, column{bins_.data(), 9}};
  }
  std::int32_t commit(std::size_t k) override { return 100 + static_cast<std::int32_t>(k); }
  [[nodiscard]] float border(std::int32_t feature, std::int32_t bin) const override {
    return static_cast<float>(feature) + 0.5f * static_cast<float>(bin);
  }
  [[nodiscard]] const float* eval_values(std::int32_t) const override { return eval_.empty() ? nullptr : eval_.data(); }
  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override { return 10 + k; }
  void before_column_reduce(int level) override { reduced_ = level; }

  std::vector<std::uint8_t> bins_, modes_;
  std::vector<float> eval_;
  int reduced_ = -1;
};

}  // namespace

TEST_CASE("rank_part: the rank's own float columns, then its rows of the derived columns", "[dist]") {
  auto ctx = cpu_context();
  // Every rank's rows (10): a float column (the prepared pool's first) and two derived columns, one
  // strided (every second value of a buffer).
  const std::int64_t total = 10;
  std::vector<float> all_float(total, -1.f), derived_a(total), derived_b(2 * total);
  for (std::int64_t i = 0; i < total; ++i) {
    derived_a[static_cast<std::size_t>(i)] = 100.f + static_cast<float>(i);
    derived_b[static_cast<std::size_t>(2 * i)] = 200.f + static_cast<float>(i);
  }
  cbg::pool_parts all_parts;
  all_parts.features = {host_column(all_float.data(), total), host_column(derived_a.data(), total),
                        host_column(derived_b.data(), total, 2)};
  const cbg::pool all = cbg::pool::borrow(ctx, std::move(all_parts));
  // This rank's pool: rows 6..9 (a categorical column first, then its float column), label, weight.
  const std::vector<float> cats = {3, 1, 4, 1}, floats = {0.5f, 1.5f, 2.5f, 3.5f}, label = {1, 0, 1, 1},
                           weight = {2, 2, 3, 3};
  cbg::pool_parts own_parts;
  own_parts.features = {host_column(cats.data(), 4), host_column(floats.data(), 4)};
  own_parts.categorical = {true, false};
  own_parts.names = {"city", "x"};
  own_parts.label = host_vector(label.data(), 4);
  own_parts.weight = host_vector(weight.data(), 4);
  const cbg::pool own = cbg::pool::borrow(ctx, std::move(own_parts));

  const std::unique_ptr<cbg::pool> part = cbg::dist::rank_part(all, own, {1}, 6);
  REQUIRE(part->num_rows() == 4);
  REQUIRE(part->num_features() == 3);
  CHECK(part->feature_name(0) == "x");
  for (std::int64_t i = 0; i < 4; ++i) {
    CHECK(at(part->features()[0], i) == floats[static_cast<std::size_t>(i)]);
    CHECK(at(part->features()[1], i) == 106.f + static_cast<float>(i));
    CHECK(at(part->features()[2], i) == 206.f + static_cast<float>(i));
  }
  CHECK(!part->is_categorical(0));
  REQUIRE(part->label().has_value());
  CHECK(part->label()->data == label.data());
  REQUIRE(part->weight().has_value());
  CHECK(part->weight()->data == weight.data());
  CHECK(!part->baseline().has_value());
  // Rank 0's part: the first rows.
  CHECK(at(cbg::dist::rank_part(all, own, {1}, 0)->features()[1], 0) == 100.f);
  // Rows past the end of the prepared pool are a bug, not data.
  CHECK_THROWS_AS(cbg::dist::rank_part(all, own, {1}, 7), cbg::error);
}

TEST_CASE("rank_rows_extension: a rank's rows of the columns and eval values, the rest forwarded", "[dist]") {
  auto base = std::make_unique<counting_extension>(50, 20);
  counting_extension& b = *base;
  const std::unique_ptr<cbg::train::search_extension> r = cbg::dist::rank_rows_extension(std::move(base), 30, 12);
  r->set_nan_modes({1, 2});
  CHECK(b.modes_ == std::vector<std::uint8_t>{1, 2});
  const auto columns = r->candidates({}, [](std::int32_t, std::int32_t) { return 0.f; });
  REQUIRE(columns.size() == 2);
  CHECK(columns[0].bins[0] == 30);  // the rank's first learn row
  CHECK(columns[1].bins[5] == 35);
  CHECK(columns[1].border_count == 9);
  CHECK(r->commit(1) == 101);
  CHECK(r->border(101, 4) == 103.f);
  CHECK(r->eval_values(101)[0] == 12.f);  // the rank's first eval row
  CHECK(r->column_unique_values(1) == 11);
  r->before_column_reduce(3);
  CHECK(b.reduced_ == 3);
  // Without eval rows: none.
  const auto no_eval = cbg::dist::rank_rows_extension(std::make_unique<counting_extension>(50, 0), 30, 0);
  CHECK(no_eval->eval_values(100) == nullptr);
}
