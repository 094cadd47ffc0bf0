// SPDX-License-Identifier: Apache-2.0
// The GPU side of categorical-feature preparation (features.hpp), equal to the host reference
// (src/ctr/prepare_host.cpp) bit for bit: the same per-element math (ctr_math.hpp, apply_math.hpp),
// the same perfect-hash ids (categorical/perfect_hash.hpp), the same permutation (sorted by
// (key, row): a stable radix sort of the keys over ascending rows).
//
// Ordered Borders statistics without a per-category loop: the permutation's positions are sorted
// stably by category id, so each category's rows form a run in permutation order; an exclusive
// scan by key of the row classes gives each row the class-1 count before it, and of ones its total.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <map>

#include <string>

#include "kernels/common/cccl.cuh"

#include "cbg/apply/input.hpp"
#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/train/boosting.hpp"
#include "src/ctr/pool_views.hpp"

namespace cbg::ctr {

namespace {

constexpr int ctr_block = 256;

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, (n + ctr_block - 1) / ctr_block));
}

__device__ inline std::int64_t thread_index() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

__global__ void hash_kernel(column_view c, std::int64_t n, std::uint32_t* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = apply::load_cat_hash(c, i);
}

__global__ void one_hot_kernel(const std::uint32_t* h, std::int64_t n, std::int32_t v, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = one_hot_value(h[i], v);
}

__global__ void targets_kernel(column_view label, train::target_rule rule, std::int64_t n, float* out) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  float t = 0.f;
  (void)train::target_of(rule, label.value(i), t);  // bad labels are reported by the trainer
  out[i] = t;
}

__global__ void classes_kernel(const float* targets, float border, bool multiclass, std::int64_t n,
                               std::uint8_t* cls) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  // Bad labels (negative, NaN) are reported by the trainer; class 0 keeps the counts in bounds.
  cls[i] = multiclass ? (targets[i] >= 0.f ? static_cast<std::uint8_t>(targets[i]) : std::uint8_t{0})
                      : target_class(targets[i], border);
}

__global__ void permutation_keys_kernel(std::uint64_t seed, std::int64_t n, std::uint64_t* keys,
                                        std::uint32_t* rows) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  keys[i] = permutation_key(seed, static_cast<std::uint64_t>(i));
  rows[i] = static_cast<std::uint32_t>(i);
}

// ids in permutation order, and the positions 0..n-1.
__global__ void ids_in_order_kernel(const std::uint32_t* order, const std::uint32_t* ids, std::int64_t n,
                                    std::uint32_t* out, std::uint32_t* positions) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  out[i] = ids[order[i]];
  positions[i] = static_cast<std::uint32_t>(i);
}

// Per sorted position j (category runs in permutation order): feature (type, f)'s term of the row.
__global__ void run_terms_kernel(const std::uint32_t* order, const std::uint32_t* sorted_pos,
                                 const std::uint8_t* cls, std::int64_t n, model::ctr_type type, int f,
                                 std::uint32_t* terms) {
  const std::int64_t j = thread_index();
  if (j < n) terms[j] = target_term(type, f, cls[order[sorted_pos[j]]]);
}

__global__ void ones_kernel(std::int64_t n, std::uint32_t* out) {
  const std::int64_t j = thread_index();
  if (j < n) out[j] = 1u;
}

__global__ void target_values_kernel(const std::uint32_t* order, const std::uint32_t* sorted_pos,
                                     const std::uint32_t* terms, const std::uint32_t* total, std::int64_t n,
                                     model::ctr_type type, int classes, float prior_num, float prior_denom,
                                     float* out) {
  const std::int64_t j = thread_index();
  if (j < n) {
    out[order[sorted_pos[j]]] = ordered_target_value(type, classes, terms[j], total[j], prior_num, prior_denom);
  }
}

