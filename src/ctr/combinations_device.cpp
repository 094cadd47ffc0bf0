// SPDX-License-Identifier: Apache-2.0
// Feature combinations from device data (combinations_device.hpp): the GPU primitives of the search
// extension (combination_search.hpp: the control flow shared with the host path, combinations.cpp);
// the kernels are kernels/ctr/combinations_device.cu and ctr_device.cu.
#include "cbg/ctr/combinations_device.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "kernels/ctr/ctr_device.hpp"
#include "kernels/ctr/ordered_columns.hpp"

#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/model/model.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/runtime/profiler.hpp"
#include "cbg/train/params.hpp"
#include "src/ctr/combination_search.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/ctr/targets_device.hpp"
#include "src/ctr/unseen_keys.hpp"
#include "src/quantize/subset_quantizer.hpp"

namespace cbg::ctr {

namespace {

using detail::download;
using detail::upload;

bool is_counter(model::ctr_type t) { return t == model::ctr_type::counter || t == model::ctr_type::feature_freq; }

struct device_column {
  model::ctr_description desc;
  std::vector<float> borders;
  device_buffer<std::uint8_t> bins;
};

// A projection's ids per learn row (ranks of the sorted distinct keys), per id its key (ascending)
// and first row, and its candidate columns. With the target types' runs (dense_ids_and_runs) and
// shorter than the complexity, also the rows in the runs' order and each id's first position there:
// the projections one condition longer are derived from them (derived_ids_and_runs).
struct device_projection {
  model::projection proj;
  std::size_t unique = 0;
  device_buffer<std::uint32_t> ids;
  device_buffer<std::uint32_t> sorted_rows;
  device_buffer<std::uint32_t> run_start;
  device_buffer<std::uint64_t> keys;
  device_buffer<std::uint32_t> first;
  device_buffer<std::int32_t> counts;       // learn rows per id
  device_buffer<std::int32_t> full_counts;  // Counter under counter_calc Full: + the eval rows per id
  unseen_keys eval_only;                    // and the eval rows' keys the learn rows lack (unseen_keys.hpp)
  std::vector<device_column> columns;
};

struct device_committed {
  std::vector<float> borders;
  device_buffer<float> eval;
};

// The GPU primitives of the feature combinations' search extension (combination_search.hpp).
class device_primitives {
 public:
  using projection_data = device_projection;
  using committed_column = device_committed;

  static std::size_t bytes_of(const device_projection& p) {
    std::size_t bytes = p.ids.size_bytes() + p.keys.size_bytes() + p.first.size_bytes() + p.counts.size_bytes() +
                        p.full_counts.size_bytes() + p.sorted_rows.size_bytes() + p.run_start.size_bytes();
    for (const device_column& c : p.columns) bytes += c.bins.size_bytes();
    return bytes;
  }

  device_primitives(prepared_data& prepared, const pool& learn, const pool* eval, const options& o,
                    const train::target_rule& rule, bool binarize, std::uint64_t seed, int max_complexity,
                    const std::vector<std::uint8_t>& nan_modes)
      : learn_(learn),
        eval_(eval),
        ctx_(*learn.ctx()),
        o_(o),
        rule_(rule),
        binarize_(binarize),
        seed_(seed),
        max_complexity_(max_complexity),
        prepared_(prepared) {
    CBG_EXPECTS(!ctx_.is_cpu(), status::no_device, "make_combinations_device needs a GPU context");
    CBG_EXPECTS(max_complexity <= detail::max_key_parts, status::unsupported,
                fmt::format("parameter 'max_ctr_complexity': {}: the GPU combines at most {} features", max_complexity,
                            detail::max_key_parts));
    CBG_EXPECTS(prepared.learn != nullptr && (eval == nullptr || prepared.eval != nullptr), status::internal,
                "feature combinations: the derived pools are missing");
    n_ = learn.num_rows();
    ne_ = eval != nullptr ? eval->num_rows() : 0;
    CBG_EXPECTS(n_ <= 0x7fffffff, status::unsupported, "categorical features: at most 2^31 - 1 learn rows");
    multiclass_ = rule.loss == train::loss_kind::multiclass || rule.loss == train::loss_kind::multiclass_one_vs_all;
    specs_ = o.combinations_ctr ? *o.combinations_ctr : default_ctrs(true);
    for (const column_view& c : prepared.learn->features()) {
      CBG_EXPECTS(c.memory != memory_kind::host, status::device,
                  "feature combinations on the GPU read device, managed or pinned memory (a column is in pageable "
                  "host memory)");
    }
    if (prepared.eval != nullptr) {
      for (const column_view& c : prepared.eval->features()) {
        CBG_EXPECTS(c.memory != memory_kind::host, status::device,
                    "feature combinations on the GPU read device, managed or pinned memory (an eval column is in "
                    "pageable host memory)");
      }
    }
    set_nan_modes(nan_modes);
    // The classes of the host extension: multiclass from the labels (read once, as the targets are).
    if (!specs_.empty() && multiclass_) ensure_targets();
  }

  device_primitives(const device_primitives&) = delete;
  device_primitives& operator=(const device_primitives&) = delete;

  [[nodiscard]] const context& ctx() const { return ctx_; }

  void set_nan_modes(const std::vector<std::uint8_t>& modes) {
    nan_is_one_ = nan_is_one_of(modes, prepared_.float_count);
  }

  void share_borders(std::shared_ptr<combination_borders> shared) { shared_ = std::move(shared); }

