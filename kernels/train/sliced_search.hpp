// SPDX-License-Identifier: Apache-2.0
// The kernels of feature-parallel scoring in the sharded tree search (src/train/sliced_search.hpp
// says how the levels use them): the pack and unpack around the reduce-scatter of the computed
// slots' columns, a slice's candidate (with the compute bits of its split) and the pick of the
// level's split from every rank's candidate. Launchers only enqueue on `stream`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/train/stages.hpp"

namespace cbg::train::detail {

// The computed slots [first_slot, first_slot + slots) of `channels` channels over `total_bins`
// histogram columns; each rank's block `width` columns wide.
struct exchange_shape {
  std::int64_t first_slot;
  std::int64_t slots;
  std::int64_t channels;
  std::int64_t total_bins;
  std::int64_t width;
};

// Bytes of one rank's candidate in the all-gather of a level (8-byte aligned).
std::size_t candidate_bytes(int level);

// send[r][s][c][i] = column column[r] + i of slot first_slot + s, channel c (0 past the slice).
void pack_slices(const long long* hist, long long* send, const std::int64_t* column, int ranks, const exchange_shape& x,
                 cudaStream_t stream);
// The rank's summed columns [first, first + width) from recv back into their slots.
void unpack_slice(long long* hist, const long long* recv, std::int64_t first, std::int64_t width,
                  const exchange_shape& x, cudaStream_t stream);
// The best (feature, bin) of v.best over [begin, end) and its split's compute bits, into `out`.
void slice_candidate(const search_view& v, int level, bool last_level, std::int64_t begin, std::int64_t end,
                     unsigned char* out, cudaStream_t stream);
// Every rank's candidate (`ranks` of them, `stride` bytes apart) in rank order: the level's split
// into the search state and the winner's compute bits (as score_and_choose writes them).
void pick_candidate(const search_view& v, int level, bool last_level, const unsigned char* all, int ranks,
                    std::size_t stride, cudaStream_t stream);

}  // namespace cbg::train::detail
