// SPDX-License-Identifier: Apache-2.0
// Labels and targets of the boosting loop on the GPU: label facts, targets under the rule, weights.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

__global__ void label_facts_kernel(column_view c, std::int64_t n, label_facts_dev* out) {
  const double first = c.value(0);
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double v = c.value(r);
    atomicMin(&out->min_key, static_cast<unsigned long long>(order_key(v)));
    atomicMax(&out->max_key, static_cast<unsigned long long>(order_key(v)));
    if (v != floor(v)) atomicOr(&out->non_integer, 1u);
    if (v != first) atomicOr(&out->non_constant, 1u);
  }
}

__global__ void targets_kernel(column_view c, target_rule rule, std::int64_t n, std::int64_t first_row, float* out,
                               unsigned long long* first_bad) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float t = 0.f;
    const target_problem p = target_of(rule, c.value(r), t);
    out[r] = t;
    if (p != target_problem::none) {
      atomicMin(first_bad, (static_cast<unsigned long long>(r + first_row) << 8) | static_cast<unsigned>(p));
    }
  }
}

__global__ void value_at_kernel(column_view c, std::int64_t r, double* out) { *out = c.value(r); }

__global__ void to_float_kernel(column_view c, std::int64_t n, float* out) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = static_cast<float>(c.value(r));
  }
}

__global__ void fill_kernel(float* out, std::int64_t n, float v) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[r] = v;
  }
}

}  // namespace

void label_facts(const column_view& c, std::int64_t n, label_facts_dev* out, cudaStream_t stream) {
  label_facts_kernel<<<grid_of(n), 256, 0, stream>>>(c, n, out);
  CBG_CHECK_CUDA(stream);
}

void targets(const column_view& c, const target_rule& rule, std::int64_t n, std::int64_t first_row, float* out,
             unsigned long long* first_bad, cudaStream_t stream) {
  targets_kernel<<<grid_of(n), 256, 0, stream>>>(c, rule, n, first_row, out, first_bad);
  CBG_CHECK_CUDA(stream);
}

void value_at(const column_view& c, std::int64_t r, double* out, cudaStream_t stream) {
  value_at_kernel<<<1, 1, 0, stream>>>(c, r, out);
  CBG_CHECK_CUDA(stream);
}

void to_float(const column_view& c, std::int64_t n, float* out, cudaStream_t stream) {
  to_float_kernel<<<grid_of(n), 256, 0, stream>>>(c, n, out);
  CBG_CHECK_CUDA(stream);
}

void fill(float* out, std::int64_t n, float v, cudaStream_t stream) {
  fill_kernel<<<grid_of(n), 256, 0, stream>>>(out, n, v);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
