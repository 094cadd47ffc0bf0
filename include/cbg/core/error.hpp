// SPDX-License-Identifier: Apache-2.0
// Exceptions of the core and the CBG_EXPECTS / CBG_FAIL macros. Every exception carries a status
// code; the C ABI's firewall turns it into that code plus the message.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "cbg/core/status.hpp"

namespace cbg {

class error : public std::runtime_error {
 public:
  error(status code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] status code() const noexcept { return code_; }

 private:
  status code_;
};

// A device or pinned-host allocation failed. Carries what was asked and what was free.
class out_of_memory : public error {
 public:
  out_of_memory(const std::string& message, std::size_t requested, std::size_t free_bytes)
      : error(status::out_of_memory, message), requested_(requested), free_(free_bytes) {}
  [[nodiscard]] std::size_t requested_bytes() const noexcept { return requested_; }
  [[nodiscard]] std::size_t free_bytes() const noexcept { return free_; }

 private:
  std::size_t requested_;
  std::size_t free_;
};

// A CUDA call failed; `cuda_code` is the cudaError_t value.
class cuda_error : public error {
 public:
  cuda_error(status code, const std::string& message, int cuda_code) : error(code, message), cuda_code_(cuda_code) {}
  [[nodiscard]] int cuda_code() const noexcept { return cuda_code_; }

 private:
  int cuda_code_;
};

namespace detail {
[[noreturn]] void throw_error(status code, const std::string& message, const char* file, int line);
}  // namespace detail

}  // namespace cbg

// Fails with `code` and `message` (a std::string expression) unless `cond` holds.
// `cond` must have no side effects.
#define CBG_EXPECTS(cond, code, message)                                 \
  do {                                                                   \
    if (!(cond)) [[unlikely]] {                                          \
      ::cbg::detail::throw_error((code), (message), __FILE__, __LINE__); \
    }                                                                    \
  } while (0)

#define CBG_FAIL(code, message) ::cbg::detail::throw_error((code), (message), __FILE__, __LINE__)
