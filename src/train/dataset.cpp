// SPDX-License-Identifier: Apache-2.0
// The training dataset (dataset.hpp): relabelling, categorical columns, staging and quantization.
#include "cbg/train/dataset.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/ctr/combinations.hpp"
#include "cbg/ctr/permutation_scheme.hpp"
#include "cbg/dist/train.hpp"
#include "cbg/memory/copy.hpp"
#include "cbg/train/class_labels.hpp"
#include "cbg/train/param_table.hpp"
#include "src/dist/all_rows.hpp"

namespace cbg::train {

// A derived pool and what it views that the caller's pools do not hold: device copies of pageable
// tensors, relabelled host targets.
struct derived_table {
  std::vector<device_buffer<unsigned char>> buffers;
  std::vector<float> host;  // relabelled targets (class_names) on a CPU context
  std::unique_ptr<pool> p;  // last: destroyed (waits for the queued work) before the buffers
};

// Permutation k > 0 of the ordered CTRs: its categorical preparation (whose learn pool holds that
// permutation's CTR columns), the pageable columns staged for the GPU, and its quantized learn set.
struct permutation_table {
  std::optional<ctr::prepared_data> cat;
  std::unique_ptr<derived_table> staged;
  const pool* learn = nullptr;
  std::optional<quantize::host_quantized> host_quantized;
  std::optional<quantize::device_quantized> device_quantized;
};

namespace {

// Whether a prepared categorical set has CTR columns (one-hot columns do not depend on a permutation).
bool has_ctr_columns(const ctr::prepared_data& cat) {
  return std::any_of(cat.derived.begin(), cat.derived.end(),
                     [](const ctr::derived_feature& d) { return d.kind == ctr::derived_kind::ctr; });
}

// The host tensor `t` ([rows] or [rows, k], any strides) as a contiguous row-major device tensor.
tensor_view stage_tensor(const tensor_view& t, std::vector<device_buffer<unsigned char>>& buffers, const context& ctx) {
  const std::int64_t rows = t.shape[0];
  const std::int64_t cols = t.rank > 1 ? t.shape[1] : 1;
  const std::size_t es = size_of(t.type);
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * es;
  device_buffer<unsigned char>& d = buffers.emplace_back(bytes, ctx.stream(), ctx.resource());
  const bool contiguous = (rows <= 1 || t.strides[0] == cols) && (cols <= 1 || t.strides[1] == 1);
  std::vector<unsigned char> packed;
  const void* src = t.data;
  if (!contiguous) {  // gather on the host, then one copy
    packed.resize(bytes);
    const auto* base = static_cast<const unsigned char*>(t.data);
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t k = 0; k < cols; ++k) {
        const std::int64_t at = i * t.strides[0] + (t.rank > 1 ? k * t.strides[1] : 0);
        std::memcpy(packed.data() + static_cast<std::size_t>(i * cols + k) * es,
                    base + at * static_cast<std::int64_t>(es), es);
      }
    }
    ctx.copies().add(copy_direction::h2h, bytes);
    src = packed.data();
  }
  // From pageable memory the call returns once the source is read (the device copy may still run).
  copy_bytes(d.data(), memory_kind::device, src, t.memory, bytes, ctx.stream(), ctx.copies(), ctx.rules(),
             CBG_COPY_SITE("trainer: host inputs staged to the device"));
  tensor_view v = t;
  v.data = d.data();
  v.memory = memory_kind::device;
  v.device_id = ctx.device();
  v.strides[0] = cols;
  if (t.rank > 1) v.strides[1] = 1;
  return v;
}

// `src`'s features as they are (names and categorical flags too), with `src`'s weight and baseline.
pool_parts parts_of(const pool& src) {
  pool_parts parts;
  for (std::int64_t j = 0; j < src.num_features(); ++j) {
    parts.features.push_back(src.features()[static_cast<std::size_t>(j)]);
    parts.categorical.push_back(src.is_categorical(j));
    parts.names.push_back(src.feature_name(j));
  }
  parts.label = src.label();
  parts.weight = src.weight();
  parts.baseline = src.baseline();
  return parts;
}

