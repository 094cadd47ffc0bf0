// SPDX-License-Identifier: Apache-2.0
// GPU tree search (tree_search.hpp): the workspace, and the GPU primitives of the level loop
// (tree_search_levels.hpp) that enqueue every level's stages (kernels/train/stages.hpp; the
// extension's columns: kernels/train/search_extension_device.hpp) on the context's stream. Without
// an extension nothing synchronises until the finished structure (a few bytes) is read back; with
// one each level reads back its state (a few bytes) for the extension's candidates.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/train/search_extension_device.hpp"
#include "kernels/train/search_tuning.hpp"
#include "src/train/sliced_search.hpp"
#include "kernels/train/stages.hpp"

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/search_extension.hpp"
#include "src/train/tree_search_common.hpp"
#include "src/train/tree_search_levels.hpp"

namespace cbg::train {

namespace detail {

// The extension's scratch, kept for the training (device_search_workspace::extension): the level's
// column tables in one block, the histograms, the scores and the read-back record, each grown to
// the largest level seen; and the tree's state as the last record (or the host's own update) left it.
struct extension_workspace {
  device_buffer<std::byte> columns;  // [K] pointers, [K] offsets, [K] noise, [K] bin counts
  device_buffer<long long> hist;
  device_buffer<double> scores;
  device_buffer<ext_record> record;
  std::vector<std::byte> host_columns;
  // The tree's state before level `known` (its choice not counted): valid when known is the
  // level being searched; otherwise the level reads it back first.
  int known = -1;
  ext_record tree;
};

}  // namespace detail

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
  device_buffer<float> feature_weight;  // [features]: the model-size multipliers of the tree
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
  // Searches with an extension: its scratch, made by the first one.
  std::unique_ptr<detail::extension_workspace> extension;

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
    for (int d = 0; d < depth; ++d)
      plans.push_back(detail::plan_histogram(v, d, device, blocks_per_sm, fast_histograms,
                                             groups_per_block > 0       ? groups_per_block
                                             : (features + 3) / 4 >= 64 ? 4
                                                                        : 1,
                                             prefetch));
  }
};

void device_search_workspace_deleter::operator()(device_search_workspace* w) const noexcept { delete w; }

device_search_workspace_ptr make_device_search_workspace(const context& ctx, const quantize::device_quantized& q,
                                                         int dims, const tree_search_params& params) {
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "make_device_search_workspace needs a GPU context");
  detail::validate_search(nullptr, &q, dims, &q, &q, {}, {}, params);
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
  w->hist = device_buffer<long long>(
      std::max<std::size_t>(1, slots * channels * static_cast<std::size_t>(w->layout.total_bins)), stream,
      ctx.resource());
  w->compute_bit = device_buffer<std::uint8_t>(slots, stream, ctx.resource());
  w->state = device_buffer<unsigned char>(w->state_bytes(), stream, ctx.resource());
  w->best = device_buffer<detail::feature_best>(std::max<std::size_t>(nf, 1), stream, ctx.resource());
  w->noise = device_buffer<double>(std::max<std::size_t>(1, nf * static_cast<std::size_t>(params.depth)), stream,
                                   ctx.resource());
  w->feature_weight = device_buffer<float>(std::max<std::size_t>(1, nf), stream, ctx.resource());
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

// Grows `b` to at least n elements (contents not kept).
template <class T>
void ensure(device_buffer<T>& b, std::size_t n, const context& ctx) {
  if (b.size() < n || b.stream() != ctx.stream())
    b = device_buffer<T>(std::max<std::size_t>(n, 1), ctx.stream(), ctx.resource());
}

template <class T>
T read_back(const context& ctx, const T* d, const char* what) {
  T out{};
  copy_bytes(&out, memory_kind::host, d, memory_kind::device, sizeof(T), ctx.stream(), ctx.copies(), ctx.rules(),
             CBG_COPY_SITE(what));
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  return out;
}

// The GPU primitives of one search: each enqueues its stages on the context's stream.
class device_search final : public detail::search_primitives {
 public:
  device_search(const context& ctx, const device_search_input& in, const tree_search_params& params,
                device_search_workspace& w, std::uint32_t* leaf_index)
      : ctx_(ctx), in_(in), q_(*in.q), params_(params), w_(w), leaf_index_(leaf_index), stream_(ctx.stream()) {}

