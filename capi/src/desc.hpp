// SPDX-License-Identifier: Apache-2.0
// Reading size-prefixed descriptor structs: the library reads only the fields that fit in the
// caller's struct_size, so a caller built against an older header keeps working.
#pragma once

#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "cbg/core/error.hpp"

namespace cbg::capi {

// Zeroes a caller's descriptor and sets its struct_size: the common part of every *_desc_init.
template <class Desc>
void init_desc(Desc& d) {
  std::memset(static_cast<void*>(&d), 0, sizeof(Desc));
  d.struct_size = sizeof(Desc);
}

// Copies the caller's descriptor into `out` (which holds the defaults for fields the caller's
// version lacks). `oldest_size` is the struct's size in the first release that had it.
template <class Desc>
void read_desc(const Desc& in, Desc& out, std::size_t oldest_size, const char* name) {
  CBG_EXPECTS(in.struct_size >= oldest_size && in.struct_size <= sizeof(Desc), status::invalid_argument,
              fmt::format("{}.struct_size is {}, expected sizeof({}) = {} (set it, or call the "
                          "_init function; a larger value means a newer header than this library)",
                          name, in.struct_size, name, sizeof(Desc)));
  std::memcpy(static_cast<void*>(&out), &in, in.struct_size);
  out.struct_size = sizeof(Desc);
}

// For output structs the caller owns: checks the size the caller says it has.
template <class Out>
void check_out_struct(const Out& out, std::size_t oldest_size, const char* name) {
  CBG_EXPECTS(out.struct_size >= oldest_size, status::invalid_argument,
              fmt::format("{}.struct_size is {}, expected at least {} (set it to sizeof({}))", name, out.struct_size,
                          oldest_size, name));
}

}  // namespace cbg::capi
