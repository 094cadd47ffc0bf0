// SPDX-License-Identifier: Apache-2.0
// CatBoost's ctr_leaf_count_limit on the host path (its CPU trainer's ComputeReindexHash,
// online_ctr.cpp): a projection with more distinct learn values than the limit keeps `limit` of the
// most frequent; the learn rows of the others join one kept value (its table entry counts them, so
// the ordered statistics and the model's table see them there), and they are not table keys (the
// model, and the eval rows in training, see them as unseen values). The rows counted are the learn
// rows.
//
// Which values are kept at a tie, and which kept value the others join, CatBoost leaves to the order
// of its hash table (TDenseHash: identity hash of the 64-bit projection key, 256 buckets to start,
// probe steps 1, 2, 3..., doubled at half load) and to libc++'s std::nth_element over the (key, count)
// pairs in that order, descending by count: the kept values are the first `limit` after it, the
// others join the last of them. Both are replicated here, the keys inserted in the order the learn
// rows first show them: CatBoost's own order when it does not permute the rows (has_time); with its
// permutation the tables are equal unless two keys' buckets collide in an order that matters.
// Internal (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace cbg::ctr {

namespace leaf_limit_detail {

struct key_count {
  std::uint64_t key;
  std::uint64_t count;
};

// CatBoost's order: "a before b" when a is more frequent.
inline bool more_frequent(const key_count& a, const key_count& b) { return a.count > b.count; }

// The (key, count) pairs in the order CatBoost's TDenseHash iterates them, the keys inserted in the
// given order.
inline std::vector<key_count> dense_hash_order(const std::vector<std::uint64_t>& keys,
                                               const std::vector<std::uint64_t>& counts) {
  constexpr std::uint64_t empty = 0;  // TDenseHash's empty marker (a key of 0 is not expected)
  std::vector<key_count> buckets(256, key_count{empty, 0});
  std::size_t filled = 0;
  const auto threshold = [](std::size_t size) { return std::max<std::size_t>(1, size / 2) - 1; };
  const auto place = [](std::vector<key_count>& b, const key_count& kc) {
    const std::size_t mask = b.size() - 1;
    std::size_t idx = static_cast<std::size_t>(kc.key) & mask;
    for (std::size_t probes = 1; b[idx].key != empty; ++probes) idx = (idx + probes) & mask;
    b[idx] = kc;
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (++filled >= threshold(buckets.size())) {  // grows before placing the new key
      std::vector<key_count> grown(buckets.size() * 2, key_count{empty, 0});
      for (const key_count& kc : buckets) {
        if (kc.key != empty) place(grown, kc);
      }
      buckets = std::move(grown);
    }
    place(buckets, key_count{keys[i], counts[i]});
  }
  std::vector<key_count> out;
  out.reserve(keys.size());
  for (const key_count& kc : buckets) {
    if (kc.key != empty) out.push_back(kc);
  }
  return out;
}

// libc++'s __sort3: sorts a[x], a[y], a[z]; returns the swaps made.
inline unsigned sort3(std::vector<key_count>& a, std::size_t x, std::size_t y, std::size_t z) {
  if (!more_frequent(a[y], a[x])) {
    if (!more_frequent(a[z], a[y])) return 0;
    std::swap(a[y], a[z]);
    if (more_frequent(a[y], a[x])) {
      std::swap(a[x], a[y]);
      return 2;
    }
    return 1;
  }
  if (more_frequent(a[z], a[y])) {
    std::swap(a[x], a[z]);
    return 1;
  }
  std::swap(a[x], a[y]);
  if (more_frequent(a[z], a[y])) {
    std::swap(a[y], a[z]);
    return 2;
  }
  return 1;
}

// libc++'s __selection_sort over [first, last).
inline void selection_sort(std::vector<key_count>& a, std::size_t first, std::size_t last) {
  for (; first + 1 < last; ++first) {
    std::size_t best = first;
    for (std::size_t j = first + 1; j < last; ++j) {
      if (more_frequent(a[j], a[best])) best = j;
    }
    if (best != first) std::swap(a[first], a[best]);
  }
}

// libc++'s std::nth_element (its __nth_element), step for step: CatBoost's wheels are built with it,
// and where equal counts land depends on the algorithm.
inline void nth_element(std::vector<key_count>& a, std::size_t first, std::size_t nth, std::size_t last) {
  constexpr std::size_t limit = 7;
  while (true) {
    if (nth == last) return;
    const std::size_t len = last - first;
    if (len <= 1) return;
    if (len == 2) {
      if (more_frequent(a[last - 1], a[first])) std::swap(a[first], a[last - 1]);
      return;
    }
    if (len == 3) {
      sort3(a, first, first + 1, last - 1);
      return;
    }
    if (len <= limit) {
      selection_sort(a, first, last);
      return;
    }
    std::size_t m = first + len / 2;
    const std::size_t lm1 = last - 1;
    unsigned swaps = sort3(a, first, m, lm1);
    std::size_t i = first, j = lm1;
    bool restart = false;
    if (!more_frequent(a[i], a[m])) {
      // a[first] is as frequent as the median: guard the downward search by hand.
      while (true) {
        if (i == --j) {
          // Every other value is at most as frequent as a[first]: split off its equals instead.
          ++i;
          j = last;
          if (!more_frequent(a[first], a[--j])) {
            while (true) {
              if (i == j) return;
              if (more_frequent(a[first], a[i])) {
                std::swap(a[i], a[j]);
                ++swaps;
                ++i;
                break;
              }
              ++i;
            }
          }
          if (i == j) return;
          while (true) {
            while (!more_frequent(a[first], a[i])) ++i;
            while (more_frequent(a[first], a[--j])) {}
            if (i >= j) break;
            std::swap(a[i], a[j]);
            ++swaps;
            ++i;
          }
          if (nth < i) return;
          first = i;
          restart = true;
          break;
        }
        if (more_frequent(a[j], a[m])) {
          std::swap(a[i], a[j]);
          ++swaps;
          break;
        }
      }
    }
    if (restart) continue;
    ++i;
    if (i < j) {
      while (true) {
        while (more_frequent(a[i], a[m])) ++i;
        while (!more_frequent(a[--j], a[m])) {}
        if (i >= j) break;
        std::swap(a[i], a[j]);
        ++swaps;
        if (m == i) m = j;
        ++i;
      }
    }
    if (i != m && more_frequent(a[m], a[i])) {
      std::swap(a[i], a[m]);
      ++swaps;
    }
    if (nth == i) return;
    if (swaps == 0) {
      // Already partitioned: done if the part holding nth is sorted.
      const std::size_t from = nth < i ? first : i, to = nth < i ? i : last;
      bool sorted = true;
      for (std::size_t k = from + 1; k < to && sorted; ++k) sorted = !more_frequent(a[k], a[k - 1]);
      if (sorted) return;
    }
    if (nth < i) {
      last = i;
    } else {
      first = i + 1;
    }
  }
}

}  // namespace leaf_limit_detail

