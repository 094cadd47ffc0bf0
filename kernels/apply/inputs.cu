// SPDX-License-Identifier: Apache-2.0
// The inputs of the tree kernel: categorical hashes, then every row binarized into byte slots
// (layout: include/cbg/apply/device_model.hpp). One thread per row; a block covers a run of rows
// and a chunk of features (grid.y), so a row's float values are read by the threads that binarize
// them and every slot byte is written once, a warp writing 32 consecutive bytes of a slot.
#include <algorithm>

#include "kernels/apply/stages.hpp"
#include "kernels/apply/tuning_apply.hpp"

#include "cbg/apply/input.hpp"
#include "cbg/core/cuda_check.hpp"

namespace cbg::apply::detail {

namespace {

constexpr unsigned int max_grid_x = 65535u * 16u;

unsigned int grid_for(std::int64_t items) {
  const std::int64_t blocks = (items + apply_block - 1) / apply_block;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(blocks, 1, max_grid_x));
}

__global__ void hash_kernel(const device_model_view m, const column_view* columns, std::int64_t rows,
                            std::int64_t padded_rows, std::uint32_t* hashes) {
  for (std::uint32_t u = blockIdx.y; u < m.n_used_cats; u += gridDim.y) {
    const std::int32_t c = m.used_cats[u];
    const column_view col = columns[m.n_float + static_cast<std::uint32_t>(c)];
    std::uint32_t* out = hashes + static_cast<std::int64_t>(c) * padded_rows;
    for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
         r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
      out[r] = load_cat_hash(col, r);
    }
  }
}

__device__ inline void write_counted(std::uint8_t* bins, std::int64_t padded_rows, std::int64_t r, const bin_feature& f,
                                     std::uint32_t count) {
  for (std::uint32_t g = 0; g < f.n_slots; ++g) {
    bins[static_cast<std::int64_t>(f.first_slot + g) * padded_rows + r] =
        static_cast<std::uint8_t>(counted_slot_byte(count, g));
  }
}

// Position of `value` among the feature's one-hot values, or -1.
__device__ inline std::int32_t one_hot_position(const one_hot_entry* entries, std::uint32_t n, std::int32_t value) {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (entries[mid].value < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < n && entries[lo].value == value ? entries[lo].position : -1;
}

__device__ inline float float_value(const device_model_view& m, const column_view* columns, std::int32_t f,
                                    std::int64_t r) {
  const float_info info = m.floats[f];
  return model::nan_substituted(load_as_float(columns[f], r), info.has_nans != 0, info.treatment);
}

__device__ inline float ctr_feature_value(const device_model_view& m, const column_view* columns,
                                          const std::uint32_t* hashes, std::int64_t padded_rows, std::int32_t ctr,
                                          std::int64_t r) {
  const device_ctr d = m.ctrs[ctr];
  const std::uint64_t key = model::projection_key(
      d.cats, d.n_cats, d.float_splits, d.n_float_splits, d.one_hot_splits, d.n_one_hot_splits,
      [&](std::int32_t c) { return hashes[static_cast<std::int64_t>(c) * padded_rows + r]; },
      [&](std::int32_t f) { return float_value(m, columns, f, r); });
  return model::ctr_value_of(d.table, d.calc, key);
}

__global__ __launch_bounds__(apply_block) void binarize_kernel(const device_model_view m, const column_view* columns,
                                                               const std::uint32_t* hashes, std::int64_t rows,
                                                               std::int64_t padded_rows, std::uint8_t* bins) {
  const std::uint32_t f0 = blockIdx.y * binarize_features_per_block;
  const std::uint32_t f1 = min(f0 + binarize_features_per_block, m.n_features);
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < padded_rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    for (std::uint32_t fi = f0; fi < f1; ++fi) {
      const bin_feature f = m.features[fi];
      if (r >= rows) {
        write_counted(bins, padded_rows, r, f, 0);
        continue;
      }
      switch (f.kind) {
        case bin_kind::float_feature: {
          const float x = model::nan_substituted(load_as_float(columns[f.input], r), f.has_nans != 0, f.treatment);
          write_counted(bins, padded_rows, r, f, model::borders_below(m.borders + f.values, f.n_values, x));
          break;
        }
        case bin_kind::ctr: {
          const float v = ctr_feature_value(m, columns, hashes, padded_rows, f.input, r);
          write_counted(bins, padded_rows, r, f, model::borders_below(m.borders + f.values, f.n_values, v));
          break;
        }
        case bin_kind::one_hot: {
          const std::uint32_t h = hashes[static_cast<std::int64_t>(f.input) * padded_rows + r];
          const std::int32_t k = one_hot_position(m.one_hot + f.values, f.n_values, static_cast<std::int32_t>(h));
          for (std::uint32_t g = 0; g < f.n_slots; ++g) {
            bins[static_cast<std::int64_t>(f.first_slot + g) * padded_rows + r] =
                static_cast<std::uint8_t>(one_hot_slot_byte(k, g));
          }
          break;
        }
      }
    }
  }
}

}  // namespace

void hash_categorical(const device_model_view& m, const column_view* columns, std::int64_t rows,
                      std::int64_t padded_rows, std::uint32_t* hashes, cudaStream_t stream) {
  if (m.n_used_cats == 0 || rows == 0) return;
  const dim3 grid(grid_for(rows), std::min<std::uint32_t>(m.n_used_cats, 65535u));
  hash_kernel<<<grid, apply_block, 0, stream>>>(m, columns, rows, padded_rows, hashes);
  CBG_CUDA_TRY(cudaGetLastError());
}

void binarize(const device_model_view& m, const column_view* columns, const std::uint32_t* hashes, std::int64_t rows,
              std::int64_t padded_rows, std::uint8_t* bins, cudaStream_t stream) {
  if (m.n_features == 0 || padded_rows == 0) return;
  const std::uint32_t chunks = (m.n_features + binarize_features_per_block - 1) / binarize_features_per_block;
  CBG_EXPECTS(chunks <= 65535u, status::unsupported, "too many binarized features for one launch");
  const dim3 grid(grid_for(padded_rows), chunks);
  binarize_kernel<<<grid, apply_block, 0, stream>>>(m, columns, hashes, rows, padded_rows, bins);
  CBG_CUDA_TRY(cudaGetLastError());
}

}  // namespace cbg::apply::detail
