// SPDX-License-Identifier: Apache-2.0
#include <string>
#include <vector>

#include "cbg/log/logger.hpp"
#include "cbg/runtime/context.hpp"
#include "support/catch.hpp"

namespace {

struct record {
  int level;
  std::string category;
  std::string message;
};

void collect(void* user, std::int32_t level, const char* category, const char* message) {
  static_cast<std::vector<record>*>(user)->push_back({level, category, message});
}

// Removes the callback when a test ends, also when it fails half-way.
struct callback_guard {
  ~callback_guard() { cbg::log::set_callback(nullptr, nullptr, cbg::log::level::trace); }
};

}  // namespace

TEST_CASE("the logger is silent by default and forwards records at or above the level", "[core]") {
  using cbg::log::level;
  CHECK_FALSE(cbg::log::enabled(level::critical));  // nothing installed: silent

  std::vector<record> records;
  callback_guard guard;
  cbg::log::set_callback(&collect, &records, level::info);
  cbg::log::write(level::debug, "cbgpu.test", "dropped");
  cbg::log::write(level::warn, "cbgpu.test", "kept 42");
  REQUIRE(records.size() == 1);
  CHECK(records[0].level == static_cast<int>(level::warn));
  CHECK(records[0].category == "cbgpu.test");
  CHECK(records[0].message == "kept 42");

  cbg::log::set_callback(nullptr, nullptr, level::trace);
  cbg::log::write(level::critical, "cbgpu.test", "after removal");
  CHECK(records.size() == 1);
}

TEST_CASE("a context filters its records by its own level", "[core]") {
  using cbg::log::level;
  std::vector<record> records;
  callback_guard guard;
  cbg::log::set_callback(&collect, &records, level::trace);
  cbg::context_options quiet;
  quiet.device = cbg::cpu_device;
  quiet.log_level = level::error;
  auto ctx = cbg::context::create(quiet);
  ctx->log(level::info, "cbgpu.test", "filtered by the context");
  ctx->log(level::error, "cbgpu.test", "passes");
  cbg::context_options chatty;
  chatty.device = cbg::cpu_device;
  chatty.log_level = level::debug;
  auto ctx2 = cbg::context::create(chatty);  // logs "context created" at debug
  cbg::log::set_callback(nullptr, nullptr, level::trace);

  REQUIRE(records.size() == 2);
  CHECK(records[0].message == "passes");
  CHECK(records[1].category == "cbgpu.context");
  CHECK(records[1].message.find("context created on the CPU") != std::string::npos);
}