  void begin() override {
    const cudaStream_t stream = stream_;
    device_search_workspace& w = w_;
    for (cudaEvent_t e : w.stage_events) CBG_CUDA_TRY(cudaEventDestroy(e));
    w.stage_events.clear();
    w.stage_names.clear();
    stage(w, stream, "start", -1);

    v_ = w.view(q_);
    detail::search_view& v = v_;
    if (in_.extension != nullptr) {  // its leaf updates write no row lists: every level reads every row
      v.row_list = nullptr;
      v.row_count = nullptr;
    }
    v.der = in_.der;
    v.weight = in_.weight;
    v.leaf = leaf_index_;
    if (!in_.noise.empty() && params_.score == score_function::cosine) {
      copy_bytes(w.noise.data(), memory_kind::device, in_.noise.data(), memory_kind::host,
                 in_.noise.size() * sizeof(double), stream, ctx_.copies(), ctx_.rules(), CBG_COPY_SITE("score noise"));
      v.noise = w.noise.data();
    }
    if (!in_.feature_weight.empty()) {
      copy_bytes(w.feature_weight.data(), memory_kind::device, in_.feature_weight.data(), memory_kind::host,
                 in_.feature_weight.size() * sizeof(float), stream, ctx_.copies(), ctx_.rules(),
                 CBG_COPY_SITE("model-size weights"));
      v.feature_weight = w.feature_weight.data();
    }
    CBG_CUDA_TRY(cudaMemsetAsync(w.state.data(), 0, w.state_bytes(), stream));
    ++memsets_;
    if (v.row_count != nullptr) {
      CBG_CUDA_TRY(cudaMemsetAsync(v.row_count, 0, max_depth * sizeof(unsigned), stream));
      ++memsets_;
    }
    detail::reduce_scales(v, stream);
    ++launches_;
    // Sharded training: every rank's maxima (and NaN flags), so the scales agree.
    if (in_.reducer != nullptr) {
      in_.reducer->max_u32(reinterpret_cast<unsigned*>(w.state.data()), w.state_bytes() / 4, stream);
    }
    // Row lists: every row's fixed-point der and weight once for all levels.
    if (v.fixed != nullptr) {
      detail::fixed_values(v, stream);
      ++launches_;
    }
    stage(w, stream, "scales", -1);
    // Sharded training: each rank scores its slice of the features (sliced_search.hpp).
    if (in_.reducer != nullptr) {
      detail::prepare_sliced_search(w.sliced, ctx_, w.layout.offset, w.layout.total_bins, v.channels, w.depth,
                                    *in_.reducer);
    }
    // Not with an extension: its choice compares the columns with the best of every pool feature.
    sliced_ = in_.reducer != nullptr && w.sliced.enabled && in_.extension == nullptr;
    slot_bytes_ = static_cast<std::size_t>(v.channels) * static_cast<std::size_t>(v.total_bins) * sizeof(long long);
    // Every level's histogram slots zeroed at once (level d adds into slots [2^(d-1), 2^d), untouched
    // before it in this tree): one memset per tree instead of one per level.
    fused_ = ctx_.policy().fused_search_levels;
    if (fused_ && slot_bytes_ > 0) {
      const std::size_t slots = std::size_t{1} << (params_.depth - 1);
      CBG_CUDA_TRY(cudaMemsetAsync(v.hist, 0, slots * slot_bytes_, stream));
      ++memsets_;
    }
  }

