// SPDX-License-Identifier: Apache-2.0
// GPU tree search (tree_search.hpp): the workspace, and the search that enqueues every level's
// stages (kernels/train/stages.hpp) on the context's stream with no host synchronisation until the
// finished structure (a few bytes) is read back.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/train/search_tuning.hpp"
#include "kernels/train/sliced_search.hpp"
#include "kernels/train/stages.hpp"
#include "kernels/train/search_extension_device.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/runtime/device.hpp"
#include "src/train/tree_search_common.hpp"

namespace cbg::train {

class device_search_workspace {
 public:
  int device = -1;
  std::int64_t rows = 0;
  std::int64_t features = 0;
  std::int64_t padded_rows = 0;
  int dims = 1;
  int depth = 1;  // levels the histogram memory holds
  detail::bin_layout layout;
  device_buffer<std::int32_t> bins;
  device_buffer<std::int64_t> offset;
  device_buffer<long long> hist;
  device_buffer<std::uint8_t> compute_bit;
  device_buffer<unsigned char> state;  // search_state, then max_bits[channels]
  device_buffer<detail::feature_best> best;
  device_buffer<double> noise;
  // Row lists (stages.hpp): levels >= 1 of histogram_fast read only the rows of computed children.
  device_buffer<uint2> row_list;
  device_buffer<unsigned> row_count;  // [max_depth]
  device_buffer<int2> fixed;          // [rows]
  bool row_lists = true;
  std::vector<detail::histogram_plan> plans;  // per level
  // Histogram blocks per SM the plans aim at: 2, 3 and 4 time the same (registers cap it at 2), 1 is
  // 20-25 % slower (cbgpu-tree-bench, H100, 2026-11-21: bench/RESULTS.md).
  int blocks_per_sm = 2;
  bool fast_histograms = true;  // histogram_fast for one dimension: 4.2x histogram_simple (same run)
  // histogram_fast: packed word groups per block; 0 picks by the feature count (4 from 64 groups:
  // Epsilon-shape 8.32 against 9.10 ms per tree; 1 for Higgs-shape: 3.56 against 3.75 ms;
  // cbgpu-tree-bench, H200, 2026-11-21).
  int groups_per_block = 0;
  // histogram_fast: L2 prefetch of the next round's rows. Off: it made the search slower (Higgs-shape
  // 4.17 against 3.59 ms, Epsilon-shape 8.99 against 8.36 ms per tree; same bench and run).
  bool prefetch = false;
  // Profiling (benchmarks): an event after every stage of the last search.
  bool profiling = false;
  std::vector<std::string> stage_names;
  std::vector<cudaEvent_t> stage_events;
  detail::search_stats stats;
  // Sharded searches: feature-parallel scoring (sliced_search.hpp), set up by the first one.
  detail::sliced_search sliced;

  ~device_search_workspace() {
    for (cudaEvent_t e : stage_events) CBG_ASSERT_CUDA_SUCCESS(cudaEventDestroy(e));
  }

  [[nodiscard]] std::size_t state_bytes() const noexcept {
    return sizeof(detail::search_state) + static_cast<std::size_t>(dims + 1) * sizeof(unsigned);
  }

  detail::search_view view(const quantize::device_quantized& q) {
    detail::search_view v;
    v.index = q.index.data();
    v.rows = rows;
    v.padded_rows = padded_rows;
    v.features = features;
    v.dims = dims;
    v.channels = dims + 1;
    v.bins = bins.data();
    v.offset = offset.data();
    v.total_bins = layout.total_bins;
    v.bin_stride = layout.max_bins;
    v.hist = hist.data();
    v.compute_bit = compute_bit.data();
    v.state = reinterpret_cast<detail::search_state*>(state.data());
    v.max_bits = reinterpret_cast<unsigned*>(state.data() + sizeof(detail::search_state));
    v.best = best.data();
    if (row_lists && row_list.size() > 0) {
      v.row_list = row_list.data();
      v.row_count = row_count.data();
      v.fixed = fixed.data();
    }
    return v;
  }

