// SPDX-License-Identifier: Apache-2.0
#include "library.hpp"

#include <cstdio>
#include <string>

#include <string_view>

#include <fmt/format.h>

#include "errors.hpp"

namespace cbgpu_bench {

void check(cbg_status status, std::string_view what) {
  if (status == CBG_OK) return;
  // Read the message first: it is valid only until the next cbg_* call on this thread.
  const std::string detail = cbg_last_error();
  throw library_error(status, fmt::format("{}: {}: {}", what, cbg_status_string(status), detail));
}

context_handle make_context(int32_t device, uint64_t seed) {
  cbg_context_desc_t desc;
  check(cbg_context_desc_init(&desc), "cbg_context_desc_init");
  desc.device = device;
  desc.seed = seed;
  cbg_context_t* ctx = nullptr;
  check(cbg_context_create(&desc, &ctx), "cbg_context_create");
  return context_handle(ctx);
}

int32_t context_device(const cbg_context_t* ctx) {
  int32_t device = CBG_DEVICE_CPU;
  check(cbg_context_device(ctx, &device), "cbg_context_device");
  return device;
}

int32_t device_count() {
  int32_t count = 0;
  check(cbg_device_count(&count), "cbg_device_count");
  return count;
}

cbg_copy_stats_t copy_stats(const cbg_context_t* ctx) {
  cbg_copy_stats_t s{};
  s.struct_size = sizeof(s);
  check(cbg_copy_stats(ctx, &s), "cbg_copy_stats");
  return s;
}

cbg_pool_info_t pool_info(const cbg_pool_t* pool) {
  cbg_pool_info_t info{};
  info.struct_size = sizeof(info);
  check(cbg_pool_info(pool, &info), "cbg_pool_info");
  return info;
}

std::string build_info_json() {
  const char* json = nullptr;
  check(cbg_build_info(&json), "cbg_build_info");
  return json;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  const auto b = static_cast<double>(bytes);
  if (bytes < 1000 * 1000) return fmt::format("{:.1f} kB", b / 1e3);
  if (bytes < 1000ULL * 1000 * 1000) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

std::string describe_copy_stats(const cbg_copy_stats_t& s) {
  auto one = [](const char* name, uint64_t bytes, uint64_t calls) {
    return fmt::format("{} {} in {} call{}", name, format_bytes(bytes), calls, calls == 1 ? "" : "s");
  };
  return fmt::format("{}, {}, {}, {}", one("h2d", s.h2d_bytes, s.h2d_calls), one("d2h", s.d2h_bytes, s.d2h_calls),
                     one("d2d", s.d2d_bytes, s.d2d_calls), one("h2h", s.h2h_bytes, s.h2h_calls));
}

std::string describe_pool(const cbg_pool_info_t& info) {
  const std::string where =
      info.device >= 0 ? fmt::format("on CUDA device {}", info.device) : std::string("on the host");
  return fmt::format("{} rows x {} features ({} categorical), label dims {}, {}{}, {}", info.n_rows, info.n_features,
                     info.n_cat_features, info.label_dims, info.has_weight ? "weights" : "no weights",
                     info.baseline_dims > 0 ? fmt::format(", baseline dims {}", info.baseline_dims) : std::string(),
                     where);
}

namespace {

void print_record(void* /*user_data*/, int32_t level, const char* category, const char* message) {
  // The trainer's progress lines go to stdout as CatBoost prints them; everything else to stderr.
  if (level == CBG_LOG_INFO && std::string_view(category) == "cbgpu.train") {
    fmt::print("{}\n", message);
    return;
  }
  static constexpr const char* names[] = {"trace", "debug", "info", "warn", "error", "critical"};
  const char* name = level >= 0 && level < 6 ? names[level] : "log";
  fmt::print(stderr, "[cbgpu {}] {}: {}\n", name, category, message);
}

}  // namespace

void log_library_to_stderr(int32_t min_level) {
  if (min_level >= CBG_LOG_OFF) {
    check(cbg_set_log_callback(nullptr, nullptr, CBG_LOG_OFF), "cbg_set_log_callback");
  } else {
    check(cbg_set_log_callback(print_record, nullptr, min_level), "cbg_set_log_callback");
  }
}

}  // namespace cbgpu_bench
