// SPDX-License-Identifier: Apache-2.0
#include "src/ctr/unseen_keys.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace cbg::ctr {

unseen_keys unseen_keys_in_order(const std::vector<std::uint64_t>& keys, const std::vector<std::uint32_t>& first_rows,
                                 const std::vector<std::int32_t>& counts) {
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first_rows[a] < first_rows[b]; });
  unseen_keys u;
  u.keys.reserve(keys.size());
  u.counts.reserve(keys.size());
  for (std::size_t i : order) {
    u.keys.push_back(keys[i]);
    u.counts.push_back(counts[i]);
  }
  return u;
}

unseen_keys unseen_keys_of_rows(const std::vector<std::uint64_t>& marked) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> first;
  std::vector<std::int32_t> counts;
  for (std::size_t r = 0; r < marked.size(); ++r) {
    if (marked[r] == model::ctr_empty_hash) continue;
    const auto [it, added] = index.emplace(marked[r], keys.size());
    if (added) {
      keys.push_back(marked[r]);
      first.push_back(static_cast<std::uint32_t>(r));
      counts.push_back(0);
    }
    ++counts[it->second];
  }
  return unseen_keys_in_order(keys, first, counts);
}

void add_unseen_keys(model::ctr_table& t, const unseen_keys& u) {
  if (u.keys.empty()) return;
  // The table's keys by index, from its buckets, then the new ones.
  std::vector<std::uint64_t> keys(t.counts.size());
  for (std::size_t pos = 0; pos < t.bucket_hashes.size(); ++pos) {
    if (t.bucket_hashes[pos] != model::ctr_empty_hash) keys[t.bucket_indices[pos]] = t.bucket_hashes[pos];
  }
  keys.insert(keys.end(), u.keys.begin(), u.keys.end());
  t.counts.insert(t.counts.end(), u.counts.begin(), u.counts.end());
  model::build_ctr_buckets(keys, t);
}

}  // namespace cbg::ctr
