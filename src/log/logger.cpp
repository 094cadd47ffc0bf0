// SPDX-License-Identifier: Apache-2.0
// The only translation unit that sees spdlog. One spdlog logger per category, all writing into one
// sink that forwards to the user's callback. Nothing is registered in spdlog's global registry, and
// spdlog is compiled header-only with hidden visibility, so it cannot clash with another copy in the
// same process.
#include "cbg/log/logger.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

namespace cbg::log {

namespace {

class callback_sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set(callback fn, void* user) {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    user_ = user;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (fn_ == nullptr) return;
    const std::string category(msg.logger_name.begin(), msg.logger_name.end());
    const std::string text(msg.payload.begin(), msg.payload.end());
    fn_(user_, static_cast<std::int32_t>(msg.level), category.c_str(), text.c_str());
  }
  void flush_() override {}

 private:
  callback fn_ = nullptr;
  void* user_ = nullptr;
};

// The process-wide logging state: a documented, mutex-protected singleton (no CUDA inside).
struct state {
  std::shared_ptr<callback_sink> sink = std::make_shared<callback_sink>();
  std::atomic<int> min_level{static_cast<int>(level::off)};
  std::mutex loggers_mutex;
  std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;

  std::shared_ptr<spdlog::logger> logger_for(std::string_view category) {
    std::lock_guard<std::mutex> lock(loggers_mutex);
    auto it = loggers.find(category);
    if (it == loggers.end()) {
      auto logger = std::make_shared<spdlog::logger>(std::string(category), sink);
      logger->set_level(spdlog::level::trace);  // filtering happens in write()
      it = loggers.emplace(std::string(category), std::move(logger)).first;
    }
    return it->second;
  }
};

state& global() {
  static state s;
  return s;
}

}  // namespace

void set_callback(callback fn, void* user_data, level min_level) {
  state& s = global();
  s.sink->set(fn, user_data);
  s.min_level.store(fn == nullptr ? static_cast<int>(level::off) : static_cast<int>(min_level),
                    std::memory_order_release);
}

bool enabled(level l) noexcept {
  return l != level::off && static_cast<int>(l) >= global().min_level.load(std::memory_order_acquire);
}

void write(level l, std::string_view category, std::string_view message) noexcept {
  if (!enabled(l)) return;
  try {
    global().logger_for(category)->log(static_cast<spdlog::level::level_enum>(l), "{}", message);
  } catch (...) {
    // Logging must never turn into an error of the operation being logged.
  }
}

}  // namespace cbg::log
