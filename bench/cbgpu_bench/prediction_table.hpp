// SPDX-License-Identifier: Apache-2.0
// The output of `calc` as CatBoost writes it: a header line and the columns asked for (prediction
// types, and columns of the input such as SampleId, Label or a .cd name), then one line per row.
// Numbers are printed with 17 significant digits, so they read back as the same doubles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cbgpu_bench {

struct prediction_block {
  std::string type_name;  // CatBoost's prediction type ("Probability"), or the header of a text column
  bool is_class = false;  // values are class indexes (CBG_PREDICTION_CLASS)
  int64_t columns = 0;
  std::vector<double> values;     // [rows, columns], row-major
  std::string suffix;             // appended to each column name (":TreesCount=[0,10)")
  bool is_text = false;           // a column of the input, written as read
  std::vector<std::string> text;  // [rows] when is_text
};

// A block holding one column of text, with `header` as its name.
prediction_block text_block(std::string header, std::vector<std::string> text);

// Column names: one column is named by its type ("RawFormulaVal"); several are
// "<type>:Class=<class name>" when the model stores one name per column, else "<type>:<index>".
// A one-column Class prediction prints the class name when the model stores class names.
// Writes to `path` ("stdout" or "stream://stdout": the standard output). Throws usage_error when
// `path` cannot be written.
void write_prediction_table(const std::string& path, int64_t rows, const std::vector<prediction_block>& blocks,
                            const std::vector<std::string>& class_names);

}  // namespace cbgpu_bench