  // The committed column c of projection p: its table (kept in prepared_.tables) and eval values.
  device_committed commit(const device_projection& p, const device_column& c) {
    scoped_device guard(ctx_.device());
    const model::ctr_table& table = table_of(p, c.desc.base);
    device_committed cc;
    cc.borders = c.borders;
    if (eval_ != nullptr && ne_ > 0) {
      const device_buffer<std::uint64_t> keys = row_keys(p.proj, true);
      // The table's device copy when table_of has just built it (no upload), else the host copy's.
      device_buffer<std::uint64_t> hashes;
      device_buffer<std::uint32_t> indices;
      device_buffer<std::int32_t> counts;
      device_buffer<model::ctr_mean_history> means;
      model::ctr_table_view tv;
      if (built_ && built_->base == table.base) {
        tv.hashes = built_->hashes.data();
        tv.indices = built_->indices.data();
        tv.n_buckets = built_->hashes.size();
        tv.counts = reinterpret_cast<const std::int32_t*>(built_->counts.data());
      } else {
        hashes = upload(ctx_, table.bucket_hashes, "CTR buckets");
        indices = upload(ctx_, table.bucket_indices, "CTR bucket indices");
        counts = upload(ctx_, table.counts, "CTR counts");
        means = upload(ctx_, table.means, "CTR table means");
        tv.hashes = hashes.data();
        tv.indices = indices.data();
        tv.n_buckets = hashes.size();
        tv.counts = counts.data();
        tv.means = means.data();
      }
      tv.counter_denominator = table.counter_denominator;
      tv.target_classes_count = table.target_classes_count;
      cc.eval = device_buffer<float>(static_cast<std::size_t>(ne_), ctx_.stream(), ctx_.resource());
      detail::ctr_values_of_keys(ctx_, keys.data(), ne_, tv, ctr_calc_of(c.desc), cc.eval.data());
      // The temporaries above are freed in stream order after the kernel.
    }
    return cc;
  }

  [[nodiscard]] const float* eval_values(const device_committed& c) const {
    return c.eval.size() > 0 ? c.eval.data() : nullptr;
  }

  // A level's new projections: each one's ids and CTR values, then their columns quantized together
  // in batches of up to max_batch_columns (quantize_batch), their borders read back once.
  // cached(projection): a projection made before (or nullptr), which new ones one condition longer
  // are derived from.
  std::vector<std::unique_ptr<device_projection>> make_projections(
      const std::vector<model::projection>& projs,
      const std::function<const device_projection*(const model::projection&)>& cached) {
    scoped_device guard(ctx_.device());
    return make(projs, cached);
  }

 private:
  using cache_lookup = std::function<const device_projection*(const model::projection&)>;

  std::vector<std::unique_ptr<device_projection>> make(const std::vector<model::projection>& projs,
                                                       const cache_lookup& cached) {
    std::vector<std::unique_ptr<device_projection>> out;
    // Left on the device and read back once at the end (level_readback): per projection its
    // distinct count and whether its derived ids differ from its keys' (then it is made from its
    // keys), and the borders of the columns quantized on the border subset.
    const std::size_t slots = std::max<std::size_t>(projs.size(), 1);
    level_results level;
    level.ids = device_buffer<std::uint32_t>(2 * slots, ctx_.stream(), ctx_.resource());
    CBG_CUDA_TRY(cudaMemsetAsync(level.ids.data(), 0, level.ids.size_bytes(), ctx_.stream()));
    std::uint32_t* uniques = level.ids.data();
    int* mismatches = reinterpret_cast<int*>(level.ids.data() + slots);
    std::vector<std::size_t> deferred;
    bool any_derived = false;
    pending batch;
    for (std::size_t k = 0; k < projs.size(); ++k) {
      bool later = false, derived = false;
      out.push_back(projection_of(projs[k], cached, batch, uniques + k, mismatches + k, later, derived));
      if (later) deferred.push_back(k);
      any_derived = any_derived || derived;
      if (batch.values.size() >= max_batch_columns) quantize_batch(batch, level);
    }
    quantize_batch(batch, level);
    if (!deferred.empty() || any_derived || !level.batches.empty()) {
      const std::vector<std::uint32_t> back = level_readback(level);
      for (const std::size_t k : deferred) finish_ids(*out[k], back[k]);
      std::size_t at = level.ids.size();
      for (const subset_batch& b : level.batches) {
        quantize::subset_quantizer::check(back.data() + at, b.layout);
        for (std::size_t k = 0; k < b.columns.size(); ++k) {
          b.columns[k]->borders = quantize::subset_quantizer::borders_of(back.data() + at, b.layout, k);
        }
        at += b.layout.words();
      }
      std::vector<int> m(projs.size());
      std::memcpy(m.data(), back.data() + slots, projs.size() * sizeof(int));
      std::vector<model::projection> again;
      for (std::size_t k = 0; k < projs.size(); ++k) {
        if (m[k] != 0) again.push_back(projs[k]);
      }
      if (!again.empty()) {
        std::vector<std::unique_ptr<device_projection>> made = make(again, nullptr);
        for (std::size_t k = 0, a = 0; k < projs.size(); ++k) {
          if (m[k] != 0) out[k] = std::move(made[a++]);
        }
      }
    }
    return out;
  }

  // What a projection's ids can be derived from: a projection with runs (cached, or a categorical
  // feature's alone) and the one condition that the projection has beyond it.
  struct derivation {
    const device_projection* parent = nullptr;
    detail::bit_plan bit;
  };

