// SPDX-License-Identifier: Apache-2.0
// `fit --plot-learning-curve FILE.html`: every metric of the training per iteration, learn and test,
// as a self-contained HTML page of SVG charts (one per metric) with labelled axes and tick values, a
// legend and the best test iteration marked. No script and no external resource: any browser shows it.
#pragma once

#include <string>
#include <vector>

namespace cbgpu_bench {

// One metric's values per logged iteration; NaN where not computed.
struct metric_curve {
  std::string metric;             // "Logloss", "AUC:type=Mu", ...
  bool higher_is_better = false;  // marks the best test iteration at the maximum instead of the minimum
  std::vector<double> iterations;
  std::vector<double> learn;  // empty when the metric is not computed on the learn set
  std::vector<double> test;   // empty without a test set
};

// The curves of the trainer's learn_error.tsv and test_error.tsv in `train_dir` (either may be absent),
// one per metric column; empty when neither file exists.
std::vector<metric_curve> read_error_logs(const std::string& train_dir);

// The HTML page of `curves`; `title` heads it.
std::string learning_curve_page(const std::string& title, const std::vector<metric_curve>& curves);

}  // namespace cbgpu_bench
