// SPDX-License-Identifier: Apache-2.0
// One C entry point's call on this thread: the handles it checked (handles.hpp) stay referenced until
// it returns, so a handle another thread frees meanwhile is destroyed only after the call is done.
#pragma once

#include <cstddef>

namespace cbg::capi {

// Releases the references taken since its construction when it ends; scopes nest.
class call_scope {
 public:
  call_scope() noexcept;
  ~call_scope();
  call_scope(const call_scope&) = delete;
  call_scope& operator=(const call_scope&) = delete;

 private:
  std::size_t first_;
};

}  // namespace cbg::capi