  void pool_level(int d, bool last) override {
    const cudaStream_t stream = stream_;
    device_search_workspace& w = w_;
    const detail::search_view& v = v_;
    const std::size_t first_slot = d == 0 ? 0 : std::size_t{1} << (d - 1);
    const std::size_t n_slots = d == 0 ? 1 : std::size_t{1} << (d - 1);
    if (!fused_ && slot_bytes_ > 0) {
      CBG_CUDA_TRY(
          cudaMemsetAsync(v.hist + first_slot * slot_bytes_ / sizeof(long long), 0, n_slots * slot_bytes_, stream));
      ++memsets_;
    }
    detail::build_histograms(v, w.plans[static_cast<std::size_t>(d)], d, stream);
    ++launches_;
    // Sharded training: the computed slots summed over the ranks (exact: 64-bit integers), with
    // sliced scoring only this rank's columns.
    if (sliced_) {
      detail::exchange_slices(w.sliced, v, first_slot, n_slots, *in_.reducer, stream);
      launches_ += 2;
    } else if (in_.reducer != nullptr && slot_bytes_ > 0) {
      in_.reducer->sum_i64(v.hist + first_slot * slot_bytes_ / sizeof(long long),
                           n_slots * slot_bytes_ / sizeof(long long), stream);
    }
    stage(w, stream, "histogram", d);
    if (sliced_) {
      detail::score_splits(detail::slice_view(w.sliced, v), d, last, params_.score, params_.l2_leaf_reg, stream);
      stage(w, stream, "score", d);
      detail::choose_split_sliced(w.sliced, v, d, last, *in_.reducer, stream);
      launches_ += 3;
      stage(w, stream, "choose", d);
    } else {
      launches_ += detail::score_and_choose(v, d, last, params_.score, params_.l2_leaf_reg, fused_, stream);
      stage(w, stream, "score+choose", d);
    }
  }

  // The tree's splits before `level`, and their borders: the last level's record, else read back now.
  std::optional<std::vector<split>> splits_before(int level) override {
    CBG_EXPECTS(v_.row_list == nullptr, status::internal, "extension level: row lists are on");
    CBG_EXPECTS(level >= 0 && level < max_depth, status::internal, "extension level: bad level");
    if (!w_.extension) w_.extension = std::make_unique<detail::extension_workspace>();
    detail::extension_workspace& w = *w_.extension;
    ensure(w.record, 1, ctx_);
    const stage_range range(ctx_, "combinations.readback");
    if (level == 0) {
      // Nothing chosen yet; a non-finite derivative (state.status) is seen by ext_choose.
      w.tree = detail::ext_record{};
      w.known = 0;
    }
    if (w.known != level) {
      detail::ext_state(v_, q_.borders.data(), w.record.data(), stream_);
      w.tree = read_back(ctx_, w.record.data(), "tree structure");
      w.known = level;
    }
    // The next level reads back unless this one leaves its record.
    w.known = -1;
    const detail::search_state& st = w.tree.state;
    if (st.status != 0 || st.count < level) {  // bad values, or the tree ended before this level
      w.known = level + 1;                     // it stays so
      return std::nullopt;
    }
    chosen_.assign(st.splits, st.splits + level);
    return chosen_;
  }

  float float_border(std::int32_t f, std::int32_t bin) override {
    const detail::ext_record& tree = w_.extension->tree;
    for (std::size_t i = 0; i < chosen_.size(); ++i) {
      if (chosen_[i].feature == f && chosen_[i].bin == bin && f < v_.features) return tree.borders[i];
    }
    const float* at = q_.borders.data() + static_cast<std::size_t>(f) * quantize::border_stride + bin;
    return read_back(ctx_, at, "split border");  // not one of the splits: asked for once, never in practice
  }

