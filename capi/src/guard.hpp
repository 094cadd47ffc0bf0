// SPDX-License-Identifier: Apache-2.0
// The exception firewall: every C entry point runs its body through guarded(), which maps
// exceptions to status codes and the thread-local message, and opens an NVTX range.
#pragma once

#include <new>
#include <string>

#include <nvtx3/nvToolsExt.h>

#include "cbg/core/error.hpp"
#include "cbgpu/cbgpu.h"
#include "call_scope.hpp"

namespace cbg::capi {

void set_last_error(const char* function, const char* message) noexcept;
void clear_last_error() noexcept;

// Fails with CBG_ERR_NULL_POINTER naming `arg` when `p` is NULL.
inline void require(const void* p, const char* arg) {
  CBG_EXPECTS(p != nullptr, status::null_pointer, std::string(arg) + " is NULL");
}

template <class F>
cbg_status guarded(const char* function, F&& body) noexcept {
  nvtxRangePushA(function);
  cbg_status code = CBG_OK;
  {
    const call_scope scope;  // the handles the body checks stay alive until it returns
    try {
      clear_last_error();
      body();
    } catch (const cbg::error& e) {
      code = static_cast<cbg_status>(e.code());
      set_last_error(function, e.what());
    } catch (const std::bad_alloc&) {
      code = CBG_ERR_OUT_OF_MEMORY;
      set_last_error(function, "out of host memory");
    } catch (const std::exception& e) {
      code = CBG_ERR_INTERNAL;
      set_last_error(function, e.what());
    } catch (...) {
      code = CBG_ERR_INTERNAL;
      set_last_error(function, "unknown exception");
    }
  }
  nvtxRangePop();
  return code;
}

}  // namespace cbg::capi
