// SPDX-License-Identifier: Apache-2.0
// Sharded leaf passes: the pack of a rank's sums, maxima and value tiles into the all-gather's send
// block, and their fold from the receive block.
#include "kernels/train/boosting_launch.hpp"
#include "kernels/train/row_passes.cuh"

#include "cbg/core/cuda_check.hpp"

namespace cbg::train::launch {

namespace {

__global__ void pass_pack_kernel(pass_pack p, const unsigned long long* sums, const unsigned* keys, const double* tiles,
                                 unsigned char* send) {
  const std::int64_t total = static_cast<std::int64_t>(p.slots) + p.channels + p.tiles;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t j = i;
    if (j < static_cast<std::int64_t>(p.slots)) {
      reinterpret_cast<unsigned long long*>(send)[j] = sums[j];
      continue;
    }
    j -= static_cast<std::int64_t>(p.slots);
    if (j < p.channels) {
      reinterpret_cast<unsigned*>(send + p.keys_at)[j] = keys[j];
      continue;
    }
    j -= p.channels;
    reinterpret_cast<double*>(send + p.tiles_at)[j] = tiles[j];
  }
}

__global__ void pass_fold_kernel(pass_fold f, const unsigned char* recv, unsigned long long* sums, unsigned* keys,
                                 double* tiles) {
  const std::int64_t all_tiles = f.first_tile[f.ranks];
  const std::int64_t total = static_cast<std::int64_t>(f.p.slots) + f.p.channels + all_tiles;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t j = i;
    if (j < static_cast<std::int64_t>(f.p.slots)) {
      unsigned long long s = 0;  // two's complement: the same bits as NCCL's int64 sum
      for (int r = 0; r < f.ranks; ++r) s += reinterpret_cast<const unsigned long long*>(recv + r * f.p.block)[j];
      sums[j] = s;
      continue;
    }
    j -= static_cast<std::int64_t>(f.p.slots);
    if (j < f.p.channels) {
      unsigned m = 0;
      for (int r = 0; r < f.ranks; ++r)
        m = max(m, reinterpret_cast<const unsigned*>(recv + r * f.p.block + f.p.keys_at)[j]);
      keys[j] = m;
      continue;
    }
    j -= f.p.channels;
    int r = 0;
    while (r + 1 < f.ranks && f.first_tile[r + 1] <= j) ++r;
    tiles[j] = reinterpret_cast<const double*>(recv + r * f.p.block + f.p.tiles_at)[j - f.first_tile[r]];
  }
}

}  // namespace

void pack_pass(const pass_pack& p, const unsigned long long* sums, const unsigned* keys, const double* tiles,
               unsigned char* send, cudaStream_t stream) {
  const auto packed = static_cast<std::int64_t>(p.slots) + p.channels + p.tiles;
  pass_pack_kernel<<<grid_of(packed), 256, 0, stream>>>(p, sums, keys, tiles, send);
  CBG_CHECK_CUDA(stream);
}

void fold_pass(const pass_fold& f, const unsigned char* recv, unsigned long long* sums, unsigned* keys, double* tiles,
               cudaStream_t stream) {
  const auto folded = static_cast<std::int64_t>(f.p.slots) + f.p.channels + f.first_tile[f.ranks];
  pass_fold_kernel<<<grid_of(folded), 256, 0, stream>>>(f, recv, sums, keys, tiles);
  CBG_CHECK_CUDA(stream);
}

}  // namespace cbg::train::launch
