// SPDX-License-Identifier: Apache-2.0
// The GPU tree search's hook for extra candidate columns (search_extension_device.hpp). Compiled with
// --fmad=false like split.cu, so the scores follow score_math.hpp expression for expression and
// equal the host reference's (src/train/tree_search_host.cpp) bit for bit.
#include "kernels/train/search_extension_device.hpp"

#include <optional>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/train/score_math.hpp"
#include "kernels/ctr/ctr_device.hpp"
#include "kernels/train/choose_best.cuh"

namespace cbg::train::detail {

namespace {

// The level's columns on the device.
struct ext_columns {
  const std::uint8_t* const* bins = nullptr;  // [K]
  const std::int32_t* nb = nullptr;           // [K]: border_count + 1
  const std::int64_t* offset = nullptr;       // [K]: first histogram column
  const double* noise = nullptr;              // [K]
  int count = 0;
  std::int64_t total_bins = 0;
  int max_borders = 0;
};

// Histograms of every leaf of the level: [leaf][channel][total_bins] fixed-point sums (exact, so
// the order of the atomics does not matter).
__global__ void ext_histogram_kernel(search_view v, ext_columns e, int level, long long* hist) {
  const int k = blockIdx.y;
  const std::uint8_t* bins = e.bins[k];
  const std::int64_t off = e.offset[k];
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t leaf = level == 0 ? 0u : v.leaf[r];
    const std::int64_t col = off + bins[r];
    for (int c = 0; c < v.channels; ++c) {
      const float x = c < v.dims ? v.der[static_cast<std::int64_t>(c) * v.rows + r] : v.weight[r];
      const int fx = to_fixed(x, pow2(fixed_exponent(__uint_as_float(v.max_bits[c]))));
      if (fx != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(hist + (static_cast<std::int64_t>(leaf) * v.channels + c) *
                                                                   e.total_bins + col),
                  static_cast<unsigned long long>(static_cast<long long>(fx)));
      }
    }
  }
}

// The same histograms, each block adding its rows of column blockIdx.y into shared memory
// ([leaf][channel][stride] with stride >= every column's bin count) and then into `hist`: the sums
// are exact integers, so they equal ext_histogram_kernel's; far fewer global atomics on the few
// hot addresses (a column has at most 256 bins per leaf and channel).
__global__ void ext_histogram_shared_kernel(search_view v, ext_columns e, int level, int stride, long long* hist) {
  extern __shared__ long long sh[];
  const int k = blockIdx.y;
  const std::uint8_t* bins = e.bins[k];
  const std::int64_t off = e.offset[k];
  const int nb = e.nb[k];
  const int cells = (1 << level) * v.channels * stride;
  for (int i = threadIdx.x; i < cells; i += blockDim.x) sh[i] = 0;
  __syncthreads();
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t leaf = level == 0 ? 0u : v.leaf[r];
    const int b = bins[r];
    for (int c = 0; c < v.channels; ++c) {
      const float x = c < v.dims ? v.der[static_cast<std::int64_t>(c) * v.rows + r] : v.weight[r];
      const int fx = to_fixed(x, pow2(fixed_exponent(__uint_as_float(v.max_bits[c]))));
      if (fx != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(sh + (static_cast<int>(leaf) * v.channels + c) * stride + b),
                  static_cast<unsigned long long>(static_cast<long long>(fx)));
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < cells; i += blockDim.x) {
    const int b = i % stride;
    const int lc = i / stride;  // leaf * channels + channel
    if (b < nb && sh[i] != 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(hist + static_cast<std::int64_t>(lc) * e.total_bins + off + b),
                static_cast<unsigned long long>(sh[i]));
    }
  }
}

