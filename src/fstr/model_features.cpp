// SPDX-License-Identifier: Apache-2.0
#include "src/fstr/model_features.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "cbg/core/error.hpp"

namespace cbg::fstr {

std::int64_t float_flat(const model::model& m, std::int32_t f) {
  return m.float_features.at(static_cast<std::size_t>(f)).flat_index;
}

std::int64_t cat_flat(const model::model& m, std::int32_t c) {
  return m.cat_features.at(static_cast<std::size_t>(c)).flat_index;
}

namespace {

split_feature split_feature_of(const model::model& m, const model::binary_feature& b) {
  switch (b.kind) {
    case model::split_kind::float_feature:
      return {b.kind, b.feature};
    case model::split_kind::one_hot:
      return {b.kind, m.one_hot_features[static_cast<std::size_t>(b.feature)].cat_index};
    case model::split_kind::ctr:
      break;
  }
  return {b.kind, b.feature};
}

}  // namespace

tree_split_features split_features_of(const model::model& m) {
  const std::vector<model::binary_feature> binary = model::binary_features(m);
  tree_split_features out;
  out.trees.resize(m.tree_count());
  for (std::size_t t = 0; t < m.tree_count(); ++t) {
    const auto begin = static_cast<std::size_t>(m.tree_start_offsets[t]);
    for (std::size_t s = begin; s < begin + static_cast<std::size_t>(m.tree_sizes[t]); ++s) {
      const split_feature f = split_feature_of(m, binary.at(static_cast<std::size_t>(m.tree_splits[s])));
      auto it = std::find(out.features.begin(), out.features.end(), f);
      if (it == out.features.end()) it = out.features.insert(out.features.end(), f);
      out.trees[t].push_back(static_cast<std::int32_t>(it - out.features.begin()));
    }
  }
  return out;
}

void credit_split_feature(const model::model& m, const split_feature& f, double value, std::vector<double>& flat) {
  switch (f.kind) {
    case model::split_kind::float_feature:
      flat[static_cast<std::size_t>(float_flat(m, f.index))] += value;
      return;
    case model::split_kind::one_hot:
      flat[static_cast<std::size_t>(cat_flat(m, f.index))] += value;
      return;
    case model::split_kind::ctr:
      break;
  }
  const model::projection& p = m.ctr_features[static_cast<std::size_t>(f.index)].ctr.base.proj;
  const auto parts = static_cast<double>(p.float_splits.size() + p.cat_features.size() + p.one_hot_splits.size());
  const double share = value / parts;
  for (const auto& s : p.float_splits) flat[static_cast<std::size_t>(float_flat(m, s.float_index))] += share;
  for (std::int32_t c : p.cat_features) flat[static_cast<std::size_t>(cat_flat(m, c))] += share;
  for (const auto& s : p.one_hot_splits) flat[static_cast<std::size_t>(cat_flat(m, s.cat_index))] += share;
}

std::vector<std::int64_t> interaction_features(const model::model& m, const split_feature& f) {
  if (f.kind == model::split_kind::float_feature) return {float_flat(m, f.index)};
  std::vector<std::int64_t> out;
  if (f.kind != model::split_kind::ctr) return out;
  const model::projection& p = m.ctr_features[static_cast<std::size_t>(f.index)].ctr.base.proj;
  for (const auto& s : p.float_splits) out.push_back(float_flat(m, s.float_index));
  for (std::int32_t c : p.cat_features) out.push_back(cat_flat(m, c));
  return out;
}

combination_classes combination_classes_of(const model::model& m) {
  struct item {
    std::vector<std::int64_t> flat;
    std::size_t buckets;
    split_feature feature;
  };
  std::vector<item> items;
  for (const auto& f : m.float_features) {
    if (f.borders.empty()) continue;
    items.push_back({{f.flat_index}, f.borders.size(), {model::split_kind::float_feature, f.index}});
  }
  for (const auto& o : m.one_hot_features) {
    items.push_back({{cat_flat(m, o.cat_index)}, o.values.size(), {model::split_kind::one_hot, o.cat_index}});
  }
  for (std::size_t k = 0; k < m.ctr_features.size(); ++k) {
    item it{{}, m.ctr_features[k].borders.size(), {model::split_kind::ctr, static_cast<std::int32_t>(k)}};
    for (std::int32_t c : m.ctr_features[k].ctr.base.proj.cat_features) it.flat.push_back(cat_flat(m, c));
    items.push_back(std::move(it));
  }
  std::vector<std::size_t> first_bucket(items.size(), 0);
  for (std::size_t i = 1; i < items.size(); ++i) first_bucket[i] = first_bucket[i - 1] + items[i - 1].buckets;
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return items[a].flat < items[b].flat; });

  combination_classes out;
  const std::size_t binary = items.empty() ? 0 : first_bucket.back() + items.back().buckets;
  out.class_of_binary.assign(binary, 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const item& it = items[order[k]];
    if (k == 0 || it.flat != items[order[k - 1]].flat) {
      out.flat.push_back(it.flat);
      out.representative.push_back(it.feature);
    }
    for (std::size_t b = 0; b < it.buckets; ++b) {
      out.class_of_binary[first_bucket[order[k]] + b] = static_cast<std::int32_t>(out.flat.size() - 1);
    }
  }
  return out;
}

}  // namespace cbg::fstr
