// SPDX-License-Identifier: Apache-2.0
// How many distinct values a CTR feature's projection can take, as CatBoost's GPU trainer bounds it
// for the model-size regularization (model_size_reg; TBinarizedFeaturesManager::GetMaxCtrUniqueValues):
// 2^(float and one-hot splits of the projection) times the distinct values of each of its
// categorical features, at most the learn rows. The distinct values of a categorical feature are
// its simple CTR tables' keys (the learn values; CatBoost's GPU trainer counts learn and eval).
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/ctr/features.hpp"

namespace cbg::ctr {

// Per categorical feature (per-type index): its distinct learn values, from its simple CTR tables
// (0 for a feature without CTRs: one-hot or constant).
std::vector<std::uint64_t> cat_unique_values(const prepared_data& prepared);

// The bound of `proj` over `cat_unique` (cat_unique_values) and `rows` learn rows.
std::uint64_t projection_unique_values(const model::projection& proj, const std::vector<std::uint64_t>& cat_unique,
                                       std::int64_t rows);

}  // namespace cbg::ctr
