// SPDX-License-Identifier: Apache-2.0
// The flags `fit` and `calc` share: how a pool file is read (--cd, --delimiter, --has-header) and
// where the work runs (--task-type, --devices, --thread-count).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "column_description.hpp"
#include "dsv_reader.hpp"

namespace CLI {
class App;
}

namespace cbgpu_bench {

struct data_options {
  std::string column_description;
  std::string delimiter = "\\t";
  bool has_header = false;

  dsv_format format() const;
  // The .cd file when one was given; throws usage_error for a bad one.
  std::optional<cbgpu_bench::column_description> read_column_description() const;
};

// Adds --cd/--column-description, --delimiter and --has-header to `cmd`.
void add_data_options(CLI::App* cmd, data_options& o);

// The context device for CatBoost's task_type ("CPU", "GPU" or "" for a GPU if visible) and devices
// ("0", "0:1", "0-3": the first is used).
int32_t device_from(const std::string& task_type, const std::string& devices);

// CLI11 checks for the values of --task-type and --devices: "" when valid, else what is wrong.
std::string check_task_type(const std::string& value);
std::string check_devices(const std::string& value);

}  // namespace cbgpu_bench
