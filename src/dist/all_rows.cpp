// SPDX-License-Identifier: Apache-2.0
// Every rank's rows of the CTR preparation's inputs on each rank (all_rows.hpp): the row counts,
// then each column through one padded all-gather (rank_link::gather_rows) into rank order.
#include "src/dist/all_rows.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/rank.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/runtime/device.hpp"
#include "kernels/dist/gather.hpp"

namespace cbg::dist {

rank_row_counts exchange_row_counts(reducer& red, const context& ctx, std::int64_t learn_rows, std::int64_t eval_rows) {
  const int size = red.size();
  const std::int64_t mine[2] = {learn_rows, eval_rows};
  device_buffer<std::int64_t> counts(static_cast<std::size_t>(2 * (size + 1)), ctx.stream(), ctx.resource());
  copy_bytes(counts.data(), memory_kind::device, mine, memory_kind::host, sizeof(mine), ctx.stream(), ctx.copies(),
             ctx.rules(), CBG_COPY_SITE("rank row counts"));
  red.all_gather(counts.data(), counts.data() + 2, sizeof(mine), ctx.stream());
  std::vector<std::int64_t> all(static_cast<std::size_t>(2 * size));
  copy_bytes(all.data(), memory_kind::host, counts.data() + 2, memory_kind::device, all.size() * sizeof(std::int64_t),
             ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE("rank row counts"));
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  red.check_live();  // the counts are garbage when a rank never came (a timeout aborted the gather)
  rank_row_counts out;
  int with_eval = 0;
  for (int k = 0; k < size; ++k) {
    const std::int64_t l = all[static_cast<std::size_t>(2 * k)], e = all[static_cast<std::size_t>(2 * k + 1)];
    CBG_EXPECTS(l > 0, status::bad_data, fmt::format("rank {} has no learn rows", k));
    out.learn.counts.push_back(l);
    out.eval.counts.push_back(std::max<std::int64_t>(e, 0));
    with_eval += e >= 0 ? 1 : 0;
  }
  CBG_EXPECTS(with_eval == 0 || with_eval == size, status::invalid_argument,
              fmt::format("{} of {} ranks have an eval set: every rank or none must", with_eval, size));
  return out;
}

namespace {

// Every rank's values of `c` (this rank's rows, any stride) in rank order, compact, into `into`.
void gather_column(const column_view& c, rank_link& link, bool eval, device_buffer<unsigned char>& staging, void* into,
                   const context& ctx) {
  CBG_EXPECTS(c.memory != memory_kind::host, status::device,
              "categorical features over several processes read device, managed or pinned memory; a column or "
              "label is in pageable host memory");
  const std::size_t elem = size_of(c.type);
  const auto bytes = static_cast<std::size_t>(c.size) * elem;
  if (staging.size() < bytes) staging = device_buffer<unsigned char>(bytes, ctx.stream(), ctx.resource());
  gather(c.data, c.stride, elem, c.size, staging.data(), ctx.stream());
  link.gather_rows(staging.data(), elem, eval, into);
}

// Every rank's rows of `p` (see all_rows.hpp) as a pool on ctx's device.
pool gather_pool(const pool& p, rank_link& link, bool eval, bool floats, all_rows& out) {
  const context& ctx = *p.ctx();
  const std::int64_t total = link.total_rows(eval);
  device_buffer<unsigned char> staging;
  pool_parts parts;
  for (std::int64_t j = 0; j < p.num_features(); ++j) {
    const column_view& c = p.features()[static_cast<std::size_t>(j)];
    const bool cat = p.is_categorical(j);
    column_view g = c;
    g.memory = memory_kind::device;
    g.device_id = ctx.device();
    g.size = total;
    g.stride = 1;
    const std::size_t elem = size_of(c.type);
    if (cat || floats) {
      out.buffers.emplace_back(static_cast<std::size_t>(total) * elem, ctx.stream(), ctx.resource());
      gather_column(c, link, eval, staging, out.buffers.back().data(), ctx);
    } else {  // a stand-in: one zero for every row
      out.buffers.emplace_back(elem, ctx.stream(), ctx.resource());
      CBG_CUDA_TRY(cudaMemsetAsync(out.buffers.back().data(), 0, elem, ctx.stream()));
      g.stride = 0;
    }
    g.data = out.buffers.back().data();
    parts.features.push_back(g);
    parts.categorical.push_back(cat);
    parts.names.push_back(p.feature_name(j));
  }
  if (p.label()) {
    // [rows] or [rows, k]: column-major [total, k] (column_of reads either).
    const tensor_view& t = *p.label();
    const std::int64_t k = pool::dims_of(p.label());
    const std::size_t elem = size_of(t.type);
    out.buffers.emplace_back(static_cast<std::size_t>(total * k) * elem, ctx.stream(), ctx.resource());
    unsigned char* into = out.buffers.back().data();
    for (std::int64_t j = 0; j < k; ++j) {
      gather_column(column_of(t, j), link, eval, staging, into + static_cast<std::size_t>(j * total) * elem, ctx);
    }
    tensor_view g = t;
    g.data = into;
    g.memory = memory_kind::device;
    g.device_id = ctx.device();
    g.shape[0] = total;
    g.strides[0] = 1;
    if (t.rank >= 2) g.strides[1] = total;
    parts.label = g;
  }
  // The staging buffer is freed in stream order, after the gathers that read it.
  return pool::borrow(p.ctx(), std::move(parts));
}

}  // namespace

std::unique_ptr<all_rows> gather_all_rows(const pool& learn, const pool* eval, const communicator& c, bool floats) {
  const context& ctx = *learn.ctx();
  scoped_device on(ctx.device());
  const std::unique_ptr<reducer> red = make_reducer(c, ctx.device());
  auto out = std::make_unique<all_rows>();
  out->counts = exchange_row_counts(*red, ctx, learn.num_rows(), eval != nullptr ? eval->num_rows() : -1);
  rank_inputs in;
  in.red = red.get();
  in.learn = out->counts.learn;
  in.eval = out->counts.eval;
  rank_link link(in, ctx);
  out->learn.emplace(gather_pool(learn, link, false, floats, *out));
  if (eval != nullptr) out->eval.emplace(gather_pool(*eval, link, true, floats, *out));
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  red->check_live();  // the gathers completed (not aborted by a timeout)
  return out;
}

}  // namespace cbg::dist
