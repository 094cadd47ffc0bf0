// SPDX-License-Identifier: Apache-2.0
// class_names on the GPU (kernels/train/class_labels.hpp): the same lookup as the host
// (class_labels.hpp), the first unknown row found with an atomic minimum.
#include "kernels/train/class_labels.hpp"

#include <algorithm>

#include "cbg/core/cuda_check.hpp"
#include "cbg/train/class_labels.hpp"

namespace cbg::train::launch {

namespace {

__global__ void relabel_kernel(column_view labels, const double* sorted_names, const float* class_of, int count,
                               float* out, unsigned long long* first_bad) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < labels.size;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float k = class_index_of(labels.value(i), sorted_names, class_of, count);
    out[i] = k;
    if (k < 0) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace

void relabel(const column_view& labels, const double* sorted_names, const float* class_of, int count, float* out,
             unsigned long long* first_bad, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((labels.size + 255) / 256, 1, 65535));
  relabel_kernel<<<blocks, 256, 0, stream>>>(labels, sorted_names, class_of, count, out, first_bad);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
