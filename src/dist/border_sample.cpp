// SPDX-License-Identifier: Apache-2.0
// The border sample of several processes (border_sample.hpp).
#include "cbg/dist/border_sample.hpp"

#include <algorithm>

#include "cbg/core/error.hpp"
#include "cbg/quantize/sampling.hpp"

namespace cbg::dist {

border_sample plan_border_sample(const row_split& split, int rank, const quantize::options& o,
                                 const quantize::feature_settings& s, std::uint64_t seed) {
  CBG_EXPECTS(rank >= 0 && rank < split.ranks(), status::internal, "plan_border_sample: rank out of range");
  const auto total = static_cast<std::uint64_t>(split.total());
  const quantize::subset_shape shape = quantize::border_subset_shape(total, o, s);
  border_sample out;
  out.size = shape.m;
  out.counts.assign(static_cast<std::size_t>(split.ranks()), 0);
  const std::int64_t first = split.first(rank), end = first + split.counts[static_cast<std::size_t>(rank)];
  // The rows, ascending: drawn as the quantizer draws them, else the first m (every row when
  // m == total).
  int k = 0;  // the rank holding `row` (rows come ascending)
  const auto take = [&](std::int64_t row) {
    while (k + 1 < split.ranks() && row >= split.first(k + 1)) ++k;
    out.counts[static_cast<std::size_t>(k)] += 1;
    if (row >= first && row < end) out.local.push_back(row - first);
  };
  if (shape.drawn) {
    for (const std::uint32_t row : quantize::border_subset(total, o.max_subset_size, seed)) take(row);
  } else {
    // Rows 0..m-1: whole ranks, then part of one; counted without a loop per row.
    std::int64_t left = shape.m;
    for (int j = 0; j < split.ranks(); ++j) {
      const std::int64_t n = std::min(left, split.counts[static_cast<std::size_t>(j)]);
      out.counts[static_cast<std::size_t>(j)] = n;
      left -= n;
      if (j == rank) {
        for (std::int64_t r = 0; r < n; ++r) out.local.push_back(r);
      }
    }
  }
  return out;
}

quantize::options sample_first_options(quantize::options o, std::uint32_t sample_size) {
  CBG_EXPECTS(sample_size > 0, status::internal, "an empty border sample");
  o.max_subset_size = sample_size;
  o.subset = quantize::subset_rule::first_rows;
  return o;
}

}  // namespace cbg::dist
