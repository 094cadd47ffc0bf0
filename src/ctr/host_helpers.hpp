// SPDX-License-Identifier: Apache-2.0
// What the host reference paths of the CTR engine share (prepare_host.cpp, combinations.cpp): the
// visiting order of the ordered statistics, and a CTR table as the evaluator reads it with what a
// CTR feature computes from it (model/apply_math.hpp). Internal (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "cbg/ctr/ctr_math.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/model/model.hpp"

namespace cbg::ctr {

// The rows in the order of permutation `rule` (ascending (permutation_key, row)).
inline std::vector<std::uint32_t> permutation_order(const permutation_rule& rule, std::int64_t rows) {
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r)
    keys[static_cast<std::size_t>(r)] = permutation_key(rule, static_cast<std::uint64_t>(r));
  std::vector<std::uint32_t> order(static_cast<std::size_t>(rows));
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return keys[a] != keys[b] ? keys[a] < keys[b] : a < b; });
  return order;
}

inline model::ctr_table_view table_view_of(const model::ctr_table& t) {
  model::ctr_table_view v;
  v.hashes = t.bucket_hashes.data();
  v.indices = t.bucket_indices.data();
  v.n_buckets = t.bucket_hashes.size();
  v.means = t.means.data();
  v.counts = t.counts.data();
  v.counter_denominator = t.counter_denominator;
  v.target_classes_count = t.target_classes_count;
  return v;
}

inline model::ctr_calc ctr_calc_of(const model::ctr_description& d) {
  model::ctr_calc c;
  c.type = d.base.type;
  c.target_border_idx = d.target_border_idx;
  c.prior_num = d.prior_num;
  c.prior_denom = d.prior_denom;
  c.shift = d.shift;
  c.scale = d.scale;
  return c;
}

}  // namespace cbg::ctr
