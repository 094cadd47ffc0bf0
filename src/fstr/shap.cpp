// SPDX-License-Identifier: Apache-2.0
// SHAP values of oblivious trees (CatBoost's "Regular" calculation): per tree and leaf, the
// TreeSHAP path algorithm (Lundberg et al., arXiv:1802.03888) walked from the root split, which
// is the tree's last split, with the subtree weights from the leaf weights; then per row the sum
// of its leaves' contributions (shap_math.hpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/fstr/feature_importance.hpp"
#include "src/fstr/model_features.hpp"
#include "src/fstr/shap_tables.hpp"

namespace cbg::fstr {

namespace {

// |a - b| <= 1e-13 * min(|a|, |b|), CatBoost's FuzzyEquals, used as "x is zero" on 1 + x.
bool fuzzy_zero(double x) {
  const double a = 1 + x, b = 1.0;
  return std::fabs(a - b) <= 1e-13 * std::min(std::fabs(a), std::fabs(b));
}

struct path_element {
  int feature = -1;
  double zero_fraction = 0;
  double one_fraction = 0;
  double weight = 0;
};
using path = std::vector<path_element>;

path extend(const path& old, double zero_fraction, double one_fraction, int feature) {
  const std::size_t length = old.size();
  path p(old);
  p.push_back({feature, zero_fraction, one_fraction, length == 0 ? 1.0 : 0.0});
  for (int i = static_cast<int>(length) - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    p[u + 1].weight += one_fraction * p[u].weight * (i + 1) / static_cast<double>(length + 1);
    p[u].weight = zero_fraction * p[u].weight * static_cast<double>(length - u) / static_cast<double>(length + 1);
  }
  return p;
}

path unwind(const path& old, std::size_t erase) {
  const std::size_t length = old.size();
  path p(old.begin(), old.end() - 1);
  for (std::size_t i = erase; i + 1 < length; ++i) {
    p[i].feature = old[i + 1].feature;
    p[i].zero_fraction = old[i + 1].zero_fraction;
    p[i].one_fraction = old[i + 1].one_fraction;
  }
  const double one = old[erase].one_fraction, zero = old[erase].zero_fraction;
  double weight_diff = old[length - 1].weight;
  const auto n = static_cast<double>(length);
  if (!fuzzy_zero(one)) {
    for (int i = static_cast<int>(length) - 2; i >= 0; --i) {
      const auto u = static_cast<std::size_t>(i);
      const double old_weight = p[u].weight;
      p[u].weight = weight_diff * n / (one * (i + 1));
      weight_diff = old_weight - p[u].weight * zero * static_cast<double>(length - u - 1) / n;
    }
  } else {
    for (int i = static_cast<int>(length) - 2; i >= 0; --i) {
      const auto u = static_cast<std::size_t>(i);
      p[u].weight *= n / (zero * static_cast<double>(length - u - 1));
    }
  }
  return p;
}

struct contribution {
  int feature;
  std::vector<double> values;
};

// One tree's walk towards leaf `target`.
struct tree_walk {
  const model::model& m;
  const std::vector<std::int32_t>& class_of_binary;
  const std::vector<std::vector<double>>& subtree_weights;  // [depth][node]
  std::size_t tree;
  std::size_t first_leaf;  // number of the tree's leaf 0 over all trees
  std::size_t target;
  double mean_approx;  // subtracted from the leaf values (the tree's mean over dimensions, MultiClass)
  std::vector<contribution>& out;

  void update(const path& p, std::size_t leaf) const {
    const auto dims = static_cast<std::size_t>(m.approx_dimension);
    const std::size_t first = first_leaf;
    for (std::size_t e = 1; e < p.size(); ++e) {
      const path u = unwind(p, e);
      double weight_sum = 0;
      for (const auto& x : u) weight_sum += x.weight;
      const path_element& el = p[e];
      const double coefficient = 1.0 * weight_sum * (el.one_fraction - el.zero_fraction);
      auto it = std::find_if(out.begin(), out.end(), [&](const contribution& c) { return c.feature == el.feature; });
      if (it == out.end()) {
        out.push_back({el.feature, std::vector<double>(dims)});
        for (std::size_t k = 0; k < dims; ++k) {
          out.back().values[k] = coefficient * (m.leaf_values[(first + leaf) * dims + k] - mean_approx);
        }
      } else {
        for (std::size_t k = 0; k < dims; ++k) {
          it->values[k] += coefficient * (m.leaf_values[(first + leaf) * dims + k] - mean_approx);
        }
      }
    }
  }

