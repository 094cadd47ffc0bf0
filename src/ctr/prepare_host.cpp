// SPDX-License-Identifier: Apache-2.0
// The host reference of categorical-feature preparation (features.hpp): hashes, perfect hashing,
// one-hot columns, ordered CTR columns, the final CTR tables and the derived pools.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "cbg/apply/input.hpp"
#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/ctr/host_helpers.hpp"

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

float target_border_host(const std::shared_ptr<context>& ctx, const std::vector<float>& targets,
                         quantize::border_type type) {
  CBG_EXPECTS(!targets.empty(), status::bad_data, "no targets to binarize");
  pool_parts parts;
  parts.features.push_back(float_column(targets.data(), static_cast<std::int64_t>(targets.size()), memory_kind::host, -1));
  const pool p = pool::borrow(ctx, std::move(parts));
  quantize::options o;
  o.border_count = 1;
  o.mode = quantize::nan_mode::forbidden;
  o.type = type;
  o.max_subset_size = static_cast<std::uint32_t>(std::min<std::size_t>(targets.size(), std::size_t{1} << 24));
  const quantize::host_quantized q = quantize::quantize_host(p, o);
  if (q.border_count[0] == 0) return targets[0];  // a constant target: every row is class 0
  return q.borders[0];
}

prepared_data prepare_categorical_host(const pool& learn, const pool* eval, const options& o,
                                       const ctr_targets& targets, std::uint64_t seed) {
  prepared_data out;
  const std::int64_t n = learn.num_rows();
  const std::int64_t ne = eval != nullptr ? eval->num_rows() : 0;
  for (std::int64_t j = 0; j < learn.num_features(); ++j) {
    if (learn.is_categorical(j)) {
      out.cat_flat.push_back(static_cast<std::int32_t>(j));
    } else {
      out.float_flat.push_back(static_cast<std::int32_t>(j));
    }
  }
  out.float_count = static_cast<std::int64_t>(out.float_flat.size());
  if (eval != nullptr) {
    for (std::int64_t j = 0; j < learn.num_features(); ++j) {
      CBG_EXPECTS(eval->is_categorical(j) == learn.is_categorical(j), status::invalid_argument,
                  fmt::format("feature {} is categorical in one of the learn and eval pools only", j));
    }
  }

  // The permutation of the ordered statistics and the target classes (computed once, lazily).
  std::vector<std::uint32_t> order;
  std::vector<std::uint8_t> cls;
  int classes = 2;
  double fixed_scale = 1.0;  // FloatTargetMeanValue sums
  const auto ensure_targets = [&](const ctr_spec& s) {
    if (!order.empty()) return;
    CBG_EXPECTS(targets.learn != nullptr && static_cast<std::int64_t>(targets.learn->size()) == n,
                status::internal, "CTR targets are missing");
    const std::vector<float>& t = *targets.learn;
    cls.resize(static_cast<std::size_t>(n));
    if (targets.multiclass) {
      classes = std::max(2, targets.classes);
      CBG_EXPECTS(classes <= max_target_classes, status::unsupported,
                  fmt::format("target CTRs take at most {} classes ({} here)", max_target_classes, classes));
      for (std::int64_t r = 0; r < n; ++r) cls[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(t[static_cast<std::size_t>(r)]);
    } else {
      const float border = targets.binarize ? target_border_host(learn.ctx(), t, s.target_border_type) : 0.5f;
      for (std::int64_t r = 0; r < n; ++r) cls[static_cast<std::size_t>(r)] = target_class(t[static_cast<std::size_t>(r)], border);
    }
    float max_abs = 0.f;
    for (float v : t) max_abs = std::max(max_abs, std::fabs(v));
    fixed_scale = fixed_scale_for(max_abs, n);
    order = permutation_order(seed, n);
  };

  const auto add_column = [&](std::vector<float> learn_col, std::vector<float> eval_col, derived_feature d,
                              int border_count, quantize::border_type type) {
    out.overrides.push_back(
        derived_override(out.float_count + static_cast<std::int64_t>(out.derived.size()), border_count, type));
    out.derived.push_back(d);
    out.learn_columns.push_back(std::move(learn_col));
    if (eval != nullptr) out.eval_columns.push_back(std::move(eval_col));
  };

  for (std::size_t c = 0; c < out.cat_flat.size(); ++c) {
    const std::int32_t flat = out.cat_flat[c];
    const std::vector<std::uint32_t> h = column_hashes_host(learn, flat);
    const std::vector<std::uint32_t> he = eval != nullptr ? column_hashes_host(*eval, flat) : std::vector<std::uint32_t>{};
    const categorical::host_perfect_hash ph = categorical::perfect_hash_host(h.data(), n);
    const std::size_t unique = ph.keys.size();

    if (static_cast<std::int64_t>(unique) <= o.one_hot_max_size) {
      std::vector<std::int32_t> values;
      for (std::uint32_t k : ph.keys) values.push_back(static_cast<std::int32_t>(k));
      std::sort(values.begin(), values.end());
      for (std::int32_t v : values) {
        std::vector<float> lc(static_cast<std::size_t>(n)), ec(static_cast<std::size_t>(ne));
        for (std::int64_t r = 0; r < n; ++r) lc[static_cast<std::size_t>(r)] = one_hot_value(h[static_cast<std::size_t>(r)], v);
        for (std::int64_t r = 0; r < ne; ++r) ec[static_cast<std::size_t>(r)] = one_hot_value(he[static_cast<std::size_t>(r)], v);
        derived_feature d;
        d.kind = derived_kind::one_hot;
        d.cat_index = static_cast<std::int32_t>(c);
        d.value = v;
        add_column(std::move(lc), std::move(ec), d, 1, quantize::border_type::uniform);
      }
      continue;
    }

    // Keys of the single-feature projection, by perfect-hash id.
    std::vector<std::uint64_t> keys(unique);
    for (std::size_t id = 0; id < unique; ++id) keys[id] = model::projection_add_cat(0, ph.keys[id]);
    model::projection proj;
    proj.cat_features.push_back(static_cast<std::int32_t>(c));
    std::map<model::ctr_base, std::size_t> table_of;  // base -> index in out.tables
    std::vector<model::ctr_description> done;

    for (const ctr_spec& s : simple_ctrs_of(o, flat)) {
      model::ctr_base base;
      base.proj = proj;
      base.type = s.type;
      const bool counter = s.type == model::ctr_type::counter || s.type == model::ctr_type::feature_freq;
      if (!counter) ensure_targets(s);
      if (table_of.find(base) == table_of.end()) {
        model::ctr_table t;
        t.base = base;
        build_ctr_buckets(keys, t);
        if (s.type == model::ctr_type::float_target_mean_value) {
          std::vector<std::int64_t> sums(unique, 0);
          t.means.assign(unique, {});
          for (std::int64_t r = 0; r < n; ++r) {
            const std::uint32_t id = ph.ids[static_cast<std::size_t>(r)];
            sums[id] += to_fixed((*targets.learn)[static_cast<std::size_t>(r)], fixed_scale);
            ++t.means[id].count;
          }
          for (std::size_t id = 0; id < unique; ++id) t.means[id].sum = from_fixed(sums[id], fixed_scale);
        } else if (s.type == model::ctr_type::binarized_target_mean_value) {
          std::vector<std::uint32_t> sums(unique, 0);
          t.means.assign(unique, {});
          for (std::int64_t r = 0; r < n; ++r) {
            const std::uint32_t id = ph.ids[static_cast<std::size_t>(r)];
            sums[id] += cls[static_cast<std::size_t>(r)];
            ++t.means[id].count;
          }
          for (std::size_t id = 0; id < unique; ++id) t.means[id].sum = mean_sum(sums[id], classes);
        } else if (!counter) {
          t.target_classes_count = classes;
          t.counts.assign(unique * static_cast<std::size_t>(classes), 0);
          for (std::int64_t r = 0; r < n; ++r) {
            ++t.counts[ph.ids[static_cast<std::size_t>(r)] * static_cast<std::size_t>(classes) +
                       cls[static_cast<std::size_t>(r)]];
          }
        } else {
          t.counts.assign(unique, 0);
          for (std::int64_t r = 0; r < n; ++r) ++t.counts[ph.ids[static_cast<std::size_t>(r)]];
          std::int64_t rows_counted = n;
          if (s.type == model::ctr_type::counter && o.counter_calc_method == counter_calc::full) {
            // Full: the eval rows count too (their categories seen in learn; others are not keys).
            std::map<std::uint32_t, std::uint32_t> id_of;
            for (std::size_t id = 0; id < unique; ++id) id_of[ph.keys[id]] = static_cast<std::uint32_t>(id);
            for (std::int64_t r = 0; r < ne; ++r) {
              const auto it = id_of.find(he[static_cast<std::size_t>(r)]);
              if (it != id_of.end()) ++t.counts[it->second];
            }
            rows_counted += ne;
          }
          t.counter_denominator = s.type == model::ctr_type::counter
                                      ? *std::max_element(t.counts.begin(), t.counts.end())
                                      : static_cast<std::int32_t>(rows_counted);
        }
        table_of[base] = out.tables.size();
        out.tables.push_back(std::move(t));
      }
      const model::ctr_table& table = out.tables[table_of[base]];
      const model::ctr_table_view tv = table_view_of(table);

      const int features = counter ? 1 : target_features_of(s.type, classes);
      for (int j = 0; j < features; ++j) {
        for (const prior& pr : s.priors) {
          derived_feature d;
          if (!next_ctr_feature(static_cast<std::int32_t>(c), base, j, pr, done, d)) continue;
          std::vector<float> lc(static_cast<std::size_t>(n)), ec(static_cast<std::size_t>(ne));
          if (counter) {
            for (std::int64_t r = 0; r < n; ++r) {
              lc[static_cast<std::size_t>(r)] =
                  counter_value(static_cast<std::uint32_t>(table.counts[ph.ids[static_cast<std::size_t>(r)]]),
                                static_cast<std::uint32_t>(table.counter_denominator), pr.num, pr.denom);
            }
          } else if (s.type == model::ctr_type::float_target_mean_value) {
            std::vector<std::int64_t> sums(unique, 0);
            std::vector<std::uint32_t> total(unique, 0);
            for (std::uint32_t r : order) {
              const std::uint32_t id = ph.ids[r];
              lc[r] = ordered_float_mean_value(sums[id], total[id], fixed_scale, pr.num, pr.denom);
              sums[id] += to_fixed((*targets.learn)[r], fixed_scale);
              total[id] += 1;
            }
          } else {
            // Ordered: each row sees the terms of its category's rows earlier in the permutation.
            std::vector<std::uint32_t> terms(unique, 0), total(unique, 0);
            for (std::uint32_t r : order) {
              const std::uint32_t id = ph.ids[r];
              lc[r] = ordered_target_value(s.type, classes, terms[id], total[id], pr.num, pr.denom);
              terms[id] += target_term(s.type, j, cls[r]);
              total[id] += 1;
            }
          }
          const model::ctr_calc calc = ctr_calc_of(d.ctr);
          for (std::int64_t r = 0; r < ne; ++r) {
            ec[static_cast<std::size_t>(r)] =
                model::ctr_value_of(tv, calc, model::projection_add_cat(0, he[static_cast<std::size_t>(r)]));
          }
          add_column(std::move(lc), std::move(ec), d, s.ctr_border_count, s.ctr_border_type);
        }
      }
    }
  }

  // The derived pools: the float features (views of the caller's columns), then the new columns.
  const auto build = [&](const pool& src, const std::vector<std::vector<float>>& cols) {
    std::vector<column_view> derived;
    for (const auto& col : cols) derived.push_back(float_column(col.data(), src.num_rows(), memory_kind::host, -1));
    return derived_pool(src, out.float_flat, derived);
  };
  out.learn = build(learn, out.learn_columns);
  if (eval != nullptr) out.eval = build(*eval, out.eval_columns);
  return out;
}

}  // namespace cbg::ctr
