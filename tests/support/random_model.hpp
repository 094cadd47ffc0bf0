// SPDX-License-Identifier: Apache-2.0
// Random CatBoost-shaped models and matching inputs, for the evaluator tests and cbgpu-apply-bench:
// float features (NaN treatments, more than 127 borders), one-hot features, CTR features of every
// type over projections of categorical features, float splits and one-hot splits, trees of mixed
// depths, several dimensions, Scale and Bias. Categorical inputs are integers (hashed as their
// decimal text, as CatBoost's Python package hashes ints).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cbg/model/apply_math.hpp"
#include "cbg/model/hash.hpp"
#include "cbg/model/model.hpp"

namespace cbg::test {

struct random_model_spec {
  int n_float = 6;
  int n_cat = 0;
  int n_one_hot = 0;  // one-hot features (over the first categorical features)
  int n_ctr = 0;      // CTR features
  int n_trees = 20;
  int min_depth = 0;
  int max_depth = 6;
  int dim = 1;
  int max_borders = 40;       // per float feature; one feature gets 200 (two byte slots)
  int cat_values = 12;        // categorical values are 0 .. cat_values - 1 (inputs also draw unseen ones)
  bool big_one_hot = false;   // one one-hot feature with 150 values (two byte slots)
  bool edge_features = true;  // float feature 1 gets 200 borders, float feature 2 none
  double scale = 1.0;
  bool bias = false;
  std::string loss;  // params.loss_function.type; "" leaves the info map empty
  std::uint64_t seed = 1;
};

// Integer categorical value -> CatBoost's hash (what the pool's integer columns are hashed to).
inline std::uint32_t int_cat_hash(std::int64_t v) { return model::cat_hash_int(v); }

inline model::model random_model(const random_model_spec& s) {
  namespace cm = cbg::model;
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> normal;
  const auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  cm::model m;
  m.approx_dimension = s.dim;

  // Flat layout: float and categorical features interleaved in a random order.
  std::vector<int> flat(static_cast<std::size_t>(s.n_float + s.n_cat));
  std::iota(flat.begin(), flat.end(), 0);
  std::shuffle(flat.begin(), flat.end(), rng);
  for (int f = 0; f < s.n_float; ++f) {
    cm::float_feature ff;
    ff.index = f;
    ff.flat_index = flat[static_cast<std::size_t>(f)];
    ff.has_nans = uniform(0, 2) != 0;
    ff.nan_value_treatment = static_cast<cm::nan_treatment>(uniform(0, 2));
    const int n_borders = s.edge_features && f == 1   ? 200
                          : s.edge_features && f == 2 ? 0
                                                      : uniform(1, std::max(1, s.max_borders));
    std::set<float> b;
    while (static_cast<int>(b.size()) < n_borders) b.insert(static_cast<float>(normal(rng)));
    ff.borders.assign(b.begin(), b.end());
    m.float_features.push_back(ff);
  }
  for (int c = 0; c < s.n_cat; ++c) {
    cm::cat_feature cf;
    cf.index = c;
    cf.flat_index = flat[static_cast<std::size_t>(s.n_float + c)];
    m.cat_features.push_back(cf);
  }
  const auto hash_of_value = [&](int v) { return static_cast<std::int32_t>(int_cat_hash(v)); };
  for (int i = 0; i < s.n_one_hot && s.n_cat > 0; ++i) {
    cm::one_hot_feature oh;
    oh.cat_index = i % s.n_cat;
    const int n_values = s.big_one_hot && i == 0 ? 150 : uniform(2, std::min(s.cat_values, 6));
    std::set<std::int32_t> vals;
    for (int v = 0; static_cast<int>(vals.size()) < n_values; ++v) vals.insert(hash_of_value(v));
    oh.values.assign(vals.begin(), vals.end());
    m.one_hot_features.push_back(oh);
  }
  // CTR features and one table per distinct base.
  for (int i = 0; i < s.n_ctr && s.n_cat > 0; ++i) {
    cm::ctr_feature cf;
    auto& proj = cf.ctr.base.proj;
    proj.cat_features.push_back(uniform(0, s.n_cat - 1));
    if (s.n_cat > 1 && uniform(0, 1) == 1) {
      const int other = uniform(0, s.n_cat - 1);
      if (other != proj.cat_features[0]) proj.cat_features.push_back(other);
    }
    if (s.n_float > 0 && uniform(0, 2) == 0)
      proj.float_splits.push_back({uniform(0, s.n_float - 1), static_cast<float>(normal(rng))});
    if (uniform(0, 3) == 0) proj.one_hot_splits.push_back({uniform(0, s.n_cat - 1), hash_of_value(uniform(0, 3))});
    cf.ctr.base.type = static_cast<cm::ctr_type>(i % 6);
    const bool classes = cf.ctr.base.type == cm::ctr_type::borders || cf.ctr.base.type == cm::ctr_type::buckets;
    const int n_classes = classes ? uniform(2, 3) : 0;
    cf.ctr.target_border_idx = classes ? uniform(0, n_classes - 1) : 0;
    cf.ctr.prior_num = static_cast<float>(uniform(0, 4)) * 0.25f;
    cf.ctr.prior_denom = 1.0f;
    cf.ctr.shift = uniform(0, 1) == 0 ? -0.0f : -0.5f;
    cf.ctr.scale = 15.0f;
    const int n_borders = s.edge_features && i == 0 ? 150 : uniform(1, 14);
    std::set<float> b;
    while (static_cast<int>(b.size()) < n_borders) b.insert(static_cast<float>(uniform(0, 200)) * 0.1f - 0.000001f);
    cf.borders.assign(b.begin(), b.end());

    bool have_table = false;
    for (const auto& t : m.ctr_tables) have_table = have_table || t.base == cf.ctr.base;
    if (!have_table) {
      cm::ctr_table t;
      t.base = cf.ctr.base;
      std::set<std::uint64_t> keys;
      for (int k = 0; k < 3 * s.cat_values; ++k) {
        std::vector<std::uint32_t> cats(static_cast<std::size_t>(s.n_cat));
        for (auto& h : cats) h = int_cat_hash(uniform(0, s.cat_values - 1));
        const float x = static_cast<float>(normal(rng));
        keys.insert(cm::projection_key(
            proj.cat_features.data(), proj.cat_features.size(), proj.float_splits.data(), proj.float_splits.size(),
            proj.one_hot_splits.data(), proj.one_hot_splits.size(),
            [&](std::int32_t c) { return cats[static_cast<std::size_t>(c)]; }, [&](std::int32_t) { return x; }));
      }
      const std::vector<std::uint64_t> key_list(keys.begin(), keys.end());
      cm::build_ctr_buckets(key_list, t);
      const std::size_t n = key_list.size();
      switch (t.base.type) {
        case cm::ctr_type::binarized_target_mean_value:
        case cm::ctr_type::float_target_mean_value:
          for (std::size_t k = 0; k < n; ++k)
            t.means.push_back({static_cast<float>(uniform(0, 30)) * 0.37f, uniform(1, 40)});
          break;
        case cm::ctr_type::counter:
        case cm::ctr_type::feature_freq:
          for (std::size_t k = 0; k < n; ++k) t.counts.push_back(uniform(0, 50));
          t.counter_denominator = 57;
          break;
        case cm::ctr_type::borders:
        case cm::ctr_type::buckets:
          t.target_classes_count = n_classes;
          for (std::size_t k = 0; k < n * static_cast<std::size_t>(n_classes); ++k) t.counts.push_back(uniform(0, 20));
          break;
      }
      m.ctr_tables.push_back(t);
    } else {
      for (const auto& t : m.ctr_tables)
        if (t.base == cf.ctr.base && t.target_classes_count > 0)
          cf.ctr.target_border_idx = std::min(cf.ctr.target_border_idx, t.target_classes_count - 1);
    }
    m.ctr_features.push_back(cf);
  }

  const std::size_t n_binary = cm::binary_features(m).size();
  std::int32_t offset = 0;
  for (int t = 0; t < s.n_trees; ++t) {
    const int depth = n_binary == 0 ? 0 : uniform(s.min_depth, s.max_depth);
    m.tree_sizes.push_back(depth);
    m.tree_start_offsets.push_back(offset);
    for (int d = 0; d < depth; ++d) m.tree_splits.push_back(uniform(0, static_cast<int>(n_binary) - 1));
    offset += depth;
    for (std::size_t l = 0; l < (std::size_t{1} << depth) * static_cast<std::size_t>(s.dim); ++l)
      m.leaf_values.push_back(normal(rng) * 0.1);  // full mantissas: the order of the sum shows
  }
  m.scale = s.scale;
  for (int k = 0; k < s.dim; ++k) m.bias.push_back(s.bias ? normal(rng) : 0.0);
  if (!s.loss.empty()) m.info.push_back({"params", "{\"loss_function\":{\"type\":\"" + s.loss + "\"}}"});
  return m;
}

// Inputs for `m`: flat columns, column-major (column j at [j * rows]). Float columns hold normal
// values (with NaNs, infinities and values equal to borders); categorical columns hold integers in
// 0 .. cat_values + 2 (the last ones unseen by the model).
struct random_inputs {
  std::int64_t rows = 0;
  std::vector<float> floats;       // [flat][rows]; NaN in categorical columns
  std::vector<std::int64_t> cats;  // [flat][rows]; 0 in numeric columns
  std::vector<bool> is_cat;        // per flat column
};

inline random_inputs random_data(const model::model& m, std::int64_t rows, int cat_values, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> pct(0, 99);
  random_inputs in;
  in.rows = rows;
  const auto n = static_cast<std::size_t>(m.flat_feature_count());
  in.is_cat.assign(n, false);
  for (const auto& c : m.cat_features) in.is_cat[static_cast<std::size_t>(c.flat_index)] = true;
  in.floats.assign(n * static_cast<std::size_t>(rows), std::numeric_limits<float>::quiet_NaN());
  in.cats.assign(n * static_cast<std::size_t>(rows), 0);
  for (const auto& f : m.float_features) {
    float* col = in.floats.data() + static_cast<std::size_t>(f.flat_index) * static_cast<std::size_t>(rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      const int p = pct(rng);
      float v = normal(rng);
      if (p < 8)
        v = std::numeric_limits<float>::quiet_NaN();
      else if (p < 9)
        v = std::numeric_limits<float>::infinity();
      else if (p < 10)
        v = -std::numeric_limits<float>::infinity();
      else if (p < 20 && !f.borders.empty())
        v = f.borders[static_cast<std::size_t>(pct(rng)) % f.borders.size()];
      col[r] = v;
    }
  }
  std::uniform_int_distribution<int> cat(0, cat_values + 2);
  for (const auto& c : m.cat_features) {
    std::int64_t* col = in.cats.data() + static_cast<std::size_t>(c.flat_index) * static_cast<std::size_t>(rows);
    for (std::int64_t r = 0; r < rows; ++r) col[r] = cat(rng);
  }
  return in;
}

}  // namespace cbg::test
