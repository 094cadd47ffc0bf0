// SPDX-License-Identifier: Apache-2.0
// Columns quantized over a border subset drawn once (subset_quantizer.hpp). The stages are the
// quantizer's (kernels/quantize/stages.hpp) and subset_columns.hpp's, in one allocation and one
// upload per call.
#include "src/quantize/subset_quantizer.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/quantize/stages.hpp"
#include "kernels/quantize/subset_columns.hpp"
#include "kernels/quantize/upload_image.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/quantize/sampling.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/profiler.hpp"

namespace cbg::quantize {

namespace {

// The status word before any column reports a NaN (every byte 0x7f: one memset; above every
// position that the border search reports).
constexpr std::uint32_t no_nan = 0x7f7f7f7fu;

constexpr unsigned bit(border_type t) { return 1u << static_cast<unsigned>(t); }

}  // namespace

subset_quantizer::subset_quantizer(const context& ctx, std::int64_t rows, const options& o) : ctx_(ctx), rows_(rows) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "subset_quantizer needs a GPU context");
  CBG_EXPECTS(rows > 0, status::internal, "subset_quantizer: no rows");
  const subset_shape shape = border_subset_shape(static_cast<std::uint64_t>(rows), o, feature_settings{});
  m_ = shape.m;
  if (shape.drawn) {
    const scoped_device guard(ctx.device());
    const std::vector<std::uint32_t> s = border_subset(static_cast<std::uint64_t>(rows), o.max_subset_size, ctx.seed());
    subset_ = device_buffer<std::uint32_t>(s.size(), ctx.stream(), ctx.resource());
    copy_bytes(subset_.data(), memory_kind::device, s.data(), memory_kind::host, s.size() * sizeof(std::uint32_t),
               ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE("border subset"));
  }
}

bool subset_quantizer::handles(border_type t) noexcept {
  return t == border_type::uniform || t == border_type::median || t == border_type::uniform_and_quantiles;
}

subset_quantizer::layout subset_quantizer::layout_of(const std::vector<column>& cols) noexcept {
  layout l;
  l.columns = cols.size();
  int most = 0;
  for (const column& c : cols) most = std::max(most, c.border_count);
  l.stride = 1 + static_cast<std::size_t>(most);  // nan_mode Forbidden: no NaN border
  return l;
}

