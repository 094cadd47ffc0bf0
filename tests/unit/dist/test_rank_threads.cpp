// SPDX-License-Identifier: Apache-2.0
// Multi-GPU (issue 9), host side: the rank threads of the sharded backend (src/dist/rank_threads.hpp):
// every call runs once on every rank, the first failure cancels the reducers and breaks the group,
// and the hand-offs' timings reach the profiler. Threads with a negative device touch no GPU.
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/runtime/profiler.hpp"
#include "src/dist/rank_threads.hpp"
#include "support/catch.hpp"

namespace cd = cbg::dist;

namespace {

class counting_reducer final : public cd::solo_reducer {
 public:
  void cancel() noexcept override { aborted.fetch_add(1); }
  std::atomic<int> aborted{0};
};

}  // namespace

TEST_CASE("rank threads: every call runs once on every rank, in order", "[dist]") {
  for (const int n : {1, 3, 4}) {
    counting_reducer red;
    std::vector<cd::reducer*> reds(static_cast<std::size_t>(n), &red);
    cd::rank_threads threads(std::vector<int>(static_cast<std::size_t>(n), -1), reds, nullptr,
                             std::chrono::microseconds(20000));
    CHECK(threads.size() == n);
    std::vector<std::vector<int>> seen(static_cast<std::size_t>(n));
    for (int call = 0; call < 200; ++call) {
      threads.run("call", [&](int r) { seen[static_cast<std::size_t>(r)].push_back(call); });
    }
    for (const auto& s : seen) {
      REQUIRE(s.size() == 200);
      for (int call = 0; call < 200; ++call) CHECK(s[static_cast<std::size_t>(call)] == call);
    }
    CHECK(red.aborted.load() == 0);
  }
}

TEST_CASE("rank threads: the first failure is rethrown, the reducers aborted, later calls refused", "[dist]") {
  counting_reducer red;
  std::vector<cd::reducer*> reds(4, &red);
  cd::rank_threads threads(std::vector<int>(4, -1), reds, nullptr, std::chrono::microseconds(20000));
  threads.run("fine", [](int) {});
  try {
    threads.run("fails", [](int r) {
      if (r == 2) CBG_FAIL(cbg::status::bad_data, "rank two failed");
    });
    FAIL("the failure should be rethrown");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
    CHECK(std::string(e.what()).find("rank two failed") != std::string::npos);
  }
  CHECK(red.aborted.load() == 4);
  try {
    threads.run("after", [](int) {});
    FAIL("a broken group should refuse calls");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::internal);
    CHECK(std::string(e.what()).find("rank two failed") != std::string::npos);
  }
}

TEST_CASE("rank threads: the hand-offs' timings reach the profiler", "[dist]") {
  cbg::profiler out;
  cd::dist_profile profile(out);
  {
    counting_reducer red;
    cd::rank_threads threads({-1, -1}, {&red, &red}, &profile, std::chrono::microseconds(0));
    for (int k = 0; k < 3; ++k) threads.run("search", [](int) {});
    threads.run("weak_target", [](int) {});
  }
  std::vector<cd::dist_profile::rank_totals> totals(2);
  totals[1].collectives = 7;
  totals[1].d2h_copies = 5;
  profile.finish(totals);
  std::map<std::string, cbg::stage_total> by;
  for (const cbg::stage_total& t : out.totals()) by[t.stage] = t;
  REQUIRE(by.count("dist.search") == 1);
  CHECK(by["dist.search"].calls == 3);
  CHECK(by["dist.weak_target"].calls == 1);
  CHECK(by["dist.search"].ms >= by["dist.search: work"].ms);
  CHECK(by["dist.search: gap before"].calls == 2);  // the first call has no previous one
  CHECK(by["dist.weak_target: gap before"].calls == 1);
  CHECK(by["dist.rank 1: collectives"].calls == 7);
  CHECK(by["dist.rank 1: d2h copies"].calls == 5);
  CHECK(by["dist.rank 0: collectives"].calls == 0);
}
