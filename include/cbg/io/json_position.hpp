// SPDX-License-Identifier: Apache-2.0
// Where a JSON text stops parsing, as a person looks for it: line and column (both from 1) and the
// parser's reason, instead of nlohmann's byte count and exception id. Header-only; the command line
// tool uses it for --params-file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cbg::io {

// "line 2, column 10: syntax error while parsing value - invalid literal; last read: 'tru'".
inline std::string describe_json_error(std::string_view text, const nlohmann::json::parse_error& e) {
  // e.byte counts the bytes read, the offending one included.
  const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
  const std::string_view before = text.substr(0, at);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  // nlohmann's text: "[json.exception.parse_error.101] parse error at line 2, column 10: <reason>".
  std::string_view reason = e.what();
  if (const std::size_t p = reason.find("parse error"); p != std::string_view::npos) {
    reason.remove_prefix(p);
    if (const std::size_t colon = reason.find(": "); colon != std::string_view::npos) reason.remove_prefix(colon + 2);
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + std::string(reason);
}

}  // namespace cbg::io
