// SPDX-License-Identifier: Apache-2.0
// The predictions of `calc` as a TSV like CatBoost's eval file: a header line, `SampleId` (unless
// sample_id is false) and the columns of each block (prediction types, or the Label), then one line per row. Numbers are printed with 17 significant
// digits, so they read back as the same doubles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cbgpu_bench {

struct prediction_block {
  std::string type_name;      // CatBoost's name, e.g. "Probability"
  bool is_class = false;      // values are class indexes (CBG_PREDICTION_CLASS)
  int64_t columns = 0;
  std::vector<double> values;  // [rows, columns], row-major
};

// Column names: one column is named by its type ("RawFormulaVal"); several are
// "<type>:Class=<class name>" when the model stores one name per column, else "<type>:<index>".
// A one-column Class prediction prints the class name when the model stores class names.
// Throws usage_error when `path` cannot be written.
void write_prediction_table(const std::string& path, int64_t rows,
                            const std::vector<prediction_block>& blocks,
                            const std::vector<std::string>& class_names, bool sample_id = true);

}  // namespace cbgpu_bench
