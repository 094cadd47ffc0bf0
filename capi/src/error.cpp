// SPDX-License-Identifier: Apache-2.0
// cbg_last_error (thread-local) and cbg_status_string.
#include <string>

#include "cbg/core/status.hpp"
#include "guard.hpp"

namespace cbg::capi {

namespace {
thread_local std::string last_error;
}

void set_last_error(const char* function, const char* message) noexcept {
  try {
    last_error.assign(function).append(": ").append(message);
  } catch (...) {
    last_error.clear();  // no memory for the message; the status code still tells what happened
  }
}

void clear_last_error() noexcept { last_error.clear(); }

}  // namespace cbg::capi

// The C codes and the core's enum are one list; keep them so.
static_assert(CBG_OK == static_cast<int>(cbg::status::ok));
static_assert(CBG_ERR_INVALID_ARGUMENT == static_cast<int>(cbg::status::invalid_argument));
static_assert(CBG_ERR_NULL_POINTER == static_cast<int>(cbg::status::null_pointer));
static_assert(CBG_ERR_INVALID_HANDLE == static_cast<int>(cbg::status::invalid_handle));
static_assert(CBG_ERR_DTYPE == static_cast<int>(cbg::status::dtype));
static_assert(CBG_ERR_SHAPE == static_cast<int>(cbg::status::shape));
static_assert(CBG_ERR_DEVICE == static_cast<int>(cbg::status::device));
static_assert(CBG_ERR_DLPACK_VERSION == static_cast<int>(cbg::status::dlpack_version));
static_assert(CBG_ERR_READ_ONLY == static_cast<int>(cbg::status::read_only));
static_assert(CBG_ERR_STRICT_D2H == static_cast<int>(cbg::status::strict_d2h));
static_assert(CBG_ERR_OUT_OF_MEMORY == static_cast<int>(cbg::status::out_of_memory));
static_assert(CBG_ERR_CUDA == static_cast<int>(cbg::status::cuda));
static_assert(CBG_ERR_CUDA_FATAL == static_cast<int>(cbg::status::cuda_fatal));
static_assert(CBG_ERR_NO_DEVICE == static_cast<int>(cbg::status::no_device));
static_assert(CBG_ERR_UNSUPPORTED == static_cast<int>(cbg::status::unsupported));
static_assert(CBG_ERR_NOT_IMPLEMENTED == static_cast<int>(cbg::status::not_implemented));
static_assert(CBG_ERR_IO == static_cast<int>(cbg::status::io));
static_assert(CBG_ERR_FORMAT == static_cast<int>(cbg::status::format));
static_assert(CBG_ERR_BAD_DATA == static_cast<int>(cbg::status::bad_data));
static_assert(CBG_ERR_INTERNAL == static_cast<int>(cbg::status::internal));

extern "C" {

CBG_API const char* cbg_last_error(void) { return cbg::capi::last_error.c_str(); }

CBG_API const char* cbg_status_string(cbg_status status) {
  if (status < CBG_OK || status > CBG_ERR_INTERNAL) return "unknown status code";
  return cbg::describe(static_cast<cbg::status>(status)).data();
}

}  // extern "C"
