// SPDX-License-Identifier: Apache-2.0
// The CTR tests' comparison of two lists of CTR tables (the GPU's against the host reference's):
// every field the model stores, bit for bit.
#pragma once

#include <cstddef>
#include <vector>

#include "cbg/model/model.hpp"
#include "support/catch.hpp"

namespace cbg::test {

inline void check_same_tables(const std::vector<model::ctr_table>& h, const std::vector<model::ctr_table>& d) {
  REQUIRE(d.size() == h.size());
  for (std::size_t k = 0; k < h.size(); ++k) {
    CHECK(d[k].base == h[k].base);
    CHECK(d[k].counts == h[k].counts);
    CHECK(d[k].bucket_hashes == h[k].bucket_hashes);
    CHECK(d[k].bucket_indices == h[k].bucket_indices);
    CHECK(d[k].counter_denominator == h[k].counter_denominator);
    CHECK(d[k].target_classes_count == h[k].target_classes_count);
    REQUIRE(d[k].means.size() == h[k].means.size());
    for (std::size_t i = 0; i < h[k].means.size(); ++i) {
      CHECK(d[k].means[i].sum == h[k].means[i].sum);
      CHECK(d[k].means[i].count == h[k].means[i].count);
    }
  }
}

}  // namespace cbg::test