// `src` with its pageable tensors the GPU trainer reads staged to the device (all feature columns
// too when `features`); nullptr when there are none (device pools stay zero-copy). Categorical
// pools only with `categorical` (else the CTR path's derived pools are staged instead); their
// categorical columns keep their values (hashes or integers) and flags.
std::unique_ptr<derived_table> stage_host_inputs(const pool& src, bool features, bool categorical = false) {
  const context& ctx = *src.ctx();
  const auto is_host = [](const std::optional<tensor_view>& t) { return t && t->memory == memory_kind::host; };
  bool any = is_host(src.label()) || is_host(src.weight()) || is_host(src.baseline());
  for (const column_view& c : src.features()) any = any || (features && c.memory == memory_kind::host);
  if (!any || (src.num_categorical() > 0 && !categorical)) return nullptr;
  auto s = std::make_unique<derived_table>();
  pool_parts parts = parts_of(src);
  for (column_view& c : parts.features) {
    if (!features || c.memory != memory_kind::host) continue;
    tensor_view t;
    t.data = c.data;
    t.type = c.type;
    t.memory = c.memory;
    t.rank = 1;
    t.shape[0] = c.size;
    t.strides[0] = c.stride;
    const bool hashed = c.hashed;
    c = column_of(stage_tensor(t, s->buffers, ctx), 0);
    c.hashed = hashed;
  }
  for (auto* t : {&parts.label, &parts.weight, &parts.baseline}) {
    if (is_host(*t)) *t = stage_tensor(**t, s->buffers, ctx);
  }
  s->p = std::make_unique<pool>(pool::borrow(src.ctx(), std::move(parts)));
  return s;
}

// `src` with its labels replaced by class indices: label == names[k] becomes k (class_names).
// Throws bad_data naming the first row whose label is not listed.
std::unique_ptr<derived_table> relabel(const pool& src, const std::vector<double>& names, const char* what) {
  const context& ctx = *src.ctx();
  CBG_EXPECTS(pool::dims_of(src.label()) == 1, status::unsupported, "class_names: the trainer takes one label column");
  const column_view labels = column_of(*src.label(), 0);
  const class_lookup lookup = make_class_lookup(names);
  auto s = std::make_unique<derived_table>();
  tensor_view t;
  t.type = dtype::float32;
  t.rank = 1;
  t.shape[0] = labels.size;
  t.strides[0] = 1;
  std::int64_t bad = -1;
  if (is_device_side(labels.memory) && !ctx.is_cpu()) {  // on the device: labels never come to the host
    device_buffer<unsigned char>& d =
        s->buffers.emplace_back(static_cast<std::size_t>(labels.size) * sizeof(float), ctx.stream(), ctx.resource());
    bad = relabel_device(ctx, labels, lookup, reinterpret_cast<float*>(d.data()));
    t.data = d.data();
    t.memory = memory_kind::device;
    t.device_id = ctx.device();
  } else {
    s->host.resize(static_cast<std::size_t>(labels.size));
    bad = relabel_host(labels, lookup, s->host.data());
    t.data = s->host.data();
    t.memory = memory_kind::host;
    if (!ctx.is_cpu() && bad < 0) t = stage_tensor(t, s->buffers, ctx);
  }
  if (bad >= 0) {
    // The unknown value itself, for the message (one element from the device when it lives there).
    unsigned char raw[8] = {};
    const std::size_t es = size_of(labels.type);
    const void* at =
        static_cast<const unsigned char*>(labels.data) + bad * labels.stride * static_cast<std::int64_t>(es);
    copy_bytes(raw, memory_kind::host, at, labels.memory, es, ctx.stream(), ctx.copies(), ctx.rules(),
               CBG_COPY_SITE("trainer: class_names unknown label"));
    CBG_FAIL(status::bad_data, fmt::format("{} label {} of row {} is not one of class_names", what,
                                           load_as_double(raw, labels.type, 0, 1), bad));
  }
  pool_parts parts = parts_of(src);
  for (const column_view& c : parts.features) {
    CBG_EXPECTS(!c.hashed, status::unsupported,
                "class_names with a string categorical column is not supported (give class indices as labels)");
  }
  parts.label = t;
  s->p = std::make_unique<pool>(pool::borrow(src.ctx(), std::move(parts)));
  return s;
}

