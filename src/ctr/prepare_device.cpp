// SPDX-License-Identifier: Apache-2.0
// The GPU's primitives of categorical-feature preparation (the flow of prepare.hpp), over the
// launchers of kernels/ctr/ctr_device.hpp, equal to the host reference (prepare_host.cpp) bit for
// bit: the same per-element math (ctr_math.hpp, apply_math.hpp), the same perfect-hash ids
// (categorical/perfect_hash.hpp), the same permutation (sorted by (key, row): a stable radix sort
// of the keys over ascending rows). The ordered statistics and the table sums are shared with the
// feature combinations. Copies back only the distinct counts, the one-hot values and the CTR
// tables (category-sized, for the model), and one target border of a regression target.
#include <algorithm>
#include <string>

#include "kernels/ctr/ctr_device.hpp"
#include "kernels/ctr/ordered_columns.hpp"

#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/runtime/device.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/ctr/targets_device.hpp"
#include "src/ctr/prepare.hpp"

namespace cbg::ctr {

namespace {

using detail::download;
using detail::upload;

class device_primitives {
 public:
  using hashes = device_buffer<std::uint32_t>;
  using perfect = categorical::device_perfect_hash;
  using column = device_buffer<float>;
  struct feature_data {
    device_buffer<std::uint64_t> hashes;  // the table buckets (every table of the feature has them)
    device_buffer<std::uint32_t> indices;
    // The permutation's positions sorted stably by category (runs in permutation order): made when
    // a target CTR needs them.
    detail::category_runs runs;
  };
  struct table_data {
    device_buffer<std::int32_t> counts;
    device_buffer<model::ctr_mean_history> means;
    // The table's buckets where they differ from the feature's (table_grew).
    device_buffer<std::uint64_t> hashes;
    device_buffer<std::uint32_t> indices;
  };

  device_primitives(const pool& learn, const train::target_rule& rule, bool binarize,
                    const permutation_rule& permutation)
      : learn_(learn),
        ctx_(*learn.ctx()),
        guard_(check_device(ctx_)),
        rule_(rule),
        binarize_(binarize),
        permutation_(permutation) {
    CBG_EXPECTS(learn.num_rows() <= 0x7fffffff, status::unsupported,
                "categorical features: at most 2^31 - 1 learn rows");
  }

  hashes column_hashes(const pool& p, std::int32_t flat) const { return detail::column_hashes_device(ctx_, p, flat); }
  perfect perfect_hash(const hashes& h, std::int64_t n) const {
    return categorical::perfect_hash_device(ctx_, h.data(), n);
  }
  std::size_t unique(const perfect& ph) const { return static_cast<std::size_t>(ph.unique); }
  std::vector<std::uint32_t> keys(const perfect& ph, const char* what) const {
    return download(ctx_, ph.keys.data(), static_cast<std::size_t>(ph.unique), what);
  }
  // ctr_leaf_count_limit is the host path's (the trainer refuses it on a GPU, as CatBoost's GPU trainer).
  [[noreturn]] std::size_t limit_categories(perfect&, std::uint64_t) const {
    CBG_FAIL(status::not_implemented,
             "parameter 'ctr_leaf_count_limit': not implemented on a GPU (CatBoost's GPU trainer refuses it too); "
             "a CPU context supports it");
  }
  int classes() const { return ts_.classes; }

  void one_hot(const hashes& h, const hashes& he, std::int64_t n, std::int64_t ne, std::int32_t v, column& l,
               column& e) const {
    l = column(static_cast<std::size_t>(n), ctx_.stream(), ctx_.resource());
    e = column(static_cast<std::size_t>(ne), ctx_.stream(), ctx_.resource());
    detail::one_hot_values(ctx_, h.data(), n, v, l.data());
    if (ne > 0) detail::one_hot_values(ctx_, he.data(), ne, v, e.data());
  }

