// SPDX-License-Identifier: Apache-2.0
#include "version_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "exit_codes.hpp"
#include "library.hpp"

namespace cbgpu_bench {

CLI::App* add_version_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("version", "Print the versions and the library's build information as JSON");
  cmd->footer(exit_codes_help);
  return cmd;
}

int run_version() {
  fmt::print("cbgpu-bench {}\n", CBG_VERSION_STRING);
  fmt::print("libcbgpu {} (headers {})\n", cbg_version_string(), CBG_VERSION_STRING);
  if (cbg_version_number() != CBG_VERSION_NUMBER) {
    fmt::print("warning: the loaded libcbgpu is {} but this tool was built against {}\n", cbg_version_string(),
               CBG_VERSION_STRING);
  }
  fmt::print("{}\n", build_info_json());
  return exit_ok;
}

}  // namespace cbgpu_bench
