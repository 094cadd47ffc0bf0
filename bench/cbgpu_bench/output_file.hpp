// SPDX-License-Identifier: Apache-2.0
// Every file the CLI writes itself goes through write_text_file, so that how files are written
// (atomically, for instance) is decided in one place. "stdout" and "stream://stdout" name the
// standard output, as in CatBoost.
#pragma once

#include <string>

namespace cbgpu_bench {

// True for the names of the standard output.
bool is_stdout(const std::string& path);

// Writes `text` to `path` (or the standard output); `what` names the flag in errors. Throws usage_error
// when the file cannot be written.
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

}  // namespace cbgpu_bench