  std::optional<derivation> derivation_of(const model::projection& proj, const cache_lookup& cached) {
    if (!cached) return std::nullopt;
    const auto parent = [&](const model::projection& q) -> const device_projection* {
      const device_projection* p = nullptr;
      if (q.cat_features.size() == 1 && q.float_splits.empty() && q.one_hot_splits.empty()) {
        p = &cat_base(q.cat_features.front());
      } else {
        p = cached(q);
      }
      return p != nullptr && p->sorted_rows.size() > 0 && p->unique > 0 ? p : nullptr;
    };
    // The first condition of the splits `list` (a member of model::projection) whose projection
    // without it has runs: the derivation from those, with the condition's bit (bit_of).
    const auto without_one = [&](auto list, auto bit_of) -> std::optional<derivation> {
      const auto& splits = proj.*list;
      for (std::size_t i = 0; i < splits.size(); ++i) {
        model::projection q = proj;
        (q.*list).erase((q.*list).begin() + static_cast<std::ptrdiff_t>(i));
        if (const device_projection* p = parent(q)) return derivation{p, bit_of(splits[i])};
      }
      return std::nullopt;
    };
    if (auto d = without_one(&model::projection::float_splits, [&](const model::float_split& s) {
          detail::bit_plan b;
          b.fcol = prepared_.learn->features()[static_cast<std::size_t>(s.float_index)];
          b.fsplit = train::value_split{s.float_index, s.border, nan_is_one_[static_cast<std::size_t>(s.float_index)]};
          return b;
        })) {
      return d;
    }
    return without_one(&model::projection::one_hot_splits, [&](const model::one_hot_split& s) {
      detail::bit_plan b;
      b.oh = hashes(s.cat_index, false).data();
      b.ohv = s.value;
      return b;
    });
  }

  // A categorical feature's runs alone (its ids, rows in the runs' order, run starts; no columns),
  // made once: the parent of its combinations with one condition.
  const device_projection& cat_base(std::int32_t cat) {
    auto it = cat_bases_.find(cat);
    if (it != cat_bases_.end()) return *it->second;
    const cudaStream_t stream = ctx_.stream();
    const auto& res = ctx_.resource();
    const auto un = static_cast<std::size_t>(n_);
    auto p = std::make_unique<device_projection>();
    p->proj.cat_features = {cat};
    p->ids = device_buffer<std::uint32_t>(un, stream, res);
    p->run_start = device_buffer<std::uint32_t>(un, stream, res);
    device_buffer<std::uint64_t> ukeys(un, stream, res);
    device_buffer<std::uint32_t> first(un, stream, res), unique(1, stream, res);
    detail::dense_ids_and_runs(ctx_, ts_, key_plan_of(p->proj, false), un, n_, p->ids.data(), ukeys.data(),
                               first.data(), p->run_start.data(), runs_, scratch_, unique.data());
    p->sorted_rows = std::move(runs_.sorted_rows);  // the next projection's runs get a new buffer
    p->unique = download(ctx_, unique.data(), 1, "combination distinct count")[0];
    p->run_start = first_of(p->run_start, p->unique);
    return *cat_bases_.emplace(cat, std::move(p)).first->second;
  }

  // At most how many distinct keys `proj` has over the learn rows (a key is a function of the
  // projection's parts): the product of its categorical features' distinct values (their runs'
  // counts: a feature's key is one-to-one with its hash) and 2 per condition, at most the rows.
  std::size_t distinct_bound(const model::projection& proj) {
    const auto cap = static_cast<std::size_t>(std::max<std::int64_t>(n_, 1));
    const auto times = [cap](std::size_t a, std::size_t b) { return a > cap / b ? cap : std::min(cap, a * b); };
    std::size_t bound = 1;
    for (std::size_t k = 0; k < proj.float_splits.size() + proj.one_hot_splits.size(); ++k) bound = times(bound, 2);
    for (const std::int32_t c : proj.cat_features) bound = times(bound, std::max<std::size_t>(cat_base(c).unique, 1));
    return bound;
  }

  const device_buffer<std::uint32_t>& hashes(std::int32_t cat, bool eval) {
    auto& cache = eval ? eval_hashes_ : hashes_;
    auto it = cache.find(cat);
    if (it == cache.end()) {
      const std::int32_t flat = prepared_.cat_flat[static_cast<std::size_t>(cat)];
      it = cache.emplace(cat, detail::column_hashes_device(ctx_, eval ? *eval_ : learn_, flat)).first;
    }
    return it->second;
  }

  // Every row's projection key (learn, or eval) on the device.
  device_buffer<std::uint64_t> row_keys(const model::projection& proj, bool eval) {
    const std::int64_t rows = eval ? ne_ : n_;
    const detail::key_plan plan = key_plan_of(proj, eval);
    device_buffer<std::uint64_t> keys(static_cast<std::size_t>(rows), ctx_.stream(), ctx_.resource());
    detail::projection_keys(ctx_, plan, rows, keys.data());
    return keys;
  }

  // What the kernels read of a projection's key (learn, or eval rows).
  detail::key_plan key_plan_of(const model::projection& proj, bool eval) {
    const pool& src = eval ? *prepared_.eval : *prepared_.learn;
    CBG_EXPECTS(projection_length(proj) <= static_cast<std::size_t>(detail::max_key_parts), status::internal,
                "feature combinations: a projection is too long for the GPU");
    detail::key_plan plan;
    for (std::int32_t c : proj.cat_features) plan.cat[plan.cats++] = hashes(c, eval).data();
    for (const model::float_split& s : proj.float_splits) {
      plan.fcol[plan.floats] = src.features()[static_cast<std::size_t>(s.float_index)];
      plan.fsplit[plan.floats] =
          train::value_split{s.float_index, s.border, nan_is_one_[static_cast<std::size_t>(s.float_index)]};
      ++plan.floats;
    }
    for (const model::one_hot_split& s : proj.one_hot_splits) {
      plan.oh[plan.one_hots] = hashes(s.cat_index, eval).data();
      plan.ohv[plan.one_hots] = s.value;
      ++plan.one_hots;
    }
    return plan;
  }