// One thread per (column, border): the border's score as search_tree_host adds it up.
__global__ void ext_score_kernel(search_view v, ext_columns e, const long long* hist, int level, score_function fn,
                                 double lambda, double* scores) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const int k = static_cast<int>(i / e.max_borders);
  const int b = static_cast<int>(i % e.max_borders);
  if (k >= e.count) return;
  const int nb = e.nb[k];
  if (b >= nb - 1) return;
  const std::int64_t off = e.offset[k];
  const double inv_w = pow2(-fixed_exponent(__uint_as_float(v.max_bits[v.dims])));
  const std::uint32_t leaves = 1u << level;
  double num = 0.0;
  double den = cosine_den0;
  for (std::uint32_t li = 0; li < leaves; ++li) {
    const std::uint32_t p = visit_leaf(level, li);
    const long long* wh = hist + (static_cast<std::int64_t>(p) * v.channels + v.dims) * e.total_bins + off;
    long long total_w = 0;
    for (int x = 0; x < nb; ++x) total_w += wh[x];
    long long prefix = 0;
    for (int x = 0; x <= b; ++x) prefix += wh[x];
    const double w_left = from_fixed(prefix, inv_w);
    const double w_right = from_fixed(total_w - prefix, inv_w);
    double pn = 0.0;
    double pd = 0.0;
    for (int j = 0; j < v.dims; ++j) {
      const long long* sh = hist + (static_cast<std::int64_t>(p) * v.channels + j) * e.total_bins + off;
      const double inv_s = pow2(-fixed_exponent(__uint_as_float(v.max_bits[j])));
      long long total_s = 0;
      for (int x = 0; x < nb; ++x) total_s += sh[x];
      long long prefix_s = 0;
      for (int x = 0; x <= b; ++x) prefix_s += sh[x];
      add_child(fn, lambda, from_fixed(prefix_s, inv_s), w_left, pn, pd);
      add_child(fn, lambda, from_fixed(total_s - prefix_s, inv_s), w_right, pn, pd);
    }
    num += pn;
    den += pd;
  }
  double score = finish_score(fn, num, den);
  if (fn == score_function::cosine && e.noise != nullptr) score += e.noise[k];
  scores[i] = score;
}

// What a level reads back, in one copy: the extension's choice, the search state after the level's
// choose_split and the float borders of its splits (the next level's candidates need both).
struct ext_record {
  int column = -1;  // -1: the pool's split stands
  int bin = -1;
  int reserved[2] = {0, 0};
  search_state state;
  float borders[max_depth] = {};  // split i's border when its feature is the pool's, else 0
};

// Thread 0 of a block writes the record whole (every word, reserved ones included).
__device__ inline void write_record(const search_view& v, const float* borders, int column, int bin, ext_record* out) {
  ext_record r;
  r.column = column;
  r.bin = bin;
  r.state = *v.state;
  for (int i = 0; i < max_depth; ++i) {
    const split sp = r.state.splits[i];
    const bool pool_split = i < r.state.count && sp.feature >= 0 && sp.feature < v.features && sp.bin >= 0 &&
                            sp.bin < quantize::border_stride;
    r.borders[i] = pool_split ? borders[static_cast<std::int64_t>(sp.feature) * quantize::border_stride + sp.bin] : 0.0f;
  }
  *out = r;
}

// The record without a choice (a level whose previous one read nothing back).
__global__ void ext_state_kernel(search_view v, const float* borders, ext_record* out) {
  write_record(v, borders, -1, -1, out);
}

constexpr int choose_threads = 256;

// The best of the pool's features (v.best) and the columns (feature v.features + k), as the host
// scans them: a total order, so a reduction gives the same answer. No choice when the derivatives
// hold a NaN or infinity (state.status: the search fails after the tree).
__global__ void __launch_bounds__(choose_threads) ext_choose_kernel(search_view v, ext_columns e, const double* scores,
                                                                     const float* borders, ext_record* out) {
  block_best mine = thread_best_feature<choose_threads>(v, 0, v.features);
  const std::int64_t cells = static_cast<std::int64_t>(e.count) * e.max_borders;
  for (std::int64_t i = threadIdx.x; i < cells; i += choose_threads) {
    const int k = static_cast<int>(i / e.max_borders);
    const int b = static_cast<int>(i % e.max_borders);
    if (b < e.nb[k] - 1) keep_better(mine, scores[i], static_cast<std::int32_t>(v.features + k), b);
  }
  const block_best best = block_best_of<choose_threads>(mine);
  if (threadIdx.x == 0) {
    const bool ext = best.feature >= v.features && v.state->status == 0;
    write_record(v, borders, ext ? static_cast<int>(best.feature - v.features) : -1, ext ? best.bin : -1, out);
  }
}

