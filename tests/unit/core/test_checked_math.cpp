// SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <limits>
#include <string>

#include "cbg/core/checked_math.hpp"
#include "support/catch.hpp"

namespace {

// The status and message of an overflow, or status::ok when `f` does not throw.
template <class F>
std::pair<cbg::status, std::string> outcome(F&& f) {
  try {
    f();
  } catch (const cbg::error& e) {
    return {e.code(), e.what()};
  }
  return {cbg::status::ok, {}};
}

}  // namespace

TEST_CASE("checked size arithmetic refuses what overflows, naming the tensor", "[core]") {
  constexpr std::int64_t big = std::int64_t{1} << 62;
  CHECK(cbg::checked_mul(std::int64_t{3}, std::int64_t{7}, "x") == 21);
  CHECK(cbg::checked_add(big - 1, big, "x") == std::numeric_limits<std::int64_t>::max());
  const auto [code, message] =
      outcome([&] { (void)cbg::checked_mul(big, std::int64_t{2}, "features: element count"); });
  CHECK(code == cbg::status::shape);
  CHECK(message.find("features: element count") != std::string::npos);
  // 2^32 x 2^32 wraps to 0 in 64 bits: refused, never a zero-sized allocation.
  CHECK(outcome([] { (void)cbg::checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32, "label"); }).first ==
        cbg::status::shape);
  CHECK(outcome([&] { (void)cbg::checked_add(big, big, "out"); }).first == cbg::status::shape);
}
