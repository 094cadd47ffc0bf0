// SPDX-License-Identifier: Apache-2.0
// The model-size regularization of CTR features (ctr_size_penalty.hpp).
#include "src/train/ctr_size_penalty.hpp"

#include <algorithm>
#include <cmath>

#include "cbg/ctr/unique_values.hpp"

namespace cbg::train {

ctr_size_penalty::ctr_size_penalty(const ctr::prepared_data* cat, std::int64_t pool_features, std::int64_t rows,
                                   double reg)
    : reg_(reg), pool_features_(pool_features) {
  unique_.assign(static_cast<std::size_t>(std::max<std::int64_t>(pool_features, 0)), 0);
  used_.assign(unique_.size(), false);
  if (cat == nullptr || !(reg > 0.0)) return;
  const std::vector<std::uint64_t> cat_unique = ctr::cat_unique_values(*cat);
  for (std::size_t k = 0; k < cat->derived.size(); ++k) {
    const ctr::derived_feature& d = cat->derived[k];
    const auto f = static_cast<std::size_t>(cat->float_count) + k;
    if (d.kind != ctr::derived_kind::ctr || f >= unique_.size()) continue;
    unique_[f] = std::max<std::uint64_t>(1, ctr::projection_unique_values(d.ctr.base.proj, cat_unique, rows));
    active_ = true;
  }
}

float ctr_size_penalty::weight(std::uint64_t u, std::uint64_t u_max) const {
  // CatBoost's arithmetic: the ratio in float, the power in double, the weight kept as a float.
  const float ratio = static_cast<float>(u) / static_cast<float>(u_max);
  return static_cast<float>(std::pow(1.0f + ratio, -reg_));
}

std::uint64_t ctr_size_penalty::pool_max_unused() const {
  std::uint64_t m = 1;
  for (std::size_t f = 0; f < unique_.size(); ++f) {
    if (unique_[f] != 0 && !used_[f]) m = std::max(m, unique_[f]);
  }
  return m;
}

std::vector<float> ctr_size_penalty::pool_weights() const {
  if (!active_) return {};
  const std::uint64_t u_max = pool_max_unused();
  std::vector<float> w(unique_.size(), 1.0f);
  for (std::size_t f = 0; f < unique_.size(); ++f) {
    if (unique_[f] != 0 && !used_[f]) w[f] = weight(unique_[f], u_max);
  }
  return w;
}

std::vector<float> ctr_size_penalty::column_weights(const search_extension& ext, const std::vector<split>& chosen,
                                                    std::size_t count) const {
  if (!active_) return {};
  const auto in_model = [&](std::int32_t id) {
    if (id < 0) return false;
    if (used_columns_.count(id) != 0) return true;
    return std::any_of(chosen.begin(), chosen.end(), [&](const split& s) { return s.feature == id; });
  };
  std::vector<std::uint64_t> u(count, 0);
  std::uint64_t u_max = pool_max_unused();
  for (std::size_t k = 0; k < count; ++k) {
    if (in_model(ext.column_feature(k))) continue;
    u[k] = std::max<std::uint64_t>(1, ext.column_unique_values(k));
    u_max = std::max(u_max, u[k]);
  }
  std::vector<float> w(count, 1.0f);
  for (std::size_t k = 0; k < count; ++k) {
    if (u[k] != 0) w[k] = weight(u[k], u_max);
  }
  return w;
}

void ctr_size_penalty::add_tree(const std::vector<split>& splits) {
  if (!active_) return;
  for (const split& s : splits) {
    if (s.feature < 0) continue;
    if (s.feature < pool_features_) {
      used_[static_cast<std::size_t>(s.feature)] = true;
    } else {
      used_columns_.insert(s.feature);
    }
  }
}

}  // namespace cbg::train