// FloatTargetMeanValue: fixed-point targets per sorted position, per-id sums, ordered values.
__global__ void run_fixed_kernel(const std::uint32_t* order, const std::uint32_t* sorted_pos, const float* targets,
                                 std::int64_t n, double scale, long long* out) {
  const std::int64_t j = thread_index();
  if (j < n) out[j] = to_fixed(targets[order[sorted_pos[j]]], scale);
}
__global__ void fixed_sums_kernel(const std::uint32_t* ids, const float* targets, std::int64_t n, double scale,
                                  unsigned long long* sums) {
  const std::int64_t i = thread_index();
  if (i < n) atomicAdd(sums + ids[i], static_cast<unsigned long long>(to_fixed(targets[i], scale)));
}
__global__ void float_mean_values_kernel(const std::uint32_t* order, const std::uint32_t* sorted_pos,
                                         const long long* prefix, const std::uint32_t* total, std::int64_t n,
                                         double scale, float prior_num, float prior_denom, float* out) {
  const std::int64_t j = thread_index();
  if (j < n) {
    out[order[sorted_pos[j]]] = ordered_float_mean_value(prefix[j], total[j], scale, prior_num, prior_denom);
  }
}
__global__ void abs_kernel(const float* in, std::int64_t n, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = fabsf(in[i]);
}

// Table statistics: class counts [id][classes], or (mean type) class sums and row counts per id.
__global__ void class_counts_kernel(const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n, int classes,
                                    std::int32_t* counts) {
  const std::int64_t i = thread_index();
  if (i < n) atomicAdd(counts + static_cast<std::size_t>(ids[i]) * static_cast<std::size_t>(classes) + cls[i], 1);
}
__global__ void class_sums_kernel(const std::uint32_t* ids, const std::uint8_t* cls, std::int64_t n,
                                  std::uint32_t* sums, std::uint32_t* rows) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  atomicAdd(sums + ids[i], static_cast<std::uint32_t>(cls[i]));
  atomicAdd(rows + ids[i], 1u);
}

__global__ void counter_values_kernel(const std::uint32_t* ids, const std::int32_t* counts, std::uint32_t denom,
                                      std::int64_t n, float prior_num, float prior_denom, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = counter_value(static_cast<std::uint32_t>(counts[ids[i]]), denom, prior_num, prior_denom);
}

// counter_calc Full: eval rows of categories known to the table count too.
__global__ void eval_counts_kernel(const std::uint32_t* h, std::int64_t n, const std::uint64_t* hashes,
                                   const std::uint32_t* indices, std::uint64_t n_buckets, std::int32_t* counts) {
  const std::int64_t i = thread_index();
  if (i >= n) return;
  const std::uint32_t idx = model::ctr_lookup(hashes, indices, n_buckets, model::projection_add_cat(0, h[i]));
  if (idx != model::ctr_not_found) atomicAdd(counts + idx, 1);
}

__global__ void eval_values_kernel(const std::uint32_t* h, std::int64_t n, model::ctr_table_view t,
                                   model::ctr_calc c, float* out) {
  const std::int64_t i = thread_index();
  if (i < n) out[i] = model::ctr_value_of(t, c, model::projection_add_cat(0, h[i]));
}

template <class T>
device_buffer<T> upload(const context& ctx, const std::vector<T>& v, const char* what) {
  device_buffer<T> d(v.size(), ctx.stream(), ctx.resource());
  if (!v.empty()) {
    copy_bytes(d.data(), memory_kind::device, v.data(), memory_kind::host, v.size() * sizeof(T), ctx.stream(),
               ctx.copies(), ctx.rules(), CBG_COPY_SITE(what));
  }
  return d;
}

// Category-sized results (one-hot values, CTR tables: what the model stores) in pieces of at most
// strict_d2h_metadata_limit bytes, as the trainer copies its trees: never dataset-sized.
template <class T>
std::vector<T> download(const context& ctx, const T* d, std::size_t n, const char* what) {
  std::vector<T> v(n);
  const std::size_t piece = std::max<std::size_t>(1, strict_d2h_metadata_limit / sizeof(T));
  for (std::size_t at = 0; at < n; at += piece) {
    copy_bytes(v.data() + at, memory_kind::host, d + at, memory_kind::device, std::min(piece, n - at) * sizeof(T),
               ctx.stream(), ctx.copies(), ctx.rules(), CBG_COPY_SITE(what));
  }
  CBG_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
  return v;
}

