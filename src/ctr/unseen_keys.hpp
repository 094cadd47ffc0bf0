// SPDX-License-Identifier: Apache-2.0
// counter_calc Full: a Counter CTR's table counts the eval rows too, and an eval value (or
// combination) the learn rows lack becomes a key of its own. As in CatBoost's tables, those keys follow
// the learn keys in order of first appearance in the eval rows, each with its eval row count, and the
// denominator (the largest count) covers them. Internal (not installed).
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/model/model.hpp"

namespace cbg::ctr {

// The new keys in order of first appearance, with their row counts.
struct unseen_keys {
  std::vector<std::uint64_t> keys;
  std::vector<std::int32_t> counts;
};

// From each distinct new key's first row and count (any order; the GPU's read-back).
unseen_keys unseen_keys_in_order(const std::vector<std::uint64_t>& keys, const std::vector<std::uint32_t>& first_rows,
                                 const std::vector<std::int32_t>& counts);

// The host reference: marked[r] is eval row r's key where the table lacks it, model::ctr_empty_hash
// where the table has it.
unseen_keys unseen_keys_of_rows(const std::vector<std::uint64_t>& marked);

// The table with the new keys after its own (buckets rebuilt over all keys) and their counts; its
// counter_denominator is then set by the caller from all counts.
void add_unseen_keys(model::ctr_table& t, const unseen_keys& u);

}  // namespace cbg::ctr
