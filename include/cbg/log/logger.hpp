// SPDX-License-Identifier: Apache-2.0
// The logging facade (no spdlog type appears here). Silent by default: records reach the process-wide
// callback installed through the C ABI, and nothing else. Thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace cbg::log {

enum class level : std::int32_t { trace = 0, debug = 1, info = 2, warn = 3, error = 4, critical = 5, off = 6 };

using callback = void (*)(void* user_data, std::int32_t level, const char* category, const char* message);

// Installs the process-wide callback (nullptr silences the library). Thread-safe.
void set_callback(callback fn, void* user_data, level min_level);

// Cheap check for call sites that would format a message.
[[nodiscard]] bool enabled(level l) noexcept;

// Emits one record under `category` (e.g. "cbgpu.pool"). Never throws.
void write(level l, std::string_view category, std::string_view message) noexcept;

}  // namespace cbg::log
