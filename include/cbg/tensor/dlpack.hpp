// SPDX-License-Identifier: Apache-2.0
// The DLPack structs (dlpack_abi.h: one declaration for the library, its tests, tools and callers,
// who get it as the public C header cbgpu/cbgpu_dlpack.h) and C++ constants.
#pragma once

#include <cstdint>

#include "cbg/tensor/dlpack_abi.h"
#include "cbg/tensor/dtype.hpp"

namespace cbg::dlpack {

// The major version of DLManagedTensorVersioned we read; a different major is refused unread.
inline constexpr std::uint32_t supported_major = 1;
inline constexpr std::uint64_t flag_read_only = CBG_DLPACK_FLAG_READ_ONLY;
inline constexpr std::uint64_t flag_is_copied = CBG_DLPACK_FLAG_IS_COPIED;
// kDLBool arrived in DLPack 0.8; older headers lack the enumerator.
inline constexpr std::uint8_t code_bool = CBG_DLPACK_CODE_BOOL;

// The DLPack type of an element type (what importing it gives back: dlpack_import.cpp).
[[nodiscard]] constexpr DLDataType type_of(dtype t) noexcept {
  DLDataType d{};
  d.lanes = 1;
  d.bits = static_cast<std::uint8_t>(size_of(t) * 8);
  if (is_floating(t)) {
    d.code = kDLFloat;
  } else if (t == dtype::boolean) {
    d.code = code_bool;
  } else if (t == dtype::int8 || t == dtype::int16 || t == dtype::int32 || t == dtype::int64) {
    d.code = kDLInt;
  } else {
    d.code = kDLUInt;
  }
  return d;
}

// Version of the dlpack.h we compiled against, for cbg_build_info ("0.6", "1.1", ...).
const char* header_version() noexcept;

}  // namespace cbg::dlpack