  void ensure_targets() {
    detail::ensure_targets(learn_, rule_, binarize_, permutation_of(o_, seed_, n_),
                           specs_.empty() ? quantize::border_type::min_entropy : specs_.front().target_border_type,
                           specs_.empty() ? 1 : specs_.front().target_border_count, ts_);
  }

  // The table of `base` over all learn rows, with the keys in order of first appearance (the host
  // extension's ids), built once and kept in prepared_.tables. The order, the buckets and every per-id
  // value are made on the device; the host gets them (category-sized) in the model's layout.
  const model::ctr_table& table_of(const device_projection& p, const model::ctr_base& base) {
    for (const model::ctr_table& t : prepared_.tables) {
      if (t.base == base) return t;
    }
    const stage_range range(ctx_, "combinations.table");
    const cudaStream_t stream = ctx_.stream();
    const auto& res = ctx_.resource();
    const std::size_t unique = p.unique;
    const std::size_t room = std::max<std::size_t>(unique, 1);
    device_buffer<std::uint32_t> by_first(room, stream, res);  // rank of first appearance -> sorted id
    detail::ids_by_first_row(ctx_, p.first.data(), unique, n_, by_first.data());
    // The device copy kept for the commit that builds the table (the counts: the count types').
    built_.reset();
    device_table kept;
    kept.base = base;
    // Per-id 32-bit values (width per id) in order of first appearance; `keep`: into kept.counts.
    const auto in_order = [&](const void* per_id, int width, const char* what, bool keep = false) {
      device_buffer<std::uint32_t> out(room * static_cast<std::size_t>(width), stream, res);
      detail::gather_rows(ctx_, by_first.data(), unique, width, static_cast<const std::uint32_t*>(per_id), out.data());
      std::vector<std::uint32_t> host = download(ctx_, out.data(), unique * static_cast<std::size_t>(width), what);
      if (keep) kept.counts = std::move(out);
      return host;
    };
    model::ctr_table t;
    t.base = base;
    // Counter under counter_calc Full: the eval rows' new keys after the learn ones.
    const std::vector<std::uint64_t>& added = counts_eval(base.type) ? p.eval_only.keys : no_keys_;
    const std::size_t keys = unique + added.size();
    {  // model::build_ctr_buckets over the keys in that order, on the device
      device_buffer<std::uint64_t> ordered(std::max<std::size_t>(keys, 1), stream, res);
      detail::gather_rows(ctx_, by_first.data(), unique, 1, p.keys.data(), ordered.data());
      if (!added.empty()) {
        const device_buffer<std::uint64_t> more = upload(ctx_, added, "CTR table keys");
        CBG_CUDA_TRY(cudaMemcpyAsync(ordered.data() + unique, more.data(), added.size() * sizeof(std::uint64_t),
                                     cudaMemcpyDeviceToDevice, stream));
      }
      std::size_t slots = 2;
      while (slots < 2 * keys) slots *= 2;
      kept.hashes = device_buffer<std::uint64_t>(slots, stream, res);
      kept.indices = device_buffer<std::uint32_t>(slots, stream, res);
      device_buffer<int> bad(1, stream, res);
      static_assert(model::ctr_empty_hash == ~std::uint64_t{0});
      detail::ctr_buckets(ctx_, ordered.data(), keys, slots, kept.hashes.data(), kept.indices.data(), bad.data());
      CBG_EXPECTS(download(ctx_, bad.data(), 1, "CTR table check")[0] == 0, status::bad_data,
                  "a CTR table key equals the empty-bucket marker");
      t.bucket_hashes = download(ctx_, kept.hashes.data(), slots, "CTR table buckets");
      t.bucket_indices = download(ctx_, kept.indices.data(), slots, "CTR table bucket indices");
    }
    const auto C = static_cast<std::size_t>(ts_.classes);
    switch (base.type) {
      case model::ctr_type::borders:
      case model::ctr_type::buckets: {
        t.target_classes_count = ts_.classes;
        device_buffer<std::int32_t> counts(room * C, stream, res);
        detail::class_counts(ctx_, p.ids.data(), ts_.cls.data(), n_, ts_.classes, unique, counts.data());
        const std::vector<std::uint32_t> ordered = in_order(counts.data(), ts_.classes, "CTR table counts", true);
        t.counts.resize(unique * C);
        for (std::size_t i = 0; i < t.counts.size(); ++i) t.counts[i] = static_cast<std::int32_t>(ordered[i]);
        break;
      }
      case model::ctr_type::binarized_target_mean_value: {
        device_buffer<std::uint32_t> sums(room, stream, res), rows(room, stream, res);
        detail::class_sums(ctx_, p.ids.data(), ts_.cls.data(), n_, unique, sums.data(), rows.data());
        const std::vector<std::uint32_t> hs = in_order(sums.data(), 1, "CTR table sums");
        const std::vector<std::uint32_t> hr = in_order(rows.data(), 1, "CTR table counts");
        t.means.resize(unique);
        for (std::size_t r = 0; r < unique; ++r) {
          t.means[r].sum = mean_sum(hs[r], ts_.classes);
          t.means[r].count = static_cast<std::int32_t>(hr[r]);
        }
        break;
      }
      case model::ctr_type::float_target_mean_value: {
        device_buffer<unsigned long long> sums(room, stream, res);
        detail::fixed_sums(ctx_, p.ids.data(), ts_.targets.data(), n_, ts_.fixed_scale, unique, sums.data());
        device_buffer<std::int32_t> rows(room, stream, res);
        detail::id_counts(ctx_, p.ids.data(), n_, unique, rows.data());
        device_buffer<std::uint64_t> ordered(room, stream, res);
        static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
        detail::gather_rows(ctx_, by_first.data(), unique, 1, reinterpret_cast<const std::uint64_t*>(sums.data()),
                            ordered.data());
        const std::vector<std::uint64_t> hs = download(ctx_, ordered.data(), unique, "CTR table sums");
        const std::vector<std::uint32_t> hr = in_order(rows.data(), 1, "CTR table counts");
        t.means.resize(unique);
        for (std::size_t r = 0; r < unique; ++r) {
          t.means[r].sum = from_fixed(static_cast<std::int64_t>(hs[r]), ts_.fixed_scale);
          t.means[r].count = static_cast<std::int32_t>(hr[r]);
        }
        break;
      }
      default: {  // counter types: the counts of the candidate columns
        const std::vector<std::uint32_t> ordered = in_order(counts_of(p, base.type), 1, "CTR table counts", true);
        t.counts.resize(unique);
        for (std::size_t r = 0; r < unique; ++r) t.counts[r] = static_cast<std::int32_t>(ordered[r]);
        if (!added.empty()) {
          t.counts.insert(t.counts.end(), p.eval_only.counts.begin(), p.eval_only.counts.end());
          kept.counts = upload(ctx_, std::vector<std::uint32_t>(t.counts.begin(), t.counts.end()), "CTR counts");
        }
        t.counter_denominator = denominator(p, base.type);
        break;
      }
    }
    if (kept.counts.size() > 0) built_.emplace(std::move(kept));
    prepared_.tables.push_back(std::move(t));
    return prepared_.tables.back();
  }

