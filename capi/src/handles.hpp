// SPDX-License-Identifier: Apache-2.0
// What the C handles are: a C++ owner behind a registry of live handles, so a freed or foreign
// pointer is reported as CBG_ERR_INVALID_HANDLE instead of being dereferenced.
#pragma once

#include <memory>
#include <string>

#include "cbg/apply/device_model.hpp"
#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/model/model.hpp"
#include "cbg/runtime/context.hpp"
#include "call_scope.hpp"

struct cbg_context_t {
  std::shared_ptr<cbg::context> impl;
  std::string stage_times;  // the last cbg_context_stage_times answer (the caller's pointer into it)
};

struct cbg_pool_t {
  explicit cbg_pool_t(cbg::pool p) : impl(std::move(p)) {}
  cbg::pool impl;
};

// A quantized pool: the host reference result (CPU context) or the device one (GPU context).
struct cbg_quantized_t {
  std::shared_ptr<cbg::context> ctx;
  bool on_device = false;
  cbg::quantize::host_quantized host;
  cbg::quantize::device_quantized device;
};

struct cbg_model_t {
  explicit cbg_model_t(cbg::model::model m);
  cbg::model::model impl;
  std::vector<std::string> flat_names;   // name per flat feature
  std::vector<std::string> class_names;  // from the info map
  std::vector<std::uint8_t> saved;       // bytes of the last cbg_model_save_buffer()
  // Device copies for cbg_predict_to_device, made on first use per device (thread-safe).
  mutable cbg::apply::device_model_cache device_images;
};

namespace cbg::capi {

enum class handle_type : int { context, pool, quantized, model };

template <class H>
constexpr handle_type type_of();
template <>
constexpr handle_type type_of<cbg_context_t>() {
  return handle_type::context;
}
template <>
constexpr handle_type type_of<cbg_pool_t>() {
  return handle_type::pool;
}
template <>
constexpr handle_type type_of<cbg_quantized_t>() {
  return handle_type::quantized;
}
template <>
constexpr handle_type type_of<cbg_model_t>() {
  return handle_type::model;
}

// The registry: a process-wide map of handles (documented global state, mutex-protected). Each
// entry counts the calls using the handle: a call holds a reference from checked() until it returns,
// so a handle freed by another thread meanwhile is destroyed only when the last such call returns,
// and every call that starts after the free is refused.
using handle_deleter = void (*)(void*) noexcept;
void register_handle(void* h, handle_type t, handle_deleter del);
// Takes a reference for the calling thread's current call (call_scope.hpp); false when `h` is not a
// live handle of type `t`.
bool acquire_for_call(const void* h, handle_type t);
// Marks `h` dead (later calls are refused) and destroys it now, or when the last call holding it
// returns; false when it was not a live handle of type `t`.
bool retire_handle(const void* h, handle_type t);
const char* type_name(handle_type t) noexcept;

// The handle, held until the current call returns, or an exception with CBG_ERR_NULL_POINTER /
// CBG_ERR_INVALID_HANDLE naming `arg`.
template <class H>
H& checked(H* h, const char* arg) {
  CBG_EXPECTS(h != nullptr, status::null_pointer, std::string(arg) + " is NULL");
  CBG_EXPECTS(
      acquire_for_call(h, type_of<H>()), status::invalid_handle,
      std::string(arg) + " is not a live " + type_name(type_of<H>()) + " handle (already freed, or not made by cbgpu)");
  return *h;
}
template <class H>
const H& checked(const H* h, const char* arg) {
  return checked(const_cast<H*>(h), arg);
}

// Creates the handle and registers it; `out` receives it.
template <class H, class... Args>
void publish(H** out, Args&&... args) {
  auto owner = std::make_unique<H>(std::forward<Args>(args)...);
  register_handle(owner.get(), type_of<H>(), [](void* p) noexcept { delete static_cast<H*>(p); });
  *out = owner.release();
}

// Retires `h` (destroyed now or when the last call using it returns); NULL is a no-op.
template <class H>
void destroy(H* h, const char* arg) {
  if (h == nullptr) return;
  CBG_EXPECTS(
      retire_handle(h, type_of<H>()), status::invalid_handle,
      std::string(arg) + " is not a live " + type_name(type_of<H>()) + " handle (already freed, or not made by cbgpu)");
}

}  // namespace cbg::capi