  feature_data start_feature(const model::ctr_table& shape) const {
    feature_data f;
    f.hashes = upload(ctx_, shape.bucket_hashes, "CTR buckets");
    f.indices = upload(ctx_, shape.bucket_indices, "CTR bucket indices");
    return f;
  }
  void ensure_targets(const ctr_spec& s) {
    detail::ensure_targets(learn_, rule_, binarize_, permutation_, s.target_border_type, s.target_border_count, ts_);
  }
  void ensure_runs(feature_data& f, const perfect& ph, std::int64_t n, std::size_t unique) const {
    detail::ensure_runs(ctx_, ts_, ph.ids.data(), n, unique, f.runs);
  }
  void float_means(const perfect& ph, std::int64_t n, std::size_t unique, model::ctr_table& t, table_data& dt) const {
    device_buffer<unsigned long long> sums(unique, ctx_.stream(), ctx_.resource());
    detail::fixed_sums(ctx_, ph.ids.data(), ts_.targets.data(), n, ts_.fixed_scale, unique, sums.data());
    const std::vector<unsigned long long> hs = download(ctx_, sums.data(), unique, "CTR table sums");
    const std::vector<std::uint32_t> hr = download(ctx_, ph.counts.data(), unique, "CTR table counts");
    t.means.resize(unique);
    for (std::size_t id = 0; id < unique; ++id) {
      t.means[id].sum = from_fixed(static_cast<std::int64_t>(hs[id]), ts_.fixed_scale);
      t.means[id].count = static_cast<std::int32_t>(hr[id]);
    }
    dt.means = upload(ctx_, t.means, "CTR table means");
  }
  void binarized_means(const perfect& ph, std::int64_t n, std::size_t unique, model::ctr_table& t,
                       table_data& dt) const {
    device_buffer<std::uint32_t> sums(unique, ctx_.stream(), ctx_.resource()),
        rows(unique, ctx_.stream(), ctx_.resource());
    detail::class_sums(ctx_, ph.ids.data(), ts_.cls.data(), n, unique, sums.data(), rows.data());
    const std::vector<std::uint32_t> hs = download(ctx_, sums.data(), unique, "CTR table sums");
    const std::vector<std::uint32_t> hr = download(ctx_, rows.data(), unique, "CTR table counts");
    t.means.resize(unique);
    for (std::size_t id = 0; id < unique; ++id) {
      t.means[id].sum = mean_sum(hs[id], ts_.classes);
      t.means[id].count = static_cast<std::int32_t>(hr[id]);
    }
    dt.means = upload(ctx_, t.means, "CTR table means");
  }
  void class_counts(const perfect& ph, std::int64_t n, std::size_t unique, model::ctr_table& t, table_data& dt) const {
    const std::size_t cells = unique * static_cast<std::size_t>(ts_.classes);
    dt.counts = device_buffer<std::int32_t>(cells, ctx_.stream(), ctx_.resource());
    detail::class_counts(ctx_, ph.ids.data(), ts_.cls.data(), n, ts_.classes, unique, dt.counts.data());
    t.counts = download(ctx_, dt.counts.data(), cells, "CTR table counts");
  }
  std::int64_t counts(const perfect& ph, const hashes& he, std::int64_t, std::int64_t ne, std::size_t unique,
                      bool with_eval, const feature_data& f, model::ctr_table& t, table_data& dt,
                      unseen_keys& added) const {
    const std::vector<std::uint32_t> learn_counts = download(ctx_, ph.counts.data(), unique, "CTR table counts");
    t.counts.assign(learn_counts.begin(), learn_counts.end());
    dt.counts = upload(ctx_, t.counts, "CTR counts");
    if (!with_eval || ne == 0) return 0;
    device_buffer<std::uint64_t> marked(static_cast<std::size_t>(ne), ctx_.stream(), ctx_.resource());
    detail::count_known_categories(ctx_, he.data(), ne, f.hashes.data(), f.indices.data(), f.hashes.size(),
                                   dt.counts.data(), marked.data());
    t.counts = download(ctx_, dt.counts.data(), unique, "CTR table counts");
    const detail::unseen_key_counts u = detail::unseen_keys(ctx_, marked.data(), ne);
    added = unseen_keys_in_order(u.keys, u.first_rows, u.counts);
    return ne;
  }
  // The table's own buckets (the feature's no longer hold all its keys) and counts.
  void table_grew(const model::ctr_table& t, table_data& dt) const {
    dt.counts = upload(ctx_, t.counts, "CTR counts");
    dt.hashes = upload(ctx_, t.bucket_hashes, "CTR buckets");
    dt.indices = upload(ctx_, t.bucket_indices, "CTR bucket indices");
  }

