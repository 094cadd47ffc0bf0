// SPDX-License-Identifier: Apache-2.0
// Perfect hashing on the GPU without hash tables, so the result is deterministic:
//  1. stable radix sort of (hash, row): equal hashes form runs, each run in row order;
//  2. run heads flagged and scanned: run index per sorted position, the distinct count;
//  3. per run: its first row (the head's row: the sort is stable), key and length;
//  4. radix sort of the runs by first row: a run's position there is its id (first appearance);
//  5. scatter: ids per row, keys and counts per id.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/common/cccl.cuh"

#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::categorical {

namespace {

constexpr int ph_block = 256;

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + ph_block - 1) / ph_block); }

__global__ void iota_kernel(std::uint32_t* out, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<std::uint32_t>(i);
}

__global__ void head_flags_kernel(const std::uint32_t* sorted, std::int64_t n, std::uint32_t* flags) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) flags[i] = (i == 0 || sorted[i] != sorted[i - 1]) ? 1u : 0u;
}

// For each head: the run's first row, key and start position (run = inclusive scan - 1).
__global__ void runs_kernel(const std::uint32_t* sorted_hashes, const std::uint32_t* sorted_rows,
                            const std::uint32_t* run_plus_one, std::int64_t n, std::uint32_t* first_row,
                            std::uint32_t* run_key, std::uint32_t* run_start) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n || (i != 0 && sorted_hashes[i] == sorted_hashes[i - 1])) return;
  const std::uint32_t run = run_plus_one[i] - 1;
  first_row[run] = sorted_rows[i];
  run_key[run] = sorted_hashes[i];
  run_start[run] = static_cast<std::uint32_t>(i);
}

// runs_by_first[k] is the run whose id is k: publish its key and count, remember its id.
__global__ void ids_of_runs_kernel(const std::uint32_t* runs_by_first, const std::uint32_t* run_key,
                                   const std::uint32_t* run_start, std::int64_t unique, std::int64_t n,
                                   std::uint32_t* id_of_run, std::uint32_t* keys, std::uint32_t* counts) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= unique) return;
  const std::uint32_t run = runs_by_first[k];
  id_of_run[run] = static_cast<std::uint32_t>(k);
  keys[k] = run_key[run];
  const std::uint32_t end = run + 1 < unique ? run_start[run + 1] : static_cast<std::uint32_t>(n);
  counts[k] = end - run_start[run];
}

__global__ void ids_of_rows_kernel(const std::uint32_t* sorted_rows, const std::uint32_t* run_plus_one,
                                   const std::uint32_t* id_of_run, std::int64_t n, std::uint32_t* ids) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) ids[sorted_rows[i]] = id_of_run[run_plus_one[i] - 1];
}

}  // namespace

device_perfect_hash perfect_hash_device(const context& ctx, const std::uint32_t* hashes, std::int64_t rows) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "perfect_hash_device needs a GPU context");
  CBG_EXPECTS(rows >= 0 && rows <= 0x7fffffff, status::invalid_argument,
              "perfect hashing: at most 2^31 - 1 rows per call");
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  device_perfect_hash out;
  out.ids = device_buffer<std::uint32_t>(static_cast<std::size_t>(rows), stream, res);
  if (rows == 0) return out;
  const auto n = static_cast<std::size_t>(rows);
  const int n_items = static_cast<int>(rows);  // CUB's item counts are int here (checked above)

  device_buffer<std::uint32_t> sorted_hashes(n, stream, res), rows_in(n, stream, res), sorted_rows(n, stream, res),
      run_plus_one(n, stream, res);
  iota_kernel<<<blocks_for(rows), ph_block, 0, stream>>>(rows_in.data(), rows);
  CBG_CHECK_CUDA(stream);

  std::size_t sort_bytes = 0, scan_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, hashes, sorted_hashes.data(), rows_in.data(),
                                               sorted_rows.data(), n_items, 0, 32, stream));
  CBG_CUDA_TRY(
      cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, run_plus_one.data(), run_plus_one.data(), n_items, stream));
  device_buffer<unsigned char> temp(std::max(sort_bytes, scan_bytes), stream, res);
  std::size_t temp_bytes = temp.size();
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, hashes, sorted_hashes.data(), rows_in.data(),
                                               sorted_rows.data(), n_items, 0, 32, stream));
  head_flags_kernel<<<blocks_for(rows), ph_block, 0, stream>>>(sorted_hashes.data(), rows, run_plus_one.data());
  CBG_CHECK_CUDA(stream);
  temp_bytes = temp.size();
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, run_plus_one.data(), run_plus_one.data(), n_items,
                                             stream));
  std::uint32_t unique = 0;
  copy_bytes(&unique, memory_kind::host, run_plus_one.data() + (n - 1), memory_kind::device, sizeof(unique), stream,
             ctx.copies(), ctx.rules(), CBG_COPY_SITE("perfect hashing: distinct count"));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  out.unique = unique;

  const auto u = static_cast<std::size_t>(unique);
  device_buffer<std::uint32_t> first_row(u, stream, res), run_key(u, stream, res), run_start(u, stream, res),
      run_index(u, stream, res), runs_by_first(u, stream, res), first_sorted(u, stream, res), id_of_run(u, stream, res);
  out.keys = device_buffer<std::uint32_t>(u, stream, res);
  out.counts = device_buffer<std::uint32_t>(u, stream, res);
  runs_kernel<<<blocks_for(rows), ph_block, 0, stream>>>(sorted_hashes.data(), sorted_rows.data(), run_plus_one.data(),
                                                         rows, first_row.data(), run_key.data(), run_start.data());
  iota_kernel<<<blocks_for(unique), ph_block, 0, stream>>>(run_index.data(), unique);
  CBG_CHECK_CUDA(stream);
  // First rows are distinct and below rows: sort only the bits they use.
  int bits = 1;
  while (bits < 32 && (std::uint64_t{1} << bits) < static_cast<std::uint64_t>(rows)) ++bits;
  std::size_t runs_sort_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, runs_sort_bytes, first_row.data(), first_sorted.data(),
                                               run_index.data(), runs_by_first.data(), static_cast<int>(unique), 0,
                                               bits, stream));
  device_buffer<unsigned char> runs_temp(runs_sort_bytes, stream, res);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(runs_temp.data(), runs_sort_bytes, first_row.data(), first_sorted.data(),
                                               run_index.data(), runs_by_first.data(), static_cast<int>(unique), 0,
                                               bits, stream));
  ids_of_runs_kernel<<<blocks_for(unique), ph_block, 0, stream>>>(runs_by_first.data(), run_key.data(),
                                                                  run_start.data(), unique, rows, id_of_run.data(),
                                                                  out.keys.data(), out.counts.data());
  ids_of_rows_kernel<<<blocks_for(rows), ph_block, 0, stream>>>(sorted_rows.data(), run_plus_one.data(),
                                                                id_of_run.data(), rows, out.ids.data());
  CBG_CHECK_CUDA(stream);
  return out;
}

}  // namespace cbg::categorical
