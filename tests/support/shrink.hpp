// SPDX-License-Identifier: Apache-2.0
// Test sizes that exist for speed coverage (many rows, many features) shrink when CBGPU_TEST_SHRINK is
// set: scripts/gpu-sanitize.sh sets it, since compute-sanitizer slows the kernels 10-100x. The
// shapes keep every code path the full size takes (several blocks, chunks, sampled subsets); only
// the counts fall.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace cbg::test {

inline bool test_shrink() { return std::getenv("CBGPU_TEST_SHRINK") != nullptr; }

// `full`, or at most `small` under CBGPU_TEST_SHRINK.
template <class T>
T shrunk(T full, T small) {
  return test_shrink() ? std::min(full, small) : full;
}

// CBGPU_TEST_PART="k/n" (0 <= k < n): a case tagged [parts] that loops over independent variants runs
// only the variants v with v % n == k, so that scripts/gpu-sanitize.sh (CBGPU_SANITIZE_PARTS) can spread
// one slow case over n processes; racecheck's cost is per kernel launch, so only fewer launches per
// process make it finish. Unset (or malformed): every variant runs.
inline bool in_test_part(std::size_t variant) {
  const char* part = std::getenv("CBGPU_TEST_PART");
  unsigned k = 0, n = 0;
  if (part == nullptr || std::sscanf(part, "%u/%u", &k, &n) != 2 || n == 0 || k >= n) return true;
  return variant % n == k;
}

}  // namespace cbg::test
