// SPDX-License-Identifier: Apache-2.0
// The shared GPU pieces of the CTR engine (ctr_device.hpp).
//
// Ordered statistics without a per-category loop: the permutation's positions are sorted stably by
// category id, so each category's rows form a run in permutation order; an exclusive scan by key of
// the row classes gives each row the class count before it (ordered_columns.cu), and of ones its
// total (ensure_runs).
#include "kernels/ctr/ctr_device.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <string>

#include "kernels/common/cccl.cuh"
#include "kernels/ctr/ctr_kernels.cuh"

#include "cbg/apply/input.hpp"
#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/runtime/device.hpp"

namespace cbg::ctr::detail {

namespace {

__global__ void hash_kernel(column_view c, std::int64_t n, std::uint32_t* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = apply::load_cat_hash(c, i);
}

__global__ void targets_kernel(column_view label, train::target_rule rule, std::int64_t n, float* out) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  float t = 0.f;
  (void)train::target_of(rule, label.value(i), t);  // bad labels are reported by the trainer
  out[i] = t;
}

__global__ void classes_kernel(const float* targets, target_borders borders, bool multiclass, std::int64_t n,
                               std::uint8_t* cls) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  // Bad labels (negative, NaN) are reported by the trainer; class 0 keeps the counts in bounds.
  cls[i] = multiclass ? (targets[i] >= 0.f ? static_cast<std::uint8_t>(targets[i]) : std::uint8_t{0})
                      : target_class(targets[i], borders);
}

__global__ void permutation_keys_kernel(permutation_rule rule, std::int64_t n, std::uint64_t* keys,
                                        std::uint32_t* rows) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  keys[i] = permutation_key(rule, static_cast<std::uint64_t>(i));
  rows[i] = static_cast<std::uint32_t>(i);
}

// Per sorted position its row.
__global__ void sorted_rows_kernel(const std::uint32_t* order, const std::uint32_t* sorted_pos, std::int64_t n,
                                   std::uint32_t* rows) {
  const std::int64_t j = thread_index();
  if (j < n) rows[j] = order[sorted_pos[j]];
}

__global__ void ones_kernel(std::int64_t n, std::uint32_t* out) {
  const std::int64_t j = thread_index();
  if (j < n) out[j] = 1u;
}

__global__ void fixed_sums_kernel(const std::uint32_t* ids, const float* targets, std::int64_t n, double scale,
                                  unsigned long long* sums) {
  const std::int64_t i = thread_index();
  if (i < n) atomicAdd(sums + ids[i], static_cast<unsigned long long>(to_fixed(targets[i], scale)));
}
__global__ void abs_kernel(const float* in, std::int64_t n, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = fabsf(in[i]);
}

__global__ void class_counts_kernel(const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n, int classes,
                                    std::int32_t* counts) {
  const std::int64_t i = thread_index();
  if (i < n) atomicAdd(counts + static_cast<std::size_t>(ids[i]) * static_cast<std::size_t>(classes) + cls[i], 1);
}
__global__ void class_sums_kernel(const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n,
                                  std::uint32_t* sums, std::uint32_t* rows) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  atomicAdd(sums + ids[i], static_cast<std::uint32_t>(cls[i]));
  atomicAdd(rows + ids[i], 1u);
}
__global__ void id_counts_kernel(const std::uint32_t* ids, std::int64_t n, std::int32_t* counts) {
  const std::int64_t i = thread_index();
  if (i < n) atomicAdd(counts + ids[i], 1);
}

__global__ void counter_values_kernel(const std::uint32_t* ids, const std::int32_t* counts, std::uint32_t denom,
                                      std::int64_t n, float prior_num, float prior_denom, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = counter_value(static_cast<std::uint32_t>(counts[ids[i]]), denom, prior_num, prior_denom);
}

__global__ void one_hot_kernel(const std::uint32_t* h, std::int64_t n, std::int32_t v, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = one_hot_value(h[i], v);
}

// counter_calc Full: eval rows of categories known to the table count too.
__global__ void eval_counts_kernel(const std::uint32_t* h, std::int64_t n, const std::uint64_t* hashes,
                                   const std::uint32_t* indices, std::uint64_t n_buckets, std::int32_t* counts,
                                   std::uint64_t* marked) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::uint64_t key = model::projection_add_cat(0, h[i]);
  const std::uint32_t idx = model::ctr_lookup(hashes, indices, n_buckets, key);
  if (idx != model::ctr_not_found) atomicAdd(counts + idx, 1);
  if (marked != nullptr) marked[i] = idx != model::ctr_not_found ? model::ctr_empty_hash : key;
}