// Applies `limit` to a projection's dense ids: `ids` per learn row, numbered in order of first
// appearance, and `table_keys` per id (the 64-bit projection keys the model's table holds). Returns
// the old ids kept, in their former order (empty: at most `limit` values, nothing changed), and
// rewrites `ids` to the new ids (positions in that list).
inline std::vector<std::uint32_t> apply_leaf_count_limit(std::vector<std::uint32_t>& ids,
                                                         const std::vector<std::uint64_t>& table_keys,
                                                         std::uint64_t limit) {
  namespace d = leaf_limit_detail;
  const std::size_t unique = table_keys.size();
  if (unique <= limit) return {};
  std::vector<std::uint64_t> counts(unique, 0);
  for (std::uint32_t id : ids) ++counts[id];
  std::vector<d::key_count> order = d::dense_hash_order(table_keys, counts);
  d::nth_element(order, 0, static_cast<std::size_t>(limit), order.size());
  // Back from keys to ids (the keys are distinct).
  std::vector<std::pair<std::uint64_t, std::uint32_t>> id_of(unique);
  for (std::uint32_t id = 0; id < unique; ++id) id_of[id] = {table_keys[id], id};
  std::sort(id_of.begin(), id_of.end());
  const auto find_id = [&](std::uint64_t key) {
    return std::lower_bound(id_of.begin(), id_of.end(), std::make_pair(key, std::uint32_t{0}))->second;
  };
  std::vector<bool> kept(unique, false);
  for (std::size_t k = 0; k < limit; ++k) kept[find_id(order[k].key)] = true;
  std::vector<std::uint32_t> kept_ids, new_id(unique, 0);
  for (std::uint32_t id = 0; id < unique; ++id) {
    if (!kept[id]) continue;
    new_id[id] = static_cast<std::uint32_t>(kept_ids.size());
    kept_ids.push_back(id);
  }
  const std::uint32_t joined = new_id[find_id(order[static_cast<std::size_t>(limit) - 1].key)];
  for (std::uint32_t id = 0; id < unique; ++id) {
    if (!kept[id]) new_id[id] = joined;
  }
  for (std::uint32_t& id : ids) id = new_id[id];
  return kept_ids;
}

}  // namespace cbg::ctr
