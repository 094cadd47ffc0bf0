// SPDX-License-Identifier: Apache-2.0
// CatBoost's JSON model layout (catboost-model-format.md §6), read and written with nlohmann-json.
#include <charconv>
#include <cstdio>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/model/io.hpp"
#include "src/model/json_number.hpp"

namespace cbg::model {

namespace {

using json = nlohmann::json;

[[noreturn]] void malformed(const std::string& what) { CBG_FAIL(status::format, "malformed JSON model: " + what); }
[[noreturn]] void unsupported(const std::string& what) {
  CBG_FAIL(status::unsupported, "unsupported CatBoost model: " + what);
}

const json& member(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) malformed(where + " is not an object");
  const auto it = obj.find(key);
  if (it == obj.end()) malformed(fmt::format("{} has no '{}'", where, key));
  return *it;
}
const json* optional_member(const json& obj, const char* key) {
  if (!obj.is_object()) malformed(std::string("an entry holding '") + key + "' is not an object");
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}
const json& array_of(const json& v, const std::string& where) {
  if (!v.is_array()) malformed(where + " is not an array");
  return v;
}
double as_double(const json& v, const std::string& where) {
  if (!v.is_number()) malformed(where + " is not a number");
  return v.get<double>();
}
float as_float(const json& v, const std::string& where) {
  const double d = as_double(v, where);
  if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
    malformed(where + " does not fit a float");
  const auto f = static_cast<float>(d);
  return f == 0.f ? 0.f : f;  // -0 -> +0 (CatBoost canonises CTR floats)
}
std::int64_t as_integer(const json& v, const std::string& where, std::int64_t lo, std::int64_t hi) {
  std::int64_t out = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi)) malformed(where + " is out of range");
      out = static_cast<std::int64_t>(u);
    } else {
      out = v.get<std::int64_t>();
    }
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != std::floor(d))
      malformed(where + " is not an integer in range");
    out = static_cast<std::int64_t>(d);
  } else {
    malformed(where + " is not an integer");
  }
  if (out < lo || out > hi) malformed(where + " is out of range");
  return out;
}
std::int32_t as_i32(const json& v, const std::string& where) {
  return static_cast<std::int32_t>(
      as_integer(v, where, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
}
std::string as_string(const json& v, const std::string& where) {
  if (!v.is_string()) malformed(where + " is not a string");
  return v.get<std::string>();
}
bool as_bool(const json& v, const std::string& where) {
  if (!v.is_boolean()) malformed(where + " is not a boolean");
  return v.get<bool>();
}
std::vector<float> floats(const json* v, const std::string& where) {
  std::vector<float> out;
  if (v == nullptr) return out;
  for (const auto& x : array_of(*v, where)) out.push_back(as_float(x, where));
  return out;
}

ctr_type parse_ctr_type(const json& v, const std::string& where) {
  ctr_type t{};
  if (!ctr_type_from_name(as_string(v, where), t)) malformed(where + ": unknown CTR type " + v.dump());
  return t;
}

projection parse_projection(const json& elements, const std::string& where) {
  projection p;
  for (const auto& e : array_of(elements, where)) {
    const std::string kind = as_string(member(e, "combination_element", where), where);
    if (kind == "cat_feature_value") {
      p.cat_features.push_back(as_i32(member(e, "cat_feature_index", where), where));
    } else if (kind == "float_feature") {
      p.float_splits.push_back(
          {as_i32(member(e, "float_feature_index", where), where), as_float(member(e, "border", where), where)});
    } else if (kind == "cat_feature_exact_value") {
      p.one_hot_splits.push_back(
          {as_i32(member(e, "cat_feature_index", where), where), as_i32(member(e, "value", where), where)});
    } else {
      malformed(where + ": unknown combination element '" + kind + "'");
    }
  }
  return p;
}

json projection_json(const projection& p) {
  json out = json::array();
  for (auto c : p.cat_features) out.push_back({{"cat_feature_index", c}, {"combination_element", "cat_feature_value"}});
  for (const auto& s : p.float_splits)
    out.push_back({{"border", static_cast<double>(s.border)},
                   {"combination_element", "float_feature"},
                   {"float_feature_index", s.float_index}});
  for (const auto& s : p.one_hot_splits)
    out.push_back(
        {{"cat_feature_index", s.cat_index}, {"combination_element", "cat_feature_exact_value"}, {"value", s.value}});
  return out;
}

void emit(const json& v, std::string& out, int indent);

// CatBoost's identifier of a CTR base: its JSON on one line, borders with 17 significant digits.
std::string ctr_identifier(const ctr_base& b) {
  std::string out;
  emit(json{{"identifier", projection_json(b.proj)}, {"type", ctr_type_name(b.type)}}, out, -1);
  return out;
}

bool is_mean(ctr_type t) {
  return t == ctr_type::binarized_target_mean_value || t == ctr_type::float_target_mean_value;
}
bool is_counter(ctr_type t) { return t == ctr_type::counter || t == ctr_type::feature_freq; }

ctr_table parse_ctr_table(const std::string& key, const json& value) {
  const std::string where = "ctr_data['" + key + "']";
  json id;
  try {
    id = json::parse(key);
  } catch (const json::exception&) {
    malformed(where + ": the key is not a CTR identifier");
  }
  ctr_table t;
  t.base.proj = parse_projection(member(id, "identifier", where), where);
  t.base.type = parse_ctr_type(member(id, "type", where), where);
  t.counter_denominator = as_i32(member(value, "counter_denominator", where), where + ".counter_denominator");
  const auto stride = as_integer(member(value, "hash_stride", where), where + ".hash_stride", 2, 1 << 20);
  const json& map = array_of(member(value, "hash_map", where), where + ".hash_map");
  if (map.size() % static_cast<std::size_t>(stride) != 0)
    malformed(where + ": hash_map length is not a multiple of hash_stride");
  const bool mean = is_mean(t.base.type), counter = is_counter(t.base.type);
  if ((mean && stride != 3) || (counter && stride != 2))
    malformed(fmt::format("{}: hash_stride {} does not fit type {}", where, stride, ctr_type_name(t.base.type)));
  if (!mean && !counter) t.target_classes_count = static_cast<std::int32_t>(stride - 1);
  // Entries as listed: the key, then its payload (stride - 1 numbers) from position i + 1.
  std::vector<std::uint64_t> keys;
  std::vector<std::size_t> at;
  std::size_t marker_at = 0;
  for (std::size_t i = 0; i < map.size(); i += static_cast<std::size_t>(stride)) {
    const std::string text = as_string(map[i], where + ".hash_map key");
    std::uint64_t h = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h);
    if (ec != std::errc{} || end != text.data() + text.size()) malformed(where + ": hash key '" + text + "'");
    // CatBoost's writer also lists its empty-bucket marker (with the payload of the key of index 0):
    // no object's hash matches it.
    if (h == ctr_empty_hash) {
      marker_at = i + 1;
      continue;
    }
    keys.push_back(h);
    at.push_back(i + 1);
  }
  build_ctr_buckets(keys, t);  // in the listed (bucket) order: the same buckets as the writer's
  // Bucket order loses the keys' index order; the key whose payload the marker repeats takes index 0
  // (swapping indices with the first listed key), so that writing the table again lists the same marker.
  const auto payload_equal = [&](std::size_t a, std::size_t b) {
    for (std::int64_t c = 0; c + 1 < stride; ++c) {
      if (map[a + static_cast<std::size_t>(c)] != map[b + static_cast<std::size_t>(c)]) return false;
    }
    return true;
  };
  if (marker_at != 0 && !keys.empty() && !payload_equal(at[0], marker_at)) {
    for (std::size_t k = 1; k < keys.size(); ++k) {
      if (!payload_equal(at[k], marker_at)) continue;
      std::swap(at[0], at[k]);
      for (std::size_t b = 0; b < t.bucket_hashes.size(); ++b) {
        std::uint32_t& index = t.bucket_indices[b];
        if (t.bucket_hashes[b] != ctr_empty_hash && (index == 0 || index == k))
          index = index == 0 ? static_cast<std::uint32_t>(k) : 0;
      }
      break;
    }
  }
  for (const std::size_t i : at) {
    if (mean) {
      t.means.push_back({as_float(map[i], where + " sum"), as_i32(map[i + 1], where + " count")});
    } else {
      for (std::int64_t c = 0; c + 1 < stride; ++c)
        t.counts.push_back(as_i32(map[i + static_cast<std::size_t>(c)], where + " count"));
    }
  }
  return t;
}

// Keys (with their table index) in bucket order, as CatBoost's writer lists them: it also lists
// the empty-bucket marker once, where the first empty bucket is, with the payload of index 0.
json ctr_table_json(const ctr_table& t) {
  json map = json::array();
  const std::size_t classes = static_cast<std::size_t>(std::max(t.target_classes_count, 1));
  bool marker_listed = false;
  for (std::size_t b = 0; b < t.bucket_hashes.size(); ++b) {
    const bool empty = t.bucket_hashes[b] == ctr_empty_hash;
    if (empty && (marker_listed || t.key_count() == 0)) continue;
    marker_listed = marker_listed || empty;
    const std::size_t k = empty ? 0 : t.bucket_indices[b];
    map.push_back(std::to_string(t.bucket_hashes[b]));
    if (is_mean(t.base.type)) {
      // Integral sums as integers: CatBoost's reader takes Sum with GetInteger().
      const float sum = t.means[k].sum;
      if (sum == std::floor(sum) && std::fabs(sum) < 9.0e15f)
        map.push_back(static_cast<std::int64_t>(sum));
      else
        map.push_back(static_cast<double>(sum));
      map.push_back(t.means[k].count);
    } else if (is_counter(t.base.type)) {
      map.push_back(t.counts[k]);
    } else {
      for (std::size_t c = 0; c < classes; ++c) map.push_back(t.counts[k * classes + c]);
    }
  }
  const int stride = is_mean(t.base.type) ? 3 : is_counter(t.base.type) ? 2 : 1 + static_cast<int>(classes);
  return {{"counter_denominator", t.counter_denominator}, {"hash_map", map}, {"hash_stride", stride}};
}

model parse_model(const json& root) {
  if (!root.is_object()) malformed("the document is not an object");
  if (root.contains("trees") && !root.contains("oblivious_trees"))
    unsupported("non-symmetric trees (grow_policy Depthwise/Lossguide); only oblivious trees are supported");
  model m;
  const json& info = member(root, "features_info", "the model");
  if (!info.is_object()) malformed("features_info is not an object");
  for (const char* key : {"text_features", "embedding_features", "estimated_features"}) {
    const json* v = optional_member(info, key);
    if (v != nullptr && !(v->is_array() && v->empty())) unsupported(std::string(key) + " in features_info");
  }
  if (const json* ff = optional_member(info, "float_features")) {
    for (const auto& f : array_of(*ff, "float_features")) {
      const std::string where = "a float feature";
      float_feature out;
      out.borders = floats(optional_member(f, "borders"), where + " borders");
      for (float& b : out.borders) b = b == 0.f ? 0.f : b;
      out.index = as_i32(member(f, "feature_index", where), where);
      out.flat_index = as_i32(member(f, "flat_feature_index", where), where);
      if (const json* h = optional_member(f, "has_nans")) out.has_nans = as_bool(*h, where + " has_nans");
      if (const json* t = optional_member(f, "nan_value_treatment")) {
        const std::string s = as_string(*t, where);
        if (s == "AsIs")
          out.nan_value_treatment = nan_treatment::as_is;
        else if (s == "AsFalse")
          out.nan_value_treatment = nan_treatment::as_false;
        else if (s == "AsTrue")
          out.nan_value_treatment = nan_treatment::as_true;
        else
          malformed(where + ": nan_value_treatment '" + s + "'");
      }
      if (const json* n = optional_member(f, "feature_id")) out.name = as_string(*n, where + " feature_id");
      m.float_features.push_back(std::move(out));
    }
  }
  if (const json* cf = optional_member(info, "categorical_features")) {
    for (const auto& f : array_of(*cf, "categorical_features")) {
      const std::string where = "a categorical feature";
      cat_feature out;
      out.index = as_i32(member(f, "feature_index", where), where);
      out.flat_index = as_i32(member(f, "flat_feature_index", where), where);
      if (const json* n = optional_member(f, "feature_id")) out.name = as_string(*n, where + " feature_id");
      if (const json* values = optional_member(f, "values")) {
        one_hot_feature oh;
        oh.cat_index = out.index;
        for (const auto& v : array_of(*values, where + " values")) oh.values.push_back(as_i32(v, where + " value"));
        if (const json* sv = optional_member(f, "string_values"))
          for (const auto& s : array_of(*sv, where + " string_values")) oh.string_values.push_back(as_string(s, where));
        m.one_hot_features.push_back(std::move(oh));
      }
      m.cat_features.push_back(std::move(out));
    }
  }
  if (const json* ctrs = optional_member(info, "ctrs")) {
    for (const auto& c : array_of(*ctrs, "ctrs")) {
      const std::string where = "a CTR feature";
      ctr_feature out;
      out.borders = floats(optional_member(c, "borders"), where + " borders");
      out.ctr.base.type = parse_ctr_type(member(c, "ctr_type", where), where);
      out.ctr.base.proj = parse_projection(member(c, "elements", where), where);
      out.ctr.prior_num = as_float(member(c, "prior_numerator", where), where);
      out.ctr.prior_denom = as_float(member(c, "prior_denomerator", where), where);
      out.ctr.scale = as_float(member(c, "scale", where), where);
      out.ctr.shift = as_float(member(c, "shift", where), where);
      out.ctr.target_border_idx = as_i32(member(c, "target_border_idx", where), where);
      m.ctr_features.push_back(std::move(out));
    }
  }
  if (const json* cd = optional_member(root, "ctr_data")) {
    if (!cd->is_object()) malformed("ctr_data is not an object");
    for (const auto& [key, value] : cd->items()) m.ctr_tables.push_back(parse_ctr_table(key, value));
  }

  const json& trees = array_of(member(root, "oblivious_trees", "the model"), "oblivious_trees");
  int dim = 0;
  std::int32_t offset = 0;
  for (const auto& t : trees) {
    const std::string where = fmt::format("oblivious tree {}", m.tree_sizes.size());
    // CatBoost writes a tree without splits (one leaf) as "splits": null.
    const json& splits_value = member(t, "splits", where);
    const json no_splits = json::array();
    const json& splits = splits_value.is_null() ? no_splits : array_of(splits_value, where + " splits");
    if (splits.size() > 16) malformed(where + ": depth above 16");
    for (const auto& s : splits)
      m.tree_splits.push_back(as_i32(member(s, "split_index", where), where + " split_index"));
    const auto depth = static_cast<std::int32_t>(splits.size());
    const json& leaves = array_of(member(t, "leaf_values", where), where + " leaf_values");
    const std::size_t n_leaves = std::size_t{1} << depth;
    if (leaves.empty() || leaves.size() % n_leaves != 0)
      malformed(fmt::format("{}: {} leaf values for {} leaves", where, leaves.size(), n_leaves));
    const int tree_dim = static_cast<int>(leaves.size() / n_leaves);
    if (dim != 0 && tree_dim != dim) malformed(fmt::format("{}: dimension {} differs from {}", where, tree_dim, dim));
    dim = tree_dim;
    for (const auto& v : leaves) m.leaf_values.push_back(as_double(v, where + " leaf value"));
    if (const json* w = optional_member(t, "leaf_weights")) {
      if (w->size() != n_leaves) malformed(where + ": leaf_weights count");
      for (const auto& v : *w) m.leaf_weights.push_back(as_double(v, where + " leaf weight"));
    }
    m.tree_sizes.push_back(depth);
    m.tree_start_offsets.push_back(offset);
    offset += depth;
  }
  if (!m.leaf_weights.empty() && m.leaf_weights.size() != m.leaf_values.size() / static_cast<std::size_t>(dim))
    malformed("leaf_weights are given for some trees only");

  std::vector<double> bias;
  if (const json* sb = optional_member(root, "scale_and_bias")) {
    if (!sb->is_array() || sb->size() != 2) malformed("scale_and_bias is not [scale, [bias...]]");
    m.scale = as_double((*sb)[0], "scale");
    const json& b = (*sb)[1];
    if (b.is_array()) {
      for (const auto& v : b) bias.push_back(as_double(v, "bias"));
    } else {
      bias.push_back(as_double(b, "bias"));
    }
  }
  if (dim == 0) dim = bias.empty() ? 1 : static_cast<int>(bias.size());
  m.approx_dimension = dim;
  if (bias.empty()) bias.assign(static_cast<std::size_t>(dim), 0.0);
  if (bias.size() == 1 && dim > 1) {
    if (bias[0] != 0.0) malformed("a scalar bias with approx dimension > 1");
    bias.assign(static_cast<std::size_t>(dim), 0.0);
  }
  m.bias = std::move(bias);

  if (const json* mi = optional_member(root, "model_info")) {
    if (!mi->is_object()) malformed("model_info is not an object");
    for (const auto& [k, v] : mi->items()) m.info.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  validate(m);
  return m;
}

// Serialises like CatBoost's writer: keys sorted (nlohmann's default object), doubles with 17
// significant digits (json_number.hpp). CatBoost's JSON number parser is not correctly rounded, so the same
// digits as CatBoost's own files make CatBoost read exactly the values it reads from its own JSON.
// indent < 0: on one line without spaces (CatBoost's CTR identifiers).
void emit(const json& v, std::string& out, int indent) {
  const bool compact = indent < 0;
  const std::string pad(compact ? 0 : static_cast<std::size_t>(indent) * 2, ' ');
  const std::string inner(compact ? 0 : static_cast<std::size_t>(indent + 1) * 2, ' ');
  const int next = compact ? indent : indent + 1;
  switch (v.type()) {
    case json::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += compact ? "{" : "{\n";
      bool first = true;
      for (const auto& [k, item] : v.items()) {
        if (!first) out += compact ? "," : ",\n";
        first = false;
        out += inner;
        out += json(k).dump(-1, ' ', false, json::error_handler_t::replace);
        out += compact ? ":" : ": ";
        emit(item, out, next);
      }
      out += compact ? "}" : "\n" + pad + "}";
      return;
    }
    case json::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      // Arrays of scalars on one line; arrays of objects one element per line.
      const bool nested = !compact && v.front().is_structured();
      out += nested ? "[\n" : "[";
      bool first = true;
      for (const auto& item : v) {
        if (!first) out += nested ? ",\n" : compact ? "," : ", ";
        first = false;
        if (nested) out += inner;
        emit(item, out, next);
      }
      out += nested ? "\n" + pad + "]" : "]";
      return;
    }
    case json::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d)) {
        out += "null";
        return;
      }
      out += json_number_text(d);
      return;
    }
    default:
      out += v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

