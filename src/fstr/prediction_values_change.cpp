// SPDX-License-Identifier: Apache-2.0
// PredictionValuesChange and Interaction (CatBoost's feature_str / calc_fstr), and the leaf
// weights of a pool.
#include <algorithm>
#include <functional>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/fstr/feature_importance.hpp"
#include "src/fstr/model_features.hpp"

namespace cbg::fstr {

namespace {

std::size_t total_leaves(const model::model& m) {
  std::size_t n = 0;
  for (std::int32_t depth : m.tree_sizes) n += std::size_t{1} << depth;
  return n;
}

void to_percents(std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  for (double& x : v) x *= 100. / total;
}

}  // namespace

std::vector<double> pool_leaf_weights(const model::model& m, const pool_leaves& p) {
  const std::size_t trees = m.tree_count();
  CBG_EXPECTS(p.leaves.size() == p.rows * trees, status::internal, "leaf indexes of the wrong size");
  std::vector<double> w(total_leaves(m), 0.0);
  std::size_t first = 0;
  for (std::size_t t = 0; t < trees; ++t) {
    for (std::size_t r = 0; r < p.rows; ++r) {
      w[first + p.leaves[r * trees + t]] += p.weights.empty() ? 1.0 : static_cast<double>(p.weights[r]);
    }
    first += std::size_t{1} << m.tree_sizes[t];
  }
  return w;
}

std::vector<double> prediction_values_change(const model::model& m, const std::vector<double>& leaf_weights) {
  CBG_EXPECTS(!leaf_weights.empty(), status::bad_data,
              "PredictionValuesChange needs the model's leaf weights (this model has none) or a pool to count them on");
  CBG_EXPECTS(leaf_weights.size() == total_leaves(m), status::bad_data,
              fmt::format("{} leaf weights for a model of {} leaves", leaf_weights.size(), total_leaves(m)));
  const tree_split_features sf = split_features_of(m);
  const auto dims = static_cast<std::size_t>(m.approx_dimension);
  std::vector<double> effect(sf.features.size(), 0.0);
  std::size_t first = 0;
  for (std::size_t t = 0; t < m.tree_count(); ++t) {
    const std::size_t leaves = std::size_t{1} << m.tree_sizes[t];
    const double* values = m.leaf_values.data() + first * dims;
    const double* weights = leaf_weights.data() + first;
    for (std::size_t d = 0; d < sf.trees[t].size(); ++d) {
      double& e = effect[static_cast<std::size_t>(sf.trees[t][d])];
      for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
        const std::size_t other = leaf ^ (std::size_t{1} << d);
        if (other < leaf) continue;
        const double c1 = weights[leaf], c2 = weights[other];
        if (c1 == 0 || c2 == 0) continue;
        for (std::size_t k = 0; k < dims; ++k) {
          const double v1 = values[leaf * dims + k], v2 = values[other * dims + k];
          const double mean = (v1 * c1 + v2 * c2) / (c1 + c2);
          e += (v1 - mean) * (v1 - mean) * c1 + (v2 - mean) * (v2 - mean) * c2;
        }
      }
    }
    first += leaves;
  }
  to_percents(effect);
  // Credited in CatBoost's order (descending effect), which fixes the rounding of the sums.
  std::vector<std::pair<double, int>> order;
  for (std::size_t i = 0; i < effect.size(); ++i) order.emplace_back(effect[i], static_cast<int>(i));
  std::stable_sort(order.begin(), order.end(), std::greater<>());
  std::vector<double> flat(m.flat_feature_count(), 0.0);
  for (const auto& [value, i] : order) credit_split_feature(m, sf.features[static_cast<std::size_t>(i)], value, flat);
  return flat;
}

std::vector<feature_pair_score> interaction(const model::model& m) {
  CBG_EXPECTS(m.scale == 1.0, status::unsupported, "Interaction needs a model of scale 1");
  const tree_split_features sf = split_features_of(m);
  const auto dims = static_cast<std::size_t>(m.approx_dimension);
  std::map<std::pair<int, int>, double> by_split_pair;
  std::size_t first = 0;
  for (std::size_t t = 0; t < m.tree_count(); ++t) {
    const std::size_t leaves = std::size_t{1} << m.tree_sizes[t];
    const double* values = m.leaf_values.data() + first * dims;
    const auto& src = sf.trees[t];
    for (std::size_t i = 0; i + 1 < src.size(); ++i) {
      for (std::size_t j = i + 1; j < src.size(); ++j) {
        double delta = 0;
        for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
          const bool a = ((leaf >> i) & 1) != 0, b = ((leaf >> j) & 1) != 0;
          const double sign = a != b ? 1.0 : -1.0;
          for (std::size_t k = 0; k < dims; ++k) delta += sign * values[leaf * dims + k];
        }
        int f1 = src[i], f2 = src[j];
        if (f2 < f1) std::swap(f1, f2);
        if (f1 == f2) continue;
        by_split_pair[{f1, f2}] += std::fabs(delta);
      }
    }
    first += leaves;
  }
  std::map<std::pair<std::int64_t, std::int64_t>, double> by_flat_pair;
  double total = 0;
  for (const auto& [pair, score] : by_split_pair) {
    const auto a = interaction_features(m, sf.features[static_cast<std::size_t>(pair.first)]);
    const auto b = interaction_features(m, sf.features[static_cast<std::size_t>(pair.second)]);
    for (std::int64_t f0 : a) {
      for (std::int64_t f1 : b) {
        if (f0 == f1) continue;
        // As CatBoost: the swap that orders the pair also changes f0 for the rest of the inner
        // loop (visible where a CTR's projection shares a feature with the other split feature).
        if (f1 < f0) std::swap(f0, f1);
        by_flat_pair[{f0, f1}] += score / static_cast<double>(a.size() * b.size());
      }
    }
    total += score;
  }
  std::vector<feature_pair_score> out;
  for (const auto& [pair, score] : by_flat_pair) out.push_back({pair.first, pair.second, score / total * 100});
  std::stable_sort(out.begin(), out.end(),
                   [](const feature_pair_score& x, const feature_pair_score& y) { return x.score > y.score; });
  return out;
}

}  // namespace cbg::fstr