// A won column: the state (its split, or the end of the tree when it repeats one).
// The won column's split taken into the tree (or the tree stopped when it repeats a split): on the
// device's state and on the host's copy of it, the same update.
__host__ __device__ inline void take_split(search_state& s, int level, split sp, bool stop) {
  if (stop) {
    s.stopped = 1;
    s.count = level;
  } else {
    s.splits[level] = sp;
    s.count = level + 1;
    s.stopped = 0;
  }
}

__global__ void ext_take_kernel(search_state* s, int level, split sp, int stop) { take_split(*s, level, sp, stop != 0); }

// The next level computes the lighter child of each leaf (as choose_kernel).
__global__ void ext_compute_bit_kernel(search_view v, ext_columns e, const long long* hist, int level, int k,
                                       int bin) {
  const std::uint32_t p = blockIdx.x * static_cast<std::uint32_t>(blockDim.x) + threadIdx.x;
  if (p >= (1u << level)) return;
  const long long* w = hist + (static_cast<std::int64_t>(p) * v.channels + v.dims) * e.total_bins + e.offset[k];
  long long left = 0;
  long long right = 0;
  for (int b = 0; b < e.nb[k]; ++b) {
    if (b <= bin) left += w[b];
    else right += w[b];
  }
  v.compute_bit[p] = right < left ? 1 : 0;
}

__global__ void ext_leaves_kernel(search_view v, const std::uint8_t* bins, int level, int bin) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < v.rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t leaf = level == 0 ? 0u : v.leaf[r];
    if (static_cast<int>(bins[r]) > bin) leaf |= 1u << level;
    v.leaf[r] = leaf;
  }
}

unsigned grid_for(std::int64_t n, int threads, int cap) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(cap, (n + threads - 1) / threads)));
}

// Grows `b` to at least n elements (contents not kept).
template <class T>
void ensure(device_buffer<T>& b, std::size_t n, const context& ctx) {
  if (b.size() < n || b.stream() != ctx.stream()) b = device_buffer<T>(std::max<std::size_t>(n, 1), ctx.stream(), ctx.resource());
}

template <class T>
T read_back(const context& ctx, const T* d, const char* what) {
  T out{};
  copy_bytes(&out, memory_kind::host, d, memory_kind::device, sizeof(T), ctx.stream(), ctx.copies(), ctx.rules(),
             CBG_COPY_SITE(what));
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  return out;
}

}  // namespace

// The extension's scratch, kept for the training (device_search_extension::workspace): the level's
// column tables in one block, the histograms, the scores and the read-back record, each grown to
// the largest level seen; and the tree's state as the last record (or the host's own update) left it.
struct extension_workspace {
  device_buffer<std::byte> columns;  // [K] pointers, [K] offsets, [K] noise, [K] bin counts
  device_buffer<long long> hist;
  device_buffer<double> scores;
  device_buffer<ext_record> record;
  std::vector<std::byte> host_columns;
  // The tree's state before level `known` (its choose_split not counted): valid when known is the
  // level being searched; otherwise the level reads it back first.
  int known = -1;
  ext_record tree;
};

namespace {

// The tree's splits before `level`, and their borders: the last level's record, else read back now.
const ext_record& tree_before(const context& ctx, const search_view& v, const quantize::device_quantized& q,
                              extension_workspace& w, int level) {
  if (level == 0) {
    // Nothing chosen yet; a non-finite derivative (state.status) is seen by ext_choose_kernel.
    w.tree = ext_record{};
    w.known = 0;
  }
  if (w.known != level) {
    ext_state_kernel<<<1, 1, 0, ctx.stream()>>>(v, q.borders.data(), w.record.data());
    CBG_CHECK_CUDA(ctx.stream());
    w.tree = read_back(ctx, w.record.data(), "tree structure");
    w.known = level;
  }
  return w.tree;
}

}  // namespace