  detail::column_choice score_columns(int level, bool /*last_level*/, const std::vector<search_extension::column>& cols,
                                      const std::vector<double>& column_noise,
                                      const std::vector<float>& column_weight) override {
    const cudaStream_t stream = stream_;
    const detail::search_view& v = v_;
    detail::extension_workspace& w = *w_.extension;
    const stage_range range(ctx_, "combinations.histograms");
    // The column tables in one block: 8-byte fields first, then the 4-byte bin counts and weights.
    const auto K = static_cast<int>(cols.size());
    const std::size_t n = cols.size();
    static_assert(sizeof(const std::uint8_t*) == 8 && sizeof(std::int64_t) == 8 && sizeof(double) == 8);
    const std::size_t table_bytes = n * (3 * 8 + sizeof(std::int32_t) + sizeof(float));
    w.host_columns.resize(table_bytes);
    auto* ptrs = reinterpret_cast<const std::uint8_t**>(w.host_columns.data());
    auto* offset = reinterpret_cast<std::int64_t*>(w.host_columns.data() + n * 8);
    auto* noise = reinterpret_cast<double*>(w.host_columns.data() + 2 * n * 8);
    auto* nb = reinterpret_cast<std::int32_t*>(w.host_columns.data() + 3 * n * 8);
    auto* weight = reinterpret_cast<float*>(w.host_columns.data() + 3 * n * 8 + n * sizeof(std::int32_t));
    std::int64_t total = 0;
    int max_borders = 1;
    for (std::size_t k = 0; k < n; ++k) {
      ptrs[k] = cols[k].bins;
      nb[k] = cols[k].border_count + 1;
      offset[k] = total;
      total += nb[k];
      max_borders = std::max(max_borders, cols[k].border_count);
      noise[k] = column_noise.empty() ? 0.0 : column_noise[k];
      weight[k] = column_weight.empty() ? 1.0f : column_weight[k];
    }
    ensure(w.columns, table_bytes, ctx_);
    copy_bytes(w.columns.data(), memory_kind::device, w.host_columns.data(), memory_kind::host, table_bytes, stream,
               ctx_.copies(), ctx_.rules(), CBG_COPY_SITE("extension columns"));
    std::byte* d_tables = w.columns.data();
    detail::ext_columns& e = columns_;
    e = detail::ext_columns{};
    e.bins = reinterpret_cast<const std::uint8_t* const*>(d_tables);
    e.offset = reinterpret_cast<const std::int64_t*>(d_tables + n * 8);
    e.noise = column_noise.empty() ? nullptr : reinterpret_cast<const double*>(d_tables + 2 * n * 8);
    e.nb = reinterpret_cast<const std::int32_t*>(d_tables + 3 * n * 8);
    e.weight = column_weight.empty() ? nullptr
                                     : reinterpret_cast<const float*>(d_tables + 3 * n * 8 + n * sizeof(std::int32_t));
    e.count = K;
    e.total_bins = total;
    e.max_borders = max_borders;

    const std::size_t leaves = std::size_t{1} << level;
    const std::size_t hist_size = leaves * static_cast<std::size_t>(v.channels) * static_cast<std::size_t>(total);
    ensure(w.hist, hist_size, ctx_);
    const std::int64_t cells = static_cast<std::int64_t>(K) * max_borders;
    ensure(w.scores, static_cast<std::size_t>(cells), ctx_);
    CBG_CUDA_TRY(cudaMemsetAsync(w.hist.data(), 0, hist_size * sizeof(long long), stream));
    detail::ext_histograms(v, e, level, ctx_.policy().combo_global_histograms, w.hist.data(), stream);
    // Sharded training: every rank's rows of the columns summed (exact: 64-bit integers), so the
    // scores, the choice and the compute bits are the single-GPU ones on every rank. The buffers
    // are made before: the ranks meet first, so that none waits for this sum while another still
    // allocates (docs/multi-gpu.md).
    if (in_.reducer != nullptr) {
      in_.extension->before_column_reduce(level);
      in_.reducer->sum_i64(w.hist.data(), hist_size, stream);
    }
    detail::ext_scores(v, e, w.hist.data(), level, params_.score, params_.l2_leaf_reg, w.scores.data(), stream);
    detail::ext_choose(v, e, w.scores.data(), q_.borders.data(), w.record.data(), stream);
    // The one read-back of the level: the choice, and the state and borders the next level starts from.
    w.tree = read_back(ctx_, w.record.data(), "extension split");
    w.known = level + 1;
    if (w.tree.column < 0) return {};
    return {w.tree.column, w.tree.bin};
  }

