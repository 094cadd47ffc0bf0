// SPDX-License-Identifier: Apache-2.0
// Test sizes that exist for speed coverage (many rows, many features) shrink when CBGPU_TEST_SHRINK is
// set: scripts/gpu-sanitize.sh sets it, since compute-sanitizer slows the kernels 10-100x. The
// shapes keep every code path the full size takes (several blocks, chunks, sampled subsets); only
// the counts fall.
#pragma once

#include <algorithm>
#include <cstdlib>

namespace cbg::test {

inline bool test_shrink() { return std::getenv("CBGPU_TEST_SHRINK") != nullptr; }

// `full`, or at most `small` under CBGPU_TEST_SHRINK.
template <class T>
T shrunk(T full, T small) {
  return test_shrink() ? std::min(full, small) : full;
}

}  // namespace cbg::test