bool extension_level(const context& ctx, const search_view& v, const quantize::device_quantized& q,
                     device_search_extension& ext, const tree_search_params& params, int level, bool last_level) {
  CBG_EXPECTS(v.row_list == nullptr, status::internal, "extension_level: row lists are on");
  CBG_EXPECTS(level >= 0 && level < max_depth, status::internal, "extension_level: bad level");
  const cudaStream_t stream = ctx.stream();
  using prof = ctr::detail::combo_profile;
  if (ctr::detail::combo_profile_on()) ++ctr::detail::combo_profile_data().levels;
  if (!ext.workspace) ext.workspace = std::make_shared<extension_workspace>();
  extension_workspace& w = *ext.workspace;
  ensure(w.record, 1, ctx);
  std::optional<ctr::detail::combo_timer> timer(std::in_place, ctx, prof::readbacks);
  const ext_record& tree = tree_before(ctx, v, q, w, level);
  // The next level reads back unless this one leaves its record.
  w.known = -1;
  const search_state& st = tree.state;
  if (st.status != 0 || st.count < level) {  // bad values, or the tree ended before this level
    w.known = level + 1;  // it stays so
    return false;
  }
  const std::vector<split> chosen(st.splits, st.splits + level);
  const auto float_border = [&](std::int32_t f, std::int32_t bin) {
    for (int i = 0; i < level; ++i) {
      if (st.splits[i].feature == f && st.splits[i].bin == bin && f < v.features) return tree.borders[i];
    }
    const float* at = q.borders.data() + static_cast<std::size_t>(f) * quantize::border_stride + bin;
    return read_back(ctx, at, "split border");  // not one of the splits: asked for once, never in practice
  };
  timer.reset();
  timer.emplace(ctx, prof::candidates);
  const std::vector<device_search_extension::column> cols = ext.candidates(chosen, float_border);
  timer.reset();
  if (cols.empty()) return false;
  timer.emplace(ctx, prof::hist_score);

  // The column tables in one block: 8-byte fields first, then the 4-byte bin counts.
  const auto K = static_cast<int>(cols.size());
  const std::size_t n = cols.size();
  static_assert(sizeof(const std::uint8_t*) == 8 && sizeof(std::int64_t) == 8 && sizeof(double) == 8);
  const std::size_t table_bytes = n * (3 * 8 + sizeof(std::int32_t));
  w.host_columns.resize(table_bytes);
  auto* ptrs = reinterpret_cast<const std::uint8_t**>(w.host_columns.data());
  auto* offset = reinterpret_cast<std::int64_t*>(w.host_columns.data() + n * 8);
  auto* noise = reinterpret_cast<double*>(w.host_columns.data() + 2 * n * 8);
  auto* nb = reinterpret_cast<std::int32_t*>(w.host_columns.data() + 3 * n * 8);
  std::int64_t total = 0;
  int max_borders = 1;
  for (std::size_t k = 0; k < n; ++k) {
    ptrs[k] = cols[k].bins;
    nb[k] = cols[k].border_count + 1;
    offset[k] = total;
    total += nb[k];
    max_borders = std::max(max_borders, cols[k].border_count);
    noise[k] = ext.column_noise ? ext.column_noise(level, k) : 0.0;
  }
  ensure(w.columns, table_bytes, ctx);
  copy_bytes(w.columns.data(), memory_kind::device, w.host_columns.data(), memory_kind::host, table_bytes, stream,
             ctx.copies(), ctx.rules(), CBG_COPY_SITE("extension columns"));
  std::byte* d_tables = w.columns.data();
  ext_columns e;
  e.bins = reinterpret_cast<const std::uint8_t* const*>(d_tables);
  e.offset = reinterpret_cast<const std::int64_t*>(d_tables + n * 8);
  e.noise = ext.column_noise ? reinterpret_cast<const double*>(d_tables + 2 * n * 8) : nullptr;
  e.nb = reinterpret_cast<const std::int32_t*>(d_tables + 3 * n * 8);
  e.count = K;
  e.total_bins = total;
  e.max_borders = max_borders;

  const std::size_t leaves = std::size_t{1} << level;
  const std::size_t hist_size = leaves * static_cast<std::size_t>(v.channels) * static_cast<std::size_t>(total);
  ensure(w.hist, hist_size, ctx);
  CBG_CUDA_TRY(cudaMemsetAsync(w.hist.data(), 0, hist_size * sizeof(long long), stream));
  if (v.rows > 0) {
    const dim3 grid(grid_for(v.rows, 256, std::max(1, 2048 / K)), static_cast<unsigned>(K));
    // Shared-memory histograms when a block's fit the default 48 KiB (CBGPU_COMBO_GLOBAL_HIST set:
    // always the global-atomics kernel, for A/B benchmarks).
    static const bool global_only = std::getenv("CBGPU_COMBO_GLOBAL_HIST") != nullptr;
    const int stride = max_borders + 1;
    const std::size_t shared = leaves * static_cast<std::size_t>(v.channels) * static_cast<std::size_t>(stride) *
                               sizeof(long long);
    if (!global_only && shared <= 48 * 1024) {
      ext_histogram_shared_kernel<<<grid, 256, shared, stream>>>(v, e, level, stride, w.hist.data());
    } else {
      ext_histogram_kernel<<<grid, 256, 0, stream>>>(v, e, level, w.hist.data());
    }
    CBG_CHECK_CUDA(stream);
  }
  const std::int64_t cells = static_cast<std::int64_t>(K) * max_borders;
  ensure(w.scores, static_cast<std::size_t>(cells), ctx);
  ext_score_kernel<<<grid_for(cells, 128, 1 << 20), 128, 0, stream>>>(v, e, w.hist.data(), level, params.score,
                                                                       params.l2_leaf_reg, w.scores.data());
  CBG_CHECK_CUDA(stream);
  ext_choose_kernel<<<1, choose_threads, 0, stream>>>(v, e, w.scores.data(), q.borders.data(), w.record.data());
  CBG_CHECK_CUDA(stream);
  // The one read-back of the level: the choice, and the state and borders the next level starts from.
  w.tree = read_back(ctx, w.record.data(), "extension split");
  w.known = level + 1;
  const ext_record& won = w.tree;
  timer.reset();
  if (won.column < 0) return false;

  const std::int32_t id = ext.commit(static_cast<std::size_t>(won.column));
  const split sp{id, won.bin};
  const bool stop = std::find(chosen.begin(), chosen.end(), sp) != chosen.end();
  // ext_take_kernel's update, on the host's copy too (a column's split has no float border).
  take_split(w.tree.state, level, sp, stop);
  if (!stop) w.tree.borders[level] = 0.0f;
  timer.emplace(ctx, prof::leaves);
  ext_take_kernel<<<1, 1, 0, stream>>>(v.state, level, sp, stop ? 1 : 0);
  CBG_CHECK_CUDA(stream);
  if (!stop) {
    if (!last_level) {
      ext_compute_bit_kernel<<<grid_for(static_cast<std::int64_t>(leaves), 256, 1 << 16), 256, 0, stream>>>(
          v, e, w.hist.data(), level, won.column, won.bin);
      CBG_CHECK_CUDA(stream);
    }
    if (v.rows > 0) {
      ext_leaves_kernel<<<grid_for(v.rows, 512, 4096), 512, 0, stream>>>(v, cols[static_cast<std::size_t>(won.column)].bins,
                                                                          level, won.bin);
      CBG_CHECK_CUDA(stream);
    }
  }
  return true;
}

}  // namespace cbg::train::detail
