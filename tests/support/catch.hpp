// SPDX-License-Identifier: Apache-2.0
// One include for Catch2 2.x (Debian 12) and 3.x (Ubuntu 24.04, the GPU machines).
#pragma once

#if CBG_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

#include "cbg/runtime/device.hpp"

// Inside a [gpu] test: skip visibly when no CUDA device is visible. CTest runs the [gpu] tests as
// their own entry, which reports "Skipped" as a whole (tests/support/test_main.cpp).
#if CBG_CATCH2_MAJOR >= 3
#define CBG_REQUIRE_GPU()                                                   \
  do {                                                                      \
    if (::cbg::visible_device_count() == 0) SKIP("no CUDA device visible"); \
  } while (0)
#else
#define CBG_REQUIRE_GPU()                      \
  do {                                         \
    if (::cbg::visible_device_count() == 0) {  \
      WARN("SKIPPED: no CUDA device visible"); \
      return;                                  \
    }                                          \
  } while (0)
#endif
