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
// Small tiles get more trees per pass so that the leaf-index phase still has ~2 items per thread.
inline constexpr int max_tree_chunk = 256;
// The smallest tile worth staging in shared memory; wider models read their bins from global memory.
inline constexpr int min_staged_tile_rows = 32;

// Binarization: rows per thread block are one per thread; features per block (grid.y chunks).
inline constexpr int binarize_features_per_block = 8;

// Bytes carried per upload kernel in its parameters (the classic 4 KB parameter limit, less room).
inline constexpr std::size_t param_chunk_bytes = 4000;

}  // namespace cbg::apply::detail
