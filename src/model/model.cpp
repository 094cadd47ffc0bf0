// SPDX-License-Identifier: Apache-2.0
// The model type's checks and derived facts: binary-feature order, validation, CTR bucket building,
// post-processing semantics from the info map.
#include "cbg/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/model/io.hpp"

namespace cbg::model {

namespace {

constexpr const char* ctr_names[ctr_type_count] = {
    "Borders", "Buckets", "BinarizedTargetMeanValue", "FloatTargetMeanValue", "Counter", "FeatureFreq"};

constexpr int max_depth = 16;

[[noreturn]] void bad(const std::string& what) { CBG_FAIL(status::format, "invalid model: " + what); }

template <class T>
bool strictly_ascending(const std::vector<T>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != v[i]) return false;  // NaN
    if (i > 0 && !(v[i - 1] < v[i])) return false;
  }
  return true;
}

bool is_mean(ctr_type t) {
  return t == ctr_type::binarized_target_mean_value || t == ctr_type::float_target_mean_value;
}
bool is_counter(ctr_type t) { return t == ctr_type::counter || t == ctr_type::feature_freq; }

void check_projection(const model& m, const projection& p, const std::string& where) {
  const auto n_cat = static_cast<std::int32_t>(m.cat_features.size());
  const auto n_float = static_cast<std::int32_t>(m.float_features.size());
  for (std::int32_t c : p.cat_features)
    if (c < 0 || c >= n_cat) bad(fmt::format("{}: categorical feature {} out of range", where, c));
  for (const auto& s : p.float_splits)
    if (s.float_index < 0 || s.float_index >= n_float)
      bad(fmt::format("{}: float feature {} out of range", where, s.float_index));
  for (const auto& s : p.one_hot_splits)
    if (s.cat_index < 0 || s.cat_index >= n_cat)
      bad(fmt::format("{}: categorical feature {} out of range", where, s.cat_index));
  if (p.cat_features.empty() && p.float_splits.empty() && p.one_hot_splits.empty()) bad(where + ": empty projection");
}

}  // namespace

const char* ctr_type_name(ctr_type t) noexcept {
  const auto i = static_cast<int>(t);
  return i >= 0 && i < ctr_type_count ? ctr_names[i] : "?";
}

bool ctr_type_from_name(const std::string& name, ctr_type& out) noexcept {
  for (int i = 0; i < ctr_type_count; ++i) {
    if (name == ctr_names[i]) {
      out = static_cast<ctr_type>(i);
      return true;
    }
  }
  return false;
}

const char* nan_treatment_name(nan_treatment t) noexcept {
  switch (t) {
    case nan_treatment::as_is:
      return "AsIs";
    case nan_treatment::as_false:
      return "AsFalse";
    case nan_treatment::as_true:
      return "AsTrue";
  }
  return "?";
}

std::size_t ctr_table::key_count() const noexcept {
  if (is_mean(base.type)) return means.size();
  if (is_counter(base.type)) return counts.size();
  return target_classes_count > 0 ? counts.size() / static_cast<std::size_t>(target_classes_count) : 0;
}

void build_ctr_buckets(const std::vector<std::uint64_t>& keys, ctr_table& table) {
  std::size_t n = 2;
  while (n < 2 * keys.size()) n *= 2;
  table.bucket_hashes.assign(n, ctr_empty_hash);
  table.bucket_indices.assign(n, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t key = keys[i];
    if (key == ctr_empty_hash) bad("a CTR table key equals the empty-bucket marker");
    std::size_t pos = static_cast<std::size_t>(key) & (n - 1);
    while (table.bucket_hashes[pos] != ctr_empty_hash) {
      if (table.bucket_hashes[pos] == key) bad(fmt::format("duplicate CTR table key {}", key));
      pos = (pos + 1) & (n - 1);
    }
    table.bucket_hashes[pos] = key;
    table.bucket_indices[pos] = static_cast<std::uint32_t>(i);
  }
}

std::size_t model::flat_feature_count() const noexcept {
  std::int64_t n = 0;
  for (const auto& f : float_features) n = std::max<std::int64_t>(n, std::int64_t{f.flat_index} + 1);
  for (const auto& f : cat_features) n = std::max<std::int64_t>(n, std::int64_t{f.flat_index} + 1);
  return static_cast<std::size_t>(n);
}

const std::string* model::info_value(const std::string& key) const noexcept {
  for (const auto& [k, v] : info)
    if (k == key) return &v;
  return nullptr;
}

