// SPDX-License-Identifier: Apache-2.0
// A projection's ordered CTR columns from its runs (ordered_columns.hpp).
//
// Per target feature: CUB's exclusive scan by run reads each sorted position's term through a
// transform iterator (the row's class, no terms array) and writes each position's prefix; the term
// and a 1 are packed in one 64-bit value, so the same scan also counts the rows before the position
// (the low half, at most n - 1 < 2^31, never carries into the high half, which wraps as the host's
// 32-bit sums do). The values are then written in row order, the prefix gathered through each row's
// sorted position (made by the first scan of a projection): one scattered 4-byte write per row
// instead of one per prior (the rows of a run are in permutation order, spread over the column).
// FloatTargetMeanValue scans the rows' fixed-point targets (64 bits of their own) the same way and
// reads the rows before each position from the runs' totals.
#include "kernels/ctr/ordered_columns.hpp"

#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstddef>

#include "kernels/common/cccl.cuh"
#include "kernels/ctr/ctr_kernels.cuh"

#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"

namespace cbg::ctr::detail {

namespace {

// Per sorted position j: feature (type, f)'s term of the row's class in the high half, 1 in the low.
struct packed_term {
  const std::uint32_t* rows;
  const std::uint8_t* cls;
  model::ctr_type type;
  int f;
  __host__ __device__ std::uint64_t operator()(std::uint32_t j) const {
    return (static_cast<std::uint64_t>(target_term(type, f, cls[rows[j]])) << 32) | 1u;
  }
};

// Per sorted position j (FloatTargetMeanValue): the row's target in fixed point (integer sums, so
// the order of the scan's additions does not change them).
struct fixed_term {
  const std::uint32_t* rows;
  const float* targets;
  double scale;
  __host__ __device__ long long operator()(std::uint32_t j) const {
    return static_cast<long long>(to_fixed(targets[rows[j]], scale));
  }
};

// The scan's output step: position j's exclusive prefix in its run into prefix[j], and (the first
// pass of a projection) the position of its row into position[row].
template <class T>
struct write_prefix {
  const std::uint32_t* rows;
  T* prefix;
  std::uint32_t* position;  // null: made by an earlier pass
  __host__ __device__ void operator()(std::ptrdiff_t j, T v) const {
    prefix[j] = v;
    if (position != nullptr) position[rows[j]] = static_cast<std::uint32_t>(j);
  }
};

// Per row (coalesced writes; the prefix gathered through the row's sorted position): every prior's
// ordered value.
__global__ void row_values_kernel(const std::uint32_t* position, const std::uint64_t* prefix, std::int64_t n,
                                  model::ctr_type type, int classes, prior_outputs p) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::uint64_t v = prefix[position[i]];
  const auto terms = static_cast<std::uint32_t>(v >> 32);
  const auto total = static_cast<std::uint32_t>(v & 0xffffffffu);
  for (int k = 0; k < max_priors_at_once; ++k) {
    if (k < p.count) p.out[k][i] = ordered_target_value(type, classes, terms, total, p.num[k], p.denom[k]);
  }
}

// FloatTargetMeanValue's: the fixed-point prefix and the rows before the row in its run (r.total).
__global__ void float_mean_row_values_kernel(const std::uint32_t* position, const long long* prefix,
                                             const std::uint32_t* total, std::int64_t n, double scale,
                                             prior_outputs p) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::uint32_t j = position[i];
  const long long v = prefix[j];
  const std::uint32_t before = total[j];
  for (int k = 0; k < max_priors_at_once; ++k) {
    if (k < p.count) p.out[k][i] = ordered_float_mean_value(v, before, scale, p.num[k], p.denom[k]);
  }
}

