// SPDX-License-Identifier: Apache-2.0
// Feature slices of the sharded tree search's feature-parallel scoring (dist.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"

namespace cbg::dist {

feature_slices slice_features(const std::vector<std::int64_t>& offset, std::int64_t total_columns, int ranks) {
  CBG_EXPECTS(ranks >= 1, status::invalid_argument, fmt::format("slice_features: {} ranks", ranks));
  const auto nf = static_cast<std::int64_t>(offset.size());
  // The first column of feature f; f == nf: the end.
  const auto col = [&](std::int64_t f) { return f < nf ? offset[static_cast<std::size_t>(f)] : total_columns; };
  for (std::int64_t f = 0; f < nf; ++f) {
    CBG_EXPECTS(col(f) >= (f == 0 ? 0 : col(f - 1)) && col(f) <= total_columns, status::invalid_argument,
                fmt::format("slice_features: feature {}'s first column {} is out of order", f, col(f)));
  }
  feature_slices s;
  s.begin.assign(static_cast<std::size_t>(ranks) + 1, nf);
  s.begin[0] = 0;
  // Each inner boundary at the feature whose first column is nearest to an even share (ties: the
  // lower feature), never before the previous boundary.
  std::int64_t f = 0;
  for (int r = 1; r < ranks; ++r) {
    const double target = static_cast<double>(total_columns) * r / ranks;
    const auto distance = [&](std::int64_t g) { return std::abs(static_cast<double>(col(g)) - target); };
    while (f < nf && static_cast<double>(col(f + 1)) <= target) ++f;
    if (f < nf && distance(f + 1) < distance(f)) ++f;
    s.begin[static_cast<std::size_t>(r)] = f;
  }
  s.column.resize(s.begin.size());
  for (std::size_t r = 0; r < s.begin.size(); ++r) s.column[r] = col(s.begin[r]);
  for (int r = 0; r < ranks; ++r) {
    s.width = std::max(s.width, s.column[static_cast<std::size_t>(r) + 1] - s.column[static_cast<std::size_t>(r)]);
  }
  return s;
}

}  // namespace cbg::dist