  bool counts_eval(model::ctr_type t) const {
    return t == model::ctr_type::counter && o_.counter_calc_method == counter_calc::full && eval_ != nullptr;
  }

  // A counter type's counts per id: the learn rows', plus the eval rows' for Counter under
  // counter_calc Full (as the host's tables).
  const std::int32_t* counts_of(const device_projection& p, model::ctr_type t) const {
    return counts_eval(t) ? p.full_counts.data() : p.counts.data();
  }

  // The counter denominator as the host's table: Counter the largest count, FeatureFreq the learn
  // rows.
  std::int32_t denominator(const device_projection& p, model::ctr_type t) {
    if (t != model::ctr_type::counter) return static_cast<std::int32_t>(n_);
    std::int32_t largest = p.unique > 0 ? detail::max_count(ctx_, counts_of(p, t), p.unique) : 0;
    if (counts_eval(t)) {
      for (std::int32_t c : p.eval_only.counts) largest = std::max(largest, c);
    }
    return largest;
  }

  // A pool over candidate columns' values (device memory, borrowed).
  pool pool_of(const std::vector<device_buffer<float>>& values) const {
    pool_parts parts;
    for (const device_buffer<float>& v : values) {
      parts.features.push_back(float_column(v.data(), n_, memory_kind::device, ctx_.device()));
    }
    return pool::borrow(learn_.ctx(), std::move(parts));
  }

  // Quantizes candidate columns (of one or more projections) as the host does each (the CTR's border count and
  // type, no NaNs), in one quantize_device call: one pool of the columns, each with its CTR's border
  // count and type (overrides). The border subset is the same rows for every feature, so each column
  // gets the borders it would get alone.
  void quantize_columns(const std::vector<device_buffer<float>>& values, const std::vector<std::size_t>& spec,
                        const std::vector<device_column*>& out) {
    if (values.empty()) return;
    const pool all = pool_of(values);
    quantize::options qo;
    qo.border_count = specs_[spec.front()].ctr_border_count;
    qo.type = specs_[spec.front()].ctr_border_type;
    qo.mode = quantize::nan_mode::forbidden;
    for (std::size_t k = 0; k < values.size(); ++k) {
      const ctr_spec& s = specs_[spec[k]];
      qo.overrides.push_back(quantize::feature_override{static_cast<std::int64_t>(k), s.ctr_border_count, -1,
                                                        static_cast<int>(s.ctr_border_type)});
    }
    const quantize::device_quantized q = quantize::quantize_device(all, qo);
    const std::size_t K = values.size();
    const std::vector<std::int32_t> counts = download(ctx_, q.border_count.data(), K, "combination border counts");
    // The border slots in pieces of at most 32 columns (32 KB: under strict mode's metadata limit).
    constexpr std::size_t piece = 32;
    const auto stride = static_cast<std::size_t>(quantize::border_stride);
    std::vector<float> borders;
    for (std::size_t k0 = 0; k0 < K; k0 += piece) {
      const std::size_t kn = std::min(piece, K - k0);
      const std::vector<float> part =
          download(ctx_, q.borders.data() + k0 * stride, kn * stride, "combination borders");
      borders.insert(borders.end(), part.begin(), part.end());
    }
    for (std::size_t k = 0; k < K; ++k) {
      const auto first = borders.begin() + static_cast<std::ptrdiff_t>(k * stride);
      out[k]->borders.assign(first, first + std::max(0, counts[k]));
      out[k]->bins = device_buffer<std::uint8_t>(static_cast<std::size_t>(n_), ctx_.stream(), ctx_.resource());
      detail::feature_bins(ctx_, q.index.data(), q.padded_rows, static_cast<std::int64_t>(k), n_, out[k]->bins.data());
    }
    CBG_CUDA_TRY(cudaStreamSynchronize(ctx_.stream()));  // q and the pool's views go out of scope
  }

  // Candidate columns waiting for their quantization: values, spec and column of each.
  struct pending {
    std::vector<device_buffer<float>> values;
    std::vector<std::size_t> specs;
    std::vector<device_column*> columns;
  };
  // Columns quantized in one call: 64 columns of 2M rows hold 512 MB of values.
  static constexpr std::size_t max_batch_columns = 64;

