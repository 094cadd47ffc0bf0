// SPDX-License-Identifier: Apache-2.0
// Exceptions the commands throw; main() turns each kind into its exit code (exit_codes.hpp).
#pragma once

#include <stdexcept>
#include <string>

#include "cbgpu/cbgpu.h"

namespace cbgpu_bench {

// Bad flags or bad input data: exit code 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A valid request that needs a stage which does not exist yet: exit code 3.
class not_implemented_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A cbg_* call failed; the message holds cbg_status_string() and cbg_last_error().
class library_error : public std::runtime_error {
 public:
  library_error(cbg_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  cbg_status status() const noexcept { return status_; }

 private:
  cbg_status status_;
};

}  // namespace cbgpu_bench
