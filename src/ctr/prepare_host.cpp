// SPDX-License-Identifier: Apache-2.0
// The host reference of categorical-feature preparation (features.hpp): the primitives of the
// flow of prepare.hpp over host memory, and the hashes and target border the combinations share.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "cbg/apply/input.hpp"
#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/leaf_count_limit.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/ctr/prepare.hpp"

namespace cbg::ctr {

std::vector<std::uint32_t> column_hashes_host(const pool& p, std::int64_t flat) {
  const column_view& c = p.features()[static_cast<std::size_t>(flat)];
  CBG_EXPECTS(!is_device_side(c.memory), status::device,
              "the host CTR reference reads host memory only (a categorical column is on a device)");
  CBG_EXPECTS(apply::is_categorical_dtype(c.type), status::invalid_argument,
              fmt::format("categorical feature {} has dtype {}", flat, name_of(c.type)));
  std::vector<std::uint32_t> h(static_cast<std::size_t>(c.size));
  for (std::int64_t r = 0; r < c.size; ++r) h[static_cast<std::size_t>(r)] = apply::load_cat_hash(c, r);
  return h;
}

target_borders target_borders_host(const std::shared_ptr<context>& ctx, const std::vector<float>& targets,
                                   quantize::border_type type, int count) {
  CBG_EXPECTS(!targets.empty(), status::bad_data, "no targets to binarize");
  pool_parts parts;
  parts.features.push_back(
      float_column(targets.data(), static_cast<std::int64_t>(targets.size()), memory_kind::host, -1));
  const pool p = pool::borrow(ctx, std::move(parts));
  quantize::options o;
  o.border_count = std::min(count, max_target_borders);
  o.mode = quantize::nan_mode::forbidden;
  o.type = type;
  o.max_subset_size = static_cast<std::uint32_t>(std::min<std::size_t>(targets.size(), std::size_t{1} << 24));
  const quantize::host_quantized q = quantize::quantize_host(p, o);
  target_borders b;
  b.count = q.border_count[0];
  for (int i = 0; i < b.count; ++i) b.values[i] = q.borders[static_cast<std::size_t>(i)];
  if (b.count == 0) {  // a constant target: every row is class 0
    b.count = 1;
    b.values[0] = targets[0];
  }
  return b;
}

namespace {

// The host reference's primitives of the preparation flow (prepare.hpp): plain loops over host memory.
class host_primitives {
 public:
  using hashes = std::vector<std::uint32_t>;
  using perfect = categorical::host_perfect_hash;
  using column = std::vector<float>;
  struct feature_data {};
  struct table_data {};

  host_primitives(const pool& learn, const ctr_targets& targets, const permutation_rule& permutation)
      : learn_(learn), targets_(targets), permutation_(permutation) {}

  hashes column_hashes(const pool& p, std::int32_t flat) const { return column_hashes_host(p, flat); }
  perfect perfect_hash(const hashes& h, std::int64_t n) const { return categorical::perfect_hash_host(h.data(), n); }
  std::size_t unique(const perfect& ph) const { return ph.keys.size(); }
  std::vector<std::uint32_t> keys(const perfect& ph, const char*) const { return ph.keys; }
  // ctr_leaf_count_limit: the kept values only (leaf_count_limit.hpp). Returns their count.
  std::size_t limit_categories(perfect& ph, std::uint64_t limit) const {
    std::vector<std::uint32_t> keys;
    for (std::uint32_t id : apply_leaf_count_limit(ph.ids, ph.keys.size(), limit)) keys.push_back(ph.keys[id]);
    ph.keys = std::move(keys);
    ph.counts.assign(ph.keys.size(), 0);
    for (std::uint32_t id : ph.ids) ++ph.counts[id];
    return ph.keys.size();
  }
  feature_data start_feature(const model::ctr_table&) const { return {}; }
  int classes() const { return classes_; }

  void one_hot(const hashes& h, const hashes& he, std::int64_t n, std::int64_t ne, std::int32_t v, column& l,
               column& e) const {
    l.resize(static_cast<std::size_t>(n));
    e.resize(static_cast<std::size_t>(ne));
    for (std::int64_t r = 0; r < n; ++r)
      l[static_cast<std::size_t>(r)] = one_hot_value(h[static_cast<std::size_t>(r)], v);
    for (std::int64_t r = 0; r < ne; ++r)
      e[static_cast<std::size_t>(r)] = one_hot_value(he[static_cast<std::size_t>(r)], v);
  }

