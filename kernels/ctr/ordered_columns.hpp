// SPDX-License-Identifier: Apache-2.0
// A projection's ordered CTR columns from its runs (category_runs, ctr_device.hpp) in few passes:
// per target feature (type, j) one scan over the runs and one kernel writing every prior's column,
// and the rows per id from the runs' lengths (no atomics). The per-element math is ctr_math.hpp's,
// shared with the host reference. Internal (not installed).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/ctr/ctr_device.hpp"

namespace cbg::ctr::detail {

// One ordered target column: feature (type, j) of the target classes with prior (num, denom),
// into out[rows].
struct target_column {
  model::ctr_type type = model::ctr_type::borders;
  int j = 0;
  float prior_num = 0.f;
  float prior_denom = 1.f;
  float* out = nullptr;
};

// Every column of `cols` from the runs `r` (sorted_ids, sorted_rows: as dense_ids_and_runs,
// derived_ids_and_runs or ensure_runs leave them) over the classes of `t`. Consecutive columns of
// one target feature (its priors, up to max_priors_at_once) share one pass: an exclusive scan by run
// of (term, 1) packed in 64 bits, then one kernel over the rows writing each prior's value
// (ordered_target_value of the integers the host reference sums). FloatTargetMeanValue: a scan by
// run of the fixed-point targets, the rows before each from r.total, into ordered_float_mean_value.
// The simple CTRs (src/ctr/prepare_device.cpp) and the feature combinations both come here.
void ordered_target_columns(const context& ctx, const target_state& t, category_runs& r, std::int64_t n,
                            const std::vector<target_column>& cols);

// Rows per id from the runs `r` (each id's rows one run: every path that makes them): at each run's
// last position its total + 1 into counts[id]. Every id of the runs is written; nothing else.
void run_lengths(const context& ctx, const category_runs& r, std::int64_t n, std::int32_t* counts);

}  // namespace cbg::ctr::detail