  bool take_column(int level, bool last_level, const search_extension::column& column, split sp) override {
    const cudaStream_t stream = stream_;
    const detail::search_view& v = v_;
    detail::extension_workspace& w = *w_.extension;
    const int won_column = w.tree.column;
    const int won_bin = w.tree.bin;
    const bool stop = std::find(chosen_.begin(), chosen_.end(), sp) != chosen_.end();
    // ext_take's update, on the host's copy too (a column's split has no float border).
    detail::take_split(w.tree.state, level, sp, stop);
    if (!stop) w.tree.borders[level] = 0.0f;
    {
      const stage_range range(ctx_, "combinations.leaves");
      detail::ext_take(v.state, level, sp, stop, stream);
      if (!stop) {
        if (!last_level) detail::ext_compute_bits(v, columns_, w.hist.data(), level, won_column, won_bin, stream);
        detail::ext_leaves(v, column.bins, level, won_bin, stream);
      }
    }
    stage(w_, stream, "extension", level);
    return true;  // a repeated split stopped the tree on the device: the later levels' kernels skip
  }

  bool take_pool_split(int d, bool last) override {
    // The next level's row list when its histograms are histogram_fast (which reads it).
    detail::update_leaves(v_, d, !last && w_.plans[static_cast<std::size_t>(d) + 1].fast, stream_);
    ++launches_;
    stage(w_, stream_, "leaves", d);
    return true;  // the device's state says whether the tree goes on; its kernels skip once it has ended
  }

  tree_structure finish() override {
    const cudaStream_t stream = stream_;
    device_search_workspace& w = w_;
    detail::search_state result;
    copy_bytes(&result, memory_kind::host, w.state.data(), memory_kind::device, sizeof(result), stream, ctx_.copies(),
               ctx_.rules(), CBG_COPY_SITE("tree structure"));
    CBG_CUDA_TRY(cudaStreamSynchronize(stream));
    w.stats.launches = launches_;
    w.stats.memsets = memsets_;
    w.stats.stages.clear();
    for (std::size_t i = 1; i < w.stage_events.size(); ++i) {
      float ms = 0.0f;
      CBG_CUDA_TRY(cudaEventElapsedTime(&ms, w.stage_events[i - 1], w.stage_events[i]));
      w.stats.stages.emplace_back(w.stage_names[i], ms);
    }
    if (result.status != 0) {
      CBG_FAIL(status::bad_data, detail::non_finite_message(v_.channels - result.status, in_.dims));
    }
    return detail::structure_of(result.splits, std::clamp(result.count, 0, max_depth));
  }

 private:
  const context& ctx_;
  const device_search_input& in_;
  const quantize::device_quantized& q_;
  const tree_search_params& params_;
  device_search_workspace& w_;
  std::uint32_t* leaf_index_;
  cudaStream_t stream_;
  detail::search_view v_;
  bool sliced_ = false;
  bool fused_ = true;  // the policy's fused_search_levels
  std::size_t slot_bytes_ = 0;
  int launches_ = 0;
  int memsets_ = 0;
  std::vector<split> chosen_;    // the tree's splits before the extension's level
  detail::ext_columns columns_;  // the extension's columns of the level, on the device
};

}  // namespace

tree_structure search_tree_device(const context& ctx, const device_search_input& in, const tree_search_params& params,
                                  device_search_workspace& w, std::uint32_t* leaf_index) {
  detail::validate_search(nullptr, in.q, in.dims, in.der, in.weight, in.noise, in.feature_weight, params);
  const quantize::device_quantized& q = *in.q;
  CBG_EXPECTS(!ctx.is_cpu() && ctx.device() == w.device, status::device,
              "search_tree_device: the context's device is not the workspace's");
  CBG_EXPECTS(q.rows == w.rows && q.features == w.features && q.padded_rows == w.padded_rows, status::invalid_argument,
              "search_tree_device: the workspace was made for another quantized pool");
  CBG_EXPECTS(in.dims == w.dims, status::invalid_argument,
              "search_tree_device: the workspace was made for " + std::to_string(w.dims) + " dimensions, not " +
                  std::to_string(in.dims));
  CBG_EXPECTS(params.depth <= w.depth, status::invalid_argument,
              "search_tree_device: the workspace holds depth " + std::to_string(w.depth) + ", not " +
                  std::to_string(params.depth));
  CBG_EXPECTS(q.rows == 0 || leaf_index != nullptr, status::null_pointer, "search_tree_device: leaf_index is null");
  scoped_device guard(ctx.device());
  device_search primitives(ctx, in, params, w, leaf_index);
  return detail::search_levels(primitives, in.extension, params.depth);
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
