// SPDX-License-Identifier: Apache-2.0
// Status codes of the core. Values mirror the C ABI's CBG_* codes (capi static_asserts this).
#pragma once

#include <cstdint>
#include <string_view>

namespace cbg {

enum class status : std::int32_t {
  ok = 0,
  invalid_argument = 1,
  null_pointer = 2,
  invalid_handle = 3,
  dtype = 4,
  shape = 5,
  device = 6,
  dlpack_version = 7,
  read_only = 8,
  strict_d2h = 9,
  out_of_memory = 10,
  cuda = 11,
  cuda_fatal = 12,
  no_device = 13,
  unsupported = 14,
  not_implemented = 15,
  io = 16,
  format = 17,
  bad_data = 18,
  internal = 19,
};

// "CBG_ERR_SHAPE: ..." style static text; never empty.
std::string_view describe(status s) noexcept;

}  // namespace cbg
