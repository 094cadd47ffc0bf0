// SPDX-License-Identifier: Apache-2.0
// Wall-clock time of one phase, in milliseconds.
#pragma once

#include <chrono>

namespace cbgpu_bench {

class stopwatch {
 public:
  stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cbgpu_bench