  void plan(const quantize::device_quantized& q) {
    plans.clear();
    const detail::search_view v = view(q);
    for (int d = 0; d < depth; ++d) plans.push_back(detail::plan_histogram(v, d, device, blocks_per_sm, fast_histograms,
                                              groups_per_block > 0 ? groups_per_block : (features + 3) / 4 >= 64 ? 4 : 1,
                                              prefetch));
  }
};

void device_search_workspace_deleter::operator()(device_search_workspace* w) const noexcept { delete w; }

device_search_workspace_ptr make_device_search_workspace(const context& ctx, const quantize::device_quantized& q,
                                                         int dims, const tree_search_params& params) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "make_device_search_workspace needs a GPU context");
  detail::validate_search(nullptr, &q, dims, &q, &q, {}, params);
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  device_search_workspace_ptr w(new device_search_workspace);
  w->device = ctx.device();
  w->rows = q.rows;
  w->features = q.features;
  w->padded_rows = q.padded_rows;
  w->dims = dims;
  w->depth = params.depth;

  // Border counts (metadata: 4 bytes per feature) in copies that strict mode allows.
  std::vector<std::int32_t> counts(static_cast<std::size_t>(q.features));
  const std::size_t chunk = strict_d2h_metadata_limit / sizeof(std::int32_t);
  for (std::size_t at = 0; at < counts.size(); at += chunk) {
    const std::size_t n = std::min(chunk, counts.size() - at);
    copy_bytes(counts.data() + at, memory_kind::host, q.border_count.data() + at, memory_kind::device,
               n * sizeof(std::int32_t), stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("border counts"));
  }
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  w->layout = detail::make_bin_layout(counts);

  const std::size_t nf = counts.size();
  const std::size_t channels = static_cast<std::size_t>(dims) + 1;
  const std::size_t slots = std::size_t{1} << (params.depth - 1);
  w->bins = device_buffer<std::int32_t>(std::max<std::size_t>(nf, 1), stream, ctx.resource());
  w->offset = device_buffer<std::int64_t>(std::max<std::size_t>(nf, 1), stream, ctx.resource());
  w->hist = device_buffer<long long>(std::max<std::size_t>(1, slots * channels * static_cast<std::size_t>(w->layout.total_bins)),
                                     stream, ctx.resource());
  w->compute_bit = device_buffer<std::uint8_t>(slots, stream, ctx.resource());
  w->state = device_buffer<unsigned char>(w->state_bytes(), stream, ctx.resource());
  w->best = device_buffer<detail::feature_best>(std::max<std::size_t>(nf, 1), stream, ctx.resource());
  w->noise = device_buffer<double>(std::max<std::size_t>(1, nf * static_cast<std::size_t>(params.depth)), stream,
                                   ctx.resource());
  // Row lists need one dimension (histogram_fast), a second level and row numbers in 32 bits.
  if (dims == 1 && params.depth > 1 && q.rows > 0 && q.rows <= std::int64_t{0xffffffff}) {
    w->row_list = device_buffer<uint2>(static_cast<std::size_t>(q.rows), stream, ctx.resource());
    w->row_count = device_buffer<unsigned>(max_depth, stream, ctx.resource());
    w->fixed = device_buffer<int2>(static_cast<std::size_t>(q.rows), stream, ctx.resource());
  }
  if (nf > 0) {
    copy_bytes(w->bins.data(), memory_kind::device, w->layout.bins.data(), memory_kind::host, nf * sizeof(std::int32_t),
               stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("histogram layout"));
    copy_bytes(w->offset.data(), memory_kind::device, w->layout.offset.data(), memory_kind::host,
               nf * sizeof(std::int64_t), stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("histogram layout"));
  }
  detail::prepare_split_kernels(w->view(q));
  w->plan(q);
  return w;
}

namespace {

void stage(device_search_workspace& w, cudaStream_t stream, const char* name, int level) {
  if (!w.profiling) return;
  cudaEvent_t e = nullptr;
  CBG_CUDA_TRY(cudaEventCreate(&e));
  w.stage_events.push_back(e);
  w.stage_names.push_back(level < 0 ? std::string(name) : "L" + std::to_string(level) + " " + name);
  CBG_CUDA_TRY(cudaEventRecord(e, stream));
}

}  // namespace

