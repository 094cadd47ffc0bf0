// SPDX-License-Identifier: Apache-2.0
// counter_calc Full's new keys on the GPU (ctr_device.hpp unseen_keys; the flow: src/ctr/unseen_keys.hpp):
// the marked eval rows sorted by (key, row), one entry per distinct key with its first row and its
// row count. Only those category-sized arrays are read back.

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "kernels/common/cccl.cuh"
#include "kernels/ctr/ctr_kernels.cuh"
#include "kernels/ctr/ctr_device.hpp"

namespace cbg::ctr::detail {

namespace {

__global__ void row_numbers_kernel(std::int64_t n, std::uint32_t* rows) {
  const std::int64_t i = thread_index();
  if (i < n) rows[i] = static_cast<std::uint32_t>(i);
}

// heads[i]: position i starts a run of a new key; *end: the marked rows' count (the marker sorts
// last and starts no run).
__global__ void unseen_heads_kernel(const std::uint64_t* sorted, std::int64_t n, std::uint8_t* heads,
                                    std::uint32_t* end) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const bool marked = sorted[i] != model::ctr_empty_hash;
  heads[i] = marked && (i == 0 || sorted[i - 1] != sorted[i]) ? 1 : 0;
  if (marked && (i + 1 == n || sorted[i + 1] == model::ctr_empty_hash)) *end = static_cast<std::uint32_t>(i + 1);
}

// Run j's key, first row (the sort keeps rows ascending within a key) and row count.
__global__ void unseen_runs_kernel(const std::uint64_t* sorted, const std::uint32_t* rows, const std::uint32_t* heads,
                                   const int* runs, const std::uint32_t* end, std::uint64_t* keys, std::uint32_t* first,
                                   std::int32_t* counts) {
  const std::int64_t j = thread_index();
  if (j >= *runs) return;
  const std::uint32_t at = heads[j];
  keys[j] = sorted[at];
  first[j] = rows[at];
  counts[j] = static_cast<std::int32_t>((j + 1 < *runs ? heads[j + 1] : *end) - at);
}

}  // namespace

unseen_key_counts unseen_keys(const context& ctx, std::uint64_t* marked, std::int64_t n) {
  unseen_key_counts out;
  if (n <= 0) return out;
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  const auto un = static_cast<std::size_t>(n);
  device_buffer<std::uint64_t> keys_alt(un, stream, res);
  device_buffer<std::uint32_t> rows(un, stream, res), rows_alt(un, stream, res), heads(un, stream, res);
  device_buffer<std::uint8_t> flags(un, stream, res);
  device_buffer<int> runs(1, stream, res);
  device_buffer<std::uint32_t> end(1, stream, res);
  row_numbers_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(n, rows.data());
  CBG_CHECK_CUDA(stream);

  // The caller's marks are the sort's first buffer (sorted in place: no copy of them).
  cub::DoubleBuffer<std::uint64_t> k(marked, keys_alt.data());
  cub::DoubleBuffer<std::uint32_t> r(rows.data(), rows_alt.data());
  std::size_t sort_bytes = 0, select_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, k, r, n, 0, 64, stream));
  CBG_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, select_bytes, static_cast<const std::uint32_t*>(nullptr),
                                          static_cast<const std::uint8_t*>(nullptr),
                                          static_cast<std::uint32_t*>(nullptr), static_cast<int*>(nullptr), n, stream));
  device_buffer<std::byte> temp(std::max(sort_bytes, select_bytes), stream, res);
  std::size_t bytes = temp.size();
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, k, r, n, 0, 64, stream));
  unseen_heads_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(k.Current(), n, flags.data(), end.data());
  CBG_CHECK_CUDA(stream);
  // The head positions, in order (positions 0..n-1 of the sorted arrays, selected by flags).
  device_buffer<std::uint32_t> positions(un, stream, res);
  row_numbers_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(n, positions.data());
  CBG_CHECK_CUDA(stream);
  bytes = temp.size();
  CBG_CUDA_TRY(cub::DeviceSelect::Flagged(temp.data(), bytes, positions.data(), flags.data(), heads.data(), runs.data(),
                                          n, stream));
  const int count = download(ctx, runs.data(), 1, "counter_calc Full's new keys")[0];
  if (count == 0) return out;
  const auto uc = static_cast<std::size_t>(count);
  device_buffer<std::uint64_t> keys(uc, stream, res);
  device_buffer<std::uint32_t> first(uc, stream, res);
  device_buffer<std::int32_t> counts(uc, stream, res);
  unseen_runs_kernel<<<blocks_for(count), ctr_block, 0, stream>>>(k.Current(), r.Current(), heads.data(), runs.data(),
                                                                  end.data(), keys.data(), first.data(), counts.data());
  CBG_CHECK_CUDA(stream);
  out.keys = download(ctx, keys.data(), uc, "counter_calc Full's new keys");
  out.first_rows = download(ctx, first.data(), uc, "counter_calc Full's new keys");
  out.counts = download(ctx, counts.data(), uc, "counter_calc Full's new key counts");
  return out;
}

}  // namespace cbg::ctr::detail
