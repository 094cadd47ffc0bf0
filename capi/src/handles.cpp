// SPDX-License-Identifier: Apache-2.0
#include "handles.hpp"

#include <mutex>
#include <unordered_map>

namespace cbg::capi {

namespace {

struct registry {
  std::mutex mutex;
  std::unordered_map<const void*, handle_type> live;
};

registry& the_registry() {
  static registry r;  // no CUDA inside: safe to destroy at exit
  return r;
}

}  // namespace

void register_handle(const void* h, handle_type t) {
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.live[h] = t;
}

bool unregister_handle(const void* h, handle_type t) {
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.live.find(h);
  if (it == r.live.end() || it->second != t) return false;
  r.live.erase(it);
  return true;
}

bool is_live(const void* h, handle_type t) {
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.live.find(h);
  return it != r.live.end() && it->second == t;
}

const char* type_name(handle_type t) noexcept {
  switch (t) {
    case handle_type::context: return "cbg_context_t";
    case handle_type::pool: return "cbg_pool_t";
    case handle_type::quantized: return "cbg_quantized_t";
    case handle_type::model: return "cbg_model_t";
  }
  return "?";
}

}  // namespace cbg::capi
