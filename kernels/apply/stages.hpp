// SPDX-License-Identifier: Apache-2.0
// The stages of the GPU evaluator (src/apply/evaluator.cpp runs them in order on one stream):
//   upload.cu    small host tables to the device through kernel parameters
//   inputs.cu    categorical hashes, then every row into byte slots (device_model.hpp)
//   evaluate.cu  trees over tiles of rows: leaf indexes, ordered double sums, post-processing
// Each launcher only enqueues work on `stream`; none synchronises or allocates.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cbg/apply/device_model.hpp"
#include "cbg/data/column_view.hpp"
#include "cbg/model/apply_math.hpp"
#include "cbg/tensor/dtype.hpp"

namespace cbg::apply::detail {

// Copies `bytes` of host memory to device memory `dst` as the parameters of kernels: the host
// memory can go away when this returns, and the copy can be captured into a CUDA graph.
void upload_through_parameters(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

// Input columns on the device: float feature f at columns[f], categorical feature c at
// columns[n_float + c] (entries the model does not read may be empty).
// hashes[c * padded_rows + r] = CatBoost's hash of categorical feature c in row r, for the
// categorical features the model reads (m.used_cats).
void hash_categorical(const device_model_view& m, const column_view* columns, std::int64_t rows,
                      std::int64_t padded_rows, std::uint32_t* hashes, cudaStream_t stream);

// bins[slot * padded_rows + r]: the slot bytes of every row (rows >= `rows` get 0).
void binarize(const device_model_view& m, const column_view* columns, const std::uint32_t* hashes, std::int64_t rows,
              std::int64_t padded_rows, std::uint8_t* bins, cudaStream_t stream);

// How the tree kernel runs: a tile of rows per block (see evaluate.cu).
struct eval_plan {
  int tile_rows = 4;         // R, a multiple of 4
  int tree_chunk = 1;        // C
  int max_depth = 0;         // D: deepest tree in the range
  bool wide_leaves = false;  // D > 8: 16-bit leaf indexes
  bool smem_bins = false;    // the tile's bins staged in shared memory
  bool smem_acc = false;     // the row sums in shared memory (else in global scratch)
  std::size_t smem_bytes = 0;
  std::int64_t tiles = 0;
  std::size_t global_acc = 0;  // doubles of scratch when !smem_acc
  // shared memory layout
  std::size_t off_leaf_offsets = 0, off_idx = 0, off_acc = 0, off_bins = 0;
};

struct tiling {
  int max_tile_rows;
  int tree_chunk;
  int smem_budget;
  bool force_global_bins;
  int min_tiles;          // small batches get smaller tiles, so that at least this many blocks run (0: none)
  int global_tree_chunk;  // trees per pass when the bins stay in global memory for want of room
};

eval_plan plan_evaluation(const tiling& t, std::int64_t rows, std::uint32_t n_slots, int dim, int max_depth,
                          bool leaf_indexes);

struct eval_args {
  eval_plan plan;
  device_model_view model;
  std::uint32_t tree_begin = 0, tree_end = 0;
  const std::uint32_t* bins = nullptr;  // words [slot][padded_rows / 4]
  std::int64_t padded_words = 0;
  std::int64_t rows = 0;
  double* acc_global = nullptr;  // plan.global_acc doubles when !plan.smem_acc
  bool leaf_indexes = false;
  bool add_bias = true;
  model::postprocess_plan post;
  void* out = nullptr;
  dtype out_type = dtype::float64;
  std::int64_t out_row_stride = 0, out_col_stride = 0;  // elements
};

void evaluate(const eval_args& a, cudaStream_t stream);

}  // namespace cbg::apply::detail
