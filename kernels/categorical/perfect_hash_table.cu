// SPDX-License-Identifier: Apache-2.0
// Perfect hashing on the GPU through an open-addressing hash table (perfect_hash_device_table):
// the same ids, keys and counts as perfect_hash_device (first appearance), deterministic although
// the table is filled with atomics, because the ids come from sorting the distinct values by their
// first row, which is unique per value:
//  1. insert: each row finds or claims its value's slot (64-bit CAS of key | occupied bit), then
//     atomicMin of its row into the slot's first row and atomicAdd of its count; the slot is kept
//     per row. The table starts small (L2-resident) and is rebuilt larger when too many values come;
//  2. compact the occupied slots (order irrelevant) and radix-sort them by first row: position = id;
//  3. per slot its id; per id its key and count; per row the id of its slot.
#include <cub/device/device_radix_sort.cuh>

#include "kernels/common/cccl.cuh"

#include <algorithm>
#include <vector>

#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::categorical {

namespace {

constexpr int table_block = 256;
constexpr unsigned long long occupied = 1ull << 32;

unsigned blocks_of(std::int64_t n) { return static_cast<unsigned>((n + table_block - 1) / table_block); }

__device__ __forceinline__ std::uint32_t slot_hash(std::uint32_t k) {
  // A 32-bit finalizer (murmur3's), so clustered CatBoost hashes spread over the table.
  k ^= k >> 16;
  k *= 0x85ebca6bu;
  k ^= k >> 13;
  k *= 0xc2b2ae35u;
  k ^= k >> 16;
  return k;
}

struct table_state {
  unsigned long long* slots;  // [capacity]: 0 empty, else occupied | key
  std::uint32_t* first_row;   // [capacity]
  std::uint32_t* count;       // [capacity]
  std::uint32_t mask;         // capacity - 1
  std::uint32_t limit;        // distinct values allowed before the table counts as full
  std::uint32_t* distinct;    // values inserted
  std::uint32_t* overflow;    // set when the table is too full: rebuild larger
};

__global__ __launch_bounds__(table_block) void insert_kernel(const std::uint32_t* hashes, std::int64_t rows,
                                                               table_state t, std::uint32_t* slot_of_row) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows) return;
  const std::uint32_t key = hashes[i];
  const unsigned long long tagged = occupied | key;
  std::uint32_t s = slot_hash(key) & t.mask;
  for (std::uint32_t probe = 0;; ++probe) {
    if (probe > t.mask || *static_cast<volatile std::uint32_t*>(t.overflow) != 0) {
      atomicExch(t.overflow, 1u);
      return;
    }
    unsigned long long cur = t.slots[s];
    if (cur == 0) {
      cur = atomicCAS(&t.slots[s], 0ull, tagged);
      if (cur == 0) {
        if (atomicAdd(t.distinct, 1u) >= t.limit) atomicExch(t.overflow, 1u);
        cur = tagged;
      }
    }
    if (cur == tagged) break;
    s = (s + 1) & t.mask;
  }
  atomicMin(&t.first_row[s], static_cast<std::uint32_t>(i));
  atomicAdd(&t.count[s], 1u);
  slot_of_row[i] = s;
}

__global__ __launch_bounds__(table_block) void compact_kernel(table_state t, std::uint32_t capacity,
                                                                std::uint32_t* n_out, std::uint32_t* first_rows,
                                                                std::uint32_t* slot_ids) {
  const std::uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= capacity || t.slots[s] == 0) return;
  const std::uint32_t k = atomicAdd(n_out, 1u);
  first_rows[k] = t.first_row[s];
  slot_ids[k] = s;
}

__global__ __launch_bounds__(table_block) void ids_kernel(table_state t, const std::uint32_t* slots_by_first,
                                                            std::int64_t unique, std::uint32_t* id_of_slot,
                                                            std::uint32_t* keys, std::uint32_t* counts) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= unique) return;
  const std::uint32_t s = slots_by_first[k];
  id_of_slot[s] = static_cast<std::uint32_t>(k);
  keys[k] = static_cast<std::uint32_t>(t.slots[s] & 0xffffffffull);
  counts[k] = t.count[s];
}

__global__ __launch_bounds__(table_block) void row_ids_kernel(const std::uint32_t* slot_of_row, std::int64_t rows,
                                                                const std::uint32_t* id_of_slot, std::uint32_t* ids) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows) ids[i] = id_of_slot[slot_of_row[i]];
}

std::uint32_t pow2_at_least(std::uint64_t n) {
  std::uint64_t c = 1;
  while (c < n) c <<= 1;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(c, std::uint64_t{1} << 31));
}

}  // namespace

