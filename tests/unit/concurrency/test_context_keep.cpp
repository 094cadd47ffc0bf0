// SPDX-License-Identifier: Apache-2.0
// context::keep / context::take (what the sharded trainer keeps between trainings, e.g. its NCCL
// communicators): each kept object goes to one taker at a time, keys are separate, and what is kept
// dies with the context. Several threads at once (run under ThreadSanitizer by the tsan preset).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cbg/runtime/context.hpp"
#include "support/catch.hpp"

namespace {

std::shared_ptr<cbg::context> cpu_context() {
  cbg::context_options o;
  o.device = cbg::cpu_device;
  return cbg::context::create(o);
}

struct token {
  int id = 0;
  std::atomic<int> holders{0};
};

}  // namespace

TEST_CASE("context keep/take: one taker per object, keys apart, objects die with the context", "[concurrency]") {
  auto ctx = cpu_context();
  CHECK(ctx->take("nothing kept") == nullptr);
  auto a = std::make_shared<token>();
  a->id = 1;
  std::weak_ptr<token> watch = a;
  ctx->keep("devices 0,1", a);
  ctx->keep("devices 0,1", nullptr);  // ignored
  a.reset();
  CHECK(ctx->take("devices 1,0") == nullptr);  // another key (the order of the devices counts)
  auto got = std::static_pointer_cast<token>(ctx->take("devices 0,1"));
  REQUIRE(got != nullptr);
  CHECK(got->id == 1);
  CHECK(ctx->take("devices 0,1") == nullptr);  // handed out: not kept any more
  ctx->keep("devices 0,1", got);
  got.reset();
  CHECK_FALSE(watch.expired());  // the context holds it
  ctx.reset();
  CHECK(watch.expired());  // freed with the context
}

TEST_CASE("context keep/take from 8 threads: no object is held by two threads at once", "[concurrency]") {
  auto ctx = cpu_context();
  constexpr int objects = 3;
  std::vector<std::weak_ptr<token>> watches;
  for (int i = 0; i < objects; ++i) {
    auto t = std::make_shared<token>();
    t->id = i;
    watches.push_back(t);
    ctx->keep("shared key", t);
  }
  std::atomic<int> overlaps{0}, takes{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k) {
    threads.emplace_back([&] {
      for (int round = 0; round < 2000; ++round) {
        auto t = std::static_pointer_cast<token>(ctx->take("shared key"));
        if (t == nullptr) continue;  // all in use by other threads just now
        if (t->holders.fetch_add(1) != 0) overlaps.fetch_add(1);
        takes.fetch_add(1);
        t->holders.fetch_sub(1);
        ctx->keep("shared key", std::move(t));
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(overlaps.load() == 0);
  CHECK(takes.load() > 0);
  int kept = 0;
  std::vector<std::shared_ptr<void>> back;
  while (auto t = ctx->take("shared key")) back.push_back(std::move(t));
  kept = static_cast<int>(back.size());
  CHECK(kept == objects);  // nothing lost, nothing duplicated
  for (auto& t : back) ctx->keep("shared key", std::move(t));
  back.clear();
  ctx.reset();
  for (const auto& w : watches) CHECK(w.expired());
}
