// SPDX-License-Identifier: Apache-2.0
// Feature combinations on the host path (combinations.hpp).
#include "cbg/ctr/combinations.hpp"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/train/boosting.hpp"
#include "src/ctr/pool_views.hpp"
#include "src/ctr/combination_search.hpp"
#include "src/ctr/host_helpers.hpp"
#include "src/ctr/leaf_count_limit.hpp"
#include "src/ctr/unseen_keys.hpp"

namespace cbg::ctr {

int max_ctr_complexity_of(const options& o, int iterations) {
  if (o.max_ctr_complexity) return *o.max_ctr_complexity;
  return iterations < 200 ? 1 : 4;
}

std::size_t projection_length(const model::projection& p) {
  return p.cat_features.size() + p.float_splits.size() + p.one_hot_splits.size();
}

std::vector<model::projection> combination_candidates(const std::vector<model::projection>& bases,
                                                      const std::vector<std::int32_t>& ctr_cats, int max_complexity) {
  std::set<model::projection> out;
  for (const model::projection& base : bases) {
    if (projection_length(base) == 0 || static_cast<int>(projection_length(base)) + 1 > max_complexity) continue;
    for (std::int32_t c : ctr_cats) {
      if (std::find(base.cat_features.begin(), base.cat_features.end(), c) != base.cat_features.end()) continue;
      model::projection p = base;
      p.cat_features.push_back(c);
      std::sort(p.cat_features.begin(), p.cat_features.end());
      out.insert(std::move(p));
    }
  }
  return {out.begin(), out.end()};
}

std::vector<std::int32_t> combination_cats(const prepared_data& prepared) {
  std::set<std::int32_t> cats;
  for (const derived_feature& d : prepared.derived) {
    if (d.kind == derived_kind::ctr && d.ctr.base.proj.cat_features.size() == 1) cats.insert(d.cat_index);
  }
  return {cats.begin(), cats.end()};
}

std::vector<model::projection> combination_bases(const std::vector<train::split>& chosen, const prepared_data& prepared,
                                                 const std::function<float(std::int32_t, std::int32_t)>& float_border) {
  std::vector<model::projection> bases(1);
  for (const train::split& s : chosen) {
    const std::int64_t k = s.feature - prepared.float_count;
    if (k < 0) {
      bases[0].float_splits.push_back({s.feature, float_border(s.feature, s.bin)});
      continue;
    }
    const derived_feature& d = prepared.derived[static_cast<std::size_t>(k)];
    if (d.kind == derived_kind::ctr)
      bases.push_back(d.ctr.base.proj);
    else
      bases[0].one_hot_splits.push_back({d.cat_index, d.value});
  }
  std::sort(bases[0].float_splits.begin(), bases[0].float_splits.end());
  std::sort(bases[0].one_hot_splits.begin(), bases[0].one_hot_splits.end());
  return bases;
}

std::vector<combination_feature> projection_features(const model::projection& proj, const std::vector<ctr_spec>& specs,
                                                     int classes) {
  std::vector<combination_feature> out;
  std::vector<model::ctr_description> done;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const ctr_spec& s = specs[k];
    model::ctr_base base;
    base.proj = proj;
    base.type = s.type;
    const bool counter = s.type == model::ctr_type::counter || s.type == model::ctr_type::feature_freq;
    const int features = counter ? 1 : target_features_of(s.type, classes);
    for (int j = 0; j < features; ++j) {
      for (const prior& pr : s.priors) {
        derived_feature d;
        if (next_ctr_feature(proj.cat_features.front(), base, j, pr, done, d)) out.push_back({d.ctr, k});
      }
    }
  }
  return out;
}

std::uint64_t combination_key(const std::uint32_t* cats, std::size_t n) {
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < n; ++i) h = model::projection_add_cat(h, cats[i]);
  return h;
}

