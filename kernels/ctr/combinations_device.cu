// SPDX-License-Identifier: Apache-2.0
// The kernels of feature combinations from device data (ctr_device.hpp; the extension itself:
// src/ctr/combinations_device.cpp).

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <type_traits>

#include "kernels/common/cccl.cuh"
#include "kernels/ctr/ctr_kernels.cuh"
#include "kernels/ctr/ctr_device.hpp"

#include "cbg/model/hash.hpp"
#include "cbg/quantize/quantize_math.hpp"

namespace cbg::ctr::detail {

namespace {

// Row i's projection key as the model computes it (combination_key, then the split bits).
__device__ std::uint64_t projection_key(const key_plan& p, std::int64_t i) {
  std::uint64_t h = 0;
  for (int k = 0; k < p.cats; ++k) h = model::projection_add_cat(h, p.cat[k][i]);
  for (int k = 0; k < p.floats; ++k) {
    h = model::projection_add_bit(h, train::split_is_one(p.fsplit[k], quantize::to_feature_float(p.fcol[k].value(i))));
  }
  for (int k = 0; k < p.one_hots; ++k)
    h = model::projection_add_bit(h, model::one_hot_split_true(p.oh[k][i], p.ohv[k]));
  return h;
}

__global__ void keys_kernel(key_plan p, std::int64_t n, std::uint64_t* keys) {
  const std::int64_t i = thread_index();
  if (i < n) keys[i] = projection_key(p, i);
}

// The smallest row of each id into first[id] (initially ~0), for ids that ascend along the warp
// (runs of consecutive positions): per warp first, then one atomicMin per run piece, so a frequent
// key's rows do not all hit one address. Every lane of the warp calls it (invalid lanes with id ~0).
__device__ void first_rows_of_runs(bool valid, std::uint32_t id, std::uint32_t row, std::uint32_t* first) {
  const unsigned lane = threadIdx.x & 31u;
  for (unsigned off = 1; off < 32; off <<= 1) {
    const std::uint32_t other_row = __shfl_down_sync(0xffffffffu, row, off);
    const std::uint32_t other_id = __shfl_down_sync(0xffffffffu, id, off);
    if (lane + off < 32 && other_id == id && other_row < row) row = other_row;
  }
  const std::uint32_t before = __shfl_up_sync(0xffffffffu, id, 1);
  if (valid && (lane == 0 || before != id)) atomicMin(first + id, row);
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

// The slot of key k in an open-addressing table of mask + 1 slots (a power of two; linear probing,
// ~0 empty): slots 0 .. mask - 1 hold keys and slot mask stands for the key ~0 itself, so a slot
// number has log2(mask + 1) bits. The table must have more slots than there are distinct keys.
// Which key of a probe chain gets which slot may depend on timing; only the partition of the rows
// by key is used.
__device__ std::uint32_t key_slot(std::uint64_t k, unsigned shift, std::uint64_t mask, unsigned long long* table) {
  constexpr unsigned long long empty = ~0ull;
  if (k == empty) return static_cast<std::uint32_t>(mask);
  std::uint64_t h = (k * 0x9E3779B97F4A7C15ull) >> shift;
  if (h == mask) h = 0;
  for (;;) {
    unsigned long long cur = table[h];
    if (cur == empty) {
      cur = atomicCAS(table + h, empty, static_cast<unsigned long long>(k));
      if (cur == empty) break;
    }
    if (cur == k) break;
    h = h + 1 == mask ? 0 : h + 1;
  }
  return static_cast<std::uint32_t>(h);
}

// Per permutation position j: the slot of its row's projection key (no keys array), what the
// stable sort of the rows by slot in permutation order sorts.
__global__ void ordered_slots_kernel(key_plan p, const std::uint32_t* order, std::int64_t n, unsigned shift,
                                     std::uint64_t mask, unsigned long long* table, std::uint32_t* slots) {
  const std::int64_t j = thread_index();
  if (j < n) slots[j] = key_slot(projection_key(p, order[j]), shift, mask, table);
}

// One scan over the sorted slots gives every position its run's rank (the runs so far, the high
// half) and its run's first position (the greatest run head so far, the low half).
struct run_mark {
  const std::uint32_t* sorted;
  __host__ __device__ std::uint64_t operator()(std::uint32_t j) const {
    return j == 0 || sorted[j] != sorted[j - 1] ? (std::uint64_t{1} << 32) | j : std::uint64_t{0};
  }
};
struct runs_and_head {
  __host__ __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t head = (a & 0xffffffffu) > (b & 0xffffffffu) ? a & 0xffffffffu : b & 0xffffffffu;
    return (((a >> 32) + (b >> 32)) << 32) | head;
  }
};
// The scan's output step: position j's rank and the rows before it in its run.
struct write_run_mark {
  std::uint32_t* rank;
  std::uint32_t* total;
  __host__ __device__ void operator()(std::ptrdiff_t j, std::uint64_t v) const {
    rank[j] = static_cast<std::uint32_t>(v >> 32);
    total[j] = static_cast<std::uint32_t>(j) - static_cast<std::uint32_t>(v & 0xffffffffu);
  }
};

// Per sorted position j (runs in permutation order; rank[j]: the runs up to j, total[j]: the rows
// before j in its run): the id of its run, the row's id, and per id its key (computed from the run's
// first row: every row of a run has its key but for a 64-bit collision of a derived partition, which
// keys_match_kernel finds), first position (run start) and first row (the smallest).
__global__ void run_ids_kernel(const std::uint32_t* rank, const std::uint32_t* total, const std::uint32_t* sorted_rows,
                               key_plan plan, std::int64_t n, std::uint32_t* sorted_ids, std::uint32_t* ids,
                               std::uint64_t* keys, std::uint32_t* start, std::uint32_t* first) {
  const std::int64_t j = thread_index();
  const bool valid = j < n;
  std::uint32_t id = 0xffffffffu, row = 0xffffffffu;
  if (valid) {
    id = rank[j] - 1;
    row = sorted_rows[j];
    sorted_ids[j] = id;
    ids[row] = id;
    if (total[j] == 0) {
      keys[id] = projection_key(plan, row);
      start[id] = static_cast<std::uint32_t>(j);
    }
  }
  first_rows_of_runs(valid, id, row, first);
}

// A binary condition of row i (bit_plan).
__host__ __device__ std::uint32_t condition_bit(const bit_plan& b, std::int64_t i) {
  if (b.oh != nullptr) return model::one_hot_split_true(b.oh[i], b.ohv) ? 1u : 0u;
  return train::split_is_one(b.fsplit, quantize::to_feature_float(b.fcol.value(i))) ? 1u : 0u;
}

// Per parent sorted position j: the condition's bit of its row; 0 at j = n (the scan's total).
struct sorted_bit {
  const std::uint32_t* sorted_rows;
  bit_plan b;
  std::int64_t n;
  __host__ __device__ std::uint32_t operator()(std::uint32_t j) const {
    return static_cast<std::int64_t>(j) < n ? condition_bit(b, sorted_rows[j]) : 0u;
  }
};

// 1 at the first position of each run (no rows before it in its run).
struct run_head {
  const std::uint32_t* total;
  __host__ __device__ std::uint32_t operator()(std::uint32_t j) const { return total[j] == 0 ? 1u : 0u; }
};

// The stable partition of each parent run by the bit (`ones`: the bits' exclusive sum over all
// positions, n + 1 entries): a row with bit 0 goes after the run's earlier rows with 0, one with bit 1
// after all the run's 0s and its earlier 1s. total: the rows before each new position in its new run.
__global__ void split_runs_kernel(parent_runs p, const std::uint32_t* ones, std::int64_t n, std::uint32_t* rows_out,
                                  std::uint32_t* total) {
  const std::int64_t j = thread_index();
  if (j >= n) return;
  const std::uint32_t row = p.sorted_rows[j];
  const std::uint32_t pid = p.ids[row];
  const std::uint32_t s = p.start[pid];
  const auto e = pid + 1 < p.unique ? p.start[pid + 1] : static_cast<std::uint32_t>(n);
  const std::uint32_t before = ones[j] - ones[s];  // 1s of the run before j
  const std::uint32_t zeros = (e - s) - (ones[e] - ones[s]);
  const bool one = ones[j + 1] != ones[j];
  const std::uint32_t at = one ? s + zeros + before : static_cast<std::uint32_t>(j) - before;
  rows_out[at] = row;
  total[at] = one ? before : static_cast<std::uint32_t>(j) - s - before;
}

// *mismatch = 1 when row i's key differs from its id's.
__global__ void keys_match_kernel(key_plan plan, const std::uint32_t* ids, const std::uint64_t* keys, std::int64_t n,
                                  int* mismatch) {
  const std::int64_t i = thread_index();
  if (i < n && projection_key(plan, i) != keys[ids[i]]) *mismatch = 1;
}

// *mismatch = 1 when two of the *unique ids have one key: each id's key into an open-addressing
// table (`mask` + 1 slots, ~0 empty; the key ~0 itself counted in *empty_seen).
__global__ void distinct_keys_kernel(const std::uint64_t* keys, const std::uint32_t* unique, std::int64_t room,
                                     unsigned shift, std::uint64_t mask, unsigned long long* table, int* empty_seen,
                                     int* mismatch) {
  const std::int64_t id = thread_index();
  if (id >= room || id >= static_cast<std::int64_t>(*unique)) return;
  const unsigned long long k = keys[id];
  constexpr unsigned long long empty = ~0ull;
  if (k == empty) {
    if (atomicAdd(empty_seen, 1) > 0) *mismatch = 1;
    return;
  }
  std::uint64_t h = (k * 0x9E3779B97F4A7C15ull) >> shift;
  for (;;) {
    const unsigned long long cur = atomicCAS(table + h, empty, k);
    if (cur == empty) return;
    if (cur == k) {
      *mismatch = 1;
      return;
    }
    h = (h + 1) & mask;
  }
}

// The bucket layout of inserting the keys one by one (linear probing) in parallel: a key takes a slot
// from any later key (atomicMin on the owner's insertion index), which then probes on. At the end each
// key sits at the first slot of its path that no earlier key holds: the sequential layout.
__global__ void bucket_owners_kernel(const std::uint64_t* keys, std::uint32_t unique, std::uint64_t mask,
                                     std::uint32_t* owner, int* bad) {
  const std::int64_t i = thread_index();
  if (i >= static_cast<std::int64_t>(unique)) return;
  auto k = static_cast<std::uint32_t>(i);
  if (keys[k] == ~std::uint64_t{0}) *bad = 1;  // model::ctr_empty_hash
  std::uint64_t pos = keys[k] & mask;
  for (;;) {
    const std::uint32_t old = atomicMin(owner + pos, k);
    if (old == 0xffffffffu) return;
    if (old > k) k = old;  // took the slot: the later key probes on
    pos = (pos + 1) & mask;
  }
}

__global__ void bucket_fill_kernel(const std::uint64_t* keys, const std::uint32_t* owner, std::int64_t slots,
                                   std::uint64_t* hashes, std::uint32_t* indices) {
  const std::int64_t s = thread_index();
  if (s >= slots) return;
  const std::uint32_t o = owner[s];
  hashes[s] = o == 0xffffffffu ? ~std::uint64_t{0} : keys[o];
  indices[s] = o == 0xffffffffu ? 0u : o;
}

// counter_calc Full: eval rows whose key the learn rows have count too (keys sorted ascending).
__global__ void eval_counts_kernel(const std::uint64_t* eval_keys, std::int64_t n, const std::uint64_t* keys,
                                   std::uint32_t unique, std::int32_t* counts, std::uint64_t* marked) {
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
  const bool known = lo < unique && keys[lo] == k;
  if (known) atomicAdd(counts + lo, 1);
  if (marked != nullptr) marked[i] = known ? model::ctr_empty_hash : k;
}

// The bins of the one feature of a quantized single-column pool (group 0, byte 0).
__global__ void feature_bins_kernel(const std::uint32_t* index, std::int64_t n, unsigned shift, std::uint8_t* bins) {
  const std::int64_t i = thread_index();
  if (i < n) bins[i] = static_cast<std::uint8_t>((index[i] >> shift) & 0xffu);
}

__global__ void sequence_kernel(std::size_t n, std::uint32_t* out) {
  const std::int64_t i = thread_index();
  if (i < static_cast<std::int64_t>(n)) out[i] = static_cast<std::uint32_t>(i);
}

template <class T>
__global__ void gather_rows_kernel(const std::uint32_t* order, std::size_t rows, int width, const T* in, T* out) {
  const std::int64_t i = thread_index();
  if (i >= static_cast<std::int64_t>(rows) * width) return;
  const std::int64_t r = i / width, c = i % width;
  out[i] = in[static_cast<std::int64_t>(order[r]) * width + c];
}

template <class T>
void gather_rows_of(const context& ctx, const std::uint32_t* order, std::size_t rows, int width, const T* in, T* out) {
  const auto total = static_cast<std::int64_t>(rows) * width;
  if (total <= 0) return;
  gather_rows_kernel<<<blocks_for(total), ctr_block, 0, ctx.stream()>>>(order, rows, width, in, out);
  CBG_CHECK_CUDA(ctx.stream());
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

void ids_by_first_row(const context& ctx, const std::uint32_t* first, std::size_t unique, std::int64_t n,
                      std::uint32_t* by_first) {
  if (unique == 0) return;
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  const int items = static_cast<int>(unique);
  device_buffer<std::uint32_t> ids(unique, stream, res), sorted_first(unique, stream, res);
  sequence_kernel<<<blocks_for(static_cast<std::int64_t>(unique)), ctr_block, 0, stream>>>(unique, ids.data());
  CBG_CHECK_CUDA(stream);
  int bits = 1;
  while (bits < 32 && (std::int64_t{1} << bits) < n) ++bits;
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, first, sorted_first.data(), ids.data(), by_first, items,
                                               0, bits, stream));
  device_buffer<unsigned char> temp(bytes, stream, res);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, first, sorted_first.data(), ids.data(), by_first,
                                               items, 0, bits, stream));
}

