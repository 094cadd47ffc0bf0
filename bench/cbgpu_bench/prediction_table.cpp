// SPDX-License-Identifier: Apache-2.0
#include "prediction_table.hpp"


#include <fmt/format.h>

#include "cbg/io/atomic_file.hpp"
#include "errors.hpp"

namespace cbgpu_bench {

namespace {

std::string header(const std::vector<prediction_block>& blocks,
                   const std::vector<std::string>& class_names, bool sample_id) {
  std::string line = sample_id ? "SampleId" : "";
  for (const prediction_block& b : blocks) {
    if (b.columns == 1) {
      line += (line.empty() ? "" : "\t") + b.type_name;
      continue;
    }
    const bool per_class = static_cast<int64_t>(class_names.size()) == b.columns;
    for (int64_t c = 0; c < b.columns; ++c) {
      line += per_class
                  ? fmt::format("{}{}:Class={}", line.empty() ? "" : "\t", b.type_name,
                                class_names[static_cast<std::size_t>(c)])
                  : fmt::format("{}{}:{}", line.empty() ? "" : "\t", b.type_name, c);
    }
  }
  return line;
}

std::string cell(const prediction_block& b, double value,
                 const std::vector<std::string>& class_names) {
  if (!b.is_class) return fmt::format("{:.17g}", value);
  const auto index = static_cast<int64_t>(value);
  if (b.columns == 1 && index >= 0 && index < static_cast<int64_t>(class_names.size())) {
    return class_names[static_cast<std::size_t>(index)];
  }
  return fmt::format("{}", index);
}

}  // namespace

void write_prediction_table(const std::string& path, int64_t rows,
                            const std::vector<prediction_block>& blocks,
                            const std::vector<std::string>& class_names, bool sample_id) {
  try {
    cbg::io::atomic_file out(path);
    std::string text = header(blocks, class_names, sample_id) + '\n';
    for (int64_t r = 0; r < rows; ++r) {
      std::string line = sample_id ? fmt::format("{}", r) : std::string();
      bool first = !sample_id;
      for (const prediction_block& b : blocks) {
        for (int64_t c = 0; c < b.columns; ++c) {
          if (!first) line += '\t';
          first = false;
          line += cell(b, b.values[static_cast<std::size_t>(r * b.columns + c)], class_names);
        }
      }
      text += line;
      text += '\n';
      if (text.size() >= (std::size_t{1} << 20)) {
        out.write(text);
        text.clear();
      }
    }
    out.write(text);
    out.commit();
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("--output-path: {}", e.what()));
  }
}

}  // namespace cbgpu_bench
