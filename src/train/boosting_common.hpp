// SPDX-License-Identifier: Apache-2.0
// Host-side helpers of the two boosting backends (not the per-row math: that is in
// include/cbg/train/boosting_math.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cbg/data/pool.hpp"
#include "cbg/train/boosting.hpp"

namespace cbg::train {

// Label facts of a host pool.
label_facts host_label_facts(const pool& p);
// Sample weights of a host pool (1 where it has none).
std::vector<float> read_weights(const pool& p);
// Targets of a host pool under the rule; bad_data names the first bad label.
std::vector<float> read_targets(const pool& p, const target_rule& r, const char* what);
// Throws bad_data for a label problem found at `row` of `what` with value `label`.
[[noreturn]] void throw_target_problem(target_problem problem, const target_rule& r, const char* what, std::int64_t row,
                                       double label);
// [dims][rows] start approxes: the pool's baseline (if any) plus bias.
std::vector<double> start_approx(const pool& p, const loss_spec& l, const std::vector<double>& bias);
// Throws bad_data unless the baseline has one column per trained dimension.
void check_baseline(const pool& p, const loss_spec& l);

// The weighted alpha-quantile of targets sorted ascending (weights in the same order): the first
// target whose cumulative weight (fixed point) reaches alpha times the total.
double quantile_of_sorted(const std::vector<float>& target, const std::vector<float>& weight, double alpha);
// MVS (boosting_math.hpp) on the host: scales the search der ([dims][n]) and weights in place.
void mvs_bootstrap_host(std::vector<float>& der, std::vector<float>& weight, int dims, const bootstrap_spec& b);

// Leaf estimation driven pass by pass through b.at_point (the host reference's estimate_leaves).
leaf_result estimate_leaves_by_points(boosting_backend& b, const leaf_request& r);
// The message of a derivative that is not finite (the approx overflowed).
extern const char* const non_finite_derivative_message;

// AUC of scores sorted ascending with their 0/1 labels; ties count one half. 0.5 without both classes.
double auc_of_sorted(const std::vector<double>& scores, const std::vector<std::uint8_t>& positive);
// The same from exact counts: sum over positives of (2 * negatives below + negatives tied).
double auc_from_counts(std::uint64_t twice_wins, std::uint64_t positives, std::uint64_t negatives);

}  // namespace cbg::train
