// SPDX-License-Identifier: Apache-2.0
#include "prediction_table.hpp"

#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "output_file.hpp"

namespace cbgpu_bench {

namespace {

std::string header(const std::vector<prediction_block>& blocks, const std::vector<std::string>& class_names) {
  std::string line;
  for (const prediction_block& b : blocks) {
    if (b.is_text || b.columns == 1) {
      line += (line.empty() ? "" : "\t") + b.type_name + b.suffix;
      continue;
    }
    const bool per_class = static_cast<int64_t>(class_names.size()) == b.columns;
    const bool uncertainty = b.type_name == "RMSEWithUncertainty" && b.columns == 2;
    for (int64_t c = 0; c < b.columns; ++c) {
      const std::string name = per_class
                                   ? fmt::format("{}:Class={}", b.type_name, class_names[static_cast<std::size_t>(c)])
                               : uncertainty ? b.type_name + (c == 0 ? "Mean" : "Std")
                                             : fmt::format("{}:{}", b.type_name, c);
      line += (line.empty() ? "" : "\t") + name + b.suffix;
    }
  }
  return line;
}

void append_cell(std::string& line, const prediction_block& b, double value,
                 const std::vector<std::string>& class_names) {
  if (!b.is_class) {
    fmt::format_to(std::back_inserter(line), "{:.17g}", value);
    return;
  }
  const auto index = static_cast<int64_t>(value);
  if (b.columns == 1 && index >= 0 && index < static_cast<int64_t>(class_names.size())) {
    line += class_names[static_cast<std::size_t>(index)];
  } else {
    fmt::format_to(std::back_inserter(line), "{}", index);
  }
}

}  // namespace

prediction_block text_block(std::string header, std::vector<std::string> text) {
  prediction_block b;
  b.type_name = std::move(header);
  b.is_text = true;
  b.columns = 1;
  b.text = std::move(text);
  return b;
}

void write_prediction_table(const std::string& path, int64_t rows, const std::vector<prediction_block>& blocks,
                            const std::vector<std::string>& class_names) {
  for (const prediction_block& b : blocks) {
    const std::size_t expected =
        b.is_text ? static_cast<std::size_t>(rows) : static_cast<std::size_t>(rows * b.columns);
    if ((b.is_text ? b.text.size() : b.values.size()) != expected) {
      throw std::logic_error(fmt::format("output column {} has the wrong number of values", b.type_name));
    }
  }
  std::string out = header(blocks, class_names);
  out += '\n';
  for (int64_t r = 0; r < rows; ++r) {
    bool first = true;
    for (const prediction_block& b : blocks) {
      if (b.is_text) {
        if (!first) out += '\t';
        first = false;
        out += b.text[static_cast<std::size_t>(r)];
        continue;
      }
      for (int64_t c = 0; c < b.columns; ++c) {
        if (!first) out += '\t';
        first = false;
        append_cell(out, b, b.values[static_cast<std::size_t>(r * b.columns + c)], class_names);
      }
    }
    out += '\n';
  }
  write_text_file(path, out, "--output-path");
}

}  // namespace cbgpu_bench
