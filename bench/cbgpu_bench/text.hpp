// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the file readers.
#pragma once

#include <cstdio>
#include <string>
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

// A UTF-8 byte order mark starting a file's first line is not data (some editors write one); dropped.
inline void drop_utf8_bom(std::string& first_line) {
  if (first_line.starts_with("\xEF\xBB\xBF")) first_line.erase(0, 3);
}

// Text for a message with what a terminal does not show made visible: a byte order mark as <U+FEFF>,
// NUL and CR as \0 and \r, other control bytes but newline and tab as \xNN. Quoted input goes through
// it where the message is made (a NUL would end the message's C string), whole messages where printed.
inline std::string visible_controls(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (s.substr(i).starts_with("\xEF\xBB\xBF")) {
      out += "<U+FEFF>";
      i += 2;
    } else if (c == 0) {
      out += "\\0";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
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
