// SPDX-License-Identifier: Apache-2.0
// Categorical-feature preparation (features.hpp), written once over two sets of primitives: the
// host reference (prepare_host.cpp) and the GPU (prepare_device.cpp). The flow takes every
// decision (which features are one-hot, which CTR columns in which order, the tables' shapes and
// denominators); the primitives hold the data where it lives and compute the columns and the
// table statistics with the same per-element math (ctr_math.hpp, apply_math.hpp), so both paths
// give the same columns and tables bit for bit. Internal (not installed).
//
// The primitives P: the types P::hashes (a column's categorical hashes), P::perfect (its perfect
// hash), P::column (a derived column's values), P::feature_data (what a CTR feature keeps: its table
// buckets and category runs where the primitives read them), P::table_data (a table's statistics where
// the primitives read them), and the calls below, each documented where the flow makes it
// (table_grew: a table's keys grew, its statistics and buckets move to where the primitives read them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/ctr/beta_prior.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/ctr/unseen_keys.hpp"

namespace cbg::ctr {

// The priors of CTR `s` of categorical feature `flat` whose table is `table`: the description's, or
// with PriorEstimation=BetaPrior the one CatBoost's GPU trainer estimates (train.cpp EstimatePriors:
// alpha / (alpha + beta) as floats, from the Borders table's class counts over the learn rows; with
// more than two target classes CatBoost estimates nothing and keeps the description's priors, and
// with two classes but TargetBorderCount above 1 it refuses the description).
inline std::vector<prior> priors_of(const ctr_spec& s, const model::ctr_table& table, int classes, std::int32_t flat) {
  if (s.estimation != prior_estimation::beta_prior || classes > 2) return s.priors;
  CBG_EXPECTS(s.type == model::ctr_type::borders && s.target_border_count == 1, status::invalid_argument,
              fmt::format("categorical feature {}: PriorEstimation BetaPrior is available for Borders CTRs with one "
                          "target border only (CatBoost refuses it too: 'auto prior estimation is not available')",
                          flat));
  CBG_EXPECTS(table.target_classes_count == 2, status::internal, "a Borders table without two classes");
  try {
    const beta_prior b = estimate_beta_prior(table.counts.data(), table.key_count());
    return {prior{static_cast<float>(b.alpha), static_cast<float>(b.alpha + b.beta)}};
  } catch (const error& e) {
    CBG_FAIL(e.code(), fmt::format("categorical feature {}: {}", flat, e.what()));
  }
}

// One CTR column of a spec: its target feature j (0 for the counter types), its prior, and how the
// model computes its eval values.
struct ctr_column_plan {
  int j = 0;
  prior pr;
  model::ctr_calc calc;
};

template <class P>
prepared_data prepare_categorical(P& prim, const pool& learn, const pool* eval, const options& o) {
  using column = typename P::column;
  prepared_data out;
  const std::int64_t n = learn.num_rows();
  const std::int64_t ne = eval != nullptr ? eval->num_rows() : 0;
  for (std::int64_t j = 0; j < learn.num_features(); ++j) {
    (learn.is_categorical(j) ? out.cat_flat : out.float_flat).push_back(static_cast<std::int32_t>(j));
    if (eval != nullptr) {
      CBG_EXPECTS(eval->is_categorical(j) == learn.is_categorical(j), status::invalid_argument,
                  fmt::format("feature {} is categorical in one of the learn and eval pools only", j));
    }
  }
  out.float_count = static_cast<std::int64_t>(out.float_flat.size());

  std::vector<column> learn_columns, eval_columns;
  const auto add_column = [&](column l, column e, const derived_feature& d, int border_count,
                              quantize::border_type type) {
    out.overrides.push_back(
        derived_override(out.float_count + static_cast<std::int64_t>(out.derived.size()), border_count, type));
    out.derived.push_back(d);
    learn_columns.push_back(std::move(l));
    if (eval != nullptr) eval_columns.push_back(std::move(e));
  };

  for (std::size_t c = 0; c < out.cat_flat.size(); ++c) {
    const std::int32_t flat = out.cat_flat[c];
    const typename P::hashes h = prim.column_hashes(learn, flat);
    const typename P::hashes he = eval != nullptr ? prim.column_hashes(*eval, flat) : typename P::hashes();
    typename P::perfect ph = prim.perfect_hash(h, n);
    std::size_t unique = prim.unique(ph);

    if (static_cast<std::int64_t>(unique) <= o.one_hot_max_size) {
      // One 0/1 column per value, in ascending order of the value (as int32).
      const std::vector<std::uint32_t> keys = prim.keys(ph, "one-hot values");
      std::vector<std::int32_t> values(keys.begin(), keys.end());
      std::sort(values.begin(), values.end());
      for (std::int32_t v : values) {
        column l, e;
        prim.one_hot(h, he, n, ne, v, l, e);
        derived_feature d;
        d.kind = derived_kind::one_hot;
        d.cat_index = static_cast<std::int32_t>(c);
        d.value = v;
        add_column(std::move(l), std::move(e), d, 1, quantize::border_type::uniform);
      }
      continue;
    }

    model::projection proj;
    proj.cat_features.push_back(static_cast<std::int32_t>(c));
    // ctr_leaf_count_limit (leaf_count_limit.hpp; the host path only: a GPU context refuses it):
    // the rare values' rows join a kept value, the ordered statistics and the tables follow.
    const std::uint64_t limit = leaf_count_limit_of(o, proj);
    const bool limited = unique > limit;
    if (limited) unique = prim.limit_categories(ph, limit);
    // The table keys of the single-feature projection (for the model), by perfect-hash id, and
    // their buckets: every table of this feature has that shape.
    const std::vector<std::uint32_t> cat_keys = prim.keys(ph, "CTR table keys");
    std::vector<std::uint64_t> keys(unique);
    for (std::size_t id = 0; id < unique; ++id) keys[id] = model::projection_add_cat(0, cat_keys[id]);
    model::ctr_table shape;
    build_ctr_buckets(keys, shape);
    typename P::feature_data fs = prim.start_feature(shape);
    std::map<model::ctr_base, std::pair<std::size_t, typename P::table_data>> table_of;  // index in out.tables
    std::vector<model::ctr_description> done;

    for (const ctr_spec& s : simple_ctrs_of(o, flat)) {
      model::ctr_base base;
      base.proj = proj;
      base.type = s.type;
      const bool counter = s.type == model::ctr_type::counter || s.type == model::ctr_type::feature_freq;
      if (!counter) {
        prim.ensure_targets(s);  // the permutation and the classes, once
        prim.ensure_runs(fs, ph, n, unique);
      }
      if (table_of.find(base) == table_of.end()) {
        model::ctr_table t = shape;
        t.base = base;
        typename P::table_data dt;
        if (s.type == model::ctr_type::float_target_mean_value) {
          prim.float_means(ph, n, unique, t, dt);
        } else if (s.type == model::ctr_type::binarized_target_mean_value) {
          prim.binarized_means(ph, n, unique, t, dt);
        } else if (!counter) {
          t.target_classes_count = prim.classes();
          prim.class_counts(ph, n, unique, t, dt);
        } else {
          // Counter with counter_calc Full: the eval rows count too, and the eval values the learn
          // rows lack become keys (unseen_keys.hpp). The call returns the eval rows it counted.
          const bool with_eval = s.type == model::ctr_type::counter && o.counter_calc_method == counter_calc::full;
          CBG_EXPECTS(!(with_eval && limited && ne > 0), status::not_implemented,
                      "parameter 'ctr_leaf_count_limit': with counter_calc_method Full and an eval set (a Counter "
                      "CTR's table bounded over the learn and eval rows) not implemented");
          unseen_keys added;
          const std::int64_t rows_counted = n + prim.counts(ph, he, n, ne, unique, with_eval, fs, t, dt, added);
          if (!added.keys.empty()) {
            add_unseen_keys(t, added);
            prim.table_grew(t, dt);
          }
          t.counter_denominator = s.type == model::ctr_type::counter
                                      ? *std::max_element(t.counts.begin(), t.counts.end())
                                      : static_cast<std::int32_t>(rows_counted);
        }
        table_of.emplace(base, std::make_pair(out.tables.size(), std::move(dt)));
        out.tables.push_back(std::move(t));
      }
      const auto& [index, dt] = table_of.at(base);
      const model::ctr_table& table = out.tables[index];
      const std::vector<prior> priors = priors_of(s, table, prim.classes(), flat);

      // The spec's new columns (per target feature, one per prior not made yet), made together.
      std::vector<derived_feature> ds;
      std::vector<ctr_column_plan> cols;
      const int features = counter ? 1 : target_features_of(s.type, prim.classes());
      for (int f = 0; f < features; ++f) {
        for (const prior& pr : priors) {
          derived_feature d;
          if (!next_ctr_feature(static_cast<std::int32_t>(c), base, f, pr, done, d)) continue;
          cols.push_back(ctr_column_plan{f, pr, ctr_calc_of(d.ctr)});
          ds.push_back(d);
        }
      }
      if (ds.empty()) continue;
      std::vector<column> l(ds.size()), e(ds.size());
      prim.ctr_columns(ph, he, n, ne, fs, dt, table, s.type, cols, l, e);
      for (std::size_t k = 0; k < ds.size(); ++k) {
        add_column(std::move(l[k]), std::move(e[k]), ds[k], s.ctr_border_count, s.ctr_border_type);
      }
    }
  }

  // The derived pools: the float features (views of the caller's columns), then the new columns.
  prim.finish(out, learn, eval, std::move(learn_columns), std::move(eval_columns));
  return out;
}

}  // namespace cbg::ctr