  // Columns quantized on the border subset: their borders on the device (results), as `layout`.
  struct subset_batch {
    quantize::subset_quantizer::layout layout;
    device_buffer<std::uint32_t> results;
    std::vector<device_column*> columns;
  };
  // What a level leaves on the device for its one read-back: per projection its distinct count,
  // then per projection its id check (ids), and the subset batches' borders.
  struct level_results {
    device_buffer<std::uint32_t> ids;
    std::vector<subset_batch> batches;
  };

  // The level's results in one download (gathered on the device first when there are batches).
  std::vector<std::uint32_t> level_readback(const level_results& level) {
    if (level.batches.empty()) return download(ctx_, level.ids.data(), level.ids.size(), "combination level results");
    std::size_t words = level.ids.size();
    for (const subset_batch& b : level.batches) words += b.layout.words();
    device_buffer<std::uint32_t> all(words, ctx_.stream(), ctx_.resource());
    std::size_t at = 0;
    const auto append = [&](const device_buffer<std::uint32_t>& part) {
      CBG_CUDA_TRY(
          cudaMemcpyAsync(all.data() + at, part.data(), part.size_bytes(), cudaMemcpyDeviceToDevice, ctx_.stream()));
      at += part.size();
    };
    append(level.ids);
    for (const subset_batch& b : level.batches) append(b.results);
    return download(ctx_, all.data(), words, "combination level results");
  }

  // The border subset, drawn once for every level (made on first use).
  const quantize::subset_quantizer& quantizer() {
    if (!subset_quantizer_) subset_quantizer_.emplace(ctx_, n_);
    return *subset_quantizer_;
  }

  // Quantizes the batch's columns as the host does each (the CTR's border count and type, no
  // NaNs): those of border types that the subset quantizer takes there (their borders come with
  // the level's read-back), the others through quantize_device. The values are freed in stream
  // order, after the kernels that read them.
  void quantize_batch(pending& b, level_results& level) {
    const stage_range range(ctx_, "combinations.quantize");
    pending general, known;
    subset_batch sub;
    std::vector<quantize::subset_quantizer::column> cols;
    for (std::size_t k = 0; k < b.values.size(); ++k) {
      const ctr_spec& s = specs_[b.specs[k]];
      if (shared_ && shared_->count(b.columns[k]->desc) > 0) {  // binned with its shared borders
        known.values.push_back(std::move(b.values[k]));
        known.columns.push_back(b.columns[k]);
        continue;
      }
      if (!quantize::subset_quantizer::handles(s.ctr_border_type)) {
        general.values.push_back(std::move(b.values[k]));
        general.specs.push_back(b.specs[k]);
        general.columns.push_back(b.columns[k]);
        continue;
      }
      device_column& c = *b.columns[k];
      c.bins = device_buffer<std::uint8_t>(static_cast<std::size_t>(n_), ctx_.stream(), ctx_.resource());
      cols.push_back({b.values[k].data(), c.bins.data(), s.ctr_border_count, s.ctr_border_type});
      sub.columns.push_back(&c);
    }
    if (!cols.empty()) {
      sub.layout = quantize::subset_quantizer::layout_of(cols);
      sub.results = device_buffer<std::uint32_t>(sub.layout.words(), ctx_.stream(), ctx_.resource());
      quantizer().enqueue(cols, sub.results.data());
      level.batches.push_back(std::move(sub));
    }
    quantize_columns(general.values, general.specs, general.columns);
    bin_with_shared_borders(known.values, known.columns);
    b = pending{};
  }

  // Bins columns with their shared borders (binarize_device: the bins binarize_host gives).
  void bin_with_shared_borders(const std::vector<device_buffer<float>>& values,
                               const std::vector<device_column*>& out) {
    if (values.empty()) return;
    const pool all = pool_of(values);
    const std::size_t K = values.size();
    const auto stride = static_cast<std::size_t>(quantize::border_stride);
    std::vector<float> borders(K * stride, 0.f);
    std::vector<std::int32_t> counts(K, 0);
    const std::vector<std::uint8_t> modes(K, static_cast<std::uint8_t>(quantize::nan_mode::forbidden));
    for (std::size_t k = 0; k < K; ++k) {
      out[k]->borders = shared_->at(out[k]->desc);
      std::copy(out[k]->borders.begin(), out[k]->borders.end(),
                borders.begin() + static_cast<std::ptrdiff_t>(k * stride));
      counts[k] = static_cast<std::int32_t>(out[k]->borders.size());
    }
    quantize::device_quantized like;
    like.rows = n_;
    like.features = static_cast<std::int64_t>(K);
    like.device = ctx_.device();
    like.borders = upload(ctx_, borders, "shared combination borders");
    like.border_count = upload(ctx_, counts, "shared combination border counts");
    like.mode = upload(ctx_, modes, "shared combination nan modes");
    const quantize::device_quantized q = quantize::binarize_device(all, like);
    for (std::size_t k = 0; k < K; ++k) {
      out[k]->bins = device_buffer<std::uint8_t>(static_cast<std::size_t>(n_), ctx_.stream(), ctx_.resource());
      detail::feature_bins(ctx_, q.index.data(), q.padded_rows, static_cast<std::int64_t>(k), n_, out[k]->bins.data());
    }
    CBG_CUDA_TRY(cudaStreamSynchronize(ctx_.stream()));  // q, `like` and the pool's views go out of scope
  }

  template <class T>
  device_buffer<T> first_of(const device_buffer<T>& b, std::size_t n) {
    device_buffer<T> out(n, ctx_.stream(), ctx_.resource());
    if (n > 0) {
      CBG_CUDA_TRY(cudaMemcpyAsync(out.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToDevice, ctx_.stream()));
    }
    return out;
  }

