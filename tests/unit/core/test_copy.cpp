// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/memory/copy.hpp"
#include "support/catch.hpp"

using cbg::copy_direction;
using cbg::memory_kind;

TEST_CASE("copy direction follows where the memory lives", "[core]") {
  CHECK(cbg::direction_of(memory_kind::host, memory_kind::host) == copy_direction::h2h);
  CHECK(cbg::direction_of(memory_kind::pinned_host, memory_kind::host) == copy_direction::h2h);
  CHECK(cbg::direction_of(memory_kind::host, memory_kind::device) == copy_direction::h2d);
  CHECK(cbg::direction_of(memory_kind::pinned_host, memory_kind::managed) == copy_direction::h2d);
  CHECK(cbg::direction_of(memory_kind::device, memory_kind::host) == copy_direction::d2h);
  CHECK(cbg::direction_of(memory_kind::managed, memory_kind::pinned_host) == copy_direction::d2h);
  CHECK(cbg::direction_of(memory_kind::device, memory_kind::managed) == copy_direction::d2d);
}

TEST_CASE("host copies are performed and counted", "[core]") {
  cbg::copy_counters counters;
  const cbg::copy_rules rules{};
  std::vector<int> src(100), dst(100, -1);
  std::iota(src.begin(), src.end(), 0);
  cbg::copy_bytes(dst.data(), memory_kind::host, src.data(), memory_kind::host, 400, nullptr, counters, rules,
                  CBG_COPY_SITE("test"));
  CHECK(dst == src);

  // Every other element of src into the first 50 of dst2 (a pitched copy).
  std::vector<int> dst2(50, -1);
  cbg::copy_bytes_2d(dst2.data(), sizeof(int), memory_kind::host, src.data(), 2 * sizeof(int), memory_kind::host,
                     sizeof(int), 50, nullptr, counters, rules, CBG_COPY_SITE("test"));
  for (int i = 0; i < 50; ++i) CHECK(dst2[i] == 2 * i);

  const cbg::copy_totals t = counters.totals();
  CHECK(t.bytes_in(copy_direction::h2h) == 600);
  CHECK(t.calls_in(copy_direction::h2h) == 2);
  CHECK(t.bytes_in(copy_direction::d2h) == 0);
  counters.reset();
  CHECK(counters.totals().calls_in(copy_direction::h2h) == 0);
}

TEST_CASE("strict mode refuses device-to-host copies above the metadata limit", "[core]") {
  cbg::copy_counters counters;
  const cbg::copy_rules strict{true};
  std::vector<char> host(cbg::strict_d2h_metadata_limit + 1);
  // The check runs before any CUDA call, so this is testable without a GPU.
  try {
    cbg::copy_bytes(host.data(), memory_kind::host, reinterpret_cast<const void*>(0x1000), memory_kind::device,
                    host.size(), nullptr, counters, strict, CBG_COPY_SITE("labels for the test"));
    FAIL("strict mode let the copy through");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::strict_d2h);
    const std::string what = e.what();
    CHECK(what.find("labels for the test") != std::string::npos);
    CHECK(what.find("test_copy.cpp") != std::string::npos);
    CHECK(what.find(std::to_string(host.size())) != std::string::npos);
  }
  CHECK(counters.totals().calls_in(copy_direction::d2h) == 0);  // refused copies are not counted
}

TEST_CASE("CBGPU_STRICT_NO_D2H turns strict mode on", "[core]") {
  ::unsetenv("CBGPU_STRICT_NO_D2H");
  CHECK_FALSE(cbg::strict_no_d2h_from_environment());
  ::setenv("CBGPU_STRICT_NO_D2H", "1", 1);
  CHECK(cbg::strict_no_d2h_from_environment());
  ::setenv("CBGPU_STRICT_NO_D2H", "0", 1);
  CHECK_FALSE(cbg::strict_no_d2h_from_environment());
  ::unsetenv("CBGPU_STRICT_NO_D2H");
}
