// SPDX-License-Identifier: Apache-2.0
// A dataset read from a file into host arrays, column by column, ready to become a pool.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cbgpu_bench {

struct feature_column {
  std::string name;           // from the .cd or the header; may be empty
  int64_t source_column = 0;  // index in the file
  bool categorical = false;
  std::vector<float> values;            // numeric features (NaN: missing)
  std::vector<int64_t> codes;           // categorical features: 0, 1, ... in order of first appearance
  std::vector<std::string> categories;  // categorical features: the text of each code
  int64_t distinct = 0;                 // categorical features: number of distinct values
};

struct loaded_dataset {
  std::string path;
  int64_t rows = 0;
  int64_t n_columns = 0;  // columns in the file
  std::vector<feature_column> features;
  std::vector<float> label;             // [rows, label_dims], row-major (NaN where the text is no number)
  std::vector<std::string> label_text;  // [rows, label_dims]: the labels as written
  bool label_numeric = true;            // every label is a number
  int64_t label_dims = 0;
  std::vector<float> weight;  // [rows] when has_weight
  bool has_weight = false;
  std::vector<float> baseline;  // [rows, baseline_dims], row-major
  int64_t baseline_dims = 0;
  int64_t auxiliary_columns = 0;
  std::vector<std::string> sample_ids;                      // [rows] when the .cd has SampleId (DocId)
  std::vector<std::string> group_ids;                       // [rows] when the .cd has GroupId (carried, not used)
  std::vector<std::string> subgroup_ids;                    // [rows] when the .cd has SubgroupId (carried, not used)
  std::vector<std::string> timestamps;                      // [rows] when the .cd has Timestamp (carried, not used)
  std::vector<std::string> column_names;                    // per file column: the .cd name, else the header's, else ""
  std::map<int64_t, std::vector<std::string>> column_text;  // the text of the columns asked to keep

  int64_t categorical_count() const {
    int64_t n = 0;
    for (const feature_column& f : features) n += f.categorical ? 1 : 0;
    return n;
  }
};

}  // namespace cbgpu_bench