void subset_quantizer::enqueue(const std::vector<column>& cols, std::uint32_t* results) const {
  if (cols.empty()) return;
  const scoped_device guard(ctx_.device());
  const cudaStream_t stream = ctx_.stream();
  const layout l = layout_of(cols);
  const std::size_t K = cols.size();
  // Positions: the Uniform columns first (their stand-ins), then those searched over the sorted
  // subset.
  std::vector<std::uint32_t> slot;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t k = 0; k < K; ++k) {
      const column& c = cols[k];
      CBG_EXPECTS(handles(c.type) && c.border_count >= 1 && c.border_count <= max_border_count, status::internal,
                  "subset_quantizer: a column's border type or count is not taken");
      if ((c.type == border_type::uniform) == (pass == 0)) slot.push_back(static_cast<std::uint32_t>(k));
    }
  }
  const auto U = static_cast<std::size_t>(
      std::count_if(cols.begin(), cols.end(), [](const column& c) { return c.type == border_type::uniform; }));
  const std::size_t S = K - U;
  std::vector<column_view> views(K);
  std::vector<const float*> values(K);
  std::vector<std::uint8_t*> bins(K);
  std::vector<std::int32_t> counts(K);
  std::vector<std::uint8_t> types(K), modes(K, static_cast<std::uint8_t>(nan_mode::forbidden));
  unsigned sorted_types = 0;
  for (std::size_t p = 0; p < K; ++p) {
    const column& c = cols[slot[p]];
    views[p].data = c.values;
    views[p].type = dtype::float32;
    views[p].memory = memory_kind::device;
    views[p].device_id = ctx_.device();
    views[p].size = rows_;
    values[p] = c.values;
    bins[p] = c.bins;
    counts[p] = c.border_count;
    types[p] = static_cast<std::uint8_t>(c.type);
    if (p >= U) sorted_types |= bit(c.type);
  }
  detail::upload_image image(8 * 256 + K * (sizeof(column_view) + 2 * sizeof(void*) + 10));
  const std::size_t views_at = image.add(views);
  const std::size_t values_at = image.add(values);
  const std::size_t bins_at = image.add(bins);
  const std::size_t counts_at = image.add(counts);
  const std::size_t types_at = image.add(types);
  const std::size_t modes_at = image.add(modes);
  const std::size_t slot_at = image.add(slot);
  // After the image: the border search's outputs, the NaN counts, the stand-ins and their
  // scratch, the sort's scratch.
  const auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t borders_at = align(image.bytes().size());
  const std::size_t count_at = align(borders_at + K * border_stride * sizeof(float));
  const std::size_t mode_at = align(count_at + K * sizeof(std::int32_t));
  const std::size_t nan_at = align(mode_at + K);
  const std::size_t ends_at = align(nan_at + K * sizeof(unsigned));
  const std::size_t ends_scratch_at = align(ends_at + 3 * U * sizeof(float));
  const std::size_t sort_at = align(ends_scratch_at + 3 * U * sizeof(std::uint32_t));
  const detail::subset_plan plan =
      S > 0 ? detail::plan_subsets(sort_method::device_wide, static_cast<std::int64_t>(S), m_) : detail::subset_plan{};
  device_buffer<unsigned char> work(sort_at + (S > 0 ? plan.bytes() : 0), stream, ctx_.resource());
  unsigned char* w = work.data();
  copy_bytes(w, memory_kind::device, image.bytes().data(), memory_kind::host, image.bytes().size(), stream,
             ctx_.copies(), ctx_.rules(), CBG_COPY_SITE("subset quantizer columns"));
  CBG_CUDA_TRY(cudaMemsetAsync(results, 0x7f, sizeof(std::uint32_t), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(w + nan_at, 0, K * sizeof(unsigned), stream));
  const std::uint32_t* subset = subset_.size() > 0 ? subset_.data() : nullptr;
  auto* borders = detail::at<float>(w, borders_at);
  auto* border_count = detail::at<std::int32_t>(w, count_at);
  auto* mode = detail::at<std::uint8_t>(w, mode_at);
  auto* nan_counts = detail::at<unsigned>(w, nan_at);
  const auto* device_values = detail::at<const float* const>(w, values_at);

  const auto search = [&](const float* sorted, std::uint32_t m, std::size_t first, std::size_t count, unsigned used) {
    detail::search_args a;
    a.sorted = sorted;
    a.m = m;
    a.features = static_cast<std::int64_t>(count);
    a.feature_base = static_cast<std::int64_t>(first);
    a.requested_count = detail::at<const std::int32_t>(w, counts_at) + first;
    a.requested_mode = detail::at<const std::uint8_t>(w, modes_at) + first;
    a.requested_type = detail::at<const std::uint8_t>(w, types_at) + first;
    a.nan_counts = nan_counts + first;
    a.borders = borders + first * border_stride;
    a.border_count = border_count + first;
    a.mode = mode + first;
    a.error_feature = reinterpret_cast<int*>(results);
    detail::search_borders(a, used, stream);
  };
  if (U > 0) {
    const stage_range range(ctx_, "quantize.subset.uniform");
    auto* ends = detail::at<float>(w, ends_at);
    detail::uniform_stand_ins(device_values, static_cast<std::int64_t>(U), subset, m_,
                              detail::at<std::uint32_t>(w, ends_scratch_at), ends, nan_counts, stream);
    search(ends, 3, 0, U, bit(border_type::uniform));
  }
  if (S > 0) {
    const stage_range range(ctx_, "quantize.subset.sorted");
    void* scratch = w + sort_at;
    detail::gather_subsets(plan, scratch, detail::at<const column_view>(w, views_at) + U, subset,
                           detail::at<const std::int32_t>(w, counts_at) + U, nan_counts + U, stream);
    search(detail::sort_subsets(plan, scratch, nullptr, stream), m_, U, S, sorted_types);
  }
  const stage_range range(ctx_, "quantize.subset.bins");
  detail::byte_bins(device_values, detail::at<std::uint8_t* const>(w, bins_at), static_cast<std::int64_t>(K), rows_,
                    borders, border_count, mode, stream);
  detail::pack_borders(static_cast<std::int64_t>(K), detail::at<const std::uint32_t>(w, slot_at), l.stride, borders,
                       border_count, results, stream);
  // `work` is freed in stream order, after these kernels.
}

void subset_quantizer::check(const std::uint32_t* results, const layout& l) {
  if (l.columns == 0) return;
  CBG_EXPECTS(results[0] == no_nan, status::bad_data,
              "a column to quantize has NaN values in its border subset (nan_mode Forbidden)");
}

std::vector<float> subset_quantizer::borders_of(const std::uint32_t* results, const layout& l, std::size_t k) {
  CBG_EXPECTS(k < l.columns, status::internal, "subset_quantizer: no such column");
  const std::uint32_t* at = results + 1 + k * l.stride;
  CBG_EXPECTS(at[0] < l.stride, status::internal, "subset_quantizer: a border count past its slots");
  std::vector<float> out(at[0]);
  if (!out.empty()) std::memcpy(out.data(), at + 1, out.size() * sizeof(float));
  return out;
}

}  // namespace cbg::quantize
