// SPDX-License-Identifier: Apache-2.0
// The GPU evaluator: a model applied to a pool on the device, results into the caller's tensor.
//
// Pipeline (kernels/apply/, every stage enqueued on one stream, no host synchronisation):
//   1. the pool's column descriptors reach the device through kernel parameters (no host memory
//      has to outlive the call, so the whole call can be captured into a CUDA graph);
//   2. categorical columns are hashed on the device (CatBoost's CityHash of the decimal text);
//   3. every row is binarized once into byte slots (device_model.hpp), CTR values included;
//   4. trees are evaluated over tiles of rows held in shared memory: four rows per 32-bit word,
//      leaf indexes of a chunk of trees first, then each row's leaf values summed in tree order in
//      double (bit for bit the host evaluator's sum), then Scale/Bias and the prediction type.
// The model's device image is made once per device (device_model_cache, in the model handle).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cbg/apply/device_model.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/tensor/tensor_view.hpp"

namespace cbg::apply {

enum class output_kind : std::uint8_t { values = 0, leaf_indexes = 1 };

struct predict_options {
  model::prediction_type type = model::prediction_type::raw_formula_val;
  output_kind output = output_kind::values;
  std::size_t tree_begin = 0;
  std::size_t tree_end = 0;  // 0: to the last tree
};

// How the tree kernel tiles rows and trees (kernels/apply/tuning_apply.hpp holds the defaults and
// the bench run that chose them; cbgpu-apply-bench tries others).
struct tiling_policy {
  int max_tile_rows = 0;           // rows per block (a multiple of 4); 0: the default
  int tree_chunk = 0;              // trees per pass over the tile; 0: the default
  int smem_budget = 0;             // bytes of shared memory per block; 0: the default
  bool force_global_bins = false;  // read the binarized rows from global memory, not a staged tile
  int min_tiles = 0;               // blocks a small batch is spread over; 0: two per SM, < 0: no spreading
};

// The resolved tree range [begin, end) of `o` for `m`; throws invalid_argument when out of range.
std::array<std::size_t, 2> tree_range(const model::model& m, const predict_options& o);

// [rows, columns] of the output: prediction_columns() for values, the trees in range for leaf
// indexes. Throws as prediction_columns() and tree_range().
std::array<std::int64_t, 2> output_shape(const model::model& m, const predict_options& o, std::int64_t rows);

// Evaluates `m` on the rows of `p` (a pool on a GPU context, columns in device, managed or pinned
// memory) into `out` (device or managed memory of the context's device; [rows, columns], or [rows]
// for one column; float32/float64, leaf indexes also int32/uint32/int64/uint64; any non-overlapping
// strides). Enqueues on `stream` (nullptr: the pool's context stream) and returns without waiting,
// except on the first call for a device, which uploads the model and waits for that copy. No data
// comes back to the host. Thread-safe for one model and pool from many threads (`cache` belongs to
// the model). The pool's data must be ready for `stream` (work on other streams is not waited for).
void predict_to_device(device_model_cache& cache, const model::model& m, const pool& p, const predict_options& o,
                       const mutable_tensor_view& out, cudaStream_t stream, const tiling_policy* policy = nullptr);

// The same with `out` in host memory: on a GPU context the results are computed on the device and
// copied back (accounted; refused above 64 KiB in strict mode); on a CPU context the host evaluator
// reads the pool's columns. Blocks until `out` is written.
void predict_to_host(device_model_cache& cache, const model::model& m, const pool& p, const predict_options& o,
                     const mutable_tensor_view& out, cudaStream_t stream);

}  // namespace cbg::apply