__global__ void eval_values_kernel(const std::uint32_t* h, std::int64_t n, model::ctr_table_view t, model::ctr_calc c,
                                   float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = model::ctr_value_of(t, c, model::projection_add_cat(0, h[i]));
}

}  // namespace

float largest(const context& ctx, const float* v, std::int64_t n, const char* what) {
  const cudaStream_t stream = ctx.stream();
  device_buffer<float> mx(1, stream, ctx.resource());
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, v, mx.data(), static_cast<int>(n), stream));
  device_buffer<unsigned char> temp(bytes, stream, ctx.resource());
  CBG_CUDA_TRY(cub::DeviceReduce::Max(temp.data(), bytes, v, mx.data(), static_cast<int>(n), stream));
  return download(ctx, mx.data(), 1, what)[0];
}

device_buffer<std::uint32_t> column_hashes_device(const context& ctx, const pool& p, std::int64_t flat) {
  const column_view& c = p.features()[static_cast<std::size_t>(flat)];
  CBG_EXPECTS(c.memory != memory_kind::host, status::device,
              "the GPU CTR path reads device, managed or pinned memory (a categorical column is in pageable "
              "host memory)");
  CBG_EXPECTS(apply::is_categorical_dtype(c.type), status::invalid_argument,
              "categorical feature " + std::to_string(flat) + " has dtype " + std::string(name_of(c.type)));
  device_buffer<std::uint32_t> h(static_cast<std::size_t>(c.size), ctx.stream(), ctx.resource());
  hash_kernel<<<blocks_for(c.size), ctr_block, 0, ctx.stream()>>>(c, c.size, h.data());
  CBG_CHECK_CUDA(ctx.stream());
  return h;
}

void training_targets(const context& ctx, const column_view& label, const train::target_rule& rule, std::int64_t n,
                      float* out) {
  targets_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(label, rule, n, out);
  CBG_CHECK_CUDA(ctx.stream());
}

float largest_abs(const context& ctx, const float* v, std::int64_t n, const char* what) {
  device_buffer<float> abs_v(static_cast<std::size_t>(n), ctx.stream(), ctx.resource());
  abs_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(v, n, abs_v.data());
  CBG_CHECK_CUDA(ctx.stream());
  return largest(ctx, abs_v.data(), n, what);
}

void target_classes(const context& ctx, const float* targets, const target_borders& borders, bool multiclass,
                    std::int64_t n, std::uint8_t* cls) {
  classes_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(targets, borders, multiclass, n, cls);
}

device_buffer<std::uint32_t> permutation(const context& ctx, const permutation_rule& rule, std::int64_t n) {
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  const auto un = static_cast<std::size_t>(n);
  const int n_items = static_cast<int>(n);
  device_buffer<std::uint64_t> keys(un, stream, res), sorted_keys(un, stream, res);
  device_buffer<std::uint32_t> rows(un, stream, res);
  device_buffer<std::uint32_t> order(un, stream, res);
  permutation_keys_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(rule, n, keys.data(), rows.data());
  CBG_CHECK_CUDA(stream);
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), sorted_keys.data(), rows.data(),
                                               order.data(), n_items, 0, 64, stream));
  device_buffer<unsigned char> temp(bytes, stream, res);
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), sorted_keys.data(), rows.data(),
                                               order.data(), n_items, 0, 64, stream));
  return order;
}

void ensure_runs(const context& ctx, const target_state& t, const std::uint32_t* ids, std::int64_t n,
                 std::size_t unique, category_runs& r) {
  const auto un = static_cast<std::size_t>(n);
  if (r.sorted_pos.size() == un) return;
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  const int n_items = static_cast<int>(n);
  device_buffer<std::uint32_t> ids_ord(un, stream, res), pos(un, stream, res), ones(un, stream, res);
  r.sorted_pos = device_buffer<std::uint32_t>(un, stream, res);
  r.sorted_ids = device_buffer<std::uint32_t>(un, stream, res);
  r.total = device_buffer<std::uint32_t>(un, stream, res);
  ids_in_order_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(t.order.data(), ids, n, ids_ord.data(), pos.data());
  ones_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(n, ones.data());
  CBG_CHECK_CUDA(stream);
  int bits = 1;
  while (bits < 32 && (std::uint64_t{1} << bits) < unique) ++bits;
  std::size_t sort_bytes = 0, scan_bytes = 0;
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, ids_ord.data(), r.sorted_ids.data(), pos.data(),
                                               r.sorted_pos.data(), n_items, 0, bits, stream));
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(nullptr, scan_bytes, r.sorted_ids.data(), ones.data(), r.total.data(),
                                                  n_items, ::cuda::std::equal_to<>{}, stream));
  r.scan_temp = device_buffer<unsigned char>(std::max(sort_bytes, scan_bytes), stream, res);
  std::size_t tb = r.scan_temp.size();
  CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(r.scan_temp.data(), tb, ids_ord.data(), r.sorted_ids.data(), pos.data(),
                                               r.sorted_pos.data(), n_items, 0, bits, stream));
  tb = r.scan_temp.size();
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(r.scan_temp.data(), tb, r.sorted_ids.data(), ones.data(),
                                                  r.total.data(), n_items, ::cuda::std::equal_to<>{}, stream));
  r.sorted_rows = device_buffer<std::uint32_t>(un, stream, res);
  sorted_rows_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(t.order.data(), r.sorted_pos.data(), n,
                                                              r.sorted_rows.data());
  CBG_CHECK_CUDA(stream);
}

