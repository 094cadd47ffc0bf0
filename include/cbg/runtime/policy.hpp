// SPDX-License-Identifier: Apache-2.0
// Internal implementation choices that benchmarks compare (A/B switches). The defaults are the
// product's behaviour; nothing reads them from the environment. Benchmarks and tests change them on
// one context through set_policy (a detail API: not part of the C ABI, no stability promise).
#pragma once

#include <cstdint>

namespace cbg {

struct policy {
  // Sharded training: score the search's candidates on slices of the features per rank
  // (-1: the library decides by shape, 0: off, 1: on).
  int dist_sliced_score = -1;
  // Sharded training: the fused weak-target / leaf passes (one collective per pass).
  bool dist_fused_pass = true;
  // One GPU: a leaf pass's ordered value sum folded by its decision kernel (no tile-sum kernel between).
  bool fused_leaf_pass = true;
  // Tree search: a level's split chosen by the score kernel's last block, and one memset of the
  // histogram slots per tree (off: a choose kernel per level, a memset per level).
  bool fused_search_levels = true;
  // The learn metric of an iteration summed by the next iteration's weak-target pass, which reads the
  // same approx (its report waits for that pass); off: a metric pass of its own after every tree.
  bool fused_learn_metric = true;
  // Sharded training: how long a rank thread spins (yielding) on a peer before it sleeps, in µs.
  std::int64_t dist_spin_us = 20000;
  // Feature combinations on the GPU: histograms of candidate columns in global memory instead of
  // shared memory.
  bool combo_global_histograms = false;
  // Feature combinations: the number of projections whose CTR columns are kept beyond a level's, least
  // recently wanted dropped first (-1: the library's default).
  std::int64_t combo_cache_projections = -1;
  // Feature combinations: the bytes those kept projections may hold (-1: the library's default).
  std::int64_t combo_cache_bytes = -1;
};

class context;
// The policy of a context (a copy is taken by each training when it starts).
void set_policy(context& ctx, const policy& p);

}  // namespace cbg
