// SPDX-License-Identifier: Apache-2.0
#include "handles.hpp"

#include <mutex>
#include <unordered_map>
#include <vector>

namespace cbg::capi {

namespace {

struct entry {
  handle_type type;
  handle_deleter deleter;
  std::size_t calls = 0;  // calls holding the handle now
  bool dead = false;      // freed; destroyed when `calls` drops to 0
};

struct registry {
  std::mutex mutex;
  std::unordered_map<const void*, entry> handles;
};

registry& the_registry() {
  static registry r;  // no CUDA inside: safe to destroy at exit
  return r;
}

// The handles the calls running on this thread hold, innermost call last; with the depth of nested
// calls (a log callback may call back into the library).
thread_local std::vector<const void*> held;
thread_local int call_depth = 0;

// Drops one reference; destroys the object when it was freed and this was the last one.
void release(const void* h) noexcept {
  registry& r = the_registry();
  void* doomed = nullptr;
  handle_deleter deleter = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.handles.find(h);
    if (it == r.handles.end()) return;
    if (--it->second.calls == 0 && it->second.dead) {
      doomed = const_cast<void*>(it->first);
      deleter = it->second.deleter;
      r.handles.erase(it);
    }
  }
  if (doomed != nullptr) deleter(doomed);  // outside the lock: destructors may take time
}

}  // namespace

void register_handle(void* h, handle_type t, handle_deleter del) {
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.handles.insert_or_assign(h, entry{t, del});
}

bool acquire_for_call(const void* h, handle_type t) {
  registry& r = the_registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.handles.find(h);
    if (it == r.handles.end() || it->second.type != t || it->second.dead) return false;
    if (call_depth == 0) return true;  // not inside an entry point: nothing to hold it for
    ++it->second.calls;
  }
  try {
    held.push_back(h);
  } catch (...) {
    release(h);
    throw;
  }
  return true;
}

bool retire_handle(const void* h, handle_type t) {
  registry& r = the_registry();
  void* doomed = nullptr;
  handle_deleter deleter = nullptr;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.handles.find(h);
    if (it == r.handles.end() || it->second.type != t || it->second.dead) return false;
    if (it->second.calls > 0) {
      it->second.dead = true;  // the last call holding it destroys it
      return true;
    }
    doomed = const_cast<void*>(it->first);
    deleter = it->second.deleter;
    r.handles.erase(it);
  }
  deleter(doomed);
  return true;
}

call_scope::call_scope() noexcept : first_(held.size()) { ++call_depth; }

call_scope::~call_scope() {
  while (held.size() > first_) {
    const void* h = held.back();
    held.pop_back();
    release(h);
  }
  --call_depth;
}

const char* type_name(handle_type t) noexcept {
  switch (t) {
    case handle_type::context:
      return "cbg_context_t";
    case handle_type::pool:
      return "cbg_pool_t";
    case handle_type::quantized:
      return "cbg_quantized_t";
    case handle_type::model:
      return "cbg_model_t";
  }
  return "?";
}

}  // namespace cbg::capi