// per_float_feature_quantization as quantizer overrides of the pool the quantizer reads: the float
// features come first there, in flat order (`float_flat`: their flat indexes; null: all features).
void add_float_overrides(const pool& learn, const std::vector<float_quantization>& settings,
                         const std::vector<std::int32_t>* float_flat, std::vector<quantize::feature_override>& out) {
  const std::string key = "per_float_feature_quantization";
  for (const float_quantization& q : settings) {
    std::int64_t flat = q.feature;
    if (!q.name.empty()) {
      flat = -1;
      for (std::int64_t j = 0; j < learn.num_features() && flat < 0; ++j)
        if (learn.feature_name(j) == q.name) flat = j;
      if (flat < 0) invalid_param(key, fmt::format("no feature is named '{}'", q.name));
    }
    if (flat >= learn.num_features()) {
      invalid_param(key,
                    fmt::format("feature {} is out of range (the pool has {} features)", flat, learn.num_features()));
    }
    if (learn.is_categorical(flat)) invalid_param(key, fmt::format("feature {} is categorical", flat));
    std::int64_t at = flat;
    if (float_flat != nullptr) {
      at = std::find(float_flat->begin(), float_flat->end(), static_cast<std::int32_t>(flat)) - float_flat->begin();
    }
    quantize::feature_override o;
    o.feature = at;
    o.border_count = q.border_count.value_or(0);
    o.mode = q.nan_mode ? static_cast<int>(*q.nan_mode) : -1;
    o.type = q.border_type ? static_cast<int>(*q.border_type) : -1;
    out.push_back(o);
  }
}

}  // namespace