void gather_rows(const context& ctx, const std::uint32_t* order, std::size_t rows, int width, const std::uint64_t* in,
                 std::uint64_t* out) {
  gather_rows_of(ctx, order, rows, width, in, out);
}

void gather_rows(const context& ctx, const std::uint32_t* order, std::size_t rows, int width, const std::uint32_t* in,
                 std::uint32_t* out) {
  gather_rows_of(ctx, order, rows, width, in, out);
}

namespace {

template <class T>
void at_least(device_buffer<T>& b, std::size_t size, const context& ctx) {
  if (b.size() < size) b = device_buffer<T>(size, ctx.stream(), ctx.resource());
}

// What dense_ids_and_runs and derived_ids_and_runs size alike: the runs' buffers (n rows each;
// sorted_pos only sized: ensure_runs sees the runs made), the ranks, an open-addressing table of at
// least `slots`, and the runs' scan scratch: at least `bytes` (the caller's own CUB calls; the
// scratch stays with the runs, ordered_target_columns grows it for its scans).
void size_runs(const context& ctx, std::size_t n, std::size_t slots, std::size_t bytes, category_runs& r,
               ids_scratch& s) {
  at_least(s.table, slots, ctx);
  at_least(s.rank, n, ctx);
  for (auto* b : {&r.sorted_pos, &r.sorted_ids, &r.sorted_rows, &r.total}) {
    if (b->size() != n) *b = device_buffer<std::uint32_t>(n, ctx.stream(), ctx.resource());
  }
  at_least(r.scan_temp, bytes, ctx);
}

}  // namespace

