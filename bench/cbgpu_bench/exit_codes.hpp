// SPDX-License-Identifier: Apache-2.0
// The exit codes of cbgpu-bench: scripts and CI rely on them, so they are part of its interface.
#pragma once

namespace cbgpu_bench {

enum exit_code : int {
  exit_ok = 0,               // the command did everything it claims
  exit_failure = 1,          // the library, CUDA or the tool failed on valid input
  exit_usage = 2,            // bad flags or bad input (missing file, malformed row, bad .cd, ...)
  exit_not_implemented = 3,  // valid request, but a stage it needs does not exist yet
};

// Shown at the end of every --help and repeated in bench/README.md.
inline constexpr const char* exit_codes_help =
    "Exit codes:\n"
    "  0  success\n"
    "  1  failure inside the library, CUDA or the tool on valid input\n"
    "  2  bad flags or bad input (missing file, malformed row, unknown .cd type, ...)\n"
    "  3  not implemented yet: a valid request needs a stage that does not exist yet\n"
    "     (e.g. a CatBoost column type this version does not read)";

}  // namespace cbgpu_bench
