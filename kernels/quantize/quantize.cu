// SPDX-License-Identifier: Apache-2.0
// GPU quantizer: the stages of stages.hpp in order on the context's stream. The math is
// quantize_math.hpp and border_types.hpp, shared with the host reference
// (src/quantize/quantize_host.cpp), so the GPU result equals it bit for bit.
//
// One upload (settings, column views, the border subset, the gain tables), one scratch allocation
// sized up front, no host synchronisation until the 4-byte status is read at the end. Features go
// in chunks of whole groups: one chunk of all features when every column is readable by the
// device; chunks staged through pinned memory when some are in pageable host memory (staging.hpp),
// each chunk's stages running while the next chunk is copied.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/quantize/stages.hpp"
#include "kernels/quantize/staging.hpp"
#include "kernels/quantize/upload_image.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/quantize/sampling.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/stream.hpp"

namespace cbg::quantize {

namespace {

using detail::at;
using detail::upload_image;

// The device-wide sort's passes grow with log2(features) and CUB's segmented sort puts one block
// on each feature: up to this many features the device-wide sort is the faster (bench run of
// cbgpu-quantize-bench, H100, 2026-11-21: bench/RESULTS.md).
constexpr std::int64_t device_wide_sort_max_features = 64;

constexpr int no_error = 0x7fffffff;

void mark(cudaEvent_t e, cudaStream_t stream) {
  if (e != nullptr) CBG_CUDA_TRY(cudaEventRecord(e, stream));
}

// A chunk of whole feature groups, quantized as a unit (all features when nothing is staged).
struct chunk {
  std::int64_t f0 = 0;
  std::int64_t count = 0;
  std::size_t views_at = 0;                    // image offset of its column views
  std::size_t float4_at = 0;                   // image offset of its groups' float4 flags
  std::size_t exact_begin = 0, exact_end = 0;  // its part of the exact feature list
};

// One pass of the quantizer; returns the status word (no_error, a Forbidden feature, or
// subset_short when the GPU's subset draws fell short and the subset must come from the host).
int run(const pool& p, const options& o, const feature_settings& settings, const stage_marks& when, bool draw_on_gpu,
        device_quantized& q) {
  const context& ctx = *p.ctx();
  const cudaStream_t stream = ctx.stream();
  mark(when.start, stream);
  q.rows = p.num_rows();
  q.features = p.num_features();
  q.padded_rows = padded_rows_of(q.rows);
  q.device = ctx.device();
  const std::int64_t nf = q.features;
  const std::vector<column_view>& columns = p.features();

  // Host side: the border subset (or its plan on the GPU), the gain tables, the settings, the
  // chunks and their column views, in one image.
  const auto rows = static_cast<std::uint64_t>(q.rows);
  const subset_shape shape = border_subset_shape(rows, o, settings);
  const std::uint32_t m = shape.m;
  detail::draw_plan draws;
  if (draw_on_gpu && shape.drawn) draws = detail::plan_subset_draws(rows, m);
  const bool gpu_draws = draws.draws != 0 && draws.usable();
  const std::vector<std::uint32_t> subset =
      shape.drawn && !gpu_draws ? border_subset(rows, o.max_subset_size, ctx.seed()) : std::vector<std::uint32_t>{};
  mark(when.subset, stream);

  const bool staging = detail::needs_staging(columns);
  const detail::staging_plan stage_plan =
      staging ? detail::plan_staging(columns, q.padded_rows, o.chunk_features, o.staging_piece_bytes)
              : detail::staging_plan{};
  CBG_EXPECTS(o.chunk_features >= 0 && o.chunk_features % 4 == 0, status::invalid_argument,
              "chunk_features must be a multiple of 4");
  const std::int64_t chunk_features =
      staging ? stage_plan.chunk_features : (o.chunk_features != 0 ? std::min<std::int64_t>(o.chunk_features, nf) : nf);
  const std::size_t total = static_cast<std::size_t>(chunk_features) * m;
  CBG_EXPECTS(total < (1ULL << 31), status::unsupported,
              "the border subsets hold " + std::to_string(total) + " values; at most 2^31 - 1 are supported");
  sort_method method = o.sort;
  if (method == sort_method::automatic) {
    method = chunk_features <= device_wide_sort_max_features ? sort_method::device_wide : sort_method::segmented;
  }
  // The device buffers that staged chunks go to (their addresses are in the chunks' views).
  device_buffer<unsigned char> staged[2];
  if (staging) {
    for (auto& b : staged) b = device_buffer<unsigned char>(stage_plan.buffer_bytes, stream, ctx.resource());
  }

  std::vector<std::uint32_t> exact_list;
  unsigned types_used = 0;
  int exact_budget = 0;
  for (std::int64_t f = 0; f < nf; ++f) {
    const auto t = static_cast<border_type>(settings.type[static_cast<std::size_t>(f)]);
    const int k = settings.border_count[static_cast<std::size_t>(f)];
    types_used |= 1u << static_cast<unsigned>(t);
    if (is_exact(t) && k != 0) {
      exact_list.push_back(static_cast<std::uint32_t>(f));
      exact_budget = std::max(exact_budget, k);
    }
  }
  std::vector<int> offsets;
  if (method == sort_method::segmented) {
    offsets.resize(static_cast<std::size_t>(chunk_features) + 1);
    for (std::int64_t f = 0; f <= chunk_features; ++f) offsets[static_cast<std::size_t>(f)] = static_cast<int>(f * m);
  }
  const auto log_gains = settings.uses(penalty::log_sum) ? gain_table(penalty::log_sum, m) : nullptr;
  const auto entropy_gains = settings.uses(penalty::entropy) ? gain_table(penalty::entropy, m) : nullptr;
  const std::size_t table_bytes = (static_cast<std::size_t>(m) + 1) * sizeof(double);
  upload_image image(32 * 256 + 2 * sizeof(column_view) * static_cast<std::size_t>(nf) +
                     8 * static_cast<std::size_t>(nf) + offsets.size() * sizeof(int) +
                     subset.size() * sizeof(std::uint32_t) + 2 * table_bytes);
  std::vector<chunk> chunks;
  std::vector<column_view> views;
  std::vector<std::uint8_t> group_float4;
  for (std::int64_t f0 = 0; f0 < nf; f0 += chunk_features) {
    chunk c;
    c.f0 = f0;
    c.count = std::min(chunk_features, nf - f0);
    views.clear();
    int slot = 0;
    const unsigned char* buffer = staging ? staged[chunks.size() % 2].data() : nullptr;
    for (std::int64_t j = 0; j < c.count; ++j) {
      const column_view& col = columns[static_cast<std::size_t>(f0 + j)];
      views.push_back(detail::staged_view(col, slot, buffer, stage_plan.pitch));
      if (col.memory == memory_kind::host) ++slot;
    }
    group_float4.assign(static_cast<std::size_t>(groups_of(c.count)), 0);
    for (std::int64_t g = 0; g < groups_of(c.count); ++g) {
      group_float4[static_cast<std::size_t>(g)] =
          detail::group_is_float4(views.data() + 4 * g, std::min<std::int64_t>(4, c.count - 4 * g)) ? 1 : 0;
    }
    c.views_at = image.add(views);
    c.float4_at = image.add(group_float4);
    c.exact_begin = static_cast<std::size_t>(
        std::lower_bound(exact_list.begin(), exact_list.end(), static_cast<std::uint32_t>(f0)) - exact_list.begin());
    c.exact_end = static_cast<std::size_t>(
        std::lower_bound(exact_list.begin(), exact_list.end(), static_cast<std::uint32_t>(f0 + c.count)) -
        exact_list.begin());
    chunks.push_back(c);
  }
  const std::size_t count_at = image.add(settings.border_count);
  const std::size_t mode_at = image.add(settings.mode);
  const std::size_t type_at = image.add(settings.type);
  const std::size_t offsets_at = image.add(offsets);
  const std::size_t error_at = image.add(&no_error, 1);
  const std::size_t subset_at = image.add(subset);
  const std::size_t exact_at = image.add(exact_list);
  const std::size_t log_at = log_gains != nullptr ? image.add(log_gains->data(), m + std::size_t{1}) : 0;
  const std::size_t entropy_at = entropy_gains != nullptr ? image.add(entropy_gains->data(), m + std::size_t{1}) : 0;
  // Sort plans for a full chunk and for the last one when it is smaller.
  const detail::subset_plan plan_full = detail::plan_subsets(method, chunk_features, m);
  const std::int64_t last_count = nf == 0 ? 0 : nf - (nf - 1) / chunk_features * chunk_features;
  const detail::subset_plan plan_last =
      last_count == chunk_features ? plan_full : detail::plan_subsets(method, last_count, m);
  std::size_t max_exact = 0;
  for (const chunk& c : chunks) max_exact = std::max(max_exact, c.exact_end - c.exact_begin);
  const detail::exact_plan exact = detail::plan_exact(m, exact_budget, max_exact);
  mark(when.prepare, stream);

  // Device side: the small outputs; then one allocation for the image, the NaN counts, the subset
  // drawn on the GPU, and the scratch that the draws and then the sort use.
  q.borders = device_buffer<float>(static_cast<std::size_t>(nf * border_stride), stream, ctx.resource());
  q.border_count = device_buffer<std::int32_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  q.mode = device_buffer<std::uint8_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  if (nf == 0) {
    q.index = device_buffer<std::uint32_t>(0, stream, ctx.resource());
    return no_error;
  }
  const auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t nan_at = align(image.bytes().size());
  const std::size_t drawn_at = align(nan_at + static_cast<std::size_t>(nf) * sizeof(unsigned));
  const std::size_t scratch_at = align(drawn_at + (gpu_draws ? std::size_t{m} * sizeof(std::uint32_t) : 0));
  const std::size_t sort_bytes = std::max(plan_full.bytes(), plan_last.bytes());
  device_buffer<unsigned char> work(scratch_at + std::max(sort_bytes, gpu_draws ? draws.bytes() : 0), stream,
                                    ctx.resource());
  device_buffer<unsigned char> exact_work(exact.bytes(), stream, ctx.resource());
  mark(when.allocate, stream);
  unsigned char* w = work.data();
  copy_bytes(w, memory_kind::device, image.bytes().data(), memory_kind::host, image.bytes().size(), stream,
             ctx.copies(), ctx.rules(), CBG_COPY_SITE("quantizer settings, subset, gain tables"));
  auto* nan_counts = at<unsigned int>(w, nan_at);
  CBG_CUDA_TRY(cudaMemsetAsync(nan_counts, 0, static_cast<std::size_t>(nf) * sizeof(unsigned), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(q.borders.data(), 0, q.borders.size_bytes(), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(q.border_count.data(), 0, q.border_count.size_bytes(), stream));
  CBG_CUDA_TRY(cudaMemsetAsync(q.mode.data(), 0, q.mode.size_bytes(), stream));
  const auto* requested_count = at<const std::int32_t>(w, count_at);
  int* status_word = at<int>(w, error_at);
  mark(when.setup, stream);

  // The border subset's rows (nullptr: rows 0..m-1).
  void* scratch = w + scratch_at;
  const std::uint32_t* subset_rows = nullptr;
  if (gpu_draws) {
    auto* drawn = at<std::uint32_t>(w, drawn_at);
    detail::draw_subset(draws, scratch, catboost_rng64(ctx.seed()).streams(), rows, m, drawn, status_word, stream);
    subset_rows = drawn;
  } else if (shape.drawn) {
    subset_rows = at<const std::uint32_t>(w, subset_at);
  }

  std::unique_ptr<detail::stager> stager;
  if (staging) stager = std::make_unique<detail::stager>(ctx, stage_plan, q.rows);
  event consumed[2];
  for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
    const chunk& c = chunks[ci];
    const auto* device_views = at<const column_view>(w, c.views_at);
    if (staging) {
      stager->stage(columns.data() + c.f0, c.count, staged[ci % 2].data(), ci >= 2 ? consumed[ci % 2].get() : nullptr,
                    stream);
    }
    // 1-2. The border subsets, sorted.
    const detail::subset_plan& plan = c.count == chunk_features ? plan_full : plan_last;
    detail::gather_subsets(plan, scratch, device_views, subset_rows, requested_count + c.f0, nan_counts + c.f0, stream);
    mark(when.gather, stream);
    const float* sorted = detail::sort_subsets(plan, scratch, at<const int>(w, offsets_at), stream);
    mark(when.sort, stream);
    // 3. The border search per feature.
    detail::search_args a;
    a.sorted = sorted;
    a.m = m;
    a.features = c.count;
    a.feature_base = c.f0;
    a.requested_count = requested_count + c.f0;
    a.requested_mode = at<const std::uint8_t>(w, mode_at) + c.f0;
    a.requested_type = at<const std::uint8_t>(w, type_at) + c.f0;
    a.nan_counts = nan_counts + c.f0;
    a.log_gains = log_gains != nullptr ? at<const double>(w, log_at) : nullptr;
    a.entropy_gains = entropy_gains != nullptr ? at<const double>(w, entropy_at) : nullptr;
    a.borders = q.borders.data() + c.f0 * border_stride;
    a.border_count = q.border_count.data() + c.f0;
    a.mode = q.mode.data() + c.f0;
    a.error_feature = status_word;
    detail::search_borders(a, types_used, stream);
    if (c.exact_end > c.exact_begin) {
      detail::search_exact(exact, exact_work.data(), a, at<const std::uint32_t>(w, exact_at) + c.exact_begin,
                           c.exact_end - c.exact_begin, stream);
    }
    mark(when.borders, stream);
    // 4. Every value to its bin. The index is allocated only now: mapping its memory (about a
    // millisecond per GB with a pool that returns memory at each synchronisation) overlaps the
    // stages above, which are queued.
    if (ci == 0) {
      q.index =
          device_buffer<std::uint32_t>(static_cast<std::size_t>(groups_of(nf) * q.padded_rows), stream, ctx.resource());
    }
    detail::binarize(device_views, at<const std::uint8_t>(w, c.float4_at), c.count, q.rows, q.padded_rows, a.borders,
                     a.border_count, a.mode, q.index.data() + (c.f0 / 4) * q.padded_rows, stream);
    mark(when.binarize, stream);
    if (staging) consumed[ci % 2].record(stream);
  }

  int status_host = no_error;
  copy_bytes(&status_host, memory_kind::host, status_word, memory_kind::device, sizeof(int), stream, ctx.copies(),
             ctx.rules(), CBG_COPY_SITE("quantizer status"));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  return status_host;
}

}  // namespace

device_quantized quantize_device(const pool& p, const options& o, const stage_marks* marks) {
  const stage_marks none{};
  const context& ctx = *p.ctx();
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "quantize_device needs a GPU context");
  const feature_settings settings = resolve_settings(p, o);
  scoped_device guard(ctx.device());
  device_quantized q;
  int status_word = run(p, o, settings, marks != nullptr ? *marks : none, /*draw_on_gpu=*/true, q);
  if (status_word == detail::subset_short) {
    q = device_quantized{};
    status_word = run(p, o, settings, marks != nullptr ? *marks : none, /*draw_on_gpu=*/false, q);
  }
  CBG_EXPECTS(status_word == no_error, status::bad_data,
              "feature " + std::to_string(status_word) + " has NaN values and its nan_mode is Forbidden");
  return q;
}

device_quantized binarize_device(const pool& p, const device_quantized& like) {
  const context& ctx = *p.ctx();
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "binarize_device needs a GPU context");
  CBG_EXPECTS(p.num_features() == like.features, status::internal,
              "binarize_device: the pool's features differ from the quantized set's");
  const std::vector<column_view>& columns = p.features();
  for (const column_view& c : columns) {
    CBG_EXPECTS(c.memory != memory_kind::host, status::internal,
                "binarize_device reads columns the device can read (stage pageable ones first)");
  }
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  device_quantized q;
  q.rows = p.num_rows();
  q.features = like.features;
  q.padded_rows = padded_rows_of(q.rows);
  q.device = ctx.device();
  const std::int64_t nf = q.features;
  q.borders = device_buffer<float>(static_cast<std::size_t>(nf * border_stride), stream, ctx.resource());
  q.border_count = device_buffer<std::int32_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  q.mode = device_buffer<std::uint8_t>(static_cast<std::size_t>(nf), stream, ctx.resource());
  q.index =
      device_buffer<std::uint32_t>(static_cast<std::size_t>(groups_of(nf) * q.padded_rows), stream, ctx.resource());
  if (nf == 0) return q;
  CBG_CUDA_TRY(
      cudaMemcpyAsync(q.borders.data(), like.borders.data(), q.borders.size_bytes(), cudaMemcpyDeviceToDevice, stream));
  CBG_CUDA_TRY(cudaMemcpyAsync(q.border_count.data(), like.border_count.data(), q.border_count.size_bytes(),
                               cudaMemcpyDeviceToDevice, stream));
  CBG_CUDA_TRY(cudaMemcpyAsync(q.mode.data(), like.mode.data(), q.mode.size_bytes(), cudaMemcpyDeviceToDevice, stream));
  std::vector<std::uint8_t> group_float4(static_cast<std::size_t>(groups_of(nf)), 0);
  for (std::int64_t g = 0; g < groups_of(nf); ++g) {
    group_float4[static_cast<std::size_t>(g)] =
        detail::group_is_float4(columns.data() + 4 * g, std::min<std::int64_t>(4, nf - 4 * g)) ? 1 : 0;
  }
  upload_image image(sizeof(column_view) * static_cast<std::size_t>(nf) + group_float4.size() + 512);
  const std::size_t views_at = image.add(columns);
  const std::size_t float4_at = image.add(group_float4);
  device_buffer<unsigned char> work(image.bytes().size(), stream, ctx.resource());
  copy_bytes(work.data(), memory_kind::device, image.bytes().data(), memory_kind::host, image.bytes().size(), stream,
             ctx.copies(), ctx.rules(), CBG_COPY_SITE("binarizer column views"));
  detail::binarize(at<const column_view>(work.data(), views_at), at<const std::uint8_t>(work.data(), float4_at), nf,
                   q.rows, q.padded_rows, q.borders.data(), q.border_count.data(), q.mode.data(), q.index.data(),
                   stream);
  // The image is host memory freed on return and `work` is released at scope end: wait for both.
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  return q;
}

}  // namespace cbg::quantize