void dense_ids_and_runs(const context& ctx, const target_state& t, const key_plan& plan, std::size_t bound,
                        std::int64_t n, std::uint32_t* ids, std::uint64_t* keys_out, std::uint32_t* first_out,
                        std::uint32_t* start_out, category_runs& r, ids_scratch& s, std::uint32_t* unique) {
  const cudaStream_t stream = ctx.stream();
  if (n <= 0) {
    CBG_CUDA_TRY(cudaMemsetAsync(unique, 0, sizeof(std::uint32_t), stream));
    return;
  }
  const auto un = static_cast<std::size_t>(n);
  const int n_items = static_cast<int>(n);
  // A table of at least twice the distinct keys there can be; a slot number has `bits` bits, all
  // the sort reads.
  const std::size_t keys_at_most = std::clamp<std::size_t>(bound, 1, un);
  int bits = 2;
  while ((std::size_t{1} << bits) < 2 * keys_at_most) ++bits;
  const std::size_t slots = std::size_t{1} << bits;
  at_least(s.slots, un, ctx);
  at_least(s.sorted_slots, un, ctx);
  const auto marks = thrust::make_transform_iterator(thrust::make_counting_iterator<std::uint32_t>(0u),
                                                     run_mark{s.sorted_slots.data()});
  const auto marked = thrust::make_tabulate_output_iterator(write_run_mark{s.rank.data(), r.total.data()});
  std::size_t sort_bytes = 0, scan_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, s.slots.data(), s.sorted_slots.data(),
                                               t.order.data(), r.sorted_rows.data(), n_items, 0, bits, stream));
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveScan(nullptr, scan_bytes, marks, marked, runs_and_head{}, n_items, stream));
  size_runs(ctx, un, slots, std::max(sort_bytes, scan_bytes), r, s);
  CBG_CUDA_TRY(cudaMemsetAsync(s.table.data(), 0xff, slots * sizeof(unsigned long long), stream));
  ordered_slots_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(plan, t.order.data(), n, 64u - bits, slots - 1,
                                                                s.table.data(), s.slots.data());
  CBG_CHECK_CUDA(stream);
  // Stable: each slot's rows stay in permutation order (the order's rows are the sorted values).
  std::size_t tb = r.scan_temp.size();
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(r.scan_temp.data(), tb, s.slots.data(), s.sorted_slots.data(),
                                               t.order.data(), r.sorted_rows.data(), n_items, 0, bits, stream));
  // The output step's buffers as sized now (size_runs may have made them).
  const auto marked_now = thrust::make_tabulate_output_iterator(write_run_mark{s.rank.data(), r.total.data()});
  tb = r.scan_temp.size();
  CBG_CUDA_TRY(
      cub::DeviceScan::InclusiveScan(r.scan_temp.data(), tb, marks, marked_now, runs_and_head{}, n_items, stream));
  CBG_CUDA_TRY(cudaMemsetAsync(first_out, 0xff, un * sizeof(std::uint32_t), stream));
  run_ids_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(s.rank.data(), r.total.data(), r.sorted_rows.data(), plan, n,
                                                          r.sorted_ids.data(), ids, keys_out, start_out, first_out);
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(
      cudaMemcpyAsync(unique, s.rank.data() + (n - 1), sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
}

void derived_ids_and_runs(const context& ctx, const parent_runs& parent, const bit_plan& bit, const key_plan& plan,
                          std::int64_t n, std::uint32_t* ids, std::uint64_t* keys_out, std::uint32_t* first_out,
                          std::uint32_t* start_out, category_runs& r, ids_scratch& s, std::uint32_t* unique,
                          int* mismatch) {
  const cudaStream_t stream = ctx.stream();
  if (n <= 0) {
    CBG_CUDA_TRY(cudaMemsetAsync(unique, 0, sizeof(std::uint32_t), stream));
    return;
  }
  const auto un = static_cast<std::size_t>(n);
  const int n_items = static_cast<int>(n);
  // The ids' key check: a table of at least twice the most ids there can be.
  const std::size_t room = std::min<std::size_t>(un, 2 * static_cast<std::size_t>(parent.unique));
  unsigned log_slots = 1;
  while ((std::size_t{1} << log_slots) < 2 * room) ++log_slots;
  const std::size_t slots = std::size_t{1} << log_slots;
  at_least(s.empty_seen, 1, ctx);
  at_least(s.ones, un + 1, ctx);
  const auto counting = thrust::make_counting_iterator<std::uint32_t>(0u);
  const auto bits = thrust::make_transform_iterator(counting, sorted_bit{parent.sorted_rows, bit, n});
  std::size_t ones_bytes = 0, rank_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, ones_bytes, bits, s.ones.data(), n_items + 1, stream));
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, rank_bytes,
                                             thrust::make_transform_iterator(counting, run_head{r.total.data()}),
                                             s.rank.data(), n_items, stream));
  size_runs(ctx, un, slots, std::max(ones_bytes, rank_bytes), r, s);
  std::size_t tb = r.scan_temp.size();
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSum(r.scan_temp.data(), tb, bits, s.ones.data(), n_items + 1, stream));
  split_runs_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(parent, s.ones.data(), n, r.sorted_rows.data(),
                                                             r.total.data());
  CBG_CHECK_CUDA(stream);
  tb = r.scan_temp.size();
  CBG_CUDA_TRY(cub::DeviceScan::InclusiveSum(r.scan_temp.data(), tb,
                                             thrust::make_transform_iterator(counting, run_head{r.total.data()}),
                                             s.rank.data(), n_items, stream));
  CBG_CUDA_TRY(cudaMemsetAsync(first_out, 0xff, un * sizeof(std::uint32_t), stream));
  run_ids_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(s.rank.data(), r.total.data(), r.sorted_rows.data(), plan, n,
                                                          r.sorted_ids.data(), ids, keys_out, start_out, first_out);
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(
      cudaMemcpyAsync(unique, s.rank.data() + (n - 1), sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
  // The partition is the keys' one: every row has its id's key, and the ids' keys are distinct.
  keys_match_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(plan, ids, keys_out, n, mismatch);
  CBG_CHECK_CUDA(stream);
  CBG_CUDA_TRY(cudaMemsetAsync(s.table.data(), 0xff, slots * sizeof(unsigned long long), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(s.empty_seen.data(), 0, sizeof(int), stream));
  const auto room_items = static_cast<std::int64_t>(room);
  distinct_keys_kernel<<<blocks_for(room_items), ctr_block, 0, stream>>>(
      keys_out, unique, room_items, 64u - log_slots, slots - 1, s.table.data(), s.empty_seen.data(), mismatch);
  CBG_CHECK_CUDA(stream);
}

void ctr_buckets(const context& ctx, const std::uint64_t* keys, std::size_t unique, std::size_t slots,
                 std::uint64_t* hashes, std::uint32_t* indices, int* bad) {
  const cudaStream_t stream = ctx.stream();
  device_buffer<std::uint32_t> owner(slots, stream, ctx.resource());
  CBG_CUDA_TRY(cudaMemsetAsync(owner.data(), 0xff, slots * sizeof(std::uint32_t), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(bad, 0, sizeof(int), stream));
  if (unique > 0) {
    bucket_owners_kernel<<<blocks_for(static_cast<std::int64_t>(unique)), ctr_block, 0, stream>>>(
        keys, static_cast<std::uint32_t>(unique), static_cast<std::uint64_t>(slots - 1), owner.data(), bad);
    CBG_CHECK_CUDA(stream);
  }
  const auto n = static_cast<std::int64_t>(slots);
  bucket_fill_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(keys, owner.data(), n, hashes, indices);
  CBG_CHECK_CUDA(stream);
}

void count_known_keys(const context& ctx, const std::uint64_t* keys, std::int64_t n, const std::uint64_t* sorted,
                      std::size_t unique, std::int32_t* counts, std::uint64_t* marked) {
  if (n <= 0) return;
  eval_counts_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(keys, n, sorted, static_cast<std::uint32_t>(unique),
                                                                    counts, marked);
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
