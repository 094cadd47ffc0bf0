// SPDX-License-Identifier: Apache-2.0
#include "output_file.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "cbg/io/atomic_file.hpp"
#include "errors.hpp"

namespace cbgpu_bench {

bool is_stdout(const std::string& path) { return path == "stdout" || path == "stream://stdout"; }

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  if (is_stdout(path)) {
    std::fflush(stdout);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
      throw usage_error(fmt::format("{}: cannot write to the standard output", what));
    }
    return;
  }
  // A temporary beside the target, renamed over it: a failed write leaves the old file as it was.
  try {
    cbg::io::write_file_atomically(path, text);
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("{}: {}", what, e.what()));
  }
}

}  // namespace cbgpu_bench
