// SPDX-License-Identifier: Apache-2.0
// Thin C++ helpers over the C ABI: status checks that throw, owning handles, and readers for the
// info structs. Only functions declared in cbgpu.h are used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cbgpu/cbgpu.h"

namespace cbgpu_bench {

// Throws library_error("<what>: <status string>: <cbg_last_error()>") unless status is CBG_OK.
void check(cbg_status status, std::string_view what);

struct context_deleter {
  void operator()(cbg_context_t* ctx) const noexcept { (void)cbg_context_free(ctx); }
};
struct pool_deleter {
  void operator()(cbg_pool_t* pool) const noexcept { (void)cbg_pool_free(pool); }
};
using context_handle = std::unique_ptr<cbg_context_t, context_deleter>;
using pool_handle = std::unique_ptr<cbg_pool_t, pool_deleter>;

// Creates a context on `device` (a CUDA ordinal, CBG_DEVICE_CPU or CBG_DEVICE_AUTO).
context_handle make_context(int32_t device, uint64_t seed);
int32_t context_device(const cbg_context_t* ctx);
int32_t device_count();

cbg_copy_stats_t copy_stats(const cbg_context_t* ctx);
cbg_pool_info_t pool_info(const cbg_pool_t* pool);

// cbg_build_info() as a JSON text.
std::string build_info_json();

// "h2d 11.2 MB in 2 calls, d2h 8 B in 1 call, ..." for people.
std::string describe_copy_stats(const cbg_copy_stats_t& s);
// "1000 rows x 5 features (0 categorical), label dims 1, no weight, on CUDA device 0".
std::string describe_pool(const cbg_pool_info_t& info);
// "12.3 MB", "8 B".
std::string format_bytes(uint64_t bytes);

// Routes the library's log records to stderr from `min_level` on (CBG_LOG_OFF: silent).
void log_library_to_stderr(int32_t min_level);

}  // namespace cbgpu_bench