model::ctr_calc calc_of(const model::ctr_description& d) {
  return model::ctr_calc{d.base.type, d.target_border_idx, d.prior_num, d.prior_denom, d.shift, d.scale};
}

device_buffer<std::uint32_t> column_hashes_device(const context& ctx, const pool& p, std::int64_t flat) {
  const column_view& c = p.features()[static_cast<std::size_t>(flat)];
  CBG_EXPECTS(c.memory != memory_kind::host, status::device,
              "the GPU CTR path reads device, managed or pinned memory (a categorical column is in pageable "
              "host memory)");
  CBG_EXPECTS(apply::is_categorical_dtype(c.type), status::invalid_argument,
              "categorical feature " + std::to_string(flat) + " has dtype " + std::string(name_of(c.type)));
  device_buffer<std::uint32_t> h(static_cast<std::size_t>(c.size), ctx.stream(), ctx.resource());
  hash_kernel<<<blocks_for(c.size), ctr_block, 0, ctx.stream()>>>(c, c.size, h.data());
  CBG_CHECK_CUDA(ctx.stream());
  return h;
}

}  // namespace

prepared_data prepare_categorical_device(const pool& learn, const pool* eval, const options& o,
                                         const train::target_rule& rule, bool binarize, std::uint64_t seed) {
  const context& ctx = *learn.ctx();
  CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "prepare_categorical_device needs a GPU context");
  scoped_device guard(ctx.device());
  const cudaStream_t stream = ctx.stream();
  const auto& res = ctx.resource();
  prepared_data out;
  const std::int64_t n = learn.num_rows();
  const std::int64_t ne = eval != nullptr ? eval->num_rows() : 0;
  CBG_EXPECTS(n <= 0x7fffffff, status::unsupported, "categorical features: at most 2^31 - 1 learn rows");
  for (std::int64_t j = 0; j < learn.num_features(); ++j) {
    (learn.is_categorical(j) ? out.cat_flat : out.float_flat).push_back(static_cast<std::int32_t>(j));
    if (eval != nullptr) {
      CBG_EXPECTS(eval->is_categorical(j) == learn.is_categorical(j), status::invalid_argument,
                  "feature " + std::to_string(j) + " is categorical in one of the learn and eval pools only");
    }
  }
  out.float_count = static_cast<std::int64_t>(out.float_flat.size());
  const auto un = static_cast<std::size_t>(n);
  const int n_items = static_cast<int>(n);

  // The permutation and the classes, once, when a CTR needs a target.
  device_buffer<std::uint32_t> order;
  device_buffer<std::uint8_t> cls;
  int classes = 2;
  double fixed_scale = 1.0;  // FloatTargetMeanValue sums
  device_buffer<float> targets;
  const bool multiclass =
      rule.loss == train::loss_kind::multiclass || rule.loss == train::loss_kind::multiclass_one_vs_all;
  const auto ensure_targets = [&](const ctr_spec& s) {
    if (order.size() == un) return;
    CBG_EXPECTS(learn.label().has_value(), status::bad_data, "the learn pool has no label");
    targets = device_buffer<float>(un, stream, res);
    train::target_rule r = rule;
    if (multiclass) r.classes = max_target_classes;  // class indices; checked below
    targets_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(column_of(*learn.label(), 0), r, n, targets.data());
    CBG_CHECK_CUDA(stream);
    {
      device_buffer<float> abs_t(un, stream, res), mx(1, stream, res);
      abs_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(targets.data(), n, abs_t.data());
      CBG_CHECK_CUDA(stream);
      std::size_t bytes = 0;
      CBG_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, abs_t.data(), mx.data(), n_items, stream));
      device_buffer<unsigned char> temp(bytes, stream, res);
      CBG_CUDA_TRY(cub::DeviceReduce::Max(temp.data(), bytes, abs_t.data(), mx.data(), n_items, stream));
      fixed_scale = fixed_scale_for(download(ctx, mx.data(), 1, "CTR largest |target|")[0], n);
    }
    float border = 0.5f;
    if (multiclass) {
      device_buffer<float> mx(1, stream, res);
      std::size_t bytes = 0;
      CBG_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, targets.data(), mx.data(), n_items, stream));
      device_buffer<unsigned char> temp(bytes, stream, res);
      CBG_CUDA_TRY(cub::DeviceReduce::Max(temp.data(), bytes, targets.data(), mx.data(), n_items, stream));
      const float top = download(ctx, mx.data(), 1, "CTR class count")[0];
      CBG_EXPECTS(top >= 0 && top < static_cast<float>(max_target_classes), status::bad_data,
                  "target CTRs take class indices 0 .. " + std::to_string(max_target_classes - 1) + " as labels");
      classes = std::max(2, static_cast<int>(top) + 1);
    } else if (binarize) {
      view_set views;
      pool_inputs in;
      in.columns.push_back(views.device_floats(targets.data(), n, ctx.device()));
      const pool tp = pool::build(learn.ctx(), std::move(in));
      quantize::options qo;
      qo.border_count = 1;
      qo.mode = quantize::nan_mode::forbidden;
      qo.type = s.target_border_type;
      qo.max_subset_size = static_cast<std::uint32_t>(std::min<std::int64_t>(n, std::int64_t{1} << 24));
      const quantize::device_quantized q = quantize::quantize_device(tp, qo);
      const std::int32_t count = download(ctx, q.border_count.data(), 1, "CTR target border count")[0];
      border = count == 0 ? download(ctx, targets.data(), 1, "CTR constant target")[0]
                          : download(ctx, q.borders.data(), 1, "CTR target border")[0];
    }
    cls = device_buffer<std::uint8_t>(un, stream, res);
    classes_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(targets.data(), border, multiclass, n, cls.data());
    device_buffer<std::uint64_t> keys(un, stream, res), sorted_keys(un, stream, res);
    device_buffer<std::uint32_t> rows(un, stream, res);
    order = device_buffer<std::uint32_t>(un, stream, res);
    permutation_keys_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(seed, n, keys.data(), rows.data());
    CBG_CHECK_CUDA(stream);
    std::size_t bytes = 0;
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), sorted_keys.data(), rows.data(),
                                                 order.data(), n_items, 0, 64, stream));
    device_buffer<unsigned char> temp(bytes, stream, res);
    CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), sorted_keys.data(), rows.data(),
                                                 order.data(), n_items, 0, 64, stream));
  };

  const auto add_column = [&](device_buffer<float> lc, device_buffer<float> ec, derived_feature d, int border_count,
                              quantize::border_type type) {
    out.overrides.push_back(
        derived_override(out.float_count + static_cast<std::int64_t>(out.derived.size()), border_count, type));
    out.derived.push_back(d);
    out.learn_device_columns.push_back(std::move(lc));
    if (eval != nullptr) out.eval_device_columns.push_back(std::move(ec));
  };

  for (std::size_t c = 0; c < out.cat_flat.size(); ++c) {
    const std::int32_t flat = out.cat_flat[c];
    const device_buffer<std::uint32_t> h = column_hashes_device(ctx, learn, flat);
    const device_buffer<std::uint32_t> he =
        eval != nullptr ? column_hashes_device(ctx, *eval, flat) : device_buffer<std::uint32_t>();
    const categorical::device_perfect_hash ph = categorical::perfect_hash_device(ctx, h.data(), n);
    const auto unique = static_cast<std::size_t>(ph.unique);

    if (ph.unique <= o.one_hot_max_size) {
      std::vector<std::uint32_t> keys = download(ctx, ph.keys.data(), unique, "one-hot values");
      std::vector<std::int32_t> values(keys.begin(), keys.end());
      std::sort(values.begin(), values.end());
      for (std::int32_t v : values) {
        device_buffer<float> lc(un, stream, res), ec(static_cast<std::size_t>(ne), stream, res);
        one_hot_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(h.data(), n, v, lc.data());
        if (ne > 0) one_hot_kernel<<<blocks_for(ne), ctr_block, 0, stream>>>(he.data(), ne, v, ec.data());
        CBG_CHECK_CUDA(stream);
        derived_feature d;
        d.kind = derived_kind::one_hot;
        d.cat_index = static_cast<std::int32_t>(c);
        d.value = v;
        add_column(std::move(lc), std::move(ec), d, 1, quantize::border_type::uniform);
      }
      continue;
    }

    // The table keys (for the model) and their buckets, on the host and on the device.
    const std::vector<std::uint32_t> cat_keys = download(ctx, ph.keys.data(), unique, "CTR table keys");
    std::vector<std::uint64_t> keys(unique);
    for (std::size_t id = 0; id < unique; ++id) keys[id] = model::projection_add_cat(0, cat_keys[id]);
    model::projection proj;
    proj.cat_features.push_back(static_cast<std::int32_t>(c));
    model::ctr_table shape;
    build_ctr_buckets(keys, shape);
    const device_buffer<std::uint64_t> d_hashes = upload(ctx, shape.bucket_hashes, "CTR buckets");
    const device_buffer<std::uint32_t> d_indices = upload(ctx, shape.bucket_indices, "CTR bucket indices");
    // The permutation's positions sorted stably by category (runs in permutation order), the
    // rows before each in its run, and scratch for the scans: made when a target CTR needs them.
    device_buffer<std::uint32_t> sorted_pos, sorted_ids, total, terms, run_terms;
    device_buffer<unsigned char> scan_temp;
    device_buffer<long long> fixed_terms, fixed_prefix;
    const auto ensure_runs = [&] {
      if (sorted_pos.size() == un) return;
      device_buffer<std::uint32_t> ids_ord(un, stream, res), pos(un, stream, res), ones(un, stream, res);
      sorted_pos = device_buffer<std::uint32_t>(un, stream, res);
      sorted_ids = device_buffer<std::uint32_t>(un, stream, res);
      total = device_buffer<std::uint32_t>(un, stream, res);
      terms = device_buffer<std::uint32_t>(un, stream, res);
      run_terms = device_buffer<std::uint32_t>(un, stream, res);
      ids_in_order_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(order.data(), ph.ids.data(), n, ids_ord.data(),
                                                                   pos.data());
      ones_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(n, ones.data());
      CBG_CHECK_CUDA(stream);
      int bits = 1;
      while (bits < 32 && (std::uint64_t{1} << bits) < unique) ++bits;
      std::size_t sort_bytes = 0, scan_bytes = 0;
      CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, ids_ord.data(), sorted_ids.data(), pos.data(),
                                                   sorted_pos.data(), n_items, 0, bits, stream));
      CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(nullptr, scan_bytes, sorted_ids.data(), ones.data(),
                                                      total.data(), n_items, ::cuda::std::equal_to<>{}, stream));
      scan_temp = device_buffer<unsigned char>(std::max(sort_bytes, scan_bytes), stream, res);
      std::size_t tb = scan_temp.size();
      CBG_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scan_temp.data(), tb, ids_ord.data(), sorted_ids.data(), pos.data(),
                                                   sorted_pos.data(), n_items, 0, bits, stream));
      tb = scan_temp.size();
      CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(scan_temp.data(), tb, sorted_ids.data(), ones.data(),
                                                      total.data(), n_items, ::cuda::std::equal_to<>{}, stream));
    };
    struct device_table {
      std::size_t index = 0;
      device_buffer<std::int32_t> counts;
      device_buffer<model::ctr_mean_history> means;
    };
    std::map<model::ctr_base, device_table> table_of;
    std::vector<model::ctr_description> done;

    for (const ctr_spec& s : simple_ctrs_of(o, flat)) {
      model::ctr_base base;
      base.proj = proj;
      base.type = s.type;
      const bool counter = s.type == model::ctr_type::counter || s.type == model::ctr_type::feature_freq;
      if (!counter) {
        ensure_targets(s);
        ensure_runs();
      }
      if (table_of.find(base) == table_of.end()) {
        model::ctr_table t = shape;
        t.base = base;
        device_table dt;
        if (s.type == model::ctr_type::float_target_mean_value) {
          device_buffer<unsigned long long> sums(unique, stream, res);
          CBG_CUDA_TRY(cudaMemsetAsync(sums.data(), 0, unique * sizeof(unsigned long long), stream));
          fixed_sums_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(ph.ids.data(), targets.data(), n, fixed_scale,
                                                                     sums.data());
          CBG_CHECK_CUDA(stream);
          const std::vector<unsigned long long> hs = download(ctx, sums.data(), unique, "CTR table sums");
          const std::vector<std::uint32_t> hr = download(ctx, ph.counts.data(), unique, "CTR table counts");
          t.means.resize(unique);
          for (std::size_t id = 0; id < unique; ++id) {
            t.means[id].sum = from_fixed(static_cast<std::int64_t>(hs[id]), fixed_scale);
            t.means[id].count = static_cast<std::int32_t>(hr[id]);
          }
          dt.means = upload(ctx, t.means, "CTR table means");
        } else if (s.type == model::ctr_type::binarized_target_mean_value) {
          device_buffer<std::uint32_t> sums(unique, stream, res), rows(unique, stream, res);
          CBG_CUDA_TRY(cudaMemsetAsync(sums.data(), 0, unique * sizeof(std::uint32_t), stream));
          CBG_CUDA_TRY(cudaMemsetAsync(rows.data(), 0, unique * sizeof(std::uint32_t), stream));
          class_sums_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(ph.ids.data(), cls.data(), n, sums.data(),
                                                                     rows.data());
          CBG_CHECK_CUDA(stream);
          const std::vector<std::uint32_t> hs = download(ctx, sums.data(), unique, "CTR table sums");
          const std::vector<std::uint32_t> hr = download(ctx, rows.data(), unique, "CTR table counts");
          t.means.resize(unique);
          for (std::size_t id = 0; id < unique; ++id) {
            t.means[id].sum = mean_sum(hs[id], classes);
            t.means[id].count = static_cast<std::int32_t>(hr[id]);
          }
          dt.means = upload(ctx, t.means, "CTR table means");
        } else if (!counter) {
          t.target_classes_count = classes;
          const std::size_t cells = unique * static_cast<std::size_t>(classes);
          dt.counts = device_buffer<std::int32_t>(cells, stream, res);
          CBG_CUDA_TRY(cudaMemsetAsync(dt.counts.data(), 0, cells * sizeof(std::int32_t), stream));
          class_counts_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(ph.ids.data(), cls.data(), n, classes,
                                                                       dt.counts.data());
          CBG_CHECK_CUDA(stream);
          t.counts = download(ctx, dt.counts.data(), cells, "CTR table counts");
        } else {
          const std::vector<std::uint32_t> learn_counts = download(ctx, ph.counts.data(), unique, "CTR table counts");
          t.counts.assign(learn_counts.begin(), learn_counts.end());
          std::int64_t rows_counted = n;
          dt.counts = upload(ctx, t.counts, "CTR counts");
          if (s.type == model::ctr_type::counter && o.counter_calc_method == counter_calc::full && ne > 0) {
            eval_counts_kernel<<<blocks_for(ne), ctr_block, 0, stream>>>(he.data(), ne, d_hashes.data(),
                                                                         d_indices.data(), d_hashes.size(),
                                                                         dt.counts.data());
            CBG_CHECK_CUDA(stream);
            t.counts = download(ctx, dt.counts.data(), unique, "CTR table counts");
            rows_counted += ne;
          }
          t.counter_denominator = s.type == model::ctr_type::counter
                                      ? *std::max_element(t.counts.begin(), t.counts.end())
                                      : static_cast<std::int32_t>(rows_counted);
        }
        dt.index = out.tables.size();
        table_of.emplace(base, std::move(dt));
        out.tables.push_back(std::move(t));
      }
      const device_table& dt = table_of.at(base);
      const model::ctr_table& table = out.tables[dt.index];
      model::ctr_table_view tv;
      tv.hashes = d_hashes.data();
      tv.indices = d_indices.data();
      tv.n_buckets = d_hashes.size();
      tv.counts = dt.counts.data();
      tv.means = dt.means.data();
      tv.counter_denominator = table.counter_denominator;
      tv.target_classes_count = table.target_classes_count;

      const int features = counter ? 1 : target_features_of(s.type, classes);
      for (int f = 0; f < features; ++f) {
        bool scanned = false;
        for (const prior& pr : s.priors) {
          derived_feature d;
          if (!next_ctr_feature(static_cast<std::int32_t>(c), base, f, pr, done, d)) continue;
          device_buffer<float> lc(un, stream, res), ec(static_cast<std::size_t>(ne), stream, res);
          if (counter) {
            counter_values_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(
                ph.ids.data(), dt.counts.data(), static_cast<std::uint32_t>(table.counter_denominator), n, pr.num,
                pr.denom, lc.data());
          } else if (s.type == model::ctr_type::float_target_mean_value) {
            if (!scanned) {
              fixed_terms = device_buffer<long long>(un, stream, res);
              fixed_prefix = device_buffer<long long>(un, stream, res);
              run_fixed_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(order.data(), sorted_pos.data(),
                                                                        targets.data(), n, fixed_scale,
                                                                        fixed_terms.data());
              CBG_CHECK_CUDA(stream);
              std::size_t bytes = 0;
              CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(nullptr, bytes, sorted_ids.data(), fixed_terms.data(),
                                                              fixed_prefix.data(), n_items,
                                                              ::cuda::std::equal_to<>{}, stream));
              device_buffer<unsigned char> temp(bytes, stream, res);
              CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(temp.data(), bytes, sorted_ids.data(), fixed_terms.data(),
                                                              fixed_prefix.data(), n_items,
                                                              ::cuda::std::equal_to<>{}, stream));
              scanned = true;
            }
            float_mean_values_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(
                order.data(), sorted_pos.data(), fixed_prefix.data(), total.data(), n, fixed_scale, pr.num, pr.denom,
                lc.data());
          } else {
            if (!scanned) {
              run_terms_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(order.data(), sorted_pos.data(), cls.data(),
                                                                        n, s.type, f, run_terms.data());
              CBG_CHECK_CUDA(stream);
              std::size_t tb = scan_temp.size();
              CBG_CUDA_TRY(cub::DeviceScan::ExclusiveSumByKey(scan_temp.data(), tb, sorted_ids.data(),
                                                              run_terms.data(), terms.data(), n_items,
                                                              ::cuda::std::equal_to<>{}, stream));
              scanned = true;
            }
            target_values_kernel<<<blocks_for(n), ctr_block, 0, stream>>>(order.data(), sorted_pos.data(),
                                                                          terms.data(), total.data(), n, s.type,
                                                                          classes, pr.num, pr.denom, lc.data());
          }
          if (ne > 0) {
            eval_values_kernel<<<blocks_for(ne), ctr_block, 0, stream>>>(he.data(), ne, tv, calc_of(d.ctr), ec.data());
          }
          CBG_CHECK_CUDA(stream);
          add_column(std::move(lc), std::move(ec), d, s.ctr_border_count, s.ctr_border_type);
        }
      }
    }
  }

  const auto build = [&](const pool& src, const std::vector<device_buffer<float>>& cols) {
    view_set views;
    std::vector<tensor_ref> refs;
    for (const auto& col : cols) refs.push_back(views.device_floats(col.data(), src.num_rows(), ctx.device()));
    return derived_pool(src, out.float_flat, views, std::move(refs));
  };
  out.learn = build(learn, out.learn_device_columns);
  if (eval != nullptr) out.eval = build(*eval, out.eval_device_columns);
  return out;
}

}  // namespace cbg::ctr
