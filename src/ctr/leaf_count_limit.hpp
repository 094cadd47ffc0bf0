// SPDX-License-Identifier: Apache-2.0
// CatBoost's ctr_leaf_count_limit on the host path (its CPU trainer's ComputeReindexHash,
// online_ctr.cpp): a projection with more distinct learn values than the limit keeps the most
// frequent `limit` of them; the learn rows of the others join the least frequent value kept (its
// table entry counts them, so the ordered statistics and the model's table see them there), and the
// others are not table keys (the model, and the eval rows in training, see them as unseen values).
// The rows counted are the learn rows. CatBoost ranks the values with std::nth_element over its hash
// table's iteration order (which depends on its permutation of the rows): which value is kept at a
// tie and, at times, which kept value the others join follow that order, not replicated here (the
// value seen first in the learn rows ranks first among equal counts; the others join the last kept
// by rank, CatBoost's usual outcome). Internal (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace cbg::ctr {

// Applies `limit` to a projection's dense ids (`ids` per learn row, `keys` per id, ids numbered in
// order of first appearance). Returns whether it changed them: then `keys` holds the kept values in
// their former order and `ids` their new ids.
template <class Key>
bool apply_leaf_count_limit(std::vector<std::uint32_t>& ids, std::vector<Key>& keys, std::uint64_t limit) {
  if (keys.size() <= limit) return false;
  std::vector<std::uint64_t> counts(keys.size(), 0);
  for (std::uint32_t id : ids) ++counts[id];
  // The ids by count, descending; stable: among equal counts the one seen first ranks first.
  std::vector<std::uint32_t> rank(keys.size());
  std::iota(rank.begin(), rank.end(), 0u);
  std::stable_sort(rank.begin(), rank.end(), [&](std::uint32_t a, std::uint32_t b) { return counts[a] > counts[b]; });
  std::vector<bool> kept(keys.size(), false);
  for (std::uint64_t k = 0; k < limit; ++k) kept[rank[k]] = true;
  // New ids for the kept values in their former order; the rest map to the last one kept by rank.
  std::vector<std::uint32_t> new_id(keys.size(), 0);
  std::vector<Key> kept_keys;
  kept_keys.reserve(static_cast<std::size_t>(limit));
  for (std::size_t id = 0; id < keys.size(); ++id) {
    if (!kept[id]) continue;
    new_id[id] = static_cast<std::uint32_t>(kept_keys.size());
    kept_keys.push_back(keys[id]);
  }
  const std::uint32_t merged_into = new_id[rank[limit - 1]];
  for (std::size_t id = 0; id < keys.size(); ++id) {
    if (!kept[id]) new_id[id] = merged_into;
  }
  for (std::uint32_t& id : ids) id = new_id[id];
  keys = std::move(kept_keys);
  return true;
}

}  // namespace cbg::ctr
