// SPDX-License-Identifier: Apache-2.0
// class_names on the GPU: the same lookup as the host (class_labels.hpp), the first unknown row
// found with an atomic minimum.
#include <algorithm>
#include <limits>

#include "cbg/core/cuda_check.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/train/class_labels.hpp"

namespace cbg::train {

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

std::int64_t relabel_device(const context& ctx, const column_view& labels, const class_lookup& lookup, float* out) {
  scoped_device guard(ctx.device());
  const cudaStream_t s = ctx.stream();
  const std::size_t count = lookup.sorted_names.size();
  device_buffer<double> names(count, s, ctx.resource());
  device_buffer<float> classes(count, s, ctx.resource());
  device_buffer<unsigned long long> first_bad(1, s, ctx.resource());
  const unsigned long long none = std::numeric_limits<unsigned long long>::max();
  const auto h2d = [&](void* dst, const void* src, std::size_t bytes) {
    copy_bytes(dst, memory_kind::device, src, memory_kind::host, bytes, s, ctx.copies(), ctx.rules(),
               CBG_COPY_SITE("trainer: class_names lookup"));
  };
  h2d(names.data(), lookup.sorted_names.data(), count * sizeof(double));
  h2d(classes.data(), lookup.class_of.data(), count * sizeof(float));
  h2d(first_bad.data(), &none, sizeof(none));
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((labels.size + 255) / 256, 1, 65535));
  relabel_kernel<<<blocks, 256, 0, s>>>(labels, names.data(), classes.data(), static_cast<int>(count), out,
                                        first_bad.data());
  CBG_CHECK_CUDA(s);
  unsigned long long bad = none;
  copy_bytes(&bad, memory_kind::host, first_bad.data(), memory_kind::device, sizeof(bad), s, ctx.copies(),
             ctx.rules(), CBG_COPY_SITE("trainer: class_names first unknown row"));
  return bad == none ? -1 : static_cast<std::int64_t>(bad);
}

}  // namespace cbg::train
