// SPDX-License-Identifier: Apache-2.0
// The kernels of feature combinations from device data (ctr_device.hpp; the extension itself:
// src/ctr/combinations_device.cpp).

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/common/cccl.cuh"
#include "kernels/ctr/ctr_device.hpp"

#include "cbg/model/hash.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::ctr::detail {

namespace {

__device__ inline std::int64_t thread_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

// Every row's projection key as the model computes it (combination_key, then the split bits).
__global__ void keys_kernel(detail::key_plan p, std::int64_t n, std::uint64_t* keys) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  std::uint64_t h = 0;
  for (int k = 0; k < p.cats; ++k) h = model::projection_add_cat(h, p.cat[k][i]);
  for (int k = 0; k < p.floats; ++k) {
    h = model::projection_add_bit(h, train::split_is_one(p.fsplit[k], quantize::to_feature_float(p.fcol[k].value(i))));
  }
  for (int k = 0; k < p.one_hots; ++k)
    h = model::projection_add_bit(h, model::one_hot_split_true(p.oh[k][i], p.ohv[k]));
  keys[i] = h;
}

__global__ void rows_kernel(std::int64_t n, std::uint32_t* rows) {
  const std::int64_t i = thread_index();
  if (i < n) rows[i] = static_cast<std::uint32_t>(i);
}

// Sorted keys: 1 at the first of each run of equal keys.
__global__ void heads_kernel(const std::uint64_t* sorted, std::int64_t n, std::uint32_t* heads) {
  const std::int64_t i = thread_index();
  if (i < n) heads[i] = i == 0 || sorted[i] != sorted[i - 1] ? 1u : 0u;
}

// Per sorted position: the row's id (its key's rank among the distinct keys); per id its key and
// its first row (the stable sort keeps rows ascending within a key).
__global__ void ids_kernel(const std::uint64_t* sorted, const std::uint32_t* rows, const std::uint32_t* rank,
                           std::int64_t n, std::uint32_t* ids, std::uint64_t* keys, std::uint32_t* first) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::uint32_t id = rank[i] - 1;
  ids[rows[i]] = id;
  if (i == 0 || sorted[i] != sorted[i - 1]) {
    keys[id] = sorted[i];
    first[id] = rows[i];
  }
}

// counter_calc Full: eval rows whose key the learn rows have count too (keys sorted ascending).
__global__ void eval_counts_kernel(const std::uint64_t* eval_keys, std::int64_t n, const std::uint64_t* keys,
                                   std::uint32_t unique, std::int32_t* counts) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::uint64_t k = eval_keys[i];
  std::uint32_t lo = 0, hi = unique;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < unique && keys[lo] == k) atomicAdd(counts + lo, 1);
}

// The bins of the one feature of a quantized single-column pool (group 0, byte 0).
__global__ void feature_bins_kernel(const std::uint32_t* index, std::int64_t n, unsigned shift, std::uint8_t* bins) {
  const std::int64_t i = thread_index();
  if (i < n) bins[i] = static_cast<std::uint8_t>((index[i] >> shift) & 0xffu);
}

__global__ void eval_values_kernel(const std::uint64_t* keys, std::int64_t n, model::ctr_table_view t,
                                   model::ctr_calc c, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = model::ctr_value_of(t, c, keys[i]);
}

}  // namespace

void projection_keys(const context& ctx, const key_plan& plan, std::int64_t n, std::uint64_t* keys) {
  if (n <= 0) return;
  keys_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(plan, n, keys);
  CBG_CHECK_CUDA(ctx.stream());
}

std::size_t dense_ids(const context& ctx, const std::uint64_t* keys, std::int64_t n, std::uint32_t* ids,
                      std::uint64_t* keys_out, std::uint32_t* first_out) {
  if (n <= 0) return 0;
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  const auto un = static_cast<std::size_t>(n);
  const int n_items = static_cast<int>(n);
  device_buffer<std::uint64_t> sorted(un, stream, res);
  device_buffer<std::uint32_t> rows(un, stream, res), sorted_rows(un, stream, res), heads(un, stream, res),
      rank(un, stream, res);
  rows_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(n, rows.data());
  CBG_CHECK_CUDA(stream);
  std::size_t sort_bytes = 0, scan_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, sorted.data(), rows.data(),
                                               sorted_rows.data(), n_items, 0, 64, stream));
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, heads.data(), rank.data(), n_items, stream));
  device_buffer<unsigned char> temp(std::max(sort_bytes, scan_bytes), stream, res);
  std::size_t tb = temp.size();
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), tb, keys, sorted.data(), rows.data(), sorted_rows.data(),
                                               n_items, 0, 64, stream));
  heads_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(sorted.data(), n, heads.data());
  CBG_CHECK_CUDA(stream);
  tb = temp.size();
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.data(), tb, heads.data(), rank.data(), n_items, stream));
  ids_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(sorted.data(), sorted_rows.data(), rank.data(), n, ids, keys_out,
                                                      first_out);
  CBG_CHECK_CUDA(stream);
  return download(ctx, rank.data() + (n - 1), 1, "combination distinct count")[0];
}

void count_known_keys(const context& ctx, const std::uint64_t* keys, std::int64_t n, const std::uint64_t* sorted,
                      std::size_t unique, std::int32_t* counts) {
  if (n <= 0) return;
  eval_counts_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(keys, n, sorted, static_cast<std::uint32_t>(unique),
                                                                    counts);
  CBG_CHECK_CUDA(ctx.stream());
}

void feature_bins(const context& ctx, const std::uint32_t* index, std::int64_t padded_rows, std::int64_t f,
                  std::int64_t n, std::uint8_t* bins) {
  if (n <= 0) return;
  feature_bins_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(index + (f / 4) * padded_rows, n,
                                                                     static_cast<unsigned>(8 * (f % 4)), bins);
  CBG_CHECK_CUDA(ctx.stream());
}

void ctr_values_of_keys(const context& ctx, const std::uint64_t* keys, std::int64_t n, const model::ctr_table_view& t,
                        const model::ctr_calc& c, float* out) {
  if (n <= 0) return;
  eval_values_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(keys, n, t, c, out);
  CBG_CHECK_CUDA(ctx.stream());
}

}  // namespace cbg::ctr::detail
