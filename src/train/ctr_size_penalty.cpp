// SPDX-License-Identifier: Apache-2.0
// The model-size regularization of CTR features (ctr_size_penalty.hpp).
#include "src/train/ctr_size_penalty.hpp"

#include <algorithm>
#include <cmath>

#include "cbg/ctr/unique_values.hpp"

namespace cbg::train {

ctr_size_penalty::ctr_size_penalty(const ctr::prepared_data* cat, std::int64_t pool_features, std::int64_t rows,
                                   double reg)
    : cat_(cat), reg_(reg) {
  unique_.assign(static_cast<std::size_t>(std::max<std::int64_t>(pool_features, 0)), 0);
  if (cat == nullptr || !(reg > 0.0)) return;
  const std::vector<std::uint64_t> cat_unique = ctr::cat_unique_values(*cat);
  for (std::size_t k = 0; k < cat->derived.size(); ++k) {
    const ctr::derived_feature& d = cat->derived[k];
    const auto f = static_cast<std::size_t>(cat->float_count) + k;
    if (d.kind != ctr::derived_kind::ctr || f >= unique_.size()) continue;
    unique_[f] = std::max<std::uint64_t>(1, ctr::projection_unique_values(d.ctr.base.proj, cat_unique, rows));
    pool_max_ = std::max(pool_max_, unique_[f]);
    active_ = true;
  }
}

float ctr_size_penalty::weight(std::uint64_t u, std::uint64_t u_max) const {
  // CatBoost's arithmetic: the ratio in float, the power in double, the weight kept as a float.
  const float ratio = static_cast<float>(u) / static_cast<float>(u_max);
  return static_cast<float>(std::pow(1.0f + ratio, -reg_));
}

const model::ctr_base* ctr_size_penalty::base_of(std::int32_t feature) const {
  if (cat_ == nullptr || feature < cat_->float_count) return nullptr;
  const auto k = static_cast<std::size_t>(feature - cat_->float_count);
  if (k >= cat_->derived.size() || cat_->derived[k].kind != ctr::derived_kind::ctr) return nullptr;
  return &cat_->derived[k].ctr.base;
}

std::vector<float> ctr_size_penalty::pool_weights() const {
  if (!active_) return {};
  std::vector<float> w(unique_.size(), 1.0f);
  for (std::size_t f = 0; f < unique_.size(); ++f) {
    if (unique_[f] == 0 || in_model_.count(*base_of(static_cast<std::int32_t>(f))) != 0) continue;
    w[f] = weight(unique_[f], pool_max_);
  }
  return w;
}

std::vector<float> ctr_size_penalty::column_weights(const search_extension& ext, const std::vector<split>& chosen,
                                                    std::size_t count) const {
  if (!active_) return {};
  std::vector<std::uint64_t> u(count, 0);
  std::uint64_t u_max = pool_max_;
  for (std::size_t k = 0; k < count; ++k) {
    u[k] = std::max<std::uint64_t>(1, ext.column_unique_values(k));
    u_max = std::max(u_max, u[k]);
  }
  std::vector<float> w(count, 1.0f);
  for (std::size_t k = 0; k < count; ++k) {
    const model::ctr_base* base = ext.column_base(k);
    const bool in_model = base != nullptr && (in_model_.count(*base) != 0 ||
                                              std::any_of(chosen.begin(), chosen.end(), [&](const split& s) {
                                                const model::ctr_base* b = base_of(s.feature);
                                                return b != nullptr && *b == *base;
                                              }));
    if (!in_model) w[k] = weight(u[k], u_max);
  }
  return w;
}

void ctr_size_penalty::add_tree(const std::vector<split>& splits) {
  if (!active_) return;
  for (const split& s : splits) {
    if (const model::ctr_base* b = base_of(s.feature)) in_model_.insert(*b);
  }
}

}  // namespace cbg::train
