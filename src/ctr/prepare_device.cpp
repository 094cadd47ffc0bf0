// SPDX-License-Identifier: Apache-2.0
// The GPU side of categorical-feature preparation (features.hpp), driving the launchers of
// kernels/ctr/ctr_device.hpp, equal to the host reference (prepare_host.cpp) bit for bit: the same
// per-element math (ctr_math.hpp, apply_math.hpp), the same perfect-hash ids
// (categorical/perfect_hash.hpp), the same permutation (sorted by (key, row): a stable radix sort
// of the keys over ascending rows).
// The ordered statistics and the table sums are shared with the feature combinations.
#include <algorithm>
#include <map>
#include <string>

#include "kernels/ctr/ctr_device.hpp"

#include "cbg/categorical/perfect_hash.hpp"
#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/ctr/features.hpp"
#include "cbg/runtime/device.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/pool_views.hpp"

namespace cbg::ctr {

using detail::download;
using detail::upload;

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

  // The permutation and the classes, once, when a CTR needs a target.
  detail::target_state ts;
  const auto ensure_targets = [&](const ctr_spec& s) {
    detail::ensure_targets(learn, rule, binarize, seed, s.target_border_type, ts);
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
    const device_buffer<std::uint32_t> h = detail::column_hashes_device(ctx, learn, flat);
    const device_buffer<std::uint32_t> he =
        eval != nullptr ? detail::column_hashes_device(ctx, *eval, flat) : device_buffer<std::uint32_t>();
    const categorical::device_perfect_hash ph = categorical::perfect_hash_device(ctx, h.data(), n);
    const auto unique = static_cast<std::size_t>(ph.unique);

    if (ph.unique <= o.one_hot_max_size) {
      std::vector<std::uint32_t> keys = download(ctx, ph.keys.data(), unique, "one-hot values");
      std::vector<std::int32_t> values(keys.begin(), keys.end());
      std::sort(values.begin(), values.end());
      for (std::int32_t v : values) {
        device_buffer<float> lc(un, stream, res), ec(static_cast<std::size_t>(ne), stream, res);
        detail::one_hot_values(ctx, h.data(), n, v, lc.data());
        if (ne > 0) detail::one_hot_values(ctx, he.data(), ne, v, ec.data());
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
    // The permutation's positions sorted stably by category (runs in permutation order): made
    // when a target CTR needs them.
    detail::category_runs runs;
    const auto ensure_runs = [&] { detail::ensure_runs(ctx, ts, ph.ids.data(), n, unique, runs); };
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
          detail::fixed_sums(ctx, ph.ids.data(), ts.targets.data(), n, ts.fixed_scale, unique, sums.data());
          const std::vector<unsigned long long> hs = download(ctx, sums.data(), unique, "CTR table sums");
          const std::vector<std::uint32_t> hr = download(ctx, ph.counts.data(), unique, "CTR table counts");
          t.means.resize(unique);
          for (std::size_t id = 0; id < unique; ++id) {
            t.means[id].sum = from_fixed(static_cast<std::int64_t>(hs[id]), ts.fixed_scale);
            t.means[id].count = static_cast<std::int32_t>(hr[id]);
          }
          dt.means = upload(ctx, t.means, "CTR table means");
        } else if (s.type == model::ctr_type::binarized_target_mean_value) {
          device_buffer<std::uint32_t> sums(unique, stream, res), rows(unique, stream, res);
          detail::class_sums(ctx, ph.ids.data(), ts.cls.data(), n, unique, sums.data(), rows.data());
          const std::vector<std::uint32_t> hs = download(ctx, sums.data(), unique, "CTR table sums");
          const std::vector<std::uint32_t> hr = download(ctx, rows.data(), unique, "CTR table counts");
          t.means.resize(unique);
          for (std::size_t id = 0; id < unique; ++id) {
            t.means[id].sum = mean_sum(hs[id], ts.classes);
            t.means[id].count = static_cast<std::int32_t>(hr[id]);
          }
          dt.means = upload(ctx, t.means, "CTR table means");
        } else if (!counter) {
          t.target_classes_count = ts.classes;
          const std::size_t cells = unique * static_cast<std::size_t>(ts.classes);
          dt.counts = device_buffer<std::int32_t>(cells, stream, res);
          detail::class_counts(ctx, ph.ids.data(), ts.cls.data(), n, ts.classes, unique, dt.counts.data());
          t.counts = download(ctx, dt.counts.data(), cells, "CTR table counts");
        } else {
          const std::vector<std::uint32_t> learn_counts = download(ctx, ph.counts.data(), unique, "CTR table counts");
          t.counts.assign(learn_counts.begin(), learn_counts.end());
          std::int64_t rows_counted = n;
          dt.counts = upload(ctx, t.counts, "CTR counts");
          if (s.type == model::ctr_type::counter && o.counter_calc_method == counter_calc::full && ne > 0) {
            detail::count_known_categories(ctx, he.data(), ne, d_hashes.data(), d_indices.data(), d_hashes.size(),
                                           dt.counts.data());
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

      const int features = counter ? 1 : target_features_of(s.type, ts.classes);
      for (int f = 0; f < features; ++f) {
        runs.scanned = false;
        for (const prior& pr : s.priors) {
          derived_feature d;
          if (!next_ctr_feature(static_cast<std::int32_t>(c), base, f, pr, done, d)) continue;
          device_buffer<float> lc(un, stream, res), ec(static_cast<std::size_t>(ne), stream, res);
          if (counter) {
            detail::counter_values(ctx, ph.ids.data(), dt.counts.data(),
                                   static_cast<std::uint32_t>(table.counter_denominator), n, pr.num, pr.denom,
                                   lc.data());
          } else {
            detail::ordered_values(ctx, ts, runs, n, s.type, f, pr.num, pr.denom, lc.data());
          }
          if (ne > 0) detail::ctr_values_of_categories(ctx, he.data(), ne, tv, ctr_calc_of(d.ctr), ec.data());
          CBG_CHECK_CUDA(stream);
          add_column(std::move(lc), std::move(ec), d, s.ctr_border_count, s.ctr_border_type);
        }
      }
    }
  }

  const auto build = [&](const pool& src, const std::vector<device_buffer<float>>& cols) {
    std::vector<column_view> derived;
    for (const auto& col : cols) {
      derived.push_back(float_column(col.data(), src.num_rows(), memory_kind::device, ctx.device()));
    }
    return derived_pool(src, out.float_flat, derived);
  };
  out.learn = build(learn, out.learn_device_columns);
  if (eval != nullptr) out.eval = build(*eval, out.eval_device_columns);
  return out;
}

}  // namespace cbg::ctr
