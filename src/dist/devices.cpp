// SPDX-License-Identifier: Apache-2.0
// Device lists (CatBoost's `devices` syntax) and row splits (dist.hpp).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"

namespace cbg::dist {

namespace {

int parse_ordinal(const std::string& part, const std::string& text) {
  CBG_EXPECTS(
      !part.empty() && part.size() <= 6 &&
          std::all_of(part.begin(), part.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }),
      status::invalid_argument,
      fmt::format("devices '{}': '{}' is not a device ordinal (expected e.g. \"0\", \"0:1\", \"0-3\")", text, part));
  return std::stoi(part);
}

}  // namespace

std::vector<int> parse_devices(const std::string& text, int visible) {
  std::string t;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) t.push_back(c);
  }
  std::vector<int> out;
  if (t.empty()) return out;
  if (t == "-1") {
    CBG_EXPECTS(visible > 0, status::no_device, "devices '-1' (every GPU): no CUDA device is visible");
    for (int d = 0; d < visible; ++d) out.push_back(d);
    return out;
  }
  std::size_t at = 0;
  while (at <= t.size()) {
    const std::size_t end = std::min(t.find(':', at), t.size());
    const std::string part = t.substr(at, end - at);
    const std::size_t dash = part.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string::npos) {
      lo = hi = parse_ordinal(part, text);
    } else {
      lo = parse_ordinal(part.substr(0, dash), text);
      hi = parse_ordinal(part.substr(dash + 1), text);
      CBG_EXPECTS(lo <= hi, status::invalid_argument, fmt::format("devices '{}': the range '{}' is empty", text, part));
    }
    for (int d = lo; d <= hi; ++d) {
      CBG_EXPECTS(d < visible, status::no_device,
                  fmt::format("devices '{}': device {} is named but {} device(s) are visible", text, d, visible));
      if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
    at = end + 1;
  }
  return out;
}

std::int64_t row_split::total() const noexcept {
  std::int64_t n = 0;
  for (std::int64_t c : counts) n += c;
  return n;
}

std::int64_t row_split::first(int rank) const noexcept {
  std::int64_t n = 0;
  for (int r = 0; r < rank && r < ranks(); ++r) n += counts[static_cast<std::size_t>(r)];
  return n;
}

std::int64_t row_split::max_count() const noexcept {
  std::int64_t m = 0;
  for (std::int64_t c : counts) m = std::max(m, c);
  return m;
}

bool row_split::aligned(std::int64_t tile) const noexcept {
  for (int r = 0; r + 1 < ranks(); ++r) {
    if (counts[static_cast<std::size_t>(r)] % tile != 0) return false;
  }
  return true;
}

row_split even_split(std::int64_t rows, int ranks, std::int64_t tile) {
  CBG_EXPECTS(ranks >= 1 && rows >= 0 && tile >= 1, status::invalid_argument, "even_split: bad arguments");
  const std::int64_t per = (rows + ranks - 1) / ranks;
  const std::int64_t block = (per + tile - 1) / tile * tile;
  row_split s;
  std::int64_t left = rows;
  for (int r = 0; r < ranks; ++r) {
    const std::int64_t c = r + 1 == ranks ? left : std::min(block, left);
    s.counts.push_back(c);
    left -= c;
  }
  return s;
}

}  // namespace cbg::dist
