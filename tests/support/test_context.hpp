// SPDX-License-Identifier: Apache-2.0
// A context on `device` (-1: the CPU) for unit tests; `strict`: device-to-host copies refused.
#pragma once

#include <memory>

#include "cbg/runtime/context.hpp"

namespace cbg::test {

inline std::shared_ptr<cbg::context> make_context(int device, bool strict = false) {
  cbg::context_options o;
  o.device = device;
  o.strict_no_d2h = strict;
  return cbg::context::create(o);
}

}  // namespace cbg::test
