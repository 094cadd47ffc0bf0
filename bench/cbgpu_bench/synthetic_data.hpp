// SPDX-License-Identifier: Apache-2.0
// A synthetic binary-classification dataset shaped like Higgs (28 float features of three kinds:
// positive skewed "momenta", "angles" in [-pi, pi), and Gaussian "observables"), with a label from
// a known nonlinear rule plus noise. The generator is self-contained (splitmix64 + Box-Muller, one
// stream per row), so a seed gives the same data on every platform and with any number of threads.
#pragma once

#include <cstdint>
#include <vector>

namespace cbgpu_bench {

struct synthetic_options {
  int64_t rows = 100000;
  int64_t features = 28;
  uint64_t seed = 0;
  bool column_major = true;  // features[j * rows + i]; else features[i * features + j]
};

struct synthetic_dataset {
  std::vector<float> features;  // rows x features, float32, in the layout asked for
  std::vector<float> label;     // 0 or 1
  int64_t rows = 0;
  int64_t n_features = 0;
  bool column_major = true;
  int64_t positives = 0;
};

// The label rule in words, for the report and the JSON record.
const char* synthetic_label_rule();

synthetic_dataset make_synthetic_dataset(const synthetic_options& options);

}  // namespace cbgpu_bench
