// SPDX-License-Identifier: Apache-2.0
// Reads a CatBoost "DSV" pool file (delimiter-separated values, TSV by default, no quoting) into
// host arrays, with the column roles of a .cd file.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "column_description.hpp"
#include "dataset.hpp"

namespace cbgpu_bench {

struct dsv_format {
  char delimiter = '\t';
  bool has_header = false;
  std::vector<int64_t> keep_columns;  // file columns whose text is kept (loaded_dataset::column_text)
};

// `path` may carry CatBoost's scheme prefix: "dsv://file" and "libsvm://file" (label, then 1-based
// index:value pairs; column k of the .cd is feature index k) are read, other schemes are refused as
// not implemented. A .cd Text column is refused as not implemented. Throws usage_error for a missing file, a row with
// the wrong number of columns, or a value that is not a number where one is needed.
loaded_dataset read_dsv(const std::string& path, const dsv_format& format, const std::optional<column_description>& cd);

// The same from a stream (the text of a pool file, no scheme); `name` stands for the file in
// messages ("<name>:<line>: ...") and becomes the dataset's `path`.
loaded_dataset read_dsv(std::istream& in, const std::string& name, const dsv_format& format,
                        const std::optional<column_description>& cd);

// The --delimiter value as one character: a single character, or "\t" / "tab" for a tab.
char parse_delimiter(const std::string& text);

}  // namespace cbgpu_bench