std::vector<binary_feature> binary_features(const model& m) {
  std::vector<binary_feature> out;
  for (std::size_t f = 0; f < m.float_features.size(); ++f)
    for (std::size_t b = 0; b < m.float_features[f].borders.size(); ++b)
      out.push_back({split_kind::float_feature, static_cast<std::int32_t>(f), static_cast<std::int32_t>(b)});
  for (std::size_t f = 0; f < m.one_hot_features.size(); ++f)
    for (std::size_t v = 0; v < m.one_hot_features[f].values.size(); ++v)
      out.push_back({split_kind::one_hot, static_cast<std::int32_t>(f), static_cast<std::int32_t>(v)});
  for (std::size_t f = 0; f < m.ctr_features.size(); ++f)
    for (std::size_t b = 0; b < m.ctr_features[f].borders.size(); ++b)
      out.push_back({split_kind::ctr, static_cast<std::int32_t>(f), static_cast<std::int32_t>(b)});
  return out;
}

void validate(const model& m) {
  if (m.approx_dimension < 1 || m.approx_dimension > max_approx_dimension)
    bad(fmt::format("approx dimension {} out of range", m.approx_dimension));
  const auto dim = static_cast<std::size_t>(m.approx_dimension);

  std::set<std::int32_t> flat;
  for (std::size_t i = 0; i < m.float_features.size(); ++i) {
    const auto& f = m.float_features[i];
    if (f.index != static_cast<std::int32_t>(i)) bad(fmt::format("float feature {} has index {}", i, f.index));
    if (f.flat_index < 0 || !flat.insert(f.flat_index).second)
      bad(fmt::format("float feature {}: flat index {} negative or repeated", i, f.flat_index));
    if (!strictly_ascending(f.borders)) bad(fmt::format("float feature {}: borders not strictly ascending", i));
    if (static_cast<int>(f.nan_value_treatment) > 2) bad(fmt::format("float feature {}: bad NaN treatment", i));
  }
  for (std::size_t i = 0; i < m.cat_features.size(); ++i) {
    const auto& f = m.cat_features[i];
    if (f.index != static_cast<std::int32_t>(i)) bad(fmt::format("categorical feature {} has index {}", i, f.index));
    if (f.flat_index < 0 || !flat.insert(f.flat_index).second)
      bad(fmt::format("categorical feature {}: flat index {} negative or repeated", i, f.flat_index));
  }
  for (std::size_t i = 0; i < m.one_hot_features.size(); ++i) {
    const auto& f = m.one_hot_features[i];
    if (f.cat_index < 0 || f.cat_index >= static_cast<std::int32_t>(m.cat_features.size()))
      bad(fmt::format("one-hot feature {}: categorical feature {} out of range", i, f.cat_index));
    std::vector<std::int32_t> sorted = f.values;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      bad(fmt::format("one-hot feature {}: repeated values", i));
    if (!f.string_values.empty() && f.string_values.size() != f.values.size())
      bad(fmt::format("one-hot feature {}: {} string values for {} values", i, f.string_values.size(),
                      f.values.size()));
  }

  // CTR tables: well-formed, one per base.
  for (std::size_t i = 0; i < m.ctr_tables.size(); ++i) {
    const auto& t = m.ctr_tables[i];
    const std::string where = fmt::format("CTR table {}", i);
    if (static_cast<int>(t.base.type) >= ctr_type_count) bad(where + ": unknown CTR type");
    check_projection(m, t.base.proj, where);
    const std::size_t n = t.bucket_hashes.size();
    if (n == 0 || (n & (n - 1)) != 0 || t.bucket_indices.size() != n)
      bad(fmt::format("{}: bucket count {} is not a power of two", where, n));
    if (is_mean(t.base.type)) {
      if (!t.counts.empty()) bad(where + ": counts in a mean table");
    } else if (is_counter(t.base.type)) {
      if (!t.means.empty()) bad(where + ": means in a counter table");
    } else {
      if (!t.means.empty() || t.target_classes_count < 1 ||
          t.counts.size() % static_cast<std::size_t>(t.target_classes_count) != 0)
        bad(fmt::format("{}: {} counts do not fit {} target classes", where, t.counts.size(), t.target_classes_count));
    }
    const std::size_t keys = t.key_count();
    for (std::size_t b = 0; b < n; ++b)
      if (t.bucket_hashes[b] != ctr_empty_hash && t.bucket_indices[b] >= keys)
        bad(fmt::format("{}: bucket {} points at key {} of {}", where, b, t.bucket_indices[b], keys));
    for (std::size_t j = 0; j < i; ++j)
      if (m.ctr_tables[j].base == t.base) bad(fmt::format("CTR tables {} and {} have the same key", j, i));
  }
  for (std::size_t i = 0; i < m.ctr_features.size(); ++i) {
    const auto& f = m.ctr_features[i];
    const std::string where = fmt::format("CTR feature {}", i);
    if (static_cast<int>(f.ctr.base.type) >= ctr_type_count) bad(where + ": unknown CTR type");
    check_projection(m, f.ctr.base.proj, where);
    if (!strictly_ascending(f.borders)) bad(where + ": borders not strictly ascending");
    const ctr_table* table = nullptr;
    for (const auto& t : m.ctr_tables)
      if (t.base == f.ctr.base) table = &t;
    if (table == nullptr) bad(where + ": no CTR table for its projection and type");
    const auto tbi = f.ctr.target_border_idx;
    if (f.ctr.base.type == ctr_type::buckets && (tbi < 0 || tbi >= table->target_classes_count))
      bad(fmt::format("{}: target border index {} out of range", where, tbi));
    if (f.ctr.base.type == ctr_type::borders && (tbi < 0 || tbi >= table->target_classes_count))
      bad(fmt::format("{}: target border index {} out of range", where, tbi));
    if (f.ctr.base.type == ctr_type::borders && table->target_classes_count < 2)
      bad(where + ": a Borders table needs at least 2 target classes");
  }

  // Trees.
  const std::size_t n_trees = m.tree_sizes.size();
  if (m.tree_start_offsets.size() != n_trees)
    bad(fmt::format("{} tree start offsets for {} trees", m.tree_start_offsets.size(), n_trees));
  const auto n_binary = binary_features(m).size();
  std::uint64_t offset = 0, leaves = 0;
  for (std::size_t t = 0; t < n_trees; ++t) {
    const auto d = m.tree_sizes[t];
    if (d < 0 || d > max_depth) bad(fmt::format("tree {}: depth {} out of range 0..{}", t, d, max_depth));
    if (m.tree_start_offsets[t] < 0 || static_cast<std::uint64_t>(m.tree_start_offsets[t]) != offset)
      bad(fmt::format("tree {}: start offset {} (expected {})", t, m.tree_start_offsets[t], offset));
    offset += static_cast<std::uint64_t>(d);
    leaves += std::uint64_t{1} << d;
  }
  if (offset != m.tree_splits.size())
    bad(fmt::format("{} tree splits for trees of total depth {}", m.tree_splits.size(), offset));
  for (std::size_t i = 0; i < m.tree_splits.size(); ++i)
    if (m.tree_splits[i] < 0 || static_cast<std::size_t>(m.tree_splits[i]) >= n_binary)
      bad(fmt::format("tree split {} uses binary feature {} of {}", i, m.tree_splits[i], n_binary));
  if (m.leaf_values.size() != leaves * dim)
    bad(fmt::format("{} leaf values, expected {} ({} leaves x dimension {})", m.leaf_values.size(), leaves * dim,
                    leaves, dim));
  if (!m.leaf_weights.empty() && m.leaf_weights.size() != leaves)
    bad(fmt::format("{} leaf weights for {} leaves", m.leaf_weights.size(), leaves));
  if (!std::isfinite(m.scale)) bad("scale is not finite");
  if (m.bias.size() != dim) bad(fmt::format("{} bias values for dimension {}", m.bias.size(), dim));
  for (double b : m.bias)
    if (!std::isfinite(b)) bad("bias is not finite");
}