  // The permutation of the ordered statistics and the target classes (the first time only).
  void ensure_targets(const ctr_spec& s) {
    if (!order_.empty()) return;
    const std::int64_t n = learn_.num_rows();
    CBG_EXPECTS(targets_.learn != nullptr && static_cast<std::int64_t>(targets_.learn->size()) == n, status::internal,
                "CTR targets are missing");
    const std::vector<float>& t = *targets_.learn;
    cls_.resize(static_cast<std::size_t>(n));
    if (targets_.multiclass) {
      classes_ = std::max(2, targets_.classes);
      CBG_EXPECTS(classes_ <= max_target_classes, status::unsupported,
                  fmt::format("target CTRs take at most {} classes ({} here)", max_target_classes, classes_));
      for (std::int64_t r = 0; r < n; ++r)
        cls_[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(t[static_cast<std::size_t>(r)]);
    } else {
      target_borders borders;
      if (targets_.binarize) {
        borders = target_borders_host(learn_.ctx(), t, s.target_border_type, s.target_border_count);
      } else {
        borders.count = 1;
        borders.values[0] = 0.5f;
      }
      classes_ = borders.count + 1;
      for (std::int64_t r = 0; r < n; ++r)
        cls_[static_cast<std::size_t>(r)] = target_class(t[static_cast<std::size_t>(r)], borders);
    }
    float max_abs = 0.f;
    for (float v : t) max_abs = std::max(max_abs, std::fabs(v));
    fixed_scale_ = fixed_scale_for(max_abs, n);
    order_ = permutation_order(permutation_, n);
  }
  void ensure_runs(feature_data&, const perfect&, std::int64_t, std::size_t) const {}

  void float_means(const perfect& ph, std::int64_t n, std::size_t unique, model::ctr_table& t, table_data&) const {
    std::vector<std::int64_t> sums(unique, 0);
    t.means.assign(unique, {});
    for (std::int64_t r = 0; r < n; ++r) {
      const std::uint32_t id = ph.ids[static_cast<std::size_t>(r)];
      sums[id] += to_fixed((*targets_.learn)[static_cast<std::size_t>(r)], fixed_scale_);
      ++t.means[id].count;
    }
    for (std::size_t id = 0; id < unique; ++id) t.means[id].sum = from_fixed(sums[id], fixed_scale_);
  }
  void binarized_means(const perfect& ph, std::int64_t n, std::size_t unique, model::ctr_table& t, table_data&) const {
    std::vector<std::uint32_t> sums(unique, 0);
    t.means.assign(unique, {});
    for (std::int64_t r = 0; r < n; ++r) {
      const std::uint32_t id = ph.ids[static_cast<std::size_t>(r)];
      sums[id] += cls_[static_cast<std::size_t>(r)];
      ++t.means[id].count;
    }
    for (std::size_t id = 0; id < unique; ++id) t.means[id].sum = mean_sum(sums[id], classes_);
  }
  void class_counts(const perfect& ph, std::int64_t n, std::size_t unique, model::ctr_table& t, table_data&) const {
    t.counts.assign(unique * static_cast<std::size_t>(classes_), 0);
    for (std::int64_t r = 0; r < n; ++r) {
      ++t.counts[ph.ids[static_cast<std::size_t>(r)] * static_cast<std::size_t>(classes_) +
                 cls_[static_cast<std::size_t>(r)]];
    }
  }
  std::int64_t counts(const perfect& ph, const hashes& he, std::int64_t n, std::int64_t ne, std::size_t unique,
                      bool with_eval, const feature_data&, model::ctr_table& t, table_data&, unseen_keys& added) const {
    t.counts.assign(unique, 0);
    for (std::int64_t r = 0; r < n; ++r) ++t.counts[ph.ids[static_cast<std::size_t>(r)]];
    if (!with_eval) return 0;
    std::map<std::uint32_t, std::uint32_t> id_of;
    for (std::size_t id = 0; id < unique; ++id) id_of[ph.keys[id]] = static_cast<std::uint32_t>(id);
    std::vector<std::uint64_t> marked(static_cast<std::size_t>(ne), model::ctr_empty_hash);
    for (std::int64_t r = 0; r < ne; ++r) {
      const std::uint32_t h = he[static_cast<std::size_t>(r)];
      const auto it = id_of.find(h);
      if (it != id_of.end()) {
        ++t.counts[it->second];
      } else {
        marked[static_cast<std::size_t>(r)] = model::projection_add_cat(0, h);
      }
    }
    added = unseen_keys_of_rows(marked);
    return ne;
  }
  void table_grew(const model::ctr_table&, table_data&) const {}

  // Each column of `cols` (CTR type `type`) into l[k], e[k].
  void ctr_columns(const perfect& ph, const hashes& he, std::int64_t n, std::int64_t ne, const feature_data&,
                   const table_data&, const model::ctr_table& table, model::ctr_type type,
                   const std::vector<ctr_column_plan>& cols, std::vector<column>& l, std::vector<column>& e) const {
    for (std::size_t k = 0; k < cols.size(); ++k) {
      ctr_column(ph, he, n, ne, table, type, cols[k].j, cols[k].pr, cols[k].calc, l[k], e[k]);
    }
  }

  void finish(prepared_data& out, const pool& learn, const pool* eval, std::vector<column> learn_columns,
              std::vector<column> eval_columns) const {
    out.learn_columns = std::move(learn_columns);
    out.eval_columns = std::move(eval_columns);
    const auto build = [&](const pool& src, const std::vector<column>& cols) {
      std::vector<column_view> derived;
      for (const auto& col : cols) derived.push_back(float_column(col.data(), src.num_rows(), memory_kind::host, -1));
      return derived_pool(src, out.float_flat, derived);
    };
    out.learn = build(learn, out.learn_columns);
    if (eval != nullptr) out.eval = build(*eval, out.eval_columns);
  }

 private:
  // CTR feature (type, j) with prior pr: ordered values on the learn rows (each row sees the terms
  // of its category's rows earlier in the permutation; counters: the full counts), the model's
  // values on the eval rows.
  void ctr_column(const perfect& ph, const hashes& he, std::int64_t n, std::int64_t ne, const model::ctr_table& table,
                  model::ctr_type type, int j, const prior& pr, const model::ctr_calc& calc, column& l,
                  column& e) const {
    const std::size_t unique = ph.keys.size();
    l.resize(static_cast<std::size_t>(n));
    e.resize(static_cast<std::size_t>(ne));
    if (type == model::ctr_type::counter || type == model::ctr_type::feature_freq) {
      for (std::int64_t r = 0; r < n; ++r) {
        l[static_cast<std::size_t>(r)] =
            counter_value(static_cast<std::uint32_t>(table.counts[ph.ids[static_cast<std::size_t>(r)]]),
                          static_cast<std::uint32_t>(table.counter_denominator), pr.num, pr.denom);
      }
    } else if (type == model::ctr_type::float_target_mean_value) {
      std::vector<std::int64_t> sums(unique, 0);
      std::vector<std::uint32_t> total(unique, 0);
      for (std::uint32_t r : order_) {
        const std::uint32_t id = ph.ids[r];
        l[r] = ordered_float_mean_value(sums[id], total[id], fixed_scale_, pr.num, pr.denom);
        sums[id] += to_fixed((*targets_.learn)[r], fixed_scale_);
        total[id] += 1;
      }
    } else {
      std::vector<std::uint32_t> terms(unique, 0), total(unique, 0);
      for (std::uint32_t r : order_) {
        const std::uint32_t id = ph.ids[r];
        l[r] = ordered_target_value(type, classes_, terms[id], total[id], pr.num, pr.denom);
        terms[id] += target_term(type, j, cls_[r]);
        total[id] += 1;
      }
    }
    const model::ctr_table_view tv = table_view_of(table);
    for (std::int64_t r = 0; r < ne; ++r) {
      e[static_cast<std::size_t>(r)] =
          model::ctr_value_of(tv, calc, model::projection_add_cat(0, he[static_cast<std::size_t>(r)]));
    }
  }

  const pool& learn_;
  const ctr_targets& targets_;
  permutation_rule permutation_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint8_t> cls_;
  int classes_ = 2;
  double fixed_scale_ = 1.0;  // FloatTargetMeanValue sums
};

}  // namespace

prepared_data prepare_categorical_host(const pool& learn, const pool* eval, const options& o,
                                       const ctr_targets& targets, std::uint64_t seed) {
  host_primitives prim(learn, targets, permutation_of(o, seed, learn.num_rows()));
  return prepare_categorical(prim, learn, eval, o);
}

}  // namespace cbg::ctr
