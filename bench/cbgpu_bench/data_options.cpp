// SPDX-License-Identifier: Apache-2.0
#include "data_options.hpp"

#include <algorithm>
#include <charconv>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cbgpu/cbgpu.h"

namespace cbgpu_bench {

dsv_format data_options::format() const {
  dsv_format f;
  f.delimiter = parse_delimiter(delimiter);
  f.has_header = has_header;
  return f;
}

std::optional<cbgpu_bench::column_description> data_options::read_column_description() const {
  if (column_description.empty()) return std::nullopt;
  return cbgpu_bench::read_column_description(column_description);
}

void add_data_options(CLI::App* cmd, data_options& o) {
  cmd->add_option("--cd,--column-description", o.column_description, "Column description file");
  cmd->add_option("--delimiter", o.delimiter, "Column delimiter: one character, or \\t")->capture_default_str();
  cmd->add_flag("--has-header", o.has_header, "The first line holds column names");
}

int32_t device_from(const std::string& task_type, const std::string& devices) {
  if (task_type.empty()) return CBG_DEVICE_AUTO;
  if (task_type == "CPU") return CBG_DEVICE_CPU;
  int32_t first = 0;
  std::from_chars(devices.data(), devices.data() + devices.size(), first);
  return first;
}

std::string check_task_type(const std::string& v) {
  return v == "CPU" || v == "GPU" ? std::string() : fmt::format("'{}' is not one of CPU, GPU", v);
}

std::string check_devices(const std::string& v) {
  const bool ok = !v.empty() && std::all_of(v.begin(), v.end(),
                                            [](char c) { return (c >= '0' && c <= '9') || c == ':' || c == '-'; });
  return ok ? std::string() : fmt::format("'{}' is not a device list like 0, 0:1 or 0-3", v);
}

}  // namespace cbgpu_bench