model_semantics semantics(const model& m) {
  model_semantics s;
  auto parse = [](const std::string* text) -> nlohmann::json {
    if (text == nullptr) return {};
    return nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  };
  if (const std::string* loss = m.info_value("loss_function")) {
    const auto j = parse(loss);
    if (j.is_object() && j.contains("type") && j["type"].is_string())
      s.loss = j["type"].get<std::string>();
    else if (!j.is_discarded() && j.is_string())
      s.loss = j.get<std::string>();
    else
      s.loss = *loss;
  }
  if (s.loss.empty()) {
    const auto params = parse(m.info_value("params"));
    if (params.is_object() && params.contains("loss_function")) {
      const auto& lf = params["loss_function"];
      if (lf.is_object() && lf.contains("type") && lf["type"].is_string())
        s.loss = lf["type"].get<std::string>();
      else if (lf.is_string())
        s.loss = lf.get<std::string>();
    }
  }
  if (const std::string* thr = m.info_value("binclass_probability_threshold")) {
    try {
      s.binclass_probability_threshold = std::stod(*thr);
    } catch (const std::exception&) {
      CBG_FAIL(status::format, "invalid model: binclass_probability_threshold is not a number: " + *thr);
    }
  }
  for (const char* key : {"class_params", "multiclass_params"}) {
    const auto cp = parse(m.info_value(key));
    if (!cp.is_object() || !cp.contains("class_names") || !cp["class_names"].is_array()) continue;
    for (const auto& c : cp["class_names"]) {
      if (c.is_string())
        s.class_names.push_back(c.get<std::string>());
      else
        s.class_names.push_back(c.dump());
    }
    break;
  }
  return s;
}

}  // namespace cbg::model
