// SPDX-License-Identifier: Apache-2.0
// Launch settings of the GPU evaluator's kernels (kernels/apply/). The tree kernel's tiling is a
// policy (include/cbg/apply/evaluator.hpp tiling_policy) whose zero fields take these defaults;
// cbgpu-apply-bench --sweep times the alternatives (bench/RESULTS.md, "GPU evaluator").
#pragma once

#include <cstddef>

namespace cbg::apply::detail {

// Threads per block of every apply kernel (the tree kernel's __launch_bounds__).
inline constexpr int apply_block = 256;

// Tree kernel defaults. Rows per tile: 1024 rows of 28 slots use 28 KB of staged bins, the leaf
// indexes of 32 trees another 32 KB, so three blocks fit on an SM. Trees per pass: 32 (a pass costs
// three block barriers). Shared memory per block: at most 96 KB, so at least two blocks fit.
inline constexpr int default_tile_rows = 1024;
inline constexpr int default_tree_chunk = 32;
inline constexpr int default_smem_budget = 96 * 1024;
// Batches too small to fill the GPU with full tiles are cut into smaller ones, at least this many
// blocks per SM: with one block per 1024 rows a batch of 1000 rows ran on one SM (613 us, against
// 636 us for 64K rows: cbgpu-apply-bench, H100, 2026-11-21, before this rule; not yet re-measured).
inline constexpr int min_tiles_per_sm = 2;
// Small tiles get more trees per pass so that the leaf-index phase still has ~2 items per thread.
inline constexpr int max_tree_chunk = 256;
// The smallest tile worth staging in shared memory; models with more slots read their bins from
// global memory, in tiles of 256 rows and 64 trees per pass. For 2000 features x 8000 trees on 100K
// rows: staged tiles of 32 rows took 16.67 ms, global bins with 256-row tiles and 64 trees per pass
// 10.57 ms, with 1024-row tiles 19.53 ms (cbgpu-apply-bench --sweep, H100, 2026-11-21).
inline constexpr int min_staged_tile_rows = 256;
inline constexpr int global_bins_tile_rows = 256;
inline constexpr int global_bins_tree_chunk = 64;

// Binarization: rows per thread block are one per thread; features per block (grid.y chunks).
inline constexpr int binarize_features_per_block = 8;

// Bytes carried per upload kernel in its parameters (the classic 4 KB parameter limit, less room).
inline constexpr std::size_t param_chunk_bytes = 4000;

}  // namespace cbg::apply::detail
