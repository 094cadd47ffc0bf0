// SPDX-License-Identifier: Apache-2.0
// GPU quantizer: gather the border subset of every feature, sort each feature's subset (CUB
// segmented radix sort), run the GreedyLogSum search per feature, then binarize every value into
// the packed bin index (layout: quantizer.hpp). The math is quantize_math.hpp, shared with the
// host reference (src/quantize/quantize_host.cpp), so the GPU result equals it bit for bit.
#include <algorithm>
#include <string>
#include <vector>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "kernels/common/cccl.cuh"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::quantize {

namespace {

constexpr int gather_block = 256;
constexpr int greedy_block = 32;
constexpr int binarize_block = 256;
constexpr int binarize_rows_per_thread = 8;

// keys[f * m + i] = value of feature f at subset row i (NaN canonical); counts the NaNs.
__global__ __launch_bounds__(gather_block) void gather_subset_kernel(
    const column_view* columns, std::int64_t features, const std::uint32_t* subset,
    std::uint32_t m, const std::int32_t* border_count, float* keys, unsigned int* nan_counts) {
  for (std::int64_t f = blockIdx.y; f < features; f += gridDim.y) {
    const column_view c = columns[f];
    const bool active = border_count[f] != 0;
    unsigned int nans = 0;
    for (std::uint32_t i = blockIdx.x * gather_block + threadIdx.x; i < m;
         i += gridDim.x * gather_block) {
      float v = 0.0f;
      if (active) {
        v = to_feature_float(c.value(subset != nullptr ? subset[i] : i));
        nans += is_nan(v) ? 1u : 0u;
      }
      keys[static_cast<std::size_t>(f) * m + i] = v;
    }
    using reduce = cub::BlockReduce<unsigned int, gather_block>;
    __shared__ typename reduce::TempStorage temp;
    const unsigned int block_nans = reduce(temp).Sum(nans);
    if (threadIdx.x == 0 && block_nans != 0) atomicAdd(&nan_counts[f], block_nans);
    __syncthreads();
  }
}

// One thread per feature: the greedy search over its sorted subset, then the NaN border.
__global__ __launch_bounds__(greedy_block) void greedy_borders_kernel(
    const float* sorted, std::uint32_t m, std::int64_t features, const std::int32_t* requested_count,
    const std::uint8_t* requested_mode, const unsigned int* nan_counts, const double* log_table,
    greedy_bin* heaps, std::uint32_t* starts, float* borders, std::int32_t* border_count,
    std::uint8_t* mode_out, int* error_feature) {
  const std::int64_t f = blockIdx.x * static_cast<std::int64_t>(greedy_block) + threadIdx.x;
  if (f >= features) return;
  const int k = requested_count[f];
  float* out = borders + f * border_stride;
  if (k == 0) {
    border_count[f] = 0;
    mode_out[f] = static_cast<std::uint8_t>(nan_mode::forbidden);
    return;
  }
  const bool has_nan = nan_counts[f] != 0;
  const auto requested = static_cast<nan_mode>(requested_mode[f]);
  if (has_nan && requested == nan_mode::forbidden) {
    atomicMin(error_feature, static_cast<int>(f));
    border_count[f] = 0;
    mode_out[f] = static_cast<std::uint8_t>(nan_mode::forbidden);
    return;
  }
  const std::uint32_t valid = m - nan_counts[f];
  int count = greedy_log_sum_borders(sorted + static_cast<std::size_t>(f) * m, valid,
                                     search_border_budget(k, has_nan), log_table,
                                     heaps + f * greedy_heap_capacity, starts + f * border_stride,
                                     out);
  const nan_mode mode = effective_nan_mode(requested, has_nan);
  count = add_nan_border(out, count, mode);
  border_count[f] = count;
  mode_out[f] = static_cast<std::uint8_t>(mode);
}

// Block (group g, row tile): the four features' borders in shared memory, one word per row.
__global__ __launch_bounds__(binarize_block) void binarize_kernel(
    const column_view* columns, std::int64_t features, std::int64_t rows, std::int64_t padded_rows,
    const float* borders, const std::int32_t* border_count, const std::uint8_t* modes,
    std::uint32_t* index) {
  __shared__ float s_borders[4][border_stride];
  __shared__ int s_count[4];
  __shared__ std::uint8_t s_mode[4];
  __shared__ column_view s_cols[4];
  const std::int64_t g = blockIdx.x;
  const int lanes = static_cast<int>(std::min<std::int64_t>(4, features - 4 * g));
  if (threadIdx.x < 4) {
    const int j = static_cast<int>(threadIdx.x);
    s_count[j] = j < lanes ? border_count[4 * g + j] : 0;
    s_mode[j] = j < lanes ? modes[4 * g + j] : 0;
    if (j < lanes) s_cols[j] = columns[4 * g + j];
  }
  for (int t = static_cast<int>(threadIdx.x); t < 4 * border_stride; t += binarize_block) {
    const int j = t / border_stride;
    s_borders[j][t % border_stride] = j < lanes ? borders[(4 * g + j) * border_stride + t % border_stride] : 0.0f;
  }
  __syncthreads();
  const std::int64_t tile = static_cast<std::int64_t>(binarize_block) * binarize_rows_per_thread;
  for (std::int64_t base = blockIdx.y * tile; base < padded_rows;
       base += static_cast<std::int64_t>(gridDim.y) * tile) {
#pragma unroll
    for (int k = 0; k < binarize_rows_per_thread; ++k) {
      const std::int64_t r = base + k * binarize_block + threadIdx.x;
      if (r >= padded_rows) break;
      std::uint32_t word = 0;
      if (r < rows) {
        for (int j = 0; j < lanes; ++j) {
          if (s_count[j] == 0) continue;
          const float v = to_feature_float(s_cols[j].value(r));
          word |= bin_of(v, s_borders[j], s_count[j], static_cast<nan_mode>(s_mode[j])) << (8 * j);
        }
      }
      index[g * padded_rows + r] = word;
    }
  }
}

void mark(cudaEvent_t e, cudaStream_t stream) {
  if (e != nullptr) CBG_CUDA_TRY(cudaEventRecord(e, stream));
}

template <class T>
device_buffer<T> upload(const std::vector<T>& host, const context& ctx, const char* what) {
  device_buffer<T> d(host.size(), ctx.stream(), ctx.resource());
  if (!host.empty()) {
    copy_bytes(d.data(), memory_kind::device, host.data(), memory_kind::host, d.size_bytes(),
               ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE(what));
  }
  return d;
}

}  // namespace

