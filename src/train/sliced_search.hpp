// SPDX-License-Identifier: Apache-2.0
// Feature-parallel scoring in the sharded tree search (issue 9): the slices, the collectives and the
// order of the kernels (kernels/train/sliced_search.hpp). Instead of all-reducing each
// level's computed histograms and scoring every feature on every rank, the ranks reduce-scatter
// them: rank r receives the summed columns of its feature slice (dist::slice_features), scores only
// those features, and the ranks all-gather one candidate each (score, feature, bin and, for the
// next level, the compute bits of its split: which child of each leaf is the lighter). Every rank
// then takes the best candidate in rank order with better_candidate (a total order: the single-GPU
// choice over all features) and the same stop rule as choose_kernel, so the tree is the single-GPU
// tree split for split.
//
// Why the slices suffice: level d's score kernel rebuilds each sibling as parent - computed and
// writes both back for level d + 1, column by column; a rank only ever reads and writes its slice's
// columns, and level d + 1's parents are level d's write-backs of the same columns. The only
// cross-feature read of the histograms, the compute bits of the chosen split, is done by the rank
// owning the candidate and travels with it.
//
// Per level: a pack kernel (the computed slots' columns, rank-major, each rank's block padded to the
// widest slice), the reduce-scatter, an unpack kernel (the rank's columns back into the slots), the
// score kernel over the slice, a one-block choose of the slice's candidate, a small all-gather and a
// one-block pick: one collective and three small kernels more per level than the all-reduce path,
// against a reduce-scatter in place of the all-reduce and 1/ranks of the score kernel's blocks.
// With few features (the score kernel's blocks fit one wave) that is a loss: Higgs shape on 4 H200s,
// search 0.99 against 0.76 ms per tree (bench/RESULTS.md, session 7), so by default the sliced path
// is taken only with more than sliced_features_per_multiprocessor features per SM.
// The context's policy (dist_sliced_score) forces it off or on (the benchmark's A/B switch).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/train/sliced_search.hpp"
#include "kernels/train/stages.hpp"

#include "cbg/dist/dist.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/context.hpp"

namespace cbg::train::detail {

struct sliced_search {
  bool prepared = false;
  bool enabled = false;  // prepared: whether the levels take the sliced path
  int ranks = 1;
  int rank = 0;
  int channels = 0;
  int depth = 0;
  dist::feature_slices slices;
  device_buffer<std::int64_t> column;  // slices.column on the device
  device_buffer<long long> send;       // [rank][slot][channel][width]
  device_buffer<long long> recv;       // [slot][channel][width]
  device_buffer<unsigned char> candidate_send;
  device_buffer<unsigned char> candidate_recv;  // [rank][candidate bytes]
};

// The score kernel keeps two blocks (features) per SM resident: beyond one wave of them, slicing
// the features shortens the kernel.
inline constexpr std::int64_t sliced_features_per_multiprocessor = 2;
// Whether the sharded search takes the sliced path (ranks > 1; `mode` as policy::dist_sliced_score:
// 0 off, 1 on, else by the feature count against the device's multiprocessors).
bool sliced_scoring_enabled(int mode, int ranks, std::int64_t features, int multiprocessors);

// Once per workspace and reducer (the first sharded search): the slices and the buffers for
// `depth` levels of `channels` channels over the histogram layout.
void prepare_sliced_search(sliced_search& s, const context& ctx, const std::vector<std::int64_t>& offset,
                           std::int64_t total_bins, int channels, int depth, const dist::reducer& red);

// Level `level`'s computed slots [first_slot, first_slot + n_slots): every rank's partial sums in,
// the summed columns of this rank's slice out (the other columns are left as they were).
void exchange_slices(sliced_search& s, const search_view& v, std::size_t first_slot, std::size_t n_slots,
                     dist::reducer& red, cudaStream_t stream);

// v with score_begin/score_end set to this rank's slice.
search_view slice_view(const sliced_search& s, const search_view& v);

// The level's split from every rank's slice (replaces score_and_choose's choice): the slice's candidate,
// the all-gather, the pick (search state and compute bits as score_and_choose writes them).
void choose_split_sliced(sliced_search& s, const search_view& v, int level, bool last_level, dist::reducer& red,
                         cudaStream_t stream);

}  // namespace cbg::train::detail
