// SPDX-License-Identifier: Apache-2.0
// Distinct-value bounds of CTR projections (unique_values.hpp).
#include "cbg/ctr/unique_values.hpp"

#include <algorithm>

namespace cbg::ctr {

std::vector<std::uint64_t> cat_unique_values(const prepared_data& prepared) {
  std::vector<std::uint64_t> out(prepared.cat_flat.size(), 0);
  for (const model::ctr_table& t : prepared.tables) {
    const model::projection& p = t.base.proj;
    if (p.cat_features.size() != 1 || !p.float_splits.empty() || !p.one_hot_splits.empty()) continue;
    const auto c = static_cast<std::size_t>(p.cat_features[0]);
    if (c < out.size()) out[c] = std::max<std::uint64_t>(out[c], t.key_count());
  }
  return out;
}

std::uint64_t projection_unique_values(const model::projection& proj, const std::vector<std::uint64_t>& cat_unique,
                                       std::int64_t rows) {
  const auto cap = static_cast<std::uint64_t>(std::max<std::int64_t>(rows, 1));
  const std::size_t bits = proj.float_splits.size() + proj.one_hot_splits.size();
  std::uint64_t u = bits >= 63 ? cap : std::min(cap, std::uint64_t{1} << bits);
  for (std::int32_t c : proj.cat_features) {
    const std::uint64_t n =
        static_cast<std::size_t>(c) < cat_unique.size() ? cat_unique[static_cast<std::size_t>(c)] : 0;
    // Saturate at the cap (u <= cap < 2^63, so u * n overflows only when n > cap / u).
    u = n != 0 && u > cap / n ? cap : std::min(cap, u * n);
  }
  return u;
}

}  // namespace cbg::ctr
