// SPDX-License-Identifier: Apache-2.0
#include "output_file.hpp"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

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
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw usage_error(fmt::format("{}: cannot write '{}'", what, path));
  out << text;
  out.close();
  if (!out) throw usage_error(fmt::format("{}: cannot write '{}'", what, path));
}

}  // namespace cbgpu_bench