// The exclusive scan by run of `terms` (per sorted position) into prefix[n] (sized here), making
// the rows' positions in r.position when `positions` is set.
template <class T, class Terms>
void scan_runs(const context& ctx, category_runs& r, std::int64_t n, Terms terms, device_buffer<T>& prefix,
               bool positions) {
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  const auto un = static_cast<std::size_t>(n);
  if (prefix.size() != un) prefix = device_buffer<T>(un, stream, res);
  if (r.position.size() != un) r.position = device_buffer<std::uint32_t>(un, stream, res);
  const auto out = thrust::make_tabulate_output_iterator(
      write_prefix<T>{r.sorted_rows.data(), prefix.data(), positions ? r.position.data() : nullptr});
  const int items = static_cast<int>(n);
  std::size_t bytes = 0;
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(nullptr, bytes, r.sorted_ids.data(), terms, out, items,
                                                  ::cuda::std::equal_to<>{}, stream));
  // The runs' scratch, kept with them: one allocation for all of a level's projections.
  if (r.scan_temp.size() < bytes) r.scan_temp = device_buffer<unsigned char>(bytes, stream, res);
  bytes = r.scan_temp.size();
  CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(r.scan_temp.data(), bytes, r.sorted_ids.data(), terms, out, items,
                                                  ::cuda::std::equal_to<>{}, stream));
}

// One target feature's columns: the scan, then the values in row order.
void target_pass(const context& ctx, const target_state& t, category_runs& r, std::int64_t n, model::ctr_type type,
                 int f, const prior_outputs& p, bool positions) {
  const cudaStream_t stream = ctx.stream();
  const auto rows = thrust::make_counting_iterator<std::uint32_t>(0u);
  if (type == model::ctr_type::float_target_mean_value) {
    CBG_EXPECTS(r.total.size() == static_cast<std::size_t>(n), status::internal,
                "ordered CTR columns: the runs' totals are missing");
    const auto terms =
        thrust::make_transform_iterator(rows, fixed_term{r.sorted_rows.data(), t.targets.data(), t.fixed_scale});
    scan_runs(ctx, r, n, terms, r.fixed_prefix, positions);
    float_mean_row_values_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(r.position.data(), r.fixed_prefix.data(),
                                                                          r.total.data(), n, t.fixed_scale, p);
  } else {
    const auto terms = thrust::make_transform_iterator(rows, packed_term{r.sorted_rows.data(), t.cls.data(), type, f});
    scan_runs(ctx, r, n, terms, r.packed_prefix, positions);
    row_values_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(r.position.data(), r.packed_prefix.data(), n, type,
                                                               t.classes, p);
  }
  CBG_CHECK_CUDA(stream);
}

__global__ void run_lengths_kernel(const std::uint32_t* sorted_ids, const std::uint32_t* total, std::int64_t n,
                                   std::int32_t* counts) {
  const std::int64_t j = thread_index();
  if (j >= n) return;
  const std::uint32_t id = sorted_ids[j];
  if (j + 1 == n || sorted_ids[j + 1] != id) counts[id] = static_cast<std::int32_t>(total[j] + 1u);
}

}  // namespace

void ordered_target_columns(const context& ctx, const target_state& t, category_runs& r, std::int64_t n,
                            const std::vector<target_column>& cols) {
  if (n <= 0) return;
  CBG_EXPECTS(r.sorted_ids.size() == static_cast<std::size_t>(n) && r.sorted_rows.size() == static_cast<std::size_t>(n),
              status::internal, "ordered CTR columns: the runs are missing");
  bool positions_made = false;  // r.position holds this projection's
  for (std::size_t i = 0; i < cols.size();) {
    const target_column& c = cols[i];
    prior_outputs p;
    std::size_t e = i;
    for (; e < cols.size() && p.count < max_priors_at_once && cols[e].type == c.type && cols[e].j == c.j; ++e) {
      p.num[p.count] = cols[e].prior_num;
      p.denom[p.count] = cols[e].prior_denom;
      p.out[p.count] = cols[e].out;
      ++p.count;
    }
    target_pass(ctx, t, r, n, c.type, c.j, p, !positions_made);
    positions_made = true;
    i = e;
  }
}

void run_lengths(const context& ctx, const category_runs& r, std::int64_t n, std::int32_t* counts) {
  if (n <= 0) return;
  CBG_EXPECTS(r.sorted_ids.size() == static_cast<std::size_t>(n) && r.total.size() == static_cast<std::size_t>(n),
              status::internal, "run lengths: the runs are missing");
  run_lengths_kernel<<<blocks_for(n), ctr_block, 0, ctx.stream()>>>(r.sorted_ids.data(), r.total.data(), n, counts);
  CBG_CHECK_CUDA(ctx.stream());
}

}  // namespace cbg::ctr::detail
