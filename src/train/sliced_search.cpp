// SPDX-License-Identifier: Apache-2.0
// Feature-parallel scoring in the sharded tree search (sliced_search.hpp): the slices, their
// buffers, and each level's kernels (kernels/train/sliced_search.hpp) around the collectives.
#include "src/train/sliced_search.hpp"

#include <algorithm>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/copy.hpp"

namespace cbg::train::detail {

bool sliced_scoring_enabled(int mode, int ranks, std::int64_t features, int multiprocessors) {
  if (ranks < 2 || mode == 0) return false;
  return mode == 1 || features > sliced_features_per_multiprocessor * static_cast<std::int64_t>(multiprocessors);
}

void prepare_sliced_search(sliced_search& s, const context& ctx, const std::vector<std::int64_t>& offset,
                           std::int64_t total_bins, int channels, int depth, const dist::reducer& red) {
  if (s.prepared && s.ranks == red.size() && s.rank == red.rank() && s.channels == channels && s.depth >= depth) {
    return;
  }
  const cudaStream_t stream = ctx.stream();
  s = sliced_search{};
  s.prepared = true;
  s.ranks = red.size();
  s.rank = red.rank();
  s.channels = channels;
  s.depth = depth;
  int multiprocessors = 0;
  CBG_CUDA_TRY(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, ctx.device()));
  s.enabled = sliced_scoring_enabled(ctx.policy().dist_sliced_score, s.ranks, static_cast<std::int64_t>(offset.size()),
                                     multiprocessors);
  if (!s.enabled) return;
  s.slices = dist::slice_features(offset, total_bins, s.ranks);
  const std::size_t slots = std::size_t{1} << (depth - 1);
  const std::size_t block = slots * static_cast<std::size_t>(channels) * static_cast<std::size_t>(s.slices.width);
  s.column = device_buffer<std::int64_t>(s.slices.column.size(), stream, ctx.resource());
  s.send = device_buffer<long long>(std::max<std::size_t>(1, block * static_cast<std::size_t>(s.ranks)), stream,
                                    ctx.resource());
  s.recv = device_buffer<long long>(std::max<std::size_t>(1, block), stream, ctx.resource());
  const std::size_t candidate = candidate_bytes(depth - 1);
  s.candidate_send = device_buffer<unsigned char>(candidate, stream, ctx.resource());
  s.candidate_recv =
      device_buffer<unsigned char>(candidate * static_cast<std::size_t>(s.ranks), stream, ctx.resource());
  copy_bytes(s.column.data(), memory_kind::device, s.slices.column.data(), memory_kind::host,
             s.slices.column.size() * sizeof(std::int64_t), stream, ctx.copies(), ctx.rules(),
             CBG_COPY_SITE("feature slices"));
}

void exchange_slices(sliced_search& s, const search_view& v, std::size_t first_slot, std::size_t n_slots,
                     dist::reducer& red, cudaStream_t stream) {
  const exchange_shape x{static_cast<std::int64_t>(first_slot), static_cast<std::int64_t>(n_slots), v.channels,
                         v.total_bins, s.slices.width};
  const std::int64_t block = x.slots * x.channels * x.width;
  if (block == 0) return;
  pack_slices(v.hist, s.send.data(), s.column.data(), s.ranks, x, stream);
  red.sum_scatter_i64(s.send.data(), s.recv.data(), static_cast<std::size_t>(block), stream);
  const auto r = static_cast<std::size_t>(s.rank);
  const std::int64_t first = s.slices.column[r];
  const std::int64_t width = s.slices.column[r + 1] - first;
  if (width == 0) return;
  unpack_slice(v.hist, s.recv.data(), first, width, x, stream);
}

search_view slice_view(const sliced_search& s, const search_view& v) {
  search_view out = v;
  const auto r = static_cast<std::size_t>(s.rank);
  out.score_begin = s.slices.begin[r];
  out.score_end = s.slices.begin[r + 1];
  return out;
}

void choose_split_sliced(sliced_search& s, const search_view& v, int level, bool last_level, dist::reducer& red,
                         cudaStream_t stream) {
  const auto r = static_cast<std::size_t>(s.rank);
  const std::size_t stride = candidate_bytes(level);
  slice_candidate(v, level, last_level, s.slices.begin[r], s.slices.begin[r + 1], s.candidate_send.data(), stream);
  red.all_gather(s.candidate_send.data(), s.candidate_recv.data(), stride, stream);
  pick_candidate(v, level, last_level, s.candidate_recv.data(), s.ranks, stride, stream);
}

}  // namespace cbg::train::detail