dataset::dataset(const pool& learn, const pool* eval, const train_params& p)
    : labelled_learn_(&learn), labelled_eval_(eval), learn_(&learn), eval_(eval), devices_(p.devices) {
  const context& ctx = *learn.ctx();
  // Labels given as class_names values: relabelled to class indices first (CTR targets read them too).
  bool identity = true;
  for (std::size_t k = 0; k < p.class_values.size(); ++k) {
    identity = identity && p.class_values[k] == static_cast<double>(k);
  }
  if (!identity) {
    relabelled_learn_ = relabel(learn, p.class_values, "learn");
    labelled_learn_ = relabelled_learn_->p.get();
    if (eval != nullptr) {
      relabelled_eval_ = relabel(*eval, p.class_values, "eval");
      labelled_eval_ = relabelled_eval_->p.get();
    }
  }
  // Feature combinations read the categorical and float columns and the label on the pool's device
  // (also with several devices of one process): pageable ones are staged first (one copy each, as
  // the quantizer stages floats), so the CTR preparation and the combinations take the GPU path.
  // Several processes gather them from every rank (below), from the device too.
  const std::optional<dist::communicator> comm = ctx.is_cpu() ? std::nullopt : dist::communicator_of(ctx);
  const int complexity = ctr::max_ctr_complexity_of(p.ctr, p.iterations);
  if (!ctx.is_cpu() && learn.num_categorical() > 0 && (complexity > 1 || comm.has_value())) {
    staged_categorical_learn_ = stage_host_inputs(*labelled_learn_, true, true);
    if (staged_categorical_learn_) labelled_learn_ = staged_categorical_learn_->p.get();
    if (labelled_eval_ != nullptr) {
      staged_categorical_eval_ = stage_host_inputs(*labelled_eval_, true, true);
      if (staged_categorical_eval_) labelled_eval_ = staged_categorical_eval_->p.get();
    }
  }
  // Several processes (src/dist/all_rows.hpp): the CTRs and the combinations read every rank's rows,
  // gathered in rank order; the backend then reads this rank's part of what they derive.
  const pool* own_learn = labelled_learn_;
  const pool* own_eval = labelled_eval_;
  if (comm.has_value() && learn.num_categorical() > 0) {
    all_rows_ = dist::gather_all_rows(*labelled_learn_, labelled_eval_, *comm, complexity > 1);
    labelled_learn_ = &*all_rows_->learn;
    labelled_eval_ = all_rows_->eval ? &*all_rows_->eval : nullptr;
    rank_rows_ = rank_window{all_rows_->first(false, comm->rank), all_rows_->first(true, comm->rank)};
  }
  learn_ = labelled_learn_;
  eval_ = labelled_eval_;
  quantize_.border_count = p.border_count;
  quantize_.mode = p.nan_mode;
  quantize_.type = p.border_type;
  // Categorical features: one-hot and CTR columns appended to the float features.
  if (learn.num_categorical() > 0) {
    cat_.emplace(ctr::prepare_for_training(*labelled_learn_, labelled_eval_, p));
    learn_ = cat_->learn.get();
    eval_ = cat_->eval.get();
    quantize_.overrides = cat_->overrides;
    if (rank_rows_) {
      rank_learn_ = dist::rank_part(*cat_->learn, *own_learn, cat_->float_flat, rank_rows_->learn_first);
      learn_ = rank_learn_.get();
      if (eval_ != nullptr) {
        rank_eval_ = dist::rank_part(*cat_->eval, *own_eval, cat_->float_flat, rank_rows_->eval_first);
        eval_ = rank_eval_.get();
      }
    }
  }
  add_float_overrides(learn, p.per_float_quantization, cat_ ? &cat_->float_flat : nullptr, quantize_.overrides);
  // Pageable host inputs on a GPU context: staged to the device (after the CTR preparation, whose
  // host path gives pageable derived pools).
  if (!ctx.is_cpu()) {
    staged_learn_ = stage_host_inputs(*learn_, false);
    if (staged_learn_) learn_ = staged_learn_->p.get();
    if (eval_ != nullptr) {
      staged_eval_ = stage_host_inputs(*eval_, true);
      if (staged_eval_) eval_ = staged_eval_->p.get();
    }
  }
  // The one quantization of the learn features (the GPU's stages pageable columns itself). Several
  // processes: the sharded backend quantizes the features gathered from every rank.
  if (ctx.is_cpu()) {
    host_quantized_.emplace(quantize::quantize_host(*learn_, quantize_));
  } else if (!comm.has_value()) {
    device_quantized_.emplace(quantize::quantize_device(*learn_, quantize_));
  }

  // More permutations of the ordered CTRs (CatBoost's GPU scheme, ctr/permutation_scheme.hpp): each
  // one's CTR columns with its own seed, binned with permutation 0's borders. Without CTR columns
  // (or with has_time, where parse_params keeps one) a count means one, as in CatBoost.
  if (p.permutation_count > 1 && cat_ && has_ctr_columns(*cat_)) {
    CBG_EXPECTS(!comm.has_value(), status::not_implemented,
                fmt::format("parameter 'permutation_count': {} permutations over several processes are not "
                            "implemented; use permutation_count=1",
                            p.permutation_count));
    for (int k = 1; k < p.permutation_count; ++k) {
      auto t = std::make_unique<permutation_table>();
      train_params pk = p;
      pk.random_seed = ctr::permutation_seed(p.random_seed, k);
      t->cat.emplace(ctr::prepare_for_training(*labelled_learn_, labelled_eval_, pk));
      t->learn = t->cat->learn.get();
      if (ctx.is_cpu()) {
        t->host_quantized.emplace(quantize::binarize_host(*t->learn, *host_quantized_));
      } else {
        t->staged = stage_host_inputs(*t->learn, true);
        if (t->staged) t->learn = t->staged->p.get();
        t->device_quantized.emplace(quantize::binarize_device(*t->learn, *device_quantized_));
      }
      permutations_.push_back(std::move(t));
    }
  }
}

dataset::~dataset() = default;

backend_inputs dataset::take_permutation_inputs(int k, bool with_eval) {
  CBG_EXPECTS(k >= 0 && k < permutation_count(), status::internal, "no such permutation of the ordered CTRs");
  backend_inputs in;
  in.learn = learn_;
  in.eval = with_eval ? eval_ : nullptr;
  in.quantize = quantize_;
  in.devices = devices_;
  in.host_quantized = host_quantized_ ? &*host_quantized_ : nullptr;
  in.device_quantized = device_quantized_ ? &*device_quantized_ : nullptr;
  if (k > 0) {
    permutation_table& t = *permutations_[static_cast<std::size_t>(k - 1)];
    in.learn = t.learn;
    in.host_quantized = t.host_quantized ? &*t.host_quantized : nullptr;
    in.device_quantized = t.device_quantized ? &*t.device_quantized : nullptr;
  }
  return in;
}

}  // namespace cbg::train
