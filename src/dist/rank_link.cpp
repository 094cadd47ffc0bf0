// SPDX-License-Identifier: Apache-2.0
// Gathers of one rank (rank.hpp): blocks of different sizes through one equal-size all-gather,
// then device-to-device copies into row order.
#include <algorithm>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/train/reduce_math.hpp"

namespace cbg::dist {

rank_link::rank_link(const rank_inputs& in, const context& ctx) : ctx_(ctx), in_(in) {
  CBG_EXPECTS(in.red != nullptr, status::internal, "rank_link: no reducer");
  CBG_EXPECTS(in.learn.ranks() == in.red->size() && (in.eval.ranks() == 0 || in.eval.ranks() == in.red->size()),
              status::internal, "rank_link: the row splits do not match the reducer's size");
}

void rank_link::gather_blocks(const void* local, std::size_t local_bytes, const std::vector<std::size_t>& bytes,
                              void* out) {
  const std::size_t block = std::max<std::size_t>(1, *std::max_element(bytes.begin(), bytes.end()));
  const std::size_t ranks = bytes.size();
  if (send_.size() < block) send_ = device_buffer<unsigned char>(block, ctx_.stream(), ctx_.resource());
  if (recv_.size() < block * ranks) recv_ = device_buffer<unsigned char>(block * ranks, ctx_.stream(), ctx_.resource());
  if (local_bytes > 0) {
    copy_bytes(send_.data(), memory_kind::device, local, memory_kind::device, local_bytes, ctx_.stream(), ctx_.copies(),
               ctx_.rules(), CBG_COPY_SITE("shard gather"));
  }
  in_.red->all_gather(send_.data(), recv_.data(), block, ctx_.stream());
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (bytes[r] > 0) {
      copy_bytes(static_cast<unsigned char*>(out) + at, memory_kind::device, recv_.data() + r * block,
                 memory_kind::device, bytes[r], ctx_.stream(), ctx_.copies(), ctx_.rules(),
                 CBG_COPY_SITE("shard gather"));
    }
    at += bytes[r];
  }
}

std::int64_t rank_link::gather_tiles(const double* local, int C, bool eval, device_buffer<double>& out) {
  const row_split& s = split(eval);
  std::vector<std::size_t> bytes;
  std::int64_t tiles = 0;
  for (std::int64_t c : s.counts) {
    const std::int64_t t = train::sum_tiles_of(c);
    bytes.push_back(static_cast<std::size_t>(t * C) * sizeof(double));
    tiles += t;
  }
  const std::size_t need = static_cast<std::size_t>(std::max<std::int64_t>(tiles, 1) * C);
  if (out.size() < need) out = device_buffer<double>(need, ctx_.stream(), ctx_.resource());
  if (tiles == 0) {
    CBG_CUDA_TRY(cudaMemsetAsync(out.data(), 0, need * sizeof(double), ctx_.stream()));
    return 1;  // one zero tile: the sum of nothing
  }
  gather_blocks(local, bytes[static_cast<std::size_t>(rank())], bytes, out.data());
  return tiles;
}

void rank_link::gather_rows(const void* local, std::size_t elem, bool eval, void* out) {
  std::vector<std::size_t> bytes;
  for (std::int64_t c : split(eval).counts) bytes.push_back(static_cast<std::size_t>(c) * elem);
  gather_blocks(local, bytes[static_cast<std::size_t>(rank())], bytes, out);
}

}  // namespace cbg::dist
