// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the file readers.
#pragma once

#include <string_view>
#include <vector>

namespace cbgpu_bench {

// Without leading and trailing spaces, tabs and carriage returns.
inline std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// Fields between `delimiter`s (n delimiters give n + 1 fields; no quoting, like CatBoost's DSV).
inline std::vector<std::string_view> split(std::string_view s, char delimiter) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = s.find(delimiter, start);
    if (end == std::string_view::npos) {
      fields.push_back(s.substr(start));
      return fields;
    }
    fields.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace cbgpu_bench
