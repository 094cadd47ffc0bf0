// SPDX-License-Identifier: Apache-2.0
// cbg_set_log_callback.
#include <fmt/format.h>

#include "cbg/log/logger.hpp"
#include "guard.hpp"

extern "C" {

CBG_API cbg_status cbg_set_log_callback(cbg_log_fn fn, void* user_data, int32_t min_level) {
  return cbg::capi::guarded(__func__, [&] {
    CBG_EXPECTS(min_level >= CBG_LOG_TRACE && min_level <= CBG_LOG_OFF, cbg::status::invalid_argument,
                fmt::format("min_level {} is not a CBG_LOG_* level ({}..{})", min_level, CBG_LOG_TRACE, CBG_LOG_OFF));
    cbg::log::set_callback(fn, user_data, static_cast<cbg::log::level>(min_level));
  });
}

}  // extern "C"
