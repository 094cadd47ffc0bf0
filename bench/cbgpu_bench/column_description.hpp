// SPDX-License-Identifier: Apache-2.0
// CatBoost's column description (.cd) file: one line per described column,
// `<index>\t<type>[\t<name>]`, index 0-based. Columns it does not mention are numeric features;
// without a .cd file, column 0 is the label and every other column is numeric.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cbgpu_bench {

enum class column_type {
  label,  // Label, Target
  num,
  categ,
  weight,
  baseline,
  auxiliary,  // read and not used (calc can output it)
  sample_id,  // SampleId, DocId: carried (calc's SampleId output column)
  group_id,   // GroupId, QueryId: carried (no loss of the trainer needs groups)
  subgroup_id,
  group_weight,
  timestamp,
  text,  // text features: not implemented, refused when a pool has one
};

const char* type_name(column_type t);

struct column_spec {
  column_type type = column_type::num;
  std::string name;  // empty when the .cd gives none
};

struct column_description {
  std::string path;
  std::map<int64_t, column_spec> columns;  // by column index
};

// Reads a .cd file. Throws usage_error (missing file, malformed line, duplicate index, unknown
// type) or not_implemented_error (a CatBoost type this tool does not handle, e.g. NumVector).
column_description read_column_description(const std::string& path);

// The same from a stream (the text of a .cd file); `name` stands for the file in messages
// ("<name>:<line>: ...") and becomes the description's `path`. Errors as above, except that a
// stream that fails while reading gives "cannot read column description '<name>'".
column_description read_column_description(std::istream& in, const std::string& name);

// The role of each of `n_columns` data columns. Throws usage_error when the .cd names a column
// index the data does not have.
// The index of the column named `name` in the .cd, or -1.
int64_t column_named(const column_description& cd, const std::string& name);

std::vector<column_spec> column_roles(const std::optional<column_description>& cd, int64_t n_columns);

}  // namespace cbgpu_bench
