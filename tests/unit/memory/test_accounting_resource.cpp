// SPDX-License-Identifier: Apache-2.0
// The device memory accounting (budget, peak, fault injection) over a host-memory upstream, so it
// runs in CI without a GPU.
#include <atomic>
#include <cstdlib>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include "support/catch.hpp"

#include "cbg/core/error.hpp"
#include "cbg/memory/accounting_resource.hpp"

namespace {

class host_resource final : public cbg::device_memory_resource {
 public:
  void* allocate(std::size_t bytes, cudaStream_t) override { return std::malloc(bytes); }
  void deallocate(void* ptr, std::size_t, cudaStream_t) noexcept override { std::free(ptr); }
};

cbg::accounting_resource make(std::size_t limit) {
  return cbg::accounting_resource(0, std::make_shared<host_resource>(), limit);
}

}  // namespace

TEST_CASE("accounting: in use, peak and counts", "[memory]") {
  auto r = make(0);
  void* a = r.allocate(100, nullptr);
  void* b = r.allocate(50, nullptr);
  CHECK(r.stats().in_use == 150);
  r.deallocate(a, 100, nullptr);
  CHECK(r.stats().in_use == 50);
  CHECK(r.stats().peak == 150);
  r.reset_peak();
  CHECK(r.stats().peak == 50);
  r.deallocate(b, 50, nullptr);
  CHECK(r.stats().in_use == 0);
  CHECK(r.stats().allocations == 2);
  CHECK(r.stats().failures == 0);
}

TEST_CASE("accounting: the budget refuses exactly what would exceed it", "[memory]") {
  auto r = make(1000);
  void* a = r.allocate(600, nullptr);
  void* b = r.allocate(400, nullptr);  // exactly at the limit
  try {
    (void)r.allocate(1, nullptr);
    FAIL("the budget let an allocation through");
  } catch (const cbg::out_of_memory& e) {
    CHECK(e.code() == cbg::status::out_of_memory);
    CHECK(std::string(e.what()).find("budget of 1000 bytes") != std::string::npos);
    CHECK(e.requested_bytes() == 1);
  }
  CHECK(r.stats().in_use == 1000);
  CHECK(r.stats().failures == 1);
  r.deallocate(a, 600, nullptr);
  void* c = r.allocate(600, nullptr);  // usable again
  r.deallocate(b, 400, nullptr);
  r.deallocate(c, 600, nullptr);
  CHECK(r.stats().in_use == 0);
}

TEST_CASE("accounting: the n-th allocation fails once when armed", "[memory]") {
  auto r = make(0);
  r.fail_allocation(3);
  std::vector<void*> kept;
  kept.push_back(r.allocate(8, nullptr));
  kept.push_back(r.allocate(8, nullptr));
  CHECK_THROWS_AS(r.allocate(8, nullptr), cbg::out_of_memory);
  kept.push_back(r.allocate(8, nullptr));  // disarmed after firing
  CHECK(r.stats().in_use == 24);
  CHECK(r.stats().failures == 1);
  r.fail_allocation(1);
  r.fail_allocation(0);  // 0 disarms
  kept.push_back(r.allocate(8, nullptr));
  for (void* p : kept) r.deallocate(p, 8, nullptr);
  CHECK(r.stats().in_use == 0);
}

TEST_CASE("accounting: concurrent allocations never pass the budget together", "[memory]") {
  auto r = make(64 * 100);
  std::vector<std::thread> threads;
  std::atomic<int> refused{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      std::vector<void*> mine;
      for (int i = 0; i < 50; ++i) {
        try {
          mine.push_back(r.allocate(64, nullptr));
        } catch (const cbg::out_of_memory&) {
          ++refused;
        }
      }
      for (void* p : mine) r.deallocate(p, 64, nullptr);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(r.stats().peak <= 64 * 100);
  CHECK(r.stats().in_use == 0);
  CHECK(static_cast<std::uint64_t>(refused.load()) == r.stats().failures);
}
