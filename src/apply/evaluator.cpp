// SPDX-License-Identifier: Apache-2.0
// The GPU evaluator's host side (include/cbg/apply/evaluator.hpp): argument checks, the model's
// device image from the cache, one stream-ordered scratch allocation, the stages of
// kernels/apply/stages.hpp in order. A CPU context runs the host evaluator on the pool's columns.
#include "cbg/apply/evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cbg/apply/input.hpp"
#include "cbg/core/checked_math.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/memory/device_buffer.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/tensor/tensor_copy.hpp"
#include "kernels/apply/stages.hpp"
#include "kernels/apply/tuning_apply.hpp"

namespace cbg::apply {

namespace {

namespace cm = cbg::model;

// The model features whose pool columns are read.
struct inputs_needed {
  std::vector<bool> floats;  // per float feature: binarized, or read by a CTR projection
  std::vector<bool> cats;    // per categorical feature: one-hot, or read by a CTR projection
};

inputs_needed needed_inputs(const cm::model& m) {
  inputs_needed n;
  n.floats.assign(m.float_features.size(), false);
  n.cats.assign(m.cat_features.size(), false);
  for (std::size_t f = 0; f < m.float_features.size(); ++f) n.floats[f] = !m.float_features[f].borders.empty();
  for (const auto& oh : m.one_hot_features)
    if (!oh.values.empty()) n.cats[static_cast<std::size_t>(oh.cat_index)] = true;
  for (const auto& cf : m.ctr_features) {
    const auto& proj = cf.ctr.base.proj;
    for (std::int32_t c : proj.cat_features) n.cats[static_cast<std::size_t>(c)] = true;
    for (const auto& s : proj.float_splits) n.floats[static_cast<std::size_t>(s.float_index)] = true;
    for (const auto& s : proj.one_hot_splits) n.cats[static_cast<std::size_t>(s.cat_index)] = true;
  }
  return n;
}

// The pool's columns for the model: float feature f at [f], categorical feature c at [n_float + c];
// columns the model does not read are left empty. Checks roles, dtypes and (for the GPU) memory.
std::vector<column_view> model_columns(const cm::model& m, const pool& p, bool on_device) {
  const inputs_needed n = needed_inputs(m);
  std::vector<column_view> cols(m.float_features.size() + m.cat_features.size());
  const auto column = [&](std::int32_t flat, const char* role) -> const column_view& {
    CBG_EXPECTS(
        flat < p.num_features(), status::shape,
        fmt::format("the model reads {} feature {} but the pool has {} features", role, flat, p.num_features()));
    const column_view& c = p.features()[static_cast<std::size_t>(flat)];
    CBG_EXPECTS(!on_device || c.memory != memory_kind::host, status::device,
                fmt::format("feature {} is in pageable host memory, which the GPU cannot read; pass device, "
                            "managed or pinned memory, or use a pool on a CPU context",
                            flat));
    return c;
  };
  for (std::size_t f = 0; f < n.floats.size(); ++f) {
    if (!n.floats[f]) continue;
    const std::int32_t flat = m.float_features[f].flat_index;
    cols[f] = column(flat, "numeric");
    CBG_EXPECTS(!p.is_categorical(flat), status::invalid_argument,
                fmt::format("feature {} is numeric in the model but categorical in the pool", flat));
  }
  for (std::size_t c = 0; c < n.cats.size(); ++c) {
    if (!n.cats[c]) continue;
    const std::int32_t flat = m.cat_features[c].flat_index;
    const column_view& col = column(flat, "categorical");
    CBG_EXPECTS(p.is_categorical(flat), status::invalid_argument,
                fmt::format("feature {} is categorical in the model but not in the pool (list it in the pool's "
                            "categorical features)",
                            flat));
    CBG_EXPECTS(
        is_categorical_dtype(col.type), status::dtype,
        fmt::format("categorical feature {} has dtype {}; integer or bool values are hashed", flat, name_of(col.type)));
    cols[m.float_features.size() + c] = col;
  }
  return cols;
}

struct out_layout {
  std::int64_t row_stride = 0, col_stride = 0;
};

std::string shape_text(const mutable_tensor_view& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i) s += fmt::format("{}{}", i ? ", " : "", t.shape[i]);
  return s + "]";
}

out_layout check_output(const mutable_tensor_view& out, const std::array<std::int64_t, 2>& shape, bool leaf) {
  CBG_EXPECTS(is_output_dtype(out.type, leaf), status::dtype,
              fmt::format("the output has dtype {}; {}", name_of(out.type),
                          leaf ? "leaf indexes are written as float32, float64, int32, uint32, int64 or uint64"
                               : "predictions are written as float32 or float64"));
  const bool fits = (out.rank == 2 && out.shape[0] == shape[0] && out.shape[1] == shape[1]) ||
                    (out.rank == 1 && shape[1] == 1 && out.shape[0] == shape[0]);
  CBG_EXPECTS(fits, status::shape,
              fmt::format("the output has shape {}; expected [{}, {}]{} (cbg_predict_output_shape)", shape_text(out),
                          shape[0], shape[1], shape[1] == 1 ? fmt::format(" or [{}]", shape[0]) : std::string()));
  out_layout l;
  l.row_stride = out.strides[0];
  l.col_stride = out.rank == 2 ? out.strides[1] : 0;
  const std::int64_t rows = shape[0], cols = shape[1];
  bool overlap = false;
  if (rows > 1 && cols > 1) {
    const bool rows_inner = l.row_stride <= l.col_stride;
    const std::int64_t inner = rows_inner ? l.row_stride : l.col_stride;
    const std::int64_t outer = rows_inner ? l.col_stride : l.row_stride;
    const std::int64_t inner_extent = rows_inner ? rows : cols;
    overlap = inner == 0 || outer < inner * inner_extent;
  } else if (rows > 1) {
    overlap = l.row_stride == 0;
  } else if (cols > 1) {
    overlap = l.col_stride == 0;
  }
  CBG_EXPECTS(!overlap, status::invalid_argument,
              "the output's strides make elements overlap; each prediction needs its own element");
  return l;
}

// Streaming multiprocessors of `device`, asked once per device.
int sm_count(int device) {
  static std::atomic<int> known[64] = {};
  if (device >= 0 && device < 64) {
    if (const int n = known[device].load(std::memory_order_relaxed); n > 0) return n;
  }
  int n = 0;
  CBG_CUDA_TRY(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  if (device >= 0 && device < 64) known[device].store(n, std::memory_order_relaxed);
  return n;
}

detail::tiling tiling_of(const tiling_policy* p, int device) {
  detail::tiling t{detail::default_tile_rows,
                   detail::default_tree_chunk,
                   detail::default_smem_budget,
                   false,
                   detail::min_tiles_per_sm * sm_count(device),
                   detail::global_bins_tree_chunk};
  if (p != nullptr) {
    if (p->max_tile_rows > 0) t.max_tile_rows = p->max_tile_rows;
    if (p->tree_chunk > 0) t.tree_chunk = t.global_tree_chunk = p->tree_chunk;
    if (p->smem_budget > 0) t.smem_budget = p->smem_budget;
    t.force_global_bins = p->force_global_bins;
    if (p->min_tiles != 0) t.min_tiles = std::max(p->min_tiles, 0);
  }
  return t;
}

constexpr std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

// The stages on `stream`; `out` has been checked.
void enqueue(const device_model& dm, const std::vector<column_view>& columns, std::int64_t rows,
             const predict_options& o, const std::array<std::size_t, 2>& range, const mutable_tensor_view& out,
             const out_layout& ol, const context& ctx, cudaStream_t stream, const tiling_policy* policy) {
  if (rows == 0) return;
  const bool leaf = o.output == output_kind::leaf_indexes;
  const device_model_view& v = dm.view();
  const std::int64_t padded = (rows + 127) / 128 * 128;
  const detail::eval_plan plan = detail::plan_evaluation(tiling_of(policy, ctx.device()), rows, v.n_slots, v.dim,
                                                         dm.max_depth(range[0], range[1]), leaf);

  // One scratch allocation: column table, categorical hashes, slot bytes, global row sums.
  const std::size_t columns_bytes = columns.size() * sizeof(column_view);
  const std::size_t hashes_at = align256(columns_bytes);
  const std::size_t hashes_bytes =
      v.n_used_cats == 0 ? 0
                         : static_cast<std::size_t>(v.n_cat) * static_cast<std::size_t>(padded) * sizeof(std::uint32_t);
  const std::size_t bins_at = align256(hashes_at + hashes_bytes);
  const std::size_t bins_bytes = static_cast<std::size_t>(std::max(v.n_slots, 1u)) * static_cast<std::size_t>(padded);
  const std::size_t acc_at = align256(bins_at + bins_bytes);
  device_buffer<unsigned char> work(acc_at + plan.global_acc * sizeof(double), stream, ctx.resource());
  unsigned char* w = work.data();
  auto* cols = reinterpret_cast<column_view*>(w);
  auto* hashes = reinterpret_cast<std::uint32_t*>(w + hashes_at);
  auto* bins = w + bins_at;

  detail::upload_through_parameters(cols, columns.data(), columns_bytes, stream);
  detail::hash_categorical(v, cols, rows, padded, hashes, stream);
  if (v.n_slots > 0) {
    detail::binarize(v, cols, hashes, rows, padded, bins, stream);
  } else {
    CBG_CUDA_TRY(cudaMemsetAsync(bins, 0, bins_bytes, stream));
  }

  detail::eval_args a;
  a.plan = plan;
  a.model = v;
  a.tree_begin = static_cast<std::uint32_t>(range[0]);
  a.tree_end = static_cast<std::uint32_t>(range[1]);
  a.bins = reinterpret_cast<const std::uint32_t*>(bins);
  a.padded_words = padded / 4;
  a.rows = rows;
  a.acc_global = plan.global_acc == 0 ? nullptr : reinterpret_cast<double*>(w + acc_at);
  a.leaf_indexes = leaf;
  a.add_bias = range[0] == 0;
  if (!leaf) a.post = dm.facts(static_cast<int>(o.type)).post;
  a.out = out.data;
  a.out_type = out.type;
  a.out_row_stride = ol.row_stride;
  a.out_col_stride = ol.col_stride;
  detail::evaluate(a, stream);
  // `work` is freed here, ordered on `stream` after the kernels.
}

// The host evaluator over the pool's columns (a CPU context).
void predict_on_host(const cm::model& m, const pool& p, const predict_options& o,
                     const std::array<std::size_t, 2>& range, const mutable_tensor_view& out, const out_layout& ol) {
  const std::vector<column_view> cols = model_columns(m, p, false);
  const auto rows = static_cast<std::size_t>(p.num_rows());
  const std::size_t nf = m.float_features.size(), nc = m.cat_features.size();
  std::vector<float> floats(rows * nf, 0.0f);
  std::vector<std::uint32_t> cats(rows * nc, 0);
  for (std::size_t f = 0; f < nf; ++f)
    if (cols[f].data != nullptr)
      for (std::size_t r = 0; r < rows; ++r) floats[r * nf + f] = load_as_float(cols[f], static_cast<std::int64_t>(r));
  for (std::size_t c = 0; c < nc; ++c)
    if (cols[nf + c].data != nullptr)
      for (std::size_t r = 0; r < rows; ++r)
        cats[r * nc + c] = load_cat_hash(cols[nf + c], static_cast<std::int64_t>(r));
  const cm::host_rows hr{rows, floats.data(), nf, cats.data(), nc};
  const auto store = [&](std::size_t r, std::size_t j, double value) {
    store_output(out.data, out.type,
                 static_cast<std::int64_t>(r) * ol.row_stride + static_cast<std::int64_t>(j) * ol.col_stride, value);
  };
  if (o.output == output_kind::leaf_indexes) {
    const std::size_t n_trees = range[1] - range[0];
    std::vector<std::uint32_t> leaves(rows * n_trees);
    cm::leaf_indexes_host(m, hr, range[0], range[1], leaves.data(), leaves.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t t = 0; t < n_trees; ++t) store(r, t, leaves[r * n_trees + t]);
  } else {
    const std::size_t n_cols = cm::prediction_columns(m, o.type);
    std::vector<double> values(rows * n_cols);
    cm::predict_host(m, hr, o.type, range[0], range[1], values.data(), values.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < n_cols; ++j) store(r, j, values[r * n_cols + j]);
  }
}

void check_type(const predict_options& o) {
  CBG_EXPECTS(static_cast<int>(o.type) >= 0 && static_cast<int>(o.type) < cm::prediction_type_count,
              status::invalid_argument, fmt::format("prediction type {} is unknown", static_cast<int>(o.type)));
  CBG_EXPECTS(o.output == output_kind::values || o.output == output_kind::leaf_indexes, status::invalid_argument,
              "unknown output kind");
}

}  // namespace

std::array<std::size_t, 2> tree_range(const model::model& m, const predict_options& o) {
  const std::size_t end = o.tree_end == 0 ? m.tree_count() : o.tree_end;
  CBG_EXPECTS(o.tree_begin <= end && end <= m.tree_count(), status::invalid_argument,
              fmt::format("tree range [{}, {}) outside the model's {} trees", o.tree_begin, end, m.tree_count()));
  return {o.tree_begin, end};
}

std::array<std::int64_t, 2> output_shape(const model::model& m, const predict_options& o, std::int64_t rows) {
  check_type(o);
  CBG_EXPECTS(rows >= 0, status::invalid_argument, fmt::format("{} rows", rows));
  const auto range = tree_range(m, o);
  const std::size_t cols =
      o.output == output_kind::leaf_indexes ? range[1] - range[0] : cm::prediction_columns(m, o.type);
  // The caller allocates rows x cols elements of up to 8 bytes from this: the product must fit.
  (void)checked_mul(checked_mul(rows, static_cast<std::int64_t>(cols), "prediction output: element count"),
                    std::int64_t{8}, "prediction output: bytes");
  return {rows, static_cast<std::int64_t>(cols)};
}

void predict_to_device(device_model_cache& cache, const model::model& m, const pool& p, const predict_options& o,
                       const mutable_tensor_view& out, cudaStream_t stream, const tiling_policy* policy) {
  const context& ctx = *p.ctx();
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device,
              "the pool is on a CPU context; predictions into device memory need a GPU context (use "
              "cbg_predict_to_host for the host evaluator)");
  check_type(o);
  const bool leaf = o.output == output_kind::leaf_indexes;
  CBG_EXPECTS(is_device_side(out.memory), status::device,
              "the output is in host memory; cbg_predict_to_device writes device memory only (use "
              "cbg_predict_to_host for a host output)");
  CBG_EXPECTS(out.memory == memory_kind::managed || out.device_id == ctx.device(), status::device,
              fmt::format("the output is on CUDA device {} but the pool's context uses device {}", out.device_id,
                          ctx.device()));
  const auto range = tree_range(m, o);
  const std::vector<column_view> columns = model_columns(m, p, true);
  const cudaStream_t s = stream != nullptr ? stream : ctx.stream();
  scoped_device guard(ctx.device());
  const device_model& dm = cache.get(m, ctx.device(), s, ctx.copies(), ctx.rules());
  std::array<std::int64_t, 2> shape{p.num_rows(), static_cast<std::int64_t>(range[1] - range[0])};
  if (!leaf) {
    const type_facts& f = dm.facts(static_cast<int>(o.type));
    if (!f.supported) (void)cm::prediction_columns(m, o.type);  // throws its error
    shape[1] = f.columns;
  }
  const out_layout ol = check_output(out, shape, leaf);
  enqueue(dm, columns, p.num_rows(), o, range, out, ol, ctx, s, policy);
}