namespace {

bool is_counter(model::ctr_type t) { return t == model::ctr_type::counter || t == model::ctr_type::feature_freq; }

// One candidate column: a CTR feature of a projection, its borders and every learn row's bin.
struct host_column {
  model::ctr_description desc;
  std::vector<float> borders;
  std::vector<std::uint8_t> bins;
};

// A projection's learn keys (dense ids in order of first appearance) and its candidate columns.
struct host_projection {
  model::projection proj;
  std::vector<std::uint32_t> ids;   // per learn row
  std::vector<std::uint64_t> keys;  // per id
  bool limited = false;             // ctr_leaf_count_limit dropped values (leaf_count_limit.hpp)
  std::vector<host_column> columns;
};

// A combination that won a split: what the trainer and the backend ask for later.
struct host_committed {
  std::vector<float> borders;
  std::vector<float> eval;  // the model's values on the eval rows
};

// The host primitives of the feature combinations' search extension (combination_search.hpp).
class host_primitives {
 public:
  using projection_data = host_projection;
  using committed_column = host_committed;

  static std::size_t bytes_of(const host_projection& p) {
    std::size_t bytes = p.ids.size() * sizeof(std::uint32_t) + p.keys.size() * sizeof(std::uint64_t);
    for (const host_column& c : p.columns) bytes += c.bins.size() + c.borders.size() * sizeof(float);
    return bytes;
  }

  host_primitives(prepared_data& prepared, const pool& learn, const pool* eval, const options& o,
                  const ctr_targets& targets, std::uint64_t seed)
      : learn_(learn), eval_(eval), o_(o), seed_(seed), prepared_(prepared) {
    n_ = learn.num_rows();
    ne_ = eval != nullptr ? eval->num_rows() : 0;
    binarize_ = targets.binarize;
    multiclass_ = targets.multiclass;
    classes_ = targets.multiclass ? std::max(2, targets.classes) : 2;
    CBG_EXPECTS(targets.learn != nullptr && static_cast<std::int64_t>(targets.learn->size()) == n_, status::internal,
                "CTR targets are missing");
    targets_ = *targets.learn;
    specs_ = o.combinations_ctr ? *o.combinations_ctr : default_ctrs(true);
  }

  [[nodiscard]] const context& ctx() const { return *learn_.ctx(); }

  void set_nan_modes(const std::vector<std::uint8_t>& modes) {
    nan_is_one_ = nan_is_one_of(modes, prepared_.float_count);
  }

  void share_borders(std::shared_ptr<combination_borders> shared) { shared_ = std::move(shared); }

  // The committed column c of projection p: its table (kept in prepared_.tables) and eval values.
  host_committed commit(const host_projection& p, const host_column& c) {
    const model::ctr_table& table = table_of(p, c.desc.base);
    host_committed cc;
    cc.borders = c.borders;
    if (eval_ != nullptr) {
      const std::vector<std::uint64_t> keys = row_keys(p.proj, true);
      const model::ctr_table_view tv = table_view_of(table);
      const model::ctr_calc calc = ctr_calc_of(c.desc);
      cc.eval.resize(static_cast<std::size_t>(ne_));
      for (std::int64_t r = 0; r < ne_; ++r) {
        cc.eval[static_cast<std::size_t>(r)] = model::ctr_value_of(tv, calc, keys[static_cast<std::size_t>(r)]);
      }
    }
    return cc;
  }

  [[nodiscard]] const float* eval_values(const host_committed& c) const {
    return c.eval.empty() ? nullptr : c.eval.data();
  }

 private:
  const std::vector<std::uint32_t>& hashes(std::int32_t cat, bool eval) {
    auto& cache = eval ? eval_hashes_ : hashes_;
    auto it = cache.find(cat);
    if (it == cache.end()) {
      const std::int32_t flat = prepared_.cat_flat[static_cast<std::size_t>(cat)];
      it = cache.emplace(cat, column_hashes_host(eval ? *eval_ : learn_, flat)).first;
    }
    return it->second;
  }