  // A projection whose distinct count was left on the device: its per-id buffers (rows-sized until
  // now) cut to it.
  void finish_ids(device_projection& p, std::uint32_t unique) {
    p.unique = unique;
    p.keys = first_of(p.keys, unique);
    p.first = first_of(p.first, unique);
    if (p.counts.size() > 0) p.counts = first_of(p.counts, std::max<std::size_t>(unique, 1));
    if (p.run_start.size() > 0) p.run_start = first_of(p.run_start, unique);
  }

  // The ids and candidate columns of a projection; the columns' values go to `batch` (their borders
  // and bins come with quantize_batch). When no column needs the distinct count now (the target types
  // and FeatureFreq), it is left in *unique_slot (device) and `deferred` is set: finish_ids then.
  // With the target types' runs, the ids come from a cached projection one condition shorter when
  // there is one (`derived` set; *mismatch_slot becomes 1 when they are not the keys' ids).
  std::unique_ptr<device_projection> projection_of(const model::projection& proj, const cache_lookup& cached,
                                                   pending& batch, std::uint32_t* unique_slot, int* mismatch_slot,
                                                   bool& deferred, bool& derived) {
    const cudaStream_t stream = ctx_.stream();
    const auto& res = ctx_.resource();
    const auto un = static_cast<std::size_t>(n_);
    auto p = std::make_unique<device_projection>();
    p->proj = proj;
    p->ids = device_buffer<std::uint32_t>(un, stream, res);
    const std::vector<combination_feature> features = projection_features(proj, specs_, ts_.classes);
    bool any_counter = false, any_target = false;
    for (const combination_feature& f : features) (is_counter(f.desc.base.type) ? any_counter : any_target) = true;
    if (any_target) ensure_targets();
    // The target types' runs (ordered statistics) come with the ids (dense_ids_and_runs: no sort of
    // the 64-bit keys).
    // Counter needs the distinct count now (its denominator, counter_calc Full's eval counts), and
    // counter_calc Full's eval counts need the ids of dense_ids (ranks of the sorted keys).
    bool now = !any_target, sorted_ids = false;
    for (const combination_feature& f : features) {
      now = now || f.desc.base.type == model::ctr_type::counter;
      sorted_ids = sorted_ids || (is_counter(f.desc.base.type) && counts_eval(f.desc.base.type));
    }
    deferred = !now;
    const bool hashed_ids = any_target && !sorted_ids;
    bool keep_runs = false;
    detail::category_runs own_runs;  // the runs of dense_ids' ids (ensure_runs)
    detail::category_runs& runs = hashed_ids ? runs_ : own_runs;
    {
      const stage_range range(ctx_, "combinations.keys");
      device_buffer<std::uint64_t> ukeys(un, stream, res);
      device_buffer<std::uint32_t> first(un, stream, res);
      if (hashed_ids) {
        p->run_start = device_buffer<std::uint32_t>(un, stream, res);
        const std::optional<derivation> from = derivation_of(proj, cached);
        derived = from.has_value();
        if (derived) {
          const device_projection& q = *from->parent;
          const detail::parent_runs parent{q.sorted_rows.data(), q.ids.data(), q.run_start.data(),
                                           static_cast<std::uint32_t>(q.unique)};
          detail::derived_ids_and_runs(ctx_, parent, from->bit, key_plan_of(proj, false), n_, p->ids.data(),
                                       ukeys.data(), first.data(), p->run_start.data(), runs, scratch_, unique_slot,
                                       mismatch_slot);
        } else {
          detail::dense_ids_and_runs(ctx_, ts_, key_plan_of(proj, false), distinct_bound(proj), n_, p->ids.data(),
                                     ukeys.data(), first.data(), p->run_start.data(), runs, scratch_, unique_slot);
        }
        // Only a projection shorter than the complexity can be a parent (its rows in the runs' order
        // are taken from the runs once its columns are made): the others drop their runs.
        if (projection_length(proj) < static_cast<std::size_t>(max_complexity_)) {
          keep_runs = true;
        } else {
          p->run_start = device_buffer<std::uint32_t>();  // freed in stream order, after its kernels
        }
        if (now) p->unique = download(ctx_, unique_slot, 1, "combination distinct count")[0];
      } else {
        const device_buffer<std::uint64_t> keys = row_keys(proj, false);
        p->unique = detail::dense_ids(ctx_, keys.data(), n_, p->ids.data(), ukeys.data(), first.data());
      }
      if (now) {
        p->keys = first_of(ukeys, p->unique);
        p->first = first_of(first, p->unique);
        if (p->run_start.size() > 0) p->run_start = first_of(p->run_start, p->unique);
      } else {
        p->keys = std::move(ukeys);
        p->first = std::move(first);
      }
    }
    const std::size_t unique = p->unique;
    // The candidate columns' values: the counter types' from the counts per id, the target types' in
    // one scan over the runs per target feature (all its priors at once).
    const stage_range values_range(ctx_, "combinations.ctr_values");
    // Counter types: counts per id over the learn rows (and the eval rows under Full); rows-sized
    // while the distinct count is on the device. With the runs made, their lengths (no atomics).
    if (any_counter) {
      const std::size_t room = now ? std::max<std::size_t>(unique, 1) : un;
      p->counts = device_buffer<std::int32_t>(room, stream, res);
      if (hashed_ids && n_ > 0) {
        detail::run_lengths(ctx_, runs, n_, p->counts.data());
      } else {
        detail::id_counts(ctx_, p->ids.data(), n_, now ? unique : un, p->counts.data());
      }
    }
    std::map<model::ctr_type, std::int32_t> denominators;
    std::vector<device_buffer<float>> values(features.size());
    std::vector<detail::target_column> targets;
    for (std::size_t i = 0; i < features.size(); ++i) {
      const model::ctr_description& d = features[i].desc;
      values[i] = device_buffer<float>(un, stream, res);
      if (!is_counter(d.base.type)) {
        targets.push_back(
            detail::target_column{d.base.type, d.target_border_idx, d.prior_num, d.prior_denom, values[i].data()});
        continue;
      }
      if (counts_eval(d.base.type) && p->full_counts.size() == 0) {
        p->full_counts = device_buffer<std::int32_t>(std::max<std::size_t>(unique, 1), stream, res);
        if (unique > 0) {
          CBG_CUDA_TRY(cudaMemcpyAsync(p->full_counts.data(), p->counts.data(), unique * sizeof(std::int32_t),
                                       cudaMemcpyDeviceToDevice, stream));
        }
        if (ne_ > 0) {
          const device_buffer<std::uint64_t> eval_keys = row_keys(proj, true);
          device_buffer<std::uint64_t> marked(static_cast<std::size_t>(ne_), stream, res);
          detail::count_known_keys(ctx_, eval_keys.data(), ne_, p->keys.data(), unique, p->full_counts.data(),
                                   marked.data());
          const detail::unseen_key_counts u = detail::unseen_keys(ctx_, marked.data(), ne_);
          p->eval_only = unseen_keys_in_order(u.keys, u.first_rows, u.counts);
        }
      }
      auto den = denominators.find(d.base.type);
      if (den == denominators.end()) den = denominators.emplace(d.base.type, denominator(*p, d.base.type)).first;
      detail::counter_values(ctx_, p->ids.data(), counts_of(*p, d.base.type), static_cast<std::uint32_t>(den->second),
                             n_, d.prior_num, d.prior_denom, values[i].data());
    }
    if (!targets.empty()) {
      detail::ensure_runs(ctx_, ts_, p->ids.data(), n_, unique, runs);
      detail::ordered_target_columns(ctx_, ts_, runs, n_, targets);
    }
    for (std::size_t i = 0; i < features.size(); ++i) {
      device_column c;
      c.desc = features[i].desc;
      batch.values.push_back(std::move(values[i]));
      batch.specs.push_back(features[i].spec);
      p->columns.push_back(std::move(c));
    }
    for (device_column& c : p->columns) batch.columns.push_back(&c);
    if (keep_runs) p->sorted_rows = std::move(runs.sorted_rows);  // the next projection's runs get a new buffer
    return p;
  }

