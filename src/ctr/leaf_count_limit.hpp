// SPDX-License-Identifier: Apache-2.0
// CatBoost's ctr_leaf_count_limit on the host path (its CPU trainer's ComputeReindexHash,
// online_ctr.cpp): a projection with more distinct learn values than the limit keeps `limit` of the
// most frequent; the learn rows of the others join one kept value (its table entry counts them, so
// the ordered statistics and the model's table see them there), and they are not table keys (the
// model, and the eval rows in training, see them as unseen values). The rows counted are the learn
// rows.
//
// CatBoost's choice at equal counts, and of the kept value the others join, follows its hash table's
// order and its standard library's nth_element (the least frequent kept value with up to 7 values,
// not always beyond). Here the rule is fixed and portable: the most frequent first, at equal counts
// the value seen first; the others join the least frequent kept value (at equal counts the one seen
// last). Tables equal CatBoost's wherever its choice is the same (tests/python/test_ctr_leaf_count_limit.py).
// Internal (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace cbg::ctr {

// Applies `limit` to a projection's dense ids: `ids` per learn row, `unique` of them, numbered in
// order of first appearance. Returns the old ids kept, in their former order (empty: at most `limit`
// values, nothing changed), and rewrites `ids` to the new ids (positions in that list).
inline std::vector<std::uint32_t> apply_leaf_count_limit(std::vector<std::uint32_t>& ids, std::size_t unique,
                                                         std::uint64_t limit) {
  if (unique <= limit) return {};
  std::vector<std::uint64_t> counts(unique, 0);
  for (std::uint32_t id : ids) ++counts[id];
  // Ids are numbered in order of first appearance: a stable sort keeps that order at equal counts.
  std::vector<std::uint32_t> by_count(unique);
  std::iota(by_count.begin(), by_count.end(), 0U);
  std::stable_sort(by_count.begin(), by_count.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return counts[a] > counts[b]; });
  std::vector<bool> kept(unique, false);
  for (std::size_t k = 0; k < limit; ++k) kept[by_count[k]] = true;
  std::vector<std::uint32_t> kept_ids, new_id(unique, 0);
  for (std::uint32_t id = 0; id < unique; ++id) {
    if (!kept[id]) continue;
    new_id[id] = static_cast<std::uint32_t>(kept_ids.size());
    kept_ids.push_back(id);
  }
  const std::uint32_t joined = new_id[by_count[static_cast<std::size_t>(limit) - 1]];
  for (std::uint32_t id = 0; id < unique; ++id) {
    if (!kept[id]) new_id[id] = joined;
  }
  for (std::uint32_t& id : ids) id = new_id[id];
  return kept_ids;
}

}  // namespace cbg::ctr
