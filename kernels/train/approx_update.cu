// SPDX-License-Identifier: Apache-2.0
// The approxes on the GPU: their start (bias and baseline), a tree's leaf values added on the learn rows
// (by leaf index) and the eval rows (by the splits), the border values of a tree's splits, and the
// leaves of a tree searched on another permutation's columns.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

__global__ void start_kernel(start_args a, std::int64_t n, double* approx) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    for (int k = 0; k < a.dims; ++k) {
      double v = a.bias[k];
      if (a.has_baseline) v += a.baseline[k].value(r);
      approx[k * n + r] = v;
    }
  }
}

__global__ void apply_learn_kernel(double* approx, std::int64_t n, int dims, const std::uint32_t* leaf,
                                   const double* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t at = static_cast<std::int64_t>(leaf[r]) * dims;
    for (int k = 0; k < dims; ++k) approx[k * n + r] += delta[at + k];
  }
}

__global__ void apply_eval_kernel(double* approx, std::int64_t n, int dims, eval_tree tree, const double* delta) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t leaf = 0;
    for (int s = 0; s < tree.count; ++s) {
      const float v = quantize::to_feature_float(tree.column[s].value(r));
      leaf |= (split_is_one(tree.split[s], v) ? 1u : 0u) << s;
    }
    for (int k = 0; k < dims; ++k) approx[k * n + r] += delta[static_cast<std::int64_t>(leaf) * dims + k];
  }
}

__global__ void tree_leaves_kernel(quantize::quantized_rows q, quantized_tree tree, std::uint32_t* leaf) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < q.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    leaf[r] = quantized_leaf(q, tree.splits, tree.count, r, tree.columns);
  }
}

}  // namespace

void start_approx(const start_args& a, std::int64_t n, double* approx, cudaStream_t stream) {
  start_kernel<<<grid_of(n), 256, 0, stream>>>(a, n, approx);
  CBG_CHECK_CUDA(stream);
}

void apply_learn(double* approx, std::int64_t n, int dims, const std::uint32_t* leaf, const double* delta,
                 cudaStream_t stream) {
  apply_learn_kernel<<<grid_of(n), 256, 0, stream>>>(approx, n, dims, leaf, delta);
  CBG_CHECK_CUDA(stream);
}

void apply_eval(double* approx, std::int64_t n, int dims, const eval_tree& tree, const double* delta,
                cudaStream_t stream) {
  apply_eval_kernel<<<grid_of(n), 256, 0, stream>>>(approx, n, dims, tree, delta);
  CBG_CHECK_CUDA(stream);
}

void tree_leaves(const quantize::quantized_rows& q, const quantized_tree& tree, std::uint32_t* leaf,
                 cudaStream_t stream) {
  if (q.rows == 0) return;
  tree_leaves_kernel<<<grid_of(q.rows), 256, 0, stream>>>(q, tree, leaf);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
