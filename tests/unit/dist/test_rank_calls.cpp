// SPDX-License-Identifier: Apache-2.0
// The calls every rank of a sharded training makes in the same order, answered once
// (src/dist/rank_calls.hpp: how the ranks share the search extension of feature combinations), and
// the pieces in which a rank gets its rows of the columns (src/dist/column_pieces.hpp).
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cbg/core/error.hpp"
#include "src/dist/column_pieces.hpp"
#include "src/dist/rank_calls.hpp"
#include "support/catch.hpp"

namespace {

cbg::status status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cbg::error& e) {
    return e.code();
  }
  return cbg::status::ok;
}

}  // namespace

TEST_CASE("rank calls: the first rank to make a call computes it, the others take its answer", "[dist]") {
  cbg::dist::rank_calls<int, std::string> calls(3, "test calls", false);
  int computed = 0;
  const auto ask = [&](int rank, int key) {
    return calls.call(rank, key, [&] {
      ++computed;
      return "answer " + std::to_string(key) + " by rank " + std::to_string(rank);
    });
  };
  CHECK(ask(1, 10) == "answer 10 by rank 1");
  CHECK(ask(1, 11) == "answer 11 by rank 1");  // ranks may run ahead when the answers allow it
  CHECK(ask(0, 10) == "answer 10 by rank 1");
  CHECK(calls.waiting() == 2);
  CHECK(ask(2, 10) == "answer 10 by rank 1");
  CHECK(calls.waiting() == 1);  // every rank took call 0: gone
  CHECK(ask(2, 11) == "answer 11 by rank 1");
  CHECK(ask(2, 12) == "answer 12 by rank 2");
  CHECK(ask(0, 11) == "answer 11 by rank 1");
  CHECK(computed == 3);
  CHECK(calls.computed() == 3);
  // A rank asking something else than the others did is a bug: reported, not answered.
  CHECK(status_of([&] { (void)ask(0, 99); }) == cbg::status::internal);
  CHECK(status_of([&] { (void)ask(5, 12); }) == cbg::status::internal);
}

TEST_CASE("rank calls one at a time: a call is computed only once every rank took the previous one", "[dist]") {
  cbg::dist::rank_calls<int, int> calls(2, "candidate columns", true);
  int computed = 0;
  const auto ask = [&](int rank, int key) { return calls.call(rank, key, [&] { return key * 10 + ++computed; }); };
  CHECK(ask(0, 1) == 11);
  // Rank 0 cannot go on before rank 1 took call 0 (its answer's buffers would be replaced).
  CHECK(status_of([&] { (void)ask(0, 2); }) == cbg::status::internal);
  CHECK(ask(1, 1) == 11);
  CHECK(ask(0, 2) == 22);  // the failed attempt counted nothing
  CHECK(ask(1, 2) == 22);
  CHECK(calls.waiting() == 0);
  // A failing computation leaves the call to be made again.
  CHECK(status_of([&] {
          (void)calls.call(1, 3, []() -> int { CBG_FAIL(cbg::status::out_of_memory, "no memory"); });
        }) == cbg::status::out_of_memory);
  CHECK(ask(0, 3) == 33);
  CHECK(ask(1, 3) == 33);
  CHECK(computed == 3);
}

TEST_CASE("rank calls from one thread per rank, under one lock: each call computed once", "[dist]") {
  constexpr int ranks = 4;
  constexpr int levels = 200;
  cbg::dist::rank_calls<int, int> calls(ranks, "commits", false);
  std::mutex mutex;
  std::vector<int> computed(levels, 0);
  std::vector<std::vector<int>> seen(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      for (int i = 0; i < levels; ++i) {
        std::lock_guard<std::mutex> lock(mutex);
        seen[static_cast<std::size_t>(r)].push_back(calls.call(r, i, [&] {
          ++computed[static_cast<std::size_t>(i)];
          return i * 7 + r * 100000;  // the computing rank shows in the answer
        }));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < levels; ++i) CHECK(computed[static_cast<std::size_t>(i)] == 1);
  for (int r = 1; r < ranks; ++r) CHECK(seen[static_cast<std::size_t>(r)] == seen[0]);
  CHECK(calls.waiting() == 0);
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
