// SPDX-License-Identifier: Apache-2.0
// A dataset read from a file into host arrays, column by column, ready to become a pool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cbgpu_bench {

struct feature_column {
  std::string name;            // from the .cd or the header; may be empty
  int64_t source_column = 0;   // index in the file
  bool categorical = false;
  std::vector<float> values;   // numeric features (NaN: missing)
  std::vector<int64_t> codes;  // categorical features: 0, 1, ... in order of first appearance
  std::vector<std::string> categories;  // categorical features: the text of each code
  int64_t distinct = 0;        // categorical features: number of distinct values
};

struct loaded_dataset {
  std::string path;
  int64_t rows = 0;
  int64_t n_columns = 0;  // columns in the file
  std::vector<feature_column> features;
  std::vector<float> label;     // [rows, label_dims], row-major
  int64_t label_dims = 0;
  std::vector<float> weight;    // [rows] when has_weight
  bool has_weight = false;
  std::vector<float> baseline;  // [rows, baseline_dims], row-major
  int64_t baseline_dims = 0;
  int64_t auxiliary_columns = 0;

  int64_t categorical_count() const {
    int64_t n = 0;
    for (const feature_column& f : features) n += f.categorical ? 1 : 0;
    return n;
  }
};

}  // namespace cbgpu_bench
