// SPDX-License-Identifier: Apache-2.0
// The categorical workload of `cbgpu-bench bench` (--cat-features): the synthetic numeric columns
// (synthetic_data.hpp) beside integer categorical columns whose values follow a Zipf law (s = 1.1)
// with cardinalities spread log-evenly from 10 to --cat-max-cardinality, and a binary label that
// mixes the numeric rule's label with per-value effects of the first categorical columns and an
// interaction of two of them (so that CTRs and their combinations carry signal; the effects are the
// same for every seed, so held-out rows follow the learn rows' rule). Deterministic for a
// seed, on every platform and with any number of threads.
#pragma once

#include <cstdint>
#include <vector>

#include "synthetic_data.hpp"

namespace cbgpu_bench {

struct categorical_options {
  int64_t columns = 0;                // categorical columns
  int64_t max_cardinality = 1000000;  // the last column's; the first has 10
};

// Per categorical column: its values (category codes 0..cardinality-1, column-major) and
// cardinality. `data` gets its new label (positives recounted).
struct categorical_columns {
  std::vector<std::vector<int64_t>> values;
  std::vector<int64_t> cardinality;
};

categorical_columns add_categorical_columns(const categorical_options& o, uint64_t seed, synthetic_dataset& data);

// The rule in words, for the report.
const char* categorical_label_rule();

}  // namespace cbgpu_bench
