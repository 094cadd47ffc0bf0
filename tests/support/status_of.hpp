// SPDX-License-Identifier: Apache-2.0
// The status a call fails with (ok when it does not), for tests of error paths inside the library.
#pragma once

#include <functional>

#include "cbg/core/error.hpp"

namespace cbg::test {

inline cbg::status status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cbg::error& e) {
    return e.code();
  }
  return cbg::status::ok;
}

}  // namespace cbg::test
