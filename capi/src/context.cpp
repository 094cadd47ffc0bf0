// SPDX-License-Identifier: Apache-2.0
// Context entry points and copy statistics.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <cstring>

#include <nlohmann/json.hpp>

#include "cbg/dist/train.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/runtime/profiler.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"

namespace {

using namespace cbg::capi;

void fill_defaults(cbg_context_desc_t& d) {
  init_desc(d);
  d.device = CBG_DEVICE_AUTO;
  d.log_level = CBG_LOG_TRACE;
  d.nccl_timeout_ms = 600000;
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_context_desc_init(cbg_context_desc_t* desc) {
  return guarded(__func__, [&] {
    require(desc, "desc");
    fill_defaults(*desc);
  });
}

CBG_API cbg_status cbg_context_create(const cbg_context_desc_t* desc, cbg_context_t** out) {
  return guarded(__func__, [&] {
    require(out, "out");
    *out = nullptr;
    cbg_context_desc_t d;
    fill_defaults(d);
    if (desc != nullptr) read_desc(*desc, d, offsetof(cbg_context_desc_t, nccl_comm), "cbg_context_desc_t");
    CBG_EXPECTS(d.log_level >= CBG_LOG_TRACE && d.log_level <= CBG_LOG_OFF, cbg::status::invalid_argument,
                fmt::format("log_level {} is not a CBG_LOG_* level", d.log_level));
    CBG_EXPECTS((d.alloc_fn == nullptr) == (d.free_fn == nullptr), cbg::status::invalid_argument,
                "set both alloc_fn and free_fn of the custom allocator, or neither");
    CBG_EXPECTS((d.flags & ~CBG_CONTEXT_STRICT_NO_D2H) == 0, cbg::status::invalid_argument,
                fmt::format("unknown context flags {:#x}", d.flags & ~CBG_CONTEXT_STRICT_NO_D2H));
    cbg::context_options o;
    o.device = d.device;
    o.log_level = static_cast<cbg::log::level>(d.log_level);
    o.seed = d.seed;
    o.stream = reinterpret_cast<cudaStream_t>(d.stream);
    o.strict_no_d2h = (d.flags & CBG_CONTEXT_STRICT_NO_D2H) != 0;
    // The hooks' stream parameter is the same pointer type as cudaStream_t.
    o.alloc = reinterpret_cast<cbg::alloc_hook>(d.alloc_fn);
    o.free = reinterpret_cast<cbg::free_hook>(d.free_fn);
    o.alloc_user_data = d.alloc_user_data;
    o.memory_limit = d.device_memory_limit;
    CBG_EXPECTS(d.profile == 0 || d.profile == 1, cbg::status::invalid_argument,
                fmt::format("profile is {}: 0 (off) or 1 (time the stages)", d.profile));
    o.profile = d.profile != 0;
    CBG_EXPECTS((d.nccl_comm == nullptr) == (d.nccl_size == 0), cbg::status::invalid_argument,
                fmt::format("nccl_comm is {} but nccl_size is {}: set both or neither",
                            d.nccl_comm == nullptr ? "NULL" : "set", d.nccl_size));
    CBG_EXPECTS(d.nccl_id_size >= 0, cbg::status::invalid_argument,
                fmt::format("nccl_id_size is {}: 0 (none) or the number of ranks", d.nccl_id_size));
    CBG_EXPECTS(d.nccl_id_size == 0 || d.nccl_comm == nullptr, cbg::status::invalid_argument,
                "set nccl_comm (a communicator of yours) or nccl_id_size (one the library makes), not both");
    CBG_EXPECTS(
        d.nccl_id_size == 0 || (d.nccl_id_rank >= 0 && d.nccl_id_rank < d.nccl_id_size), cbg::status::invalid_argument,
        fmt::format("nccl_id_rank {} of nccl_id_size {}: expected 0 <= rank < size", d.nccl_id_rank, d.nccl_id_size));
    CBG_EXPECTS(d.nccl_timeout_ms > 0, cbg::status::invalid_argument,
                fmt::format("nccl_timeout_ms is {}: it must be positive", d.nccl_timeout_ms));
    cbg_context_t handle{cbg::context::create(o), {}};
    if (d.nccl_comm != nullptr) {
      // Checked against the communicator now (NCCL loaded at run time), kept for cbg_train.
      (void)cbg::dist::make_comm_reducer(d.nccl_comm, d.nccl_rank, d.nccl_size);
      cbg::dist::communicator c;
      c.comm = d.nccl_comm;
      c.rank = d.nccl_rank;
      c.size = d.nccl_size;
      cbg::dist::attach_communicator(handle.impl, c);
    } else if (d.nccl_id_size > 0) {
      CBG_EXPECTS(!handle.impl->is_cpu(), cbg::status::invalid_argument,
                  "a communicator from nccl_id needs a GPU context (device is CBG_DEVICE_CPU)");
      std::array<std::uint8_t, cbg::dist::nccl_unique_id_bytes> id{};
      static_assert(sizeof(d.nccl_id) == cbg::dist::nccl_unique_id_bytes);
      std::memcpy(id.data(), d.nccl_id, id.size());
      cbg::dist::attach_communicator(
          handle.impl, cbg::dist::make_id_communicator(id, d.nccl_id_rank, d.nccl_id_size, handle.impl->device(),
                                                       std::chrono::milliseconds(d.nccl_timeout_ms)));
    }
    publish(out, std::move(handle));
  });
}

CBG_API cbg_status cbg_nccl_unique_id(uint8_t out[128]) {
  return guarded(__func__, [&] {
    require(out, "out");
    const auto id = cbg::dist::nccl_unique_id();
    std::memcpy(out, id.data(), id.size());
  });
}

CBG_API cbg_status cbg_context_abort(cbg_context_t* ctx) {
  return guarded(__func__, [&] {
    auto& c = checked(ctx, "ctx");
    const std::optional<cbg::dist::communicator> comm = cbg::dist::communicator_of(*c.impl);
    if (comm.has_value() && comm->owner != nullptr) comm->owner->abort("cbg_context_abort was called on this rank");
  });
}

CBG_API cbg_status cbg_context_free(cbg_context_t* ctx) {
  return guarded(__func__, [&] { destroy(ctx, "ctx"); });
}

CBG_API cbg_status cbg_context_device(const cbg_context_t* ctx, int32_t* device) {
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    require(device, "device");
    *device = c.impl->device();
  });
}