void class_counts(const context& ctx, const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n, int classes,
                  std::size_t unique, std::int32_t* counts) {
  const std::size_t cells = unique * static_cast<std::size_t>(classes);
  CBG_CUDA_TRY(cudaMemsetAsync(counts, 0, cells * sizeof(std::int32_t), ctx.stream()));
  class_counts_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(ids, cls, n, classes, counts);
  CBG_CHECK_CUDA(ctx.stream());
}

void class_sums(const context& ctx, const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n,
                std::size_t unique, std::uint32_t* sums, std::uint32_t* rows) {
  CBG_CUDA_TRY(cudaMemsetAsync(sums, 0, unique * sizeof(std::uint32_t), ctx.stream()));
  CBG_CUDA_TRY(cudaMemsetAsync(rows, 0, unique * sizeof(std::uint32_t), ctx.stream()));
  class_sums_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(ids, cls, n, sums, rows);
  CBG_CHECK_CUDA(ctx.stream());
}

void fixed_sums(const context& ctx, const std::uint32_t* ids, const float* targets, std::int64_t n, double scale,
                std::size_t unique, unsigned long long* sums) {
  CBG_CUDA_TRY(cudaMemsetAsync(sums, 0, unique * sizeof(unsigned long long), ctx.stream()));
  fixed_sums_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(ids, targets, n, scale, sums);
  CBG_CHECK_CUDA(ctx.stream());
}

void id_counts(const context& ctx, const std::uint32_t* ids, std::int64_t n, std::size_t unique, std::int32_t* counts) {
  CBG_CUDA_TRY(cudaMemsetAsync(counts, 0, unique * sizeof(std::int32_t), ctx.stream()));
  id_counts_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(ids, n, counts);
  CBG_CHECK_CUDA(ctx.stream());
}

void counter_values(const context& ctx, const std::uint32_t* ids, const std::int32_t* counts, std::uint32_t denom,
                    std::int64_t n, float prior_num, float prior_denom, float* out) {
  counter_values_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(ids, counts, denom, n, prior_num, prior_denom,
                                                                       out);
  CBG_CHECK_CUDA(ctx.stream());
}

std::int32_t max_count(const context& ctx, const std::int32_t* counts, std::size_t n) {
  const cudaStream_t stream = ctx.stream();
  device_buffer<std::int32_t> mx(1, stream, ctx.resource());
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, counts, mx.data(), static_cast<int>(n), stream));
  device_buffer<unsigned char> temp(bytes, stream, ctx.resource());
  CBG_CUDA_TRY(cub::DeviceReduce::Max(temp.data(), bytes, counts, mx.data(), static_cast<int>(n), stream));
  return download(ctx, mx.data(), 1, "CTR largest count")[0];
}

void one_hot_values(const context& ctx, const std::uint32_t* h, std::int64_t n, std::int32_t v, float* out) {
  one_hot_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(h, n, v, out);
  CBG_CHECK_CUDA(ctx.stream());
}

void count_known_categories(const context& ctx, const std::uint32_t* h, std::int64_t n, const std::uint64_t* hashes,
                            const std::uint32_t* indices, std::uint64_t n_buckets, std::int32_t* counts,
                            std::uint64_t* marked) {
  eval_counts_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(h, n, hashes, indices, n_buckets, counts, marked);
  CBG_CHECK_CUDA(ctx.stream());
}

void ctr_values_of_categories(const context& ctx, const std::uint32_t* h, std::int64_t n,
                              const model::ctr_table_view& t, const model::ctr_calc& c, float* out) {
  eval_values_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(h, n, t, c, out);
  CBG_CHECK_CUDA(ctx.stream());
}

}  // namespace cbg::ctr::detail
