// SPDX-License-Identifier: Apache-2.0
#include "src/model/json_number.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace cbg::model {

namespace {

constexpr int significant = 17;

// printf's %g layout of the digits d0.d1d2... x 10^exponent, trailing zeros dropped.
std::string g_layout(bool negative, std::string digits, int exponent) {
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= significant) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof(e), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + e;
  }
  if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const auto point = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= point) return out + digits + std::string(point - digits.size(), '0');
  return out + digits.substr(0, point) + "." + digits.substr(point);
}

// The significant digits of d's exact decimal expansion, `count` of them (glibc prints exact
// digits), and its decimal exponent.
std::string digits_of(double d, int count, int& exponent) {
  std::string e(static_cast<std::size_t>(count) + 16, '\0');
  const int n = std::snprintf(e.data(), e.size(), "%.*e", count - 1, d);
  e.resize(static_cast<std::size_t>(n));
  const std::size_t start = e[0] == '-' ? 1 : 0;
  const std::size_t mark = e.find('e');
  exponent = std::atoi(e.c_str() + mark + 1);
  return e.substr(start, 1) + e.substr(start + 2, mark - start - 2);
}

// True when the digits after the 17th are a 5 and zeros only (a tie).
bool tie_at_17(const std::string& digits) {
  return digits[significant] == '5' && digits.find_first_not_of('0', significant + 1) == std::string::npos;
}

}  // namespace

std::string json_number_text(double d) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  // A tie needs the exact expansion to end at digit 18 with a 5: a cheap look at 40 digits first,
  // then all of them (a double's expansion has fewer than 800).
  int exponent = 0;
  if (!tie_at_17(digits_of(d, 40, exponent))) return buf;
  std::string digits = digits_of(d, 800, exponent);
  if (!tie_at_17(digits)) return buf;
  // Round the 17 digits up in magnitude.
  digits.resize(significant);
  int at = significant - 1;
  while (at >= 0 && digits[static_cast<std::size_t>(at)] == '9') digits[static_cast<std::size_t>(at--)] = '0';
  if (at < 0) {
    digits.insert(digits.begin(), '1');
    digits.pop_back();
    ++exponent;
  } else {
    ++digits[static_cast<std::size_t>(at)];
  }
  return g_layout(std::signbit(d), digits, exponent);
}

}  // namespace cbg::model