tree_structure search_tree_device(const context& ctx, const device_search_input& in, const tree_search_params& params,
                                  device_search_workspace& w, std::uint32_t* leaf_index) {
  detail::validate_search(nullptr, in.q, in.dims, in.der, in.weight, in.noise, params);
  const quantize::device_quantized& q = *in.q;
  CBG_EXPECTS(!ctx.is_cpu() && ctx.device() == w.device, status::device,
              "search_tree_device: the context's device is not the workspace's");
  CBG_EXPECTS(q.rows == w.rows && q.features == w.features && q.padded_rows == w.padded_rows, status::invalid_argument,
              "search_tree_device: the workspace was made for another quantized pool");
  CBG_EXPECTS(in.dims == w.dims, status::invalid_argument,
              "search_tree_device: the workspace was made for " + std::to_string(w.dims) + " dimensions, not " + std::to_string(in.dims));
  CBG_EXPECTS(params.depth <= w.depth, status::invalid_argument,
              "search_tree_device: the workspace holds depth " + std::to_string(w.depth) + ", not " + std::to_string(params.depth));
  CBG_EXPECTS(q.rows == 0 || leaf_index != nullptr, status::null_pointer, "search_tree_device: leaf_index is null");
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();

  for (cudaEvent_t e : w.stage_events) CBG_CUDA_TRY(cudaEventDestroy(e));
  w.stage_events.clear();
  w.stage_names.clear();
  int launches = 0;
  int memsets = 0;
  stage(w, stream, "start", -1);

  detail::search_view v = w.view(q);
  if (in.extension != nullptr) {  // its leaf updates write no row lists: every level reads every row
    v.row_list = nullptr;
    v.row_count = nullptr;
  }
  v.der = in.der;
  v.weight = in.weight;
  v.leaf = leaf_index;
  if (!in.noise.empty() && params.score == score_function::cosine) {
    copy_bytes(w.noise.data(), memory_kind::device, in.noise.data(), memory_kind::host, in.noise.size() * sizeof(double),
               stream, ctx.copies(), ctx.rules(), CBG_COPY_SITE("score noise"));
    v.noise = w.noise.data();
  }
  CBG_CUDA_TRY(cudaMemsetAsync(w.state.data(), 0, w.state_bytes(), stream));
  ++memsets;
  if (v.row_count != nullptr) {
    CBG_CUDA_TRY(cudaMemsetAsync(v.row_count, 0, max_depth * sizeof(unsigned), stream));
    ++memsets;
  }
  detail::reduce_scales(v, stream);
  ++launches;
  // Sharded training: every rank's maxima (and NaN flags), so the scales agree.
  if (in.reducer != nullptr) in.reducer->max_u32(reinterpret_cast<unsigned*>(w.state.data()), w.state_bytes() / 4, stream);
  // Row lists: every row's fixed-point der and weight once for all levels.
  if (v.fixed != nullptr) {
    detail::fixed_values(v, stream);
    ++launches;
  }
  stage(w, stream, "scales", -1);
  // Sharded training: each rank scores its slice of the features (sliced_search.hpp).
  if (in.reducer != nullptr) {
    detail::prepare_sliced_search(w.sliced, ctx, w.layout.offset, w.layout.total_bins, v.channels, w.depth, *in.reducer);
  }
  const bool sliced = in.reducer != nullptr && w.sliced.enabled;

  const std::size_t slot_bytes = static_cast<std::size_t>(v.channels) * static_cast<std::size_t>(v.total_bins) *
                                 sizeof(long long);
  for (int d = 0; d < params.depth; ++d) {
    const bool last = d + 1 == params.depth;
    const std::size_t first_slot = d == 0 ? 0 : std::size_t{1} << (d - 1);
    const std::size_t n_slots = d == 0 ? 1 : std::size_t{1} << (d - 1);
    if (slot_bytes > 0) {
      CBG_CUDA_TRY(cudaMemsetAsync(v.hist + first_slot * slot_bytes / sizeof(long long), 0, n_slots * slot_bytes, stream));
      ++memsets;
    }
    stage(w, stream, "zero", d);
    detail::build_histograms(v, w.plans[static_cast<std::size_t>(d)], d, stream);
    ++launches;
    // Sharded training: the computed slots summed over the ranks (exact: 64-bit integers), with
    // sliced scoring only this rank's columns.
    if (sliced) {
      detail::exchange_slices(w.sliced, v, first_slot, n_slots, *in.reducer, stream);
      launches += 2;
    } else if (in.reducer != nullptr && slot_bytes > 0) {
      in.reducer->sum_i64(v.hist + first_slot * slot_bytes / sizeof(long long), n_slots * slot_bytes / sizeof(long long),
                          stream);
    }
    stage(w, stream, "histogram", d);
    detail::score_splits(sliced ? detail::slice_view(w.sliced, v) : v, d, last, params.score, params.l2_leaf_reg, stream);
    ++launches;
    stage(w, stream, "score", d);
    if (sliced) {
      detail::choose_split_sliced(w.sliced, v, d, last, *in.reducer, stream);
      ++launches;
    } else {
      detail::choose_split(v, d, last, stream);
    }
    ++launches;
    stage(w, stream, "choose", d);
    // Feature combinations: the extension's columns of the level; when one wins, it updated the leaves.
    if (in.extension != nullptr && detail::extension_level(ctx, v, q, *in.extension, params, d, last)) {
      stage(w, stream, "extension", d);
      continue;
    }
    // The next level's row list when its histograms are histogram_fast (which reads it).
    detail::update_leaves(v, d, !last && w.plans[static_cast<std::size_t>(d) + 1].fast, stream);
    ++launches;
    stage(w, stream, "leaves", d);
  }

  detail::search_state result;
  copy_bytes(&result, memory_kind::host, w.state.data(), memory_kind::device, sizeof(result), stream, ctx.copies(),
             ctx.rules(), CBG_COPY_SITE("tree structure"));
  CBG_CUDA_TRY(cudaStreamSynchronize(stream));
  w.stats.launches = launches;
  w.stats.memsets = memsets;
  w.stats.stages.clear();
  for (std::size_t i = 1; i < w.stage_events.size(); ++i) {
    float ms = 0.0f;
    CBG_CUDA_TRY(cudaEventElapsedTime(&ms, w.stage_events[i - 1], w.stage_events[i]));
    w.stats.stages.emplace_back(w.stage_names[i], ms);
  }
  if (result.status != 0) {
    CBG_FAIL(status::bad_data, detail::non_finite_message(v.channels - result.status, in.dims));
  }
  return detail::structure_of(result.splits, std::clamp(result.count, 0, max_depth));
}

namespace detail {

void set_search_profiling(device_search_workspace& w, bool on) { w.profiling = on; }

void set_histogram_blocks_per_sm(device_search_workspace& w, const quantize::device_quantized& q, int blocks) {
  w.blocks_per_sm = std::max(1, blocks);
  scoped_device guard(w.device);
  w.plan(q);
}

void set_fast_histograms(device_search_workspace& w, const quantize::device_quantized& q, bool on) {
  w.fast_histograms = on;
  scoped_device guard(w.device);
  w.plan(q);
}

void set_histogram_groups_per_block(device_search_workspace& w, const quantize::device_quantized& q, int groups) {
  w.groups_per_block = std::max(0, groups);
  scoped_device guard(w.device);
  w.plan(q);
}

void set_histogram_prefetch(device_search_workspace& w, const quantize::device_quantized& q, bool on) {
  w.prefetch = on;
  scoped_device guard(w.device);
  w.plan(q);
}

void set_histogram_row_lists(device_search_workspace& w, bool on) { w.row_lists = on; }

const search_stats& last_search_stats(const device_search_workspace& w) { return w.stats; }

const std::vector<histogram_plan>& histogram_plans(const device_search_workspace& w) { return w.plans; }

}  // namespace detail

}  // namespace cbg::train