device_perfect_hash perfect_hash_device_table(const context& ctx, const std::uint32_t* hashes, std::int64_t rows) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "perfect_hash_device_table needs a GPU context");
  CBG_EXPECTS(rows >= 0 && rows <= 0x3fffffff, status::invalid_argument,
              "perfect hashing (table): at most 2^30 - 1 rows per call");
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  device_perfect_hash out;
  out.ids = device_buffer<std::uint32_t>(static_cast<std::size_t>(rows), stream, res);
  if (rows == 0) return out;
  const auto n = static_cast<std::size_t>(rows);
  device_buffer<std::uint32_t> slot_of_row(n, stream, res);
  device_buffer<std::uint32_t> flags(3, stream, res);  // distinct, overflow, compacted count
  std::uint32_t host_flags[3] = {0, 0, 0};

  // Capacities tried: small (L2-resident, up to 64K values), 4M slots (up to 2M values), then one
  // that holds every row distinct. Each holds at most half its slots.
  const std::uint32_t full = pow2_at_least(2 * static_cast<std::uint64_t>(rows));
  std::vector<std::uint32_t> capacities;
  for (const std::uint32_t c : {std::uint32_t{1} << 17, std::uint32_t{1} << 22, full}) {
    if (capacities.empty() || c > capacities.back()) capacities.push_back(std::min(c, full));
    if (c >= full) break;
  }
  device_buffer<unsigned long long> slots;
  device_buffer<std::uint32_t> first_row, count;
  table_state t{};
  std::uint32_t capacity = 0;
  for (const std::uint32_t cap : capacities) {
    capacity = cap;
    slots = device_buffer<unsigned long long>(cap, stream, res);
    first_row = device_buffer<std::uint32_t>(cap, stream, res);
    count = device_buffer<std::uint32_t>(cap, stream, res);
    CBG_CUDA_TRY(cudaMemsetAsync(slots.data(), 0, slots.size_bytes(), stream));
    CBG_CUDA_TRY(cudaMemsetAsync(first_row.data(), 0xff, first_row.size_bytes(), stream));
    CBG_CUDA_TRY(cudaMemsetAsync(count.data(), 0, count.size_bytes(), stream));
    CBG_CUDA_TRY(cudaMemsetAsync(flags.data(), 0, flags.size_bytes(), stream));
    t = table_state{slots.data(), first_row.data(), count.data(), cap - 1, cap / 2, flags.data(), flags.data() + 1};
    insert_kernel<<<blocks_of(rows), table_block, 0, stream>>>(hashes, rows, t, slot_of_row.data());
    CBG_CHECK_CUDA(stream);
    copy_bytes(host_flags, memory_kind::host, flags.data(), memory_kind::device, 2 * sizeof(std::uint32_t), stream,
               ctx.copies(), ctx.rules(), CBG_COPY_SITE("perfect hashing (table): distinct count"));
    CBG_CUDA_TRY(cudaStreamSynchronize(stream));
    if (host_flags[1] == 0) break;
    CBG_EXPECTS(cap < full, status::internal, "perfect hashing (table): the largest table overflowed");
  }
  const std::uint32_t unique = host_flags[0];
  out.unique = unique;
  const auto u = static_cast<std::size_t>(unique);
  device_buffer<std::uint32_t> firsts(u, stream, res), slot_ids(u, stream, res), firsts_sorted(u, stream, res),
      slots_by_first(u, stream, res), id_of_slot(capacity, stream, res);
  out.keys = device_buffer<std::uint32_t>(u, stream, res);
  out.counts = device_buffer<std::uint32_t>(u, stream, res);
  compact_kernel<<<blocks_of(capacity), table_block, 0, stream>>>(t, capacity, flags.data() + 2, firsts.data(),
                                                                   slot_ids.data());
  int bits = 1;
  while (bits < 32 && (std::uint64_t{1} << bits) < static_cast<std::uint64_t>(rows)) ++bits;
  std::size_t sort_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, firsts.data(), firsts_sorted.data(),
                                               slot_ids.data(), slots_by_first.data(), static_cast<int>(unique), 0,
                                               bits, stream));
  device_buffer<unsigned char> temp(std::max<std::size_t>(sort_bytes, 1), stream, res);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), sort_bytes, firsts.data(), firsts_sorted.data(),
                                               slot_ids.data(), slots_by_first.data(), static_cast<int>(unique), 0,
                                               bits, stream));
  ids_kernel<<<blocks_of(unique), table_block, 0, stream>>>(t, slots_by_first.data(), unique, id_of_slot.data(),
                                                             out.keys.data(), out.counts.data());
  row_ids_kernel<<<blocks_of(rows), table_block, 0, stream>>>(slot_of_row.data(), rows, id_of_slot.data(),
                                                               out.ids.data());
  CBG_CHECK_CUDA(stream);
  return out;
}

}  // namespace cbg::categorical
