// SPDX-License-Identifier: Apache-2.0
// The host reference of the metrics that are not sums of row terms (boosting.hpp's confusion_table
// and ranked_metric).
#pragma once

#include <vector>

#include "cbg/train/loss.hpp"
#include "cbg/train/metric.hpp"

namespace cbg::train {

// approx is [dims][rows]; weights one per row.
std::vector<double> confusion_table_host(const metric_spec& m, const loss_spec& l, const std::vector<double>& approx,
                                         const std::vector<float>& target, const std::vector<float>& weight,
                                         int classes);
double ranked_metric_host(const metric_spec& m, const loss_spec& l, const std::vector<double>& approx,
                          const std::vector<float>& target, const std::vector<float>& weight);

}  // namespace cbg::train
