// SPDX-License-Identifier: Apache-2.0
// The rendezvous of the calls every rank of a sharded training makes in the same order
// (src/dist/rank_calls.hpp: how the ranks share the search extension of feature combinations), the
// rank threads leaving it when a rank fails, and the pieces in which a rank gets its rows of the
// columns (src/dist/column_pieces.hpp).
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cbg/core/error.hpp"
#include "src/dist/column_pieces.hpp"
#include "src/dist/rank_calls.hpp"
#include "src/dist/rank_threads.hpp"
#include "support/catch.hpp"
#include "support/status_of.hpp"

namespace {

using cbg::test::status_of;

// f(rank) on `ranks` threads at once; each thread's failure status (ok: none).
std::vector<cbg::status> on_threads(int ranks, const std::function<void(int)>& f) {
  std::vector<cbg::status> out(static_cast<std::size_t>(ranks), cbg::status::ok);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] { out[static_cast<std::size_t>(r)] = status_of([&] { f(r); }); });
  }
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

// The deadlock this prevents: a computation that waits for the ranks' queued collectives (a
// collective ends once every rank has queued it) must run only where every rank has queued the same
// ones. Here each rank "queues" a collective per level, then makes the level's call; the
// computation checks that every rank has queued as many as it would wait for.
TEST_CASE("rank calls: computed once, by the last rank to arrive, when every rank has queued the same", "[dist]") {
  for (const int ranks : {1, 2, 4}) {
    for (const int spin_us : {0, 20000}) {
      constexpr int levels = 300;
      cbg::dist::rank_calls<int, int> calls(ranks, "candidate columns", std::chrono::microseconds(spin_us));
      std::vector<std::atomic<int>> queued(static_cast<std::size_t>(ranks));
      std::vector<int> computed(levels, 0), mismatched(levels, 0);
      std::vector<std::vector<int>> seen(static_cast<std::size_t>(ranks));
      const auto failures = on_threads(ranks, [&](int r) {
        for (int i = 0; i < levels; ++i) {
          queued[static_cast<std::size_t>(r)].fetch_add(1);
          seen[static_cast<std::size_t>(r)].push_back(calls.call(r, i, [&] {
            ++computed[static_cast<std::size_t>(i)];
            for (const auto& q : queued) mismatched[static_cast<std::size_t>(i)] += q.load() != i + 1 ? 1 : 0;
            return i * 7 + r * 100000;  // the computing rank shows in the answer
          }));
        }
      });
      for (const cbg::status s : failures) CHECK(s == cbg::status::ok);
      for (int i = 0; i < levels; ++i) {
        CHECK(computed[static_cast<std::size_t>(i)] == 1);
        CHECK(mismatched[static_cast<std::size_t>(i)] == 0);
      }
      for (int r = 1; r < ranks; ++r) CHECK(seen[static_cast<std::size_t>(r)] == seen[0]);
      CHECK(calls.computed() == levels);
      CHECK(calls.waiting() == 0);
    }
  }
}

TEST_CASE("rank calls: a rank asking something else, or a failing computation, fails the call on every rank",
          "[dist]") {
  {
    cbg::dist::rank_calls<int, int> calls(3, "commits");
    int computed = 0;
    const auto failures =
        on_threads(3, [&](int r) { (void)calls.call(r, r == 1 ? 8 : 7, [&] { return ++computed; }); });
    for (const cbg::status s : failures) CHECK(s == cbg::status::internal);
    CHECK(computed == 0);
  }
  {
    cbg::dist::rank_calls<int, int> calls(2, "commits");
    const auto failures = on_threads(
        2, [&](int r) { (void)calls.call(r, 3, []() -> int { CBG_FAIL(cbg::status::out_of_memory, "no memory"); }); });
    for (const cbg::status s : failures) CHECK(s == cbg::status::out_of_memory);
  }
  cbg::dist::rank_calls<int, int> calls(2, "commits");
  CHECK(status_of([&] { (void)calls.call(2, 0, [] { return 0; }); }) == cbg::status::internal);  // no rank 2
}

TEST_CASE("rank calls: cancel() releases a rank waiting for one that will not come, and refuses later calls",
          "[dist]") {
  cbg::dist::rank_calls<int, int> calls(2, "candidate columns", std::chrono::microseconds(1000));
  std::atomic<bool> returned{false};
  cbg::status waited = cbg::status::ok;
  std::thread rank0([&] {
    waited = status_of([&] { (void)calls.call(0, 5, [] { return 1; }); });
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(returned.load());  // rank 1 has not made the call
  calls.cancel("rank 1 failed: bad data");
  rank0.join();
  CHECK(waited == cbg::status::internal);
  try {
    (void)calls.call(1, 5, [] { return 1; });
    FAIL("a cancelled rendezvous should refuse calls");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::internal);
    CHECK(std::string(e.what()).find("rank 1 failed: bad data") != std::string::npos);
  }
}

TEST_CASE("rank threads: a failing rank releases the ranks waiting for it at a rendezvous", "[dist]") {
  cbg::dist::solo_reducer red;
  cbg::dist::rank_threads threads({-1, -1, -1}, {&red, &red, &red}, nullptr, std::chrono::microseconds(0));
  cbg::dist::rank_calls<int, int> calls(3, "candidate columns");
  threads.on_failure([&](const std::string& why) { calls.cancel(why); });
  try {
    threads.run("search", [&](int r) {
      if (r == 2) CBG_FAIL(cbg::status::bad_data, "rank two failed");
      (void)calls.call(r, 0, [] { return 1; });  // would wait for rank 2 for ever
    });
    FAIL("the failure should be rethrown");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
    CHECK(std::string(e.what()).find("rank two failed") != std::string::npos);
  }
  CHECK(status_of([&] { (void)calls.call(0, 1, [] { return 1; }); }) == cbg::status::internal);
}

TEST_CASE("column pieces: any byte range of columns laid end to end, each piece within one column", "[dist]") {
  using cbg::dist::column_pieces;
  // 3 columns of 10 bytes: bytes 7..24 are column 0's 7..9, column 1 whole, column 2's 0..4.
  const auto p = column_pieces(7, 18, 10);
  REQUIRE(p.size() == 3);
  CHECK((p[0].column == 0 && p[0].offset == 7 && p[0].bytes == 3));
  CHECK((p[1].column == 1 && p[1].offset == 0 && p[1].bytes == 10));
  CHECK((p[2].column == 2 && p[2].offset == 0 && p[2].bytes == 5));
  CHECK(column_pieces(30, 0, 10).empty());
  // Every range of a small layout: the pieces cover it in order, byte for byte.
  for (std::size_t count : {1, 3, 8}) {
    const std::size_t total = 5 * count;
    for (std::size_t at = 0; at < total; ++at) {
      for (std::size_t n = 0; at + n <= total; ++n) {
        std::size_t next = at;
        for (const auto& q : column_pieces(at, n, count)) {
          CHECK(q.bytes > 0);
          CHECK(q.offset + q.bytes <= count);
          CHECK(q.column * count + q.offset == next);
          next += q.bytes;
        }
        CHECK(next == at + n);
      }
    }
  }
}