CBG_API cbg_status cbg_context_set_stream(cbg_context_t* ctx, cbg_stream_t stream) {
  return guarded(__func__, [&] { checked(ctx, "ctx").impl->set_stream(reinterpret_cast<cudaStream_t>(stream)); });
}

CBG_API cbg_status cbg_context_get_stream(const cbg_context_t* ctx, cbg_stream_t* stream) {
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    require(stream, "stream");
    *stream = reinterpret_cast<cbg_stream_t>(c.impl->stream());
  });
}

CBG_API cbg_status cbg_context_sync(cbg_context_t* ctx) {
  return guarded(__func__, [&] { checked(ctx, "ctx").impl->sync(); });
}

CBG_API cbg_status cbg_copy_stats(const cbg_context_t* ctx, cbg_copy_stats_t* stats) {
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    require(stats, "stats");
    check_out_struct(*stats, sizeof(cbg_copy_stats_t), "cbg_copy_stats_t");
    const cbg::copy_totals t = c.impl->copies().totals();
    using cbg::copy_direction;
    stats->h2d_bytes = t.bytes_in(copy_direction::h2d);
    stats->h2d_calls = t.calls_in(copy_direction::h2d);
    stats->d2h_bytes = t.bytes_in(copy_direction::d2h);
    stats->d2h_calls = t.calls_in(copy_direction::d2h);
    stats->d2d_bytes = t.bytes_in(copy_direction::d2d);
    stats->d2d_calls = t.calls_in(copy_direction::d2d);
    stats->h2h_bytes = t.bytes_in(copy_direction::h2h);
    stats->h2h_calls = t.calls_in(copy_direction::h2h);
  });
}

CBG_API cbg_status cbg_context_stage_times(cbg_context_t* ctx, const char** json) {
  return guarded(__func__, [&] {
    auto& c = checked(ctx, "ctx");
    require(json, "json");
    *json = nullptr;
    nlohmann::json out = nlohmann::json::object();
    for (const cbg::stage_total& t : c.impl->stage_profiler().totals()) {
      out[t.stage] = {{"ms", t.ms}, {"calls", t.calls}};
    }
    c.stage_times = out.dump();
    *json = c.stage_times.c_str();
  });
}

CBG_API cbg_status cbg_context_stage_times_reset(cbg_context_t* ctx) {
  return guarded(__func__, [&] { checked(ctx, "ctx").impl->stage_profiler().reset(); });
}

CBG_API cbg_status cbg_copy_stats_reset(cbg_context_t* ctx) {
  return guarded(__func__, [&] { checked(ctx, "ctx").impl->copies().reset(); });
}

CBG_API cbg_status cbg_context_memory_stats(const cbg_context_t* ctx, cbg_memory_stats_t* stats) {
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    require(stats, "stats");
    check_out_struct(*stats, sizeof(cbg_memory_stats_t), "cbg_memory_stats_t");
    const cbg::memory_stats m = c.impl->memory() != nullptr ? c.impl->memory()->stats() : cbg::memory_stats{};
    stats->in_use_bytes = m.in_use;
    stats->peak_bytes = m.peak;
    stats->limit_bytes = m.limit;
    stats->allocations = m.allocations;
    stats->failed_allocations = m.failures;
  });
}

CBG_API cbg_status cbg_context_reset_memory_peak(cbg_context_t* ctx) {
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    if (c.impl->memory() != nullptr) c.impl->memory()->reset_peak();
  });
}

CBG_API cbg_status cbg_context_fail_allocation(cbg_context_t* ctx, uint64_t n) {
  return guarded(__func__, [&] {
    const auto& c = checked(ctx, "ctx");
    CBG_EXPECTS(c.impl->memory() != nullptr, cbg::status::unsupported,
                "a CPU context makes no device allocations to fail (host allocations are not injected)");
    c.impl->memory()->fail_allocation(n);
  });
}

}  // extern "C"