device_quantized quantize_device(const pool& p, const options& o, const stage_marks* marks) {
  const stage_marks none{};
  const stage_marks& at = marks != nullptr ? *marks : none;
  const context& ctx = *p.ctx();
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "quantize_device needs a GPU context");
  for (const column_view& c : p.features()) {
    CBG_EXPECTS(c.memory != memory_kind::host, status::device,
                "quantize_device cannot read pageable host memory; use quantize_host");
  }
  const feature_settings settings = resolve_settings(p, o);
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  mark(at.start, stream);

  device_quantized q;
  q.rows = p.num_rows();
  q.features = p.num_features();
  q.padded_rows = padded_rows_of(q.rows);
  q.device = ctx.device();
  const std::int64_t nf = q.features;
  const std::int64_t groups = groups_of(nf);
  q.borders = device_buffer<float>(static_cast<std::size_t>(nf * border_stride), stream, ctx.resource());
  q.border_count = device_buffer<std::int32_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  q.mode = device_buffer<std::uint8_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  q.index = device_buffer<std::uint32_t>(static_cast<std::size_t>(groups * q.padded_rows), stream,
                                         ctx.resource());
  if (nf == 0) return q;
  CBG_CUDA_TRY(cudaMemsetAsync(q.borders.data(), 0, q.borders.size_bytes(), stream));

  const device_buffer<column_view> columns = upload(p.features(), ctx, "quantizer column views");
  const device_buffer<std::int32_t> requested_count = upload(settings.border_count, ctx, "quantizer border counts");
  const device_buffer<std::uint8_t> requested_mode = upload(settings.mode, ctx, "quantizer nan modes");

  // 1. The border subset of every feature.
  const std::vector<std::uint32_t> subset_host =
      border_subset(static_cast<std::uint64_t>(q.rows), o.max_subset_size, ctx.seed());
  const std::uint32_t m = subset_host.empty() ? static_cast<std::uint32_t>(q.rows)
                                              : static_cast<std::uint32_t>(subset_host.size());
  const std::size_t total = static_cast<std::size_t>(nf) * m;
  CBG_EXPECTS(total < (1ULL << 31), status::unsupported,
              "the border subsets hold " + std::to_string(total) + " values; at most 2^31 - 1 are supported");
  int* error_feature_ptr = nullptr;
  device_buffer<int> error_feature(1, stream, ctx.resource());
  error_feature_ptr = error_feature.data();
  const int no_error = 0x7fffffff;
  copy_bytes(error_feature_ptr, memory_kind::device, &no_error, memory_kind::host, sizeof(int),
             stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("quantizer error flag"));

  if (m > 0) {
    const device_buffer<std::uint32_t> subset = upload(subset_host, ctx, "quantizer border subset");
    device_buffer<float> keys(total, stream, ctx.resource());
    device_buffer<float> sorted(total, stream, ctx.resource());
    device_buffer<unsigned int> nan_counts(static_cast<std::size_t>(nf), stream, ctx.resource());
    CBG_CUDA_TRY(cudaMemsetAsync(nan_counts.data(), 0, nan_counts.size_bytes(), stream));
    mark(at.setup, stream);
    {
      const unsigned gx = static_cast<unsigned>(std::min<std::uint32_t>((m + gather_block - 1) / gather_block, 1024u));
      const unsigned gy = static_cast<unsigned>(std::min<std::int64_t>(nf, 65535));
      gather_subset_kernel<<<dim3(gx, gy), gather_block, 0, stream>>>(
          columns.data(), nf, subset_host.empty() ? nullptr : subset.data(), m,
          requested_count.data(), keys.data(), nan_counts.data());
      CBG_CHECK_CUDA(stream);
    }
    mark(at.gather, stream);
    // 2. Sort each feature's subset; NaNs (canonical, positive) sort last.
    {
      std::vector<int> offsets_host(static_cast<std::size_t>(nf) + 1);
      for (std::int64_t f = 0; f <= nf; ++f) offsets_host[static_cast<std::size_t>(f)] = static_cast<int>(f * m);
      const device_buffer<int> offsets = upload(offsets_host, ctx, "quantizer segment offsets");
      std::size_t temp_bytes = 0;
      CBG_CUDA_TRY(cub::DeviceSegmentedRadixSort::SortKeys(
          nullptr, temp_bytes, keys.data(), sorted.data(), static_cast<int>(total),
          static_cast<int>(nf), offsets.data(), offsets.data() + 1, 0, 32, stream));
      device_buffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1), stream, ctx.resource());
      CBG_CUDA_TRY(cub::DeviceSegmentedRadixSort::SortKeys(
          temp.data(), temp_bytes, keys.data(), sorted.data(), static_cast<int>(total),
          static_cast<int>(nf), offsets.data(), offsets.data() + 1, 0, 32, stream));
    }
    keys.reset();
    mark(at.sort, stream);
    // 3. GreedyLogSum per feature.
    const device_buffer<double> logs = upload(greedy_log_table(m), ctx, "quantizer log table");
    device_buffer<greedy_bin> heaps(static_cast<std::size_t>(nf) * greedy_heap_capacity, stream, ctx.resource());
    device_buffer<std::uint32_t> starts(static_cast<std::size_t>(nf) * border_stride, stream, ctx.resource());
    greedy_borders_kernel<<<static_cast<unsigned>((nf + greedy_block - 1) / greedy_block), greedy_block, 0, stream>>>(
        sorted.data(), m, nf, requested_count.data(), requested_mode.data(), nan_counts.data(),
        logs.data(), heaps.data(), starts.data(), q.borders.data(), q.border_count.data(),
        q.mode.data(), error_feature_ptr);
    CBG_CHECK_CUDA(stream);
    mark(at.borders, stream);
  } else {
    CBG_CUDA_TRY(cudaMemsetAsync(q.border_count.data(), 0, q.border_count.size_bytes(), stream));
    CBG_CUDA_TRY(cudaMemsetAsync(q.mode.data(), 0, q.mode.size_bytes(), stream));
  }

  // 4. Binarize every value.
  if (q.padded_rows > 0) {
    const std::int64_t tile = static_cast<std::int64_t>(binarize_block) * binarize_rows_per_thread;
    const unsigned gy = static_cast<unsigned>(std::min<std::int64_t>((q.padded_rows + tile - 1) / tile, 65535));
    CBG_EXPECTS(groups <= 0x7fffffff, status::unsupported, "too many feature groups");
    binarize_kernel<<<dim3(static_cast<unsigned>(groups), gy), binarize_block, 0, stream>>>(
        columns.data(), nf, q.rows, q.padded_rows, q.borders.data(), q.border_count.data(),
        q.mode.data(), q.index.data());
    CBG_CHECK_CUDA(stream);
  }
  mark(at.binarize, stream);

  int error_host = no_error;
  copy_bytes(&error_host, memory_kind::host, error_feature_ptr, memory_kind::device, sizeof(int),
             stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("quantizer error flag"));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  CBG_EXPECTS(error_host == no_error, status::bad_data,
              "feature " + std::to_string(error_host) + " has NaN values and its nan_mode is Forbidden");
  return q;
}

}  // namespace cbg::quantize
