// SPDX-License-Identifier: Apache-2.0
#include "cbg/runtime/context.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/stream.hpp"

namespace cbg {

namespace {

int resolve_device(int requested) {
  const int count = visible_device_count();
  if (requested == auto_device) {
    if (count == 0) return cpu_device;
    int current = 0;
    CBG_CUDA_TRY(cudaGetDevice(&current));
    return current;
  }
  if (requested == cpu_device) return cpu_device;
  CBG_EXPECTS(requested >= 0, status::invalid_argument,
              fmt::format("device {} is not a CUDA ordinal, CBG_DEVICE_CPU (-1) or CBG_DEVICE_AUTO (-2)", requested));
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  CBG_EXPECTS(requested < count, status::no_device,
              fmt::format("CUDA device {} was requested but {} device(s) are visible{}; use "
                          "CBG_DEVICE_CPU for the host path",
                          requested, count,
                          visible != nullptr ? fmt::format(" (CUDA_VISIBLE_DEVICES={})", visible) : std::string()));
  return requested;
}

}  // namespace

std::shared_ptr<context> context::create(const context_options& options) {
  std::shared_ptr<context> ctx(new context());
  ctx->device_ = resolve_device(options.device);
  ctx->seed_ = options.seed;
  ctx->log_level_ = options.log_level;
  ctx->profiling_ = options.profile;
  ctx->rules_.strict_no_d2h = options.strict_no_d2h || strict_no_d2h_from_environment();
  if (!ctx->is_cpu()) {
    scoped_device guard(ctx->device_);
    if (options.stream != nullptr) {
      ctx->stream_ = options.stream;
    } else {
      CBG_CUDA_TRY(cudaStreamCreateWithFlags(&ctx->owned_stream_, cudaStreamNonBlocking));
      ctx->stream_ = ctx->owned_stream_;
    }
    std::shared_ptr<device_memory_resource> upstream;
    if (options.resource) {
      upstream = options.resource;
    } else if (options.alloc != nullptr || options.free != nullptr) {
      upstream = make_callback_resource(ctx->device_, options.alloc, options.free, options.alloc_user_data);
    } else {
      upstream = make_async_pool_resource(ctx->device_);
    }
    ctx->accounting_ = std::make_shared<accounting_resource>(ctx->device_, std::move(upstream), options.memory_limit);
    ctx->resource_ = ctx->accounting_;
  }
  if (ctx->log_enabled(log::level::debug)) {
    ctx->log(log::level::debug, "cbgpu.context",
             fmt::format("context created on {}{}",
                         ctx->is_cpu() ? std::string("the CPU (host reference path)")
                                       : fmt::format("CUDA device {}", ctx->device_),
                         ctx->rules_.strict_no_d2h ? ", strict no-D2H mode" : ""));
  }
  return ctx;
}

void set_policy(context& ctx, const cbg::policy& p) { ctx.policy_ = p; }

context::~context() {
  kept_.clear();  // before the stream goes: kept objects may have work on it
  if (is_cpu()) return;
  scoped_device guard(device_);
  CBG_ASSERT_CUDA_SUCCESS(cudaStreamSynchronize(stream_));
  if (owned_stream_ != nullptr) CBG_ASSERT_CUDA_SUCCESS(cudaStreamDestroy(owned_stream_));
}

void context::keep(const std::string& key, std::shared_ptr<void> object) const {
  if (object == nullptr) return;
  std::lock_guard<std::mutex> lock(kept_mutex_);
  kept_.emplace(key, std::move(object));
}

std::shared_ptr<void> context::take(const std::string& key) const {
  std::lock_guard<std::mutex> lock(kept_mutex_);
  const auto it = kept_.find(key);
  if (it == kept_.end()) return nullptr;
  std::shared_ptr<void> object = std::move(it->second);
  kept_.erase(it);
  return object;
}

void context::set_stream(cudaStream_t stream) {
  CBG_EXPECTS(!is_cpu(), status::unsupported, "a CPU context has no stream to set");
  scoped_device guard(device_);
  cudaStream_t next = stream != nullptr ? stream : owned_stream_;
  if (next == nullptr) {
    // The context was created on a borrowed stream; make an owned one to fall back to.
    CBG_CUDA_TRY(cudaStreamCreateWithFlags(&owned_stream_, cudaStreamNonBlocking));
    next = owned_stream_;
  }
  stream_wait_for(next, stream_);
  stream_ = next;
}

void context::sync() const {
  if (is_cpu()) return;
  scoped_device guard(device_);
  CBG_CUDA_TRY(cudaStreamSynchronize(stream_));
}

void context::log(log::level l, std::string_view category, std::string_view message) const noexcept {
  if (log_enabled(l)) log::write(l, category, message);
}

}  // namespace cbg
