// SPDX-License-Identifier: Apache-2.0
// A rank's rows of what was prepared over every rank's rows (all_rows.hpp): views, nothing copied.
#include <utility>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/dist/all_rows.hpp"

namespace cbg::dist {

namespace {

// Rows [first, first + count) of `c`.
column_view rows_of(const column_view& c, std::int64_t first, std::int64_t count) {
  column_view r = c;
  r.data = static_cast<const unsigned char*>(c.data) + first * c.stride * static_cast<std::int64_t>(size_of(c.type));
  r.size = count;
  return r;
}

class rank_rows final : public train::search_extension {
 public:
  rank_rows(std::unique_ptr<train::search_extension> all, std::int64_t learn_first, std::int64_t eval_first)
      : all_(std::move(all)), learn_first_(learn_first), eval_first_(eval_first) {}

  void set_nan_modes(const std::vector<std::uint8_t>& modes) override { all_->set_nan_modes(modes); }
  std::vector<column> candidates(const std::vector<train::split>& chosen,
                                 const std::function<float(std::int32_t, std::int32_t)>& float_border) override {
    std::vector<column> columns = all_->candidates(chosen, float_border);
    for (column& c : columns) c.bins += learn_first_;
    return columns;
  }
  std::int32_t commit(std::size_t k) override { return all_->commit(k); }
  [[nodiscard]] float border(std::int32_t feature, std::int32_t bin) const override {
    return all_->border(feature, bin);
  }
  [[nodiscard]] const float* eval_values(std::int32_t feature) const override {
    const float* v = all_->eval_values(feature);
    return v != nullptr ? v + eval_first_ : nullptr;
  }
  [[nodiscard]] std::uint64_t column_unique_values(std::size_t k) const override {
    return all_->column_unique_values(k);
  }
  [[nodiscard]] const model::ctr_base* column_base(std::size_t k) const override { return all_->column_base(k); }
  void before_column_reduce(int level) override { all_->before_column_reduce(level); }

 private:
  std::unique_ptr<train::search_extension> all_;
  std::int64_t learn_first_, eval_first_;
};

}  // namespace

std::unique_ptr<pool> rank_part(const pool& all, const pool& own, const std::vector<std::int32_t>& float_flat,
                                std::int64_t first) {
  const auto floats = static_cast<std::int64_t>(float_flat.size());
  const std::int64_t count = own.num_rows();
  CBG_EXPECTS(
      all.num_features() >= floats && first >= 0 && first + count <= all.num_rows(), status::internal,
      fmt::format("rank_part: rows [{}, {}) of a prepared pool of {} rows", first, first + count, all.num_rows()));
  std::vector<column_view> derived;
  for (std::int64_t j = floats; j < all.num_features(); ++j) {
    derived.push_back(rows_of(all.features()[static_cast<std::size_t>(j)], first, count));
  }
  return ctr::derived_pool(own, float_flat, derived);
}

std::unique_ptr<train::search_extension> rank_rows_extension(std::unique_ptr<train::search_extension> all,
                                                             std::int64_t learn_first, std::int64_t eval_first) {
  CBG_EXPECTS(all != nullptr && learn_first >= 0 && eval_first >= 0, status::internal, "rank_rows_extension: bad call");
  return std::make_unique<rank_rows>(std::move(all), learn_first, eval_first);
}

}  // namespace cbg::dist