  const pool& learn_;
  const pool* eval_;
  const context& ctx_;
  options o_;
  train::target_rule rule_;
  bool binarize_ = false;
  std::uint64_t seed_ = 0;
  int max_complexity_ = 0;
  prepared_data& prepared_;
  std::int64_t n_ = 0, ne_ = 0;
  bool multiclass_ = false;
  std::vector<ctr_spec> specs_;
  std::vector<std::uint8_t> nan_is_one_;  // per float feature: NaN goes to the "1" side
  std::map<std::int32_t, device_buffer<std::uint32_t>> hashes_, eval_hashes_;
  std::map<std::int32_t, std::unique_ptr<device_projection>> cat_bases_;  // cat_base
  // dense_ids_and_runs' scratch and runs, reused by every projection (one stream orders them).
  detail::ids_scratch scratch_;
  detail::category_runs runs_;
  detail::target_state ts_;
  const std::vector<std::uint64_t> no_keys_;
  std::optional<quantize::subset_quantizer> subset_quantizer_;
  // The device copy of the table built last (table_of), for the commit that built it: the count
  // types' (a mean type's means are made on the host).
  struct device_table {
    model::ctr_base base;
    device_buffer<std::uint64_t> hashes;
    device_buffer<std::uint32_t> indices;
    device_buffer<std::uint32_t> counts;  // the host table's counts, bit for bit
  };
  std::optional<device_table> built_;
  std::shared_ptr<combination_borders> shared_;  // several permutations: the committed columns' borders
};

}  // namespace

std::unique_ptr<train::search_extension> make_combinations_device(const pool& learn, const pool* eval, const options& o,
                                                                  const train::target_rule& rule, bool binarize,
                                                                  std::uint64_t seed, int max_complexity,
                                                                  const std::vector<std::uint8_t>& nan_modes,
                                                                  prepared_data& prepared,
                                                                  std::shared_ptr<combination_borders> shared) {
  scoped_device guard(learn.ctx()->device());
  auto ext =
      std::make_unique<combination_search<device_primitives>>(prepared, max_complexity, o.ctr_leaf_count_limit, learn,
                                                              eval, o, rule, binarize, seed, max_complexity, nan_modes);
  if (shared) ext->share_borders(std::move(shared));
  return ext;
}

std::unique_ptr<train::search_extension> combinations_for_training_device(const pool& learn, const pool* eval,
                                                                          const train::train_params& p,
                                                                          prepared_data& prepared,
                                                                          std::shared_ptr<combination_borders> shared) {
  const int complexity = max_ctr_complexity_of(p.ctr, p.iterations);
  if (complexity <= 1 || combination_cats(prepared).empty()) return nullptr;
  train::target_rule rule;
  rule.loss = p.loss.kind;
  rule.has_border = p.target_border.has_value();
  rule.border = p.target_border.value_or(0.5);
  return make_combinations_device(learn, eval, p.ctr, rule, p.loss.kind != train::loss_kind::logloss, p.random_seed,
                                  complexity, {}, prepared, std::move(shared));
}

}  // namespace cbg::ctr