model read_json(std::string_view text) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    malformed(std::string("not JSON: ") + e.what());
  }
  try {
    return parse_model(root);
  } catch (const json::exception& e) {
    malformed(e.what());
  }
}

std::string write_json(const model& m) {
  validate(m);
  json root;
  json info = json::object();
  if (!m.float_features.empty()) {
    json ff = json::array();
    for (const auto& f : m.float_features) {
      json o{{"borders", json::array()},
             {"feature_index", f.index},
             {"flat_feature_index", f.flat_index},
             {"has_nans", f.has_nans},
             {"nan_value_treatment", nan_treatment_name(f.nan_value_treatment)}};
      for (float b : f.borders) o["borders"].push_back(static_cast<double>(b));
      o["feature_id"] = f.name;
      ff.push_back(std::move(o));
    }
    info["float_features"] = std::move(ff);
  }
  if (!m.cat_features.empty()) {
    json cf = json::array();
    for (const auto& f : m.cat_features) {
      json o{{"feature_index", f.index}, {"flat_feature_index", f.flat_index}, {"feature_id", f.name}};
      for (const auto& oh : m.one_hot_features) {
        if (oh.cat_index != f.index) continue;
        o["values"] = oh.values;
        if (!oh.string_values.empty()) o["string_values"] = oh.string_values;
      }
      cf.push_back(std::move(o));
    }
    info["categorical_features"] = std::move(cf);
  }
  if (!m.ctr_features.empty()) {
    json ctrs = json::array();
    for (const auto& f : m.ctr_features) {
      json borders = json::array();
      for (float b : f.borders) borders.push_back(static_cast<double>(b));
      ctrs.push_back({{"borders", borders},
                      {"ctr_type", ctr_type_name(f.ctr.base.type)},
                      {"elements", projection_json(f.ctr.base.proj)},
                      {"identifier", ctr_identifier(f.ctr.base)},
                      {"prior_numerator", static_cast<double>(f.ctr.prior_num)},
                      {"prior_denomerator", static_cast<double>(f.ctr.prior_denom)},
                      {"scale", static_cast<double>(f.ctr.scale)},
                      {"shift", static_cast<double>(f.ctr.shift == 0.f ? 0.f : f.ctr.shift)},
                      {"target_border_idx", f.ctr.target_border_idx}});
    }
    info["ctrs"] = std::move(ctrs);
  }
  root["features_info"] = std::move(info);

  const auto features = binary_features(m);
  json trees = json::array();
  const auto dim = static_cast<std::size_t>(m.approx_dimension);
  std::size_t leaf_offset = 0;
  for (std::size_t t = 0; t < m.tree_count(); ++t) {
    json splits = json::array();
    for (std::int32_t d = 0; d < m.tree_sizes[t]; ++d) {
      const auto index = m.tree_splits[static_cast<std::size_t>(m.tree_start_offsets[t] + d)];
      const auto& bf = features[static_cast<std::size_t>(index)];
      json s{{"split_index", index}};
      if (bf.kind == split_kind::float_feature) {
        const auto& f = m.float_features[static_cast<std::size_t>(bf.feature)];
        s["split_type"] = "FloatFeature";
        s["float_feature_index"] = f.index;
        s["border"] = static_cast<double>(f.borders[static_cast<std::size_t>(bf.item)]);
      } else if (bf.kind == split_kind::one_hot) {
        const auto& f = m.one_hot_features[static_cast<std::size_t>(bf.feature)];
        s["split_type"] = "OneHotFeature";
        s["cat_feature_index"] = f.cat_index;
        s["value"] = f.values[static_cast<std::size_t>(bf.item)];
      } else {
        const auto& f = m.ctr_features[static_cast<std::size_t>(bf.feature)];
        s["split_type"] = "OnlineCtr";
        s["ctr_target_border_idx"] = f.ctr.target_border_idx;
        s["border"] = static_cast<double>(f.borders[static_cast<std::size_t>(bf.item)]);
      }
      splits.push_back(std::move(s));
    }
    const std::size_t n_leaves = std::size_t{1} << m.tree_sizes[t];
    json tree{{"splits", splits.empty() ? json(nullptr) : splits}};
    tree["leaf_values"] =
        std::vector<double>(m.leaf_values.begin() + static_cast<std::ptrdiff_t>(leaf_offset * dim),
                            m.leaf_values.begin() + static_cast<std::ptrdiff_t>((leaf_offset + n_leaves) * dim));
    if (!m.leaf_weights.empty())
      tree["leaf_weights"] =
          std::vector<double>(m.leaf_weights.begin() + static_cast<std::ptrdiff_t>(leaf_offset),
                              m.leaf_weights.begin() + static_cast<std::ptrdiff_t>(leaf_offset + n_leaves));
    leaf_offset += n_leaves;
    trees.push_back(std::move(tree));
  }
  root["oblivious_trees"] = std::move(trees);
  root["scale_and_bias"] = json::array({m.scale, m.bias});

  json mi = json::object();
  for (const auto& [k, v] : m.info) {
    if (ends_with(k, "params")) {
      json parsed = json::parse(v, nullptr, false);
      if (!parsed.is_discarded() && parsed.is_object()) {
        mi[k] = std::move(parsed);
        continue;
      }
    }
    mi[k] = v;
  }
  root["model_info"] = std::move(mi);

  if (!m.ctr_tables.empty()) {
    json cd = json::object();
    // CatBoost's JSON has no TargetBorderClassifierIdx (its reader sets 0 for tables and CTRs
    // alike), so it is dropped as CatBoost drops it; only two tables that then collide are refused.
    for (const auto& t : m.ctr_tables) {
      const std::string id = ctr_identifier(t.base);
      if (cd.contains(id))
        unsupported("CTR tables that differ only in TargetBorderClassifierIdx (CatBoost's JSON cannot hold them)");
      cd[id] = ctr_table_json(t);
    }
    root["ctr_data"] = std::move(cd);
  }
  std::string out;
  emit(root, out, 0);
  out += '\n';
  return out;
}

}  // namespace cbg::model
