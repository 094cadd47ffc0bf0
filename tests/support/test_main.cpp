// SPDX-License-Identifier: Apache-2.0
// The Catch2 main of the unit tests. When asked for the [gpu] tests only and no GPU is visible, it
// prints why and exits 77, which CTest reports as "Skipped" (SKIP_RETURN_CODE) instead of passing
// silently.
#if CBG_CATCH2_MAJOR >= 3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>
#include <string_view>

#include "cbg/runtime/device.hpp"

int main(int argc, char** argv) {
  bool gpu_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.find("[gpu]") != std::string_view::npos && arg.find('~') == std::string_view::npos) {
      gpu_only = true;
    }
  }
  if (gpu_only && cbg::visible_device_count() == 0) {
    std::printf("SKIPPED: the [gpu] tests need a CUDA device and none is visible\n");
    return 77;
  }
  Catch::Session session;
  return session.run(argc, argv);
}