  void walk(int depth, std::size_t node, const path& old, double zero_fraction, double one_fraction,
            int feature) const {
    path p = extend(old, zero_fraction, one_fraction, feature);
    const int tree_depth = m.tree_sizes[tree];
    if (depth == tree_depth) {
      update(p, node);
      return;
    }
    double next_zero = 1.0, next_one = 1.0;
    const int remaining = tree_depth - depth - 1;
    const int cls = class_of_binary[static_cast<std::size_t>(
        m.tree_splits[static_cast<std::size_t>(m.tree_start_offsets[tree] + remaining)])];
    const auto same = std::find_if(p.begin(), p.end(), [&](const path_element& x) { return x.feature == cls; });
    if (same != p.end()) {
      const auto i = static_cast<std::size_t>(same - p.begin());
      next_zero = p[i].zero_fraction;
      next_one = p[i].one_fraction;
      p = unwind(p, i);
    }
    const std::size_t right = (target >> remaining) & 1;
    const std::size_t go = node * 2 + right, skip = node * 2 + (1 - right);
    const auto& w = subtree_weights;
    const auto d = static_cast<std::size_t>(depth);
    const double hot = w[d + 1][go] / w[d][node];
    const double cold = w[d + 1][skip] / w[d][node];
    if (!fuzzy_zero(w[d + 1][go])) walk(depth + 1, go, p, next_zero * hot, next_one, cls);
    if (!fuzzy_zero(w[d + 1][skip])) walk(depth + 1, skip, p, next_zero * cold, 0.0, cls);
  }
};

bool is_multiclass(const model::model& m) {
  if (m.approx_dimension <= 1) return false;
  const std::string loss = model::semantics(m).loss;
  if (!loss.empty()) return loss == "MultiClass";
  // No loss in the model: MultiClass when the last dimension is 0 everywhere (as CatBoost guesses).
  const auto dims = static_cast<std::size_t>(m.approx_dimension);
  for (std::size_t i = dims - 1; i < m.leaf_values.size(); i += dims) {
    if (std::fabs(m.leaf_values[i]) > 1e-12) return false;
  }
  return true;
}

bool has_valued_empty_leaf(const model::model& m) {
  const auto dims = static_cast<std::size_t>(m.approx_dimension);
  for (std::size_t leaf = 0; leaf < m.leaf_weights.size(); ++leaf) {
    if (m.leaf_weights[leaf] != 0) continue;
    double sum = 0;
    for (std::size_t k = 0; k < dims; ++k) sum += std::fabs(m.leaf_values[leaf * dims + k]);
    if (sum >= 1e-9) return true;
  }
  return false;
}

}  // namespace

std::vector<double> shap_leaf_weights(const model::model& m, const pool_leaves* pool) {
  const bool add_pool = has_valued_empty_leaf(m);
  if (!m.leaf_weights.empty() && !add_pool) return m.leaf_weights;
  CBG_EXPECTS(pool != nullptr, status::bad_data,
              "SHAP values need a model with leaf weights or a pool to count them on");
  CBG_EXPECTS(pool->rows > 0, status::bad_data, "the pool has no rows to count leaf weights on");
  std::vector<double> w = pool_leaf_weights(m, *pool);
  if (!m.leaf_weights.empty()) {
    for (std::size_t i = 0; i < w.size(); ++i) w[i] += m.leaf_weights[i];
  }
  return w;
}

int shap_dimensions(const model::model& m) {
  return model::semantics(m).loss == "RMSEWithUncertainty" ? 1 : m.approx_dimension;
}

shap_tables prepare_shap(const model::model& m, const std::vector<double>& leaf_weights, bool by_class) {
  CBG_EXPECTS(m.scale == 1.0, status::unsupported, "SHAP values need a model of scale 1");
  const combination_classes classes = combination_classes_of(m);
  const auto dims = static_cast<std::size_t>(m.approx_dimension);
  const bool multiclass = is_multiclass(m);
  shap_tables t;
  t.dims = m.approx_dimension;
  t.leaf_entry_begin.push_back(0);
  std::size_t first = 0;
  for (std::size_t tree = 0; tree < m.tree_count(); ++tree) {
    const int depth = m.tree_sizes[tree];
    const std::size_t leaves = std::size_t{1} << depth;
    CBG_EXPECTS(first + leaves <= leaf_weights.size(), status::bad_data, "too few leaf weights for the model");
    std::vector<std::vector<double>> w(static_cast<std::size_t>(depth) + 1);
    w[static_cast<std::size_t>(depth)].assign(leaf_weights.begin() + static_cast<std::ptrdiff_t>(first),
                                              leaf_weights.begin() + static_cast<std::ptrdiff_t>(first + leaves));
    for (int d = depth - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      w[u].resize(std::size_t{1} << d);
      for (std::size_t n = 0; n < w[u].size(); ++n) w[u][n] = w[u + 1][2 * n] + w[u + 1][2 * n + 1];
    }
    std::vector<double> mean(dims, 0.0);
    for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
      for (std::size_t k = 0; k < dims; ++k) {
        mean[k] += m.leaf_values[(first + leaf) * dims + k] * w[static_cast<std::size_t>(depth)][leaf];
      }
    }
    for (double& x : mean) x /= w[0][0];
    double mean_approx = 0;
    if (multiclass) {
      for (double x : mean) mean_approx += x;
      mean_approx /= static_cast<double>(dims);
    }
    t.tree_first_leaf.push_back(static_cast<std::int64_t>(first));
    t.tree_means.insert(t.tree_means.end(), mean.begin(), mean.end());
    for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
      std::vector<contribution> internal;
      const tree_walk walk{m, classes.class_of_binary, w, tree, first, leaf, mean_approx, internal};
      walk.walk(0, 0, {}, 1.0, 1.0, -1);
      std::vector<contribution> entries;
      if (by_class) {
        entries = std::move(internal);
      } else {
        for (const contribution& c : internal) {
          const auto& flat = classes.flat[static_cast<std::size_t>(c.feature)];
          const auto parts = static_cast<double>(flat.size());
          for (std::int64_t f : flat) {
            auto it = std::find_if(entries.begin(), entries.end(),
                                   [&](const contribution& x) { return x.feature == static_cast<int>(f); });
            if (it == entries.end()) {
              entries.push_back({static_cast<int>(f), std::vector<double>(dims)});
              for (std::size_t k = 0; k < dims; ++k) entries.back().values[k] = c.values[k] / parts;
            } else {
              for (std::size_t k = 0; k < dims; ++k) it->values[k] += c.values[k] / parts;
            }
          }
        }
      }
      for (const contribution& c : entries) {
        t.features.push_back(c.feature);
        t.values.insert(t.values.end(), c.values.begin(), c.values.end());
      }
      t.leaf_entry_begin.push_back(static_cast<std::int64_t>(t.features.size()));
    }
    first += leaves;
  }
  return t;
}

void shap_values(const model::model& m, const std::vector<double>& leaf_weights, const pool_leaves& p,
                 std::int64_t features, double* out) {
  CBG_EXPECTS(features >= static_cast<std::int64_t>(m.flat_feature_count()), status::shape,
              fmt::format("the model reads {} features but the data has {}", m.flat_feature_count(), features));
  const shap_tables t = prepare_shap(m, leaf_weights, /*by_class=*/false);
  const shap_table_view v = t.view();
  const int out_dims = shap_dimensions(m);
  const std::int64_t columns = features + 1;
  const std::size_t per_row = static_cast<std::size_t>(out_dims) * static_cast<std::size_t>(columns);
  const std::size_t trees = m.tree_count();
  std::fill(out, out + p.rows * per_row, 0.0);
  for (std::size_t r = 0; r < p.rows; ++r) {
    double* row = out + r * per_row;
    add_row_shap(v, p.leaves.data() + r * trees, out_dims, columns, row);
    for (int d = 0; d < out_dims; ++d) row[d * columns + columns - 1] += m.bias[static_cast<std::size_t>(d)];
  }
}

}  // namespace cbg::fstr