  // Every row's projection key (learn, or eval), as the model computes it: the float splits on
  // the rows' values (NaN on the side its quantization put it, as the model's NaN treatment does).
  std::vector<std::uint64_t> row_keys(const model::projection& proj, bool eval) {
    const std::int64_t rows = eval ? ne_ : n_;
    const pool& src = eval ? *prepared_.eval : *prepared_.learn;
    std::vector<const std::vector<std::uint32_t>*> h;
    for (std::int32_t c : proj.cat_features) h.push_back(&hashes(c, eval));
    std::vector<const std::vector<std::uint32_t>*> oh;
    for (const model::one_hot_split& s : proj.one_hot_splits) oh.push_back(&hashes(s.cat_index, eval));
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(rows));
    std::vector<std::uint32_t> v(h.size());
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto i = static_cast<std::size_t>(r);
      for (std::size_t k = 0; k < h.size(); ++k) v[k] = (*h[k])[i];
      std::uint64_t key = combination_key(v.data(), v.size());
      for (const model::float_split& s : proj.float_splits) {
        const train::value_split vs{s.float_index, s.border, nan_is_one_[static_cast<std::size_t>(s.float_index)]};
        const column_view& c = src.features()[static_cast<std::size_t>(s.float_index)];
        key = model::projection_add_bit(key, train::split_is_one(vs, quantize::to_feature_float(c.value(r))));
      }
      for (std::size_t k = 0; k < oh.size(); ++k) {
        key = model::projection_add_bit(key, model::one_hot_split_true((*oh[k])[i], proj.one_hot_splits[k].value));
      }
      keys[i] = key;
    }
    return keys;
  }

  // The permutation and the target classes of the ordered statistics (as prepare_categorical_host).
  void ensure_targets(const ctr_spec& s) {
    if (!order_.empty()) return;
    cls_.resize(static_cast<std::size_t>(n_));
    if (multiclass_) {
      for (std::int64_t r = 0; r < n_; ++r) {
        cls_[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(targets_[static_cast<std::size_t>(r)]);
      }
    } else {
      target_borders borders;
      if (binarize_) {
        borders = target_borders_host(learn_.ctx(), targets_, s.target_border_type, s.target_border_count);
      } else {
        borders.count = 1;
        borders.values[0] = 0.5f;
      }
      classes_ = borders.count + 1;
      for (std::int64_t r = 0; r < n_; ++r) {
        cls_[static_cast<std::size_t>(r)] = target_class(targets_[static_cast<std::size_t>(r)], borders);
      }
    }
    float max_abs = 0.f;
    for (float t : targets_) max_abs = std::max(max_abs, std::fabs(t));
    fixed_scale_ = fixed_scale_for(max_abs, n_);
    order_ = permutation_order(permutation_of(o_, seed_, n_), n_);
  }

  // The table of `base` over all learn rows (built once, kept in prepared_.tables).
  const model::ctr_table& table_of(const host_projection& p, const model::ctr_base& base) {
    for (const model::ctr_table& t : prepared_.tables) {
      if (t.base == base) return t;
    }
    const std::size_t unique = p.keys.size();
    const auto C = static_cast<std::size_t>(classes_);
    model::ctr_table t;
    t.base = base;
    build_ctr_buckets(p.keys, t);
    switch (base.type) {
      case model::ctr_type::borders:
      case model::ctr_type::buckets:
        t.target_classes_count = classes_;
        t.counts.assign(unique * C, 0);
        for (std::int64_t r = 0; r < n_; ++r)
          ++t.counts[p.ids[static_cast<std::size_t>(r)] * C + cls_[static_cast<std::size_t>(r)]];
        break;
      case model::ctr_type::binarized_target_mean_value:
      case model::ctr_type::float_target_mean_value: {
        const bool fl = base.type == model::ctr_type::float_target_mean_value;
        std::vector<std::int64_t> sums(unique, 0);
        t.means.assign(unique, {});
        for (std::int64_t r = 0; r < n_; ++r) {
          const auto i = static_cast<std::size_t>(r);
          sums[p.ids[i]] += fl ? to_fixed(targets_[i], fixed_scale_) : cls_[i];
          ++t.means[p.ids[i]].count;
        }
        for (std::size_t id = 0; id < unique; ++id) {
          t.means[id].sum =
              fl ? from_fixed(sums[id], fixed_scale_) : mean_sum(static_cast<std::uint32_t>(sums[id]), classes_);
        }
        break;
      }
      default: {  // counter types: not ordered
        t.counts.assign(unique, 0);
        for (std::uint32_t id : p.ids) ++t.counts[id];
        std::int64_t counted = n_;
        if (base.type == model::ctr_type::counter && o_.counter_calc_method == counter_calc::full && eval_ != nullptr) {
          CBG_EXPECTS(!p.limited, status::not_implemented,
                      "parameter 'ctr_leaf_count_limit': with counter_calc_method Full and an eval set (a Counter "
                      "CTR's table bounded over the learn and eval rows) not implemented");
          // The eval rows count too, and the eval combinations the learn rows lack become keys.
          std::unordered_map<std::uint64_t, std::uint32_t> id_of;
          for (std::size_t id = 0; id < unique; ++id) id_of.emplace(p.keys[id], static_cast<std::uint32_t>(id));
          std::vector<std::uint64_t> marked = row_keys(p.proj, true);
          for (std::uint64_t& k : marked) {
            const auto it = id_of.find(k);
            if (it != id_of.end()) {
              ++t.counts[it->second];
              k = model::ctr_empty_hash;
            }
          }
          add_unseen_keys(t, unseen_keys_of_rows(marked));
          counted += ne_;
        }
        t.counter_denominator = base.type == model::ctr_type::counter
                                    ? (unique > 0 ? *std::max_element(t.counts.begin(), t.counts.end()) : 0)
                                    : static_cast<std::int32_t>(counted);
        break;
      }
    }
    prepared_.tables.push_back(std::move(t));
    return prepared_.tables.back();
  }

  // The learn values of one CTR feature of projection p: ordered for the target types, from the
  // full table for the counter types.
  std::vector<float> learn_values(const host_projection& p, const model::ctr_description& d) {
    std::vector<float> v(static_cast<std::size_t>(n_));
    const model::ctr_type t = d.base.type;
    const std::size_t unique = p.keys.size();
    if (is_counter(t)) {
      const model::ctr_table& table = table_of(p, d.base);
      for (std::int64_t r = 0; r < n_; ++r) {
        const std::uint32_t id = p.ids[static_cast<std::size_t>(r)];
        v[static_cast<std::size_t>(r)] =
            counter_value(static_cast<std::uint32_t>(table.counts[id]),
                          static_cast<std::uint32_t>(table.counter_denominator), d.prior_num, d.prior_denom);
      }
      return v;
    }
    std::vector<std::uint32_t> total(unique, 0);
    if (t == model::ctr_type::float_target_mean_value) {
      std::vector<std::int64_t> sums(unique, 0);
      for (std::uint32_t r : order_) {
        const std::uint32_t id = p.ids[r];
        v[r] = ordered_float_mean_value(sums[id], total[id], fixed_scale_, d.prior_num, d.prior_denom);
        sums[id] += to_fixed(targets_[r], fixed_scale_);
        ++total[id];
      }
      return v;
    }
    // Target types: per key the rows of each class seen so far; the feature's terms from them.
    const auto C = static_cast<std::size_t>(classes_);
    std::vector<std::uint32_t> seen(unique * C, 0);
    for (std::uint32_t r : order_) {
      const std::uint32_t id = p.ids[r];
      std::uint32_t terms = 0;
      for (std::size_t c = 0; c < C; ++c) {
        terms += seen[id * C + c] * target_term(t, d.target_border_idx, static_cast<std::uint8_t>(c));
      }
      v[r] = ordered_target_value(t, classes_, terms, total[id], d.prior_num, d.prior_denom);
      ++seen[id * C + cls_[r]];
      ++total[id];
    }
    return v;
  }

  // Quantizes one column as the derived columns are (the CTR's border count and type, no NaNs).
  // With borders shared between permutations: binned with the column's shared borders when it has
  // them (a column another permutation committed).
  void quantize_column(const std::vector<float>& values, const ctr_spec& s, host_column& out) {
    pool_parts parts;
    parts.features.push_back(float_column(values.data(), n_, memory_kind::host, -1));
    const pool one = pool::borrow(learn_.ctx(), std::move(parts));
    const auto known = shared_ ? shared_->find(out.desc) : combination_borders::iterator{};
    quantize::host_quantized q;
    if (shared_ && known != shared_->end()) {
      quantize::host_quantized like;
      like.features = 1;
      like.borders.assign(static_cast<std::size_t>(quantize::border_stride), 0.f);
      std::copy(known->second.begin(), known->second.end(), like.borders.begin());
      like.border_count = {static_cast<std::int32_t>(known->second.size())};
      like.mode = {static_cast<std::uint8_t>(quantize::nan_mode::forbidden)};
      q = quantize::binarize_host(one, like);
    } else {
      quantize::options qo;
      qo.border_count = s.ctr_border_count;
      qo.type = s.ctr_border_type;
      qo.mode = quantize::nan_mode::forbidden;
      q = quantize::quantize_host(one, qo);
    }
    const auto count = static_cast<std::size_t>(q.border_count[0]);
    out.borders.assign(q.borders.begin(), q.borders.begin() + static_cast<std::ptrdiff_t>(count));
    out.bins.resize(static_cast<std::size_t>(n_));
    for (std::int64_t r = 0; r < n_; ++r)
      out.bins[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(q.bin(r, 0));
  }

  // The keys and candidate columns of each projection (each from its keys: `cached` is not used).
 public:
  template <class Cached>
  std::vector<std::unique_ptr<host_projection>> make_projections(const std::vector<model::projection>& projs,
                                                                 const Cached& /*cached*/) {
    std::vector<std::unique_ptr<host_projection>> out;
    for (const model::projection& proj : projs) out.push_back(make_projection(proj));
    return out;
  }

 private:
  std::unique_ptr<host_projection> make_projection(const model::projection& proj) {
    auto p = std::make_unique<host_projection>();
    p->proj = proj;
    std::unordered_map<std::uint64_t, std::uint32_t> id_of;
    p->ids.resize(static_cast<std::size_t>(n_));
    const std::vector<std::uint64_t> keys = row_keys(proj, false);
    for (std::int64_t r = 0; r < n_; ++r) {
      const auto [at, added] =
          id_of.emplace(keys[static_cast<std::size_t>(r)], static_cast<std::uint32_t>(p->keys.size()));
      if (added) p->keys.push_back(keys[static_cast<std::size_t>(r)]);
      p->ids[static_cast<std::size_t>(r)] = at->second;
    }
    const std::vector<std::uint32_t> kept =
        apply_leaf_count_limit(p->ids, p->keys.size(), leaf_count_limit_of(o_, proj));
    if (!kept.empty()) {
      std::vector<std::uint64_t> kept_keys;
      for (std::uint32_t id : kept) kept_keys.push_back(p->keys[id]);
      p->keys = std::move(kept_keys);
      p->limited = true;
    }
    if (!specs_.empty()) ensure_targets(specs_.front());
    for (const combination_feature& f : projection_features(proj, specs_, classes_)) {
      host_column c;
      c.desc = f.desc;
      quantize_column(learn_values(*p, c.desc), specs_[f.spec], c);
      p->columns.push_back(std::move(c));
    }
    return p;
  }

 private:
  const pool& learn_;
  const pool* eval_;
  options o_;
  std::uint64_t seed_;
  prepared_data& prepared_;
  std::int64_t n_ = 0, ne_ = 0;
  bool binarize_ = false, multiclass_ = false;
  int classes_ = 2;
  std::vector<float> targets_;
  std::vector<ctr_spec> specs_;
  std::vector<std::uint8_t> nan_is_one_;  // per float feature: NaN goes to the "1" side
  std::map<std::int32_t, std::vector<std::uint32_t>> hashes_, eval_hashes_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint8_t> cls_;
  double fixed_scale_ = 1.0;
  std::shared_ptr<combination_borders> shared_;  // several permutations: the committed columns' borders
};

}  // namespace

std::unique_ptr<train::search_extension> make_combinations_host(const pool& learn, const pool* eval, const options& o,
                                                                const ctr_targets& targets, std::uint64_t seed,
                                                                int max_complexity, prepared_data& prepared,
                                                                std::shared_ptr<combination_borders> shared) {
  auto ext = std::make_unique<combination_search<host_primitives>>(prepared, max_complexity, o.ctr_leaf_count_limit,
                                                                   learn, eval, o, targets, seed);
  if (shared) ext->share_borders(std::move(shared));
  return ext;
}

}  // namespace cbg::ctr