  // The counter types' columns from the table's counts; the target types' over the runs, one pass
  // per target feature for all its priors (ordered_columns.hpp, as the feature combinations make
  // theirs).
  void ctr_columns(const perfect& ph, const hashes& he, std::int64_t n, std::int64_t ne, feature_data& f,
                   const table_data& dt, const model::ctr_table& table, model::ctr_type type,
                   const std::vector<ctr_column_plan>& cols, std::vector<column>& l, std::vector<column>& e) const {
    const bool counter = type == model::ctr_type::counter || type == model::ctr_type::feature_freq;
    model::ctr_table_view tv;
    const bool own = dt.hashes.size() > 0;
    tv.hashes = own ? dt.hashes.data() : f.hashes.data();
    tv.indices = own ? dt.indices.data() : f.indices.data();
    tv.n_buckets = own ? dt.hashes.size() : f.hashes.size();
    tv.counts = dt.counts.data();
    tv.means = dt.means.data();
    tv.counter_denominator = table.counter_denominator;
    tv.target_classes_count = table.target_classes_count;
    std::vector<detail::target_column> targets;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const prior& pr = cols[k].pr;
      l[k] = column(static_cast<std::size_t>(n), ctx_.stream(), ctx_.resource());
      e[k] = column(static_cast<std::size_t>(ne), ctx_.stream(), ctx_.resource());
      if (counter) {
        detail::counter_values(ctx_, ph.ids.data(), dt.counts.data(),
                               static_cast<std::uint32_t>(table.counter_denominator), n, pr.num, pr.denom, l[k].data());
      } else {
        targets.push_back(detail::target_column{type, cols[k].j, pr.num, pr.denom, l[k].data()});
      }
      if (ne > 0) detail::ctr_values_of_categories(ctx_, he.data(), ne, tv, cols[k].calc, e[k].data());
    }
    detail::ordered_target_columns(ctx_, ts_, f.runs, n, targets);
    CBG_CHECK_CUDA(ctx_.stream());
  }

  void finish(prepared_data& out, const pool& learn, const pool* eval, std::vector<column> learn_columns,
              std::vector<column> eval_columns) const {
    out.learn_device_columns = std::move(learn_columns);
    out.eval_device_columns = std::move(eval_columns);
    const auto build = [&](const pool& src, const std::vector<column>& cols) {
      std::vector<column_view> derived;
      for (const auto& col : cols) {
        derived.push_back(float_column(col.data(), src.num_rows(), memory_kind::device, ctx_.device()));
      }
      return derived_pool(src, out.float_flat, derived);
    };
    out.learn = build(learn, out.learn_device_columns);
    if (eval != nullptr) out.eval = build(*eval, out.eval_device_columns);
  }

 private:
  static int check_device(const context& ctx) {
    CBG_EXPECTS(!ctx.is_cpu(), status::no_device, "prepare_categorical_device needs a GPU context");
    return ctx.device();
  }

  const pool& learn_;
  const context& ctx_;
  scoped_device guard_;
  train::target_rule rule_;
  bool binarize_;
  permutation_rule permutation_;
  detail::target_state ts_;  // the permutation and the classes, once, when a CTR needs a target
};

}  // namespace

prepared_data prepare_categorical_device(const pool& learn, const pool* eval, const options& o,
                                         const train::target_rule& rule, bool binarize, std::uint64_t seed) {
  device_primitives prim(learn, rule, binarize, permutation_of(o, seed, learn.num_rows()));
  return prepare_categorical(prim, learn, eval, o);
}

}  // namespace cbg::ctr