void predict_to_host(device_model_cache& cache, const model::model& m, const pool& p, const predict_options& o,
                     const mutable_tensor_view& out, cudaStream_t stream) {
  const context& ctx = *p.ctx();
  const std::array<std::int64_t, 2> shape = output_shape(m, o, p.num_rows());
  const bool leaf = o.output == output_kind::leaf_indexes;
  const out_layout ol = check_output(out, shape, leaf);
  CBG_EXPECTS(!is_device_side(out.memory), status::device,
              "the output is in device memory; use cbg_predict_to_device for device outputs");
  if (ctx.is_cpu()) {
    predict_on_host(m, p, o, tree_range(m, o), out, ol);
    return;
  }
  // On the GPU into dense scratch of the output's dtype, then one accounted copy to the host.
  const cudaStream_t s = stream != nullptr ? stream : ctx.stream();
  scoped_device guard(ctx.device());
  const auto elements = static_cast<std::size_t>(shape[0] * shape[1]);
  device_buffer<unsigned char> scratch(elements * size_of(out.type), s, ctx.resource());
  mutable_tensor_view dense;
  dense.data = scratch.data();
  dense.type = out.type;
  dense.memory = memory_kind::device;
  dense.device_id = ctx.device();
  dense.rank = out.rank;
  dense.shape[0] = shape[0];
  dense.strides[0] = out.rank == 2 ? shape[1] : 1;
  if (out.rank == 2) {
    dense.shape[1] = shape[1];
    dense.strides[1] = 1;
  }
  predict_to_device(cache, m, p, o, dense, s, nullptr);
  CBG_CUDA_TRY(cudaStreamSynchronize(s));
  copy_tensor(ctx, out, dense.as_const());
}

}  // namespace cbg::apply
