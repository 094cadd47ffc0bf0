// SPDX-License-Identifier: Apache-2.0
// `cbgpu-bench version`: the tool's version, the loaded library's, and cbg_build_info() JSON.
#pragma once

namespace CLI {
class App;
}

namespace cbgpu_bench {

CLI::App* add_version_command(CLI::App& app);

int run_version();

}  // namespace cbgpu_bench
