// SPDX-License-Identifier: Apache-2.0
// Multi-GPU (issue 9), host side: the rank threads of the sharded backend (src/dist/rank_threads.hpp):
// every call runs once on every rank, the first failure cancels the reducers and breaks the group,
// and the profile (CBGPU_DIST_PROFILE) writes its JSON line. Threads with a negative device touch no GPU.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
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
    cd::rank_threads threads(std::vector<int>(static_cast<std::size_t>(n), -1), reds, nullptr);
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
  cd::rank_threads threads(std::vector<int>(4, -1), reds, nullptr);
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

TEST_CASE("rank threads: the profile writes one JSON line per training", "[dist]") {
  const std::string path = "cbgpu_test_dist_profile.jsonl";
  std::remove(path.c_str());
  REQUIRE(setenv("CBGPU_DIST_PROFILE", path.c_str(), 1) == 0);
  std::unique_ptr<cd::dist_profile> profile = cd::dist_profile::from_environment();
  REQUIRE(unsetenv("CBGPU_DIST_PROFILE") == 0);
  REQUIRE(profile != nullptr);
  CHECK(cd::dist_profile::from_environment() == nullptr);
  {
    counting_reducer red;
    cd::rank_threads threads({-1, -1}, {&red, &red}, profile.get());
    for (int k = 0; k < 3; ++k) threads.run("search", [](int) {});
    threads.run("weak_target", [](int) {});
  }
  std::vector<cd::dist_profile::rank_totals> totals(2);
  totals[1].collectives = 7;
  totals[1].d2h_copies = 5;
  profile->write(totals);
  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  const nlohmann::json j = nlohmann::json::parse(line);
  const auto& calls = j.at("dist_profile").at("calls");
  CHECK(calls.at("search").at("n").get<int>() == 3);
  CHECK(calls.at("weak_target").at("n").get<int>() == 1);
  CHECK(calls.at("search").at("wall_ms").get<double>() >= calls.at("search").at("work_ms").get<double>());
  const auto& ranks = j.at("dist_profile").at("ranks");
  REQUIRE(ranks.size() == 2);
  CHECK(ranks[1].at("collectives").get<int>() == 7);
  CHECK(ranks[1].at("d2h_copies").get<int>() == 5);
  std::string more;
  CHECK_FALSE(std::getline(in, more));
  in.close();
  std::remove(path.c_str());
}
