// SPDX-License-Identifier: Apache-2.0
// The GPU side of the metrics that are not sums of row terms (metric_tables.hpp, metric_ranked.hpp):
// launchers over plain device pointers, on the context's stream and memory. Results equal the host
// reference (src/train/metric_host.cpp) bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "cbg/train/loss.hpp"
#include "cbg/train/metric.hpp"

namespace cbg {
class context;
}

namespace cbg::train {

// One set of rows on the device.
struct metric_rows {
  const double* approx = nullptr;  // [dims][n]
  const float* target = nullptr;
  const float* weight = nullptr;  // null: 1
  std::int64_t n = 0;
};

// The weighted confusion table (classes * classes cells; K*K + 1 numbers come back).
std::vector<double> confusion_table_device(const context& ctx, const metric_rows& rows, const loss_spec& l,
                                           const metric_spec& m, int classes);
// A ranked metric (AUC with weights or of type Mu, NormalizedGini, PRAUC); a few numbers come back.
double ranked_metric_device(const context& ctx, const metric_rows& rows, const loss_spec& l, const metric_spec& m);

}  // namespace cbg::train
