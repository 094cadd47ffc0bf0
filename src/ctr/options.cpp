// SPDX-License-Identifier: Apache-2.0
#include "cbg/ctr/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/ctr/ctr_math.hpp"
#include "cbg/model/model.hpp"

namespace cbg::ctr {

namespace {

using nlohmann::json;

[[noreturn]] void invalid(const std::string& key, const std::string& what) {
  CBG_FAIL(status::invalid_argument, fmt::format("parameter '{}': {}", key, what));
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

bool to_double(const std::string& s, double& d) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty() && std::isfinite(d);
}

int to_int(const std::string& s, int lo, int hi, const std::string& what, const std::string& text) {
  double d = 0;
  if (!to_double(s, d) || d != std::floor(d) || d < lo || d > hi) {
    invalid(what, fmt::format("'{}': '{}' is not an integer in [{}, {}]", text, s, lo, hi));
  }
  return static_cast<int>(d);
}

quantize::border_type border_type_of(const std::string& s, const std::string& what, const std::string& text) {
  quantize::border_type t{};
  if (!quantize::border_type_from_name(s.c_str(), t)) {
    invalid(what, fmt::format("'{}': '{}' is not a border type", text, s));
  }
  return t;
}

const char* border_type_text(quantize::border_type t) { return quantize::border_type_names[static_cast<int>(t)]; }

std::vector<std::string> string_list(const std::string& key, const json& v) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
    return out;
  }
  if (!v.is_array()) invalid(key, fmt::format("{} is not a string or a list of strings", v.dump()));
  for (const auto& item : v) {
    if (!item.is_string()) invalid(key, fmt::format("{} is not a string", item.dump()));
    out.push_back(item.get<std::string>());
  }
  return out;
}

int integer_of(const std::string& key, const json& v, int lo, int hi) {
  double d = 0;
  if (v.is_number()) {
    d = v.get<double>();
  } else if (!v.is_string() || !to_double(v.get<std::string>(), d)) {
    invalid(key, fmt::format("{} is not a number", v.dump()));
  }
  if (d != std::floor(d) || d < lo || d > hi) {
    invalid(key, fmt::format("{} is not an integer in [{}, {}]", v.dump(), lo, hi));
  }
  return static_cast<int>(d);
}

}  // namespace

std::vector<prior> default_priors(model::ctr_type t) {
  if (t == model::ctr_type::counter || t == model::ctr_type::feature_freq) return {{0.f, 1.f}};
  return {{0.f, 1.f}, {0.5f, 1.f}, {1.f, 1.f}};
}

std::vector<ctr_spec> default_ctrs(bool combinations) {
  ctr_spec borders;
  borders.type = model::ctr_type::borders;
  borders.priors = default_priors(borders.type);
  ctr_spec freq;
  freq.type = model::ctr_type::feature_freq;
  freq.priors = default_priors(freq.type);
  freq.ctr_border_type = combinations ? quantize::border_type::median : quantize::border_type::min_entropy;
  return {borders, freq};
}

ctr_spec parse_ctr_spec(const std::string& text, const std::string& what) {
  const std::vector<std::string> parts = split_on(text, ':');
  ctr_spec s;
  model::ctr_type t{};
  if (!model::ctr_type_from_name(parts[0], t)) {
    invalid(what, fmt::format("'{}': '{}' is not a CTR type (Borders, Buckets, BinarizedTargetMeanValue, "
                              "FloatTargetMeanValue, Counter, FeatureFreq)",
                              text, parts[0]));
  }
  s.type = t;
  if (t == model::ctr_type::feature_freq) s.ctr_border_type = quantize::border_type::min_entropy;
  bool target_options = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const auto eq = part.find('=');
    if (eq == std::string::npos) invalid(what, fmt::format("'{}': '{}' is not Name=Value", text, part));
    const std::string name = part.substr(0, eq);
    const std::string value = part.substr(eq + 1);
    if (name == "Prior") {
      const std::vector<std::string> nd = split_on(value, '/');
      double num = 0, denom = 1;
      if (nd.size() > 2 || !to_double(nd[0], num) || (nd.size() == 2 && !to_double(nd[1], denom)) || !(denom > 0)) {
        invalid(what, fmt::format("'{}': prior '{}' is not num or num/denom with denom > 0", text, value));
      }
      s.priors.push_back({static_cast<float>(num), static_cast<float>(denom)});
    } else if (name == "CtrBorderCount") {
      s.ctr_border_count = to_int(value, 1, 255, what, text);
    } else if (name == "CtrBorderType") {
      s.ctr_border_type = border_type_of(value, what, text);
    } else if (name == "TargetBorderCount") {
      s.target_border_count = to_int(value, 1, 255, what, text);
      target_options = true;
    } else if (name == "TargetBorderType") {
      s.target_border_type = border_type_of(value, what, text);
      target_options = true;
    } else if (name == "PriorEstimation") {
      if (value == "BetaPrior") {
        s.estimation = prior_estimation::beta_prior;
      } else if (value != "No") {
        invalid(what, fmt::format("'{}': PriorEstimation '{}' is not No or BetaPrior", text, value));
      }
    } else {
      invalid(what, fmt::format("'{}': unknown CTR option '{}'", text, name));
    }
  }
  if (target_options && (t == model::ctr_type::counter || t == model::ctr_type::feature_freq)) {
    invalid(what, fmt::format("'{}': {} takes no target binarization", text, parts[0]));
  }
  if (s.estimation == prior_estimation::beta_prior && t != model::ctr_type::borders) {
    // CatBoost (catboost_options.cpp ValidateCtr) refuses it as invalid options on either device.
    invalid(what, fmt::format("'{}': PriorEstimation BetaPrior is available for Borders CTRs only, not {} (CatBoost's "
                              "GPU trainer refuses it too: 'prior estimation is not available for ctr type {}')",
                              text, parts[0], parts[0]));
  }
  if (s.target_border_count != 1) {
    CBG_FAIL(status::not_implemented,
             fmt::format("parameter '{}': '{}': TargetBorderCount in a CTR description is not implemented (CatBoost's "
                         "GPU trainer refuses it too): give ctr_target_border_count instead",
                         what, text));
  }
  if (s.priors.empty()) s.priors = default_priors(t);
  return s;
}

void parse_option(options& o, const std::string& key, const std::string& value_json) {
  const json v = json::parse(value_json, nullptr, false);
  if (v.is_discarded()) invalid(key, "not valid JSON");
  if (key == "one_hot_max_size") {
    o.one_hot_max_size = integer_of(key, v, 0, 255);
  } else if (key == "simple_ctr" || key == "combinations_ctr") {
    std::vector<ctr_spec> list;
    for (const std::string& s : string_list(key, v)) {
      list.push_back(parse_ctr_spec(s, key));
      if (key == "combinations_ctr" && list.back().estimation != prior_estimation::no) {
        invalid(key, fmt::format("'{}': PriorEstimation BetaPrior is available for the CTRs of single features "
                                 "only (simple_ctr, per_feature_ctr; CatBoost refuses it too: 'prior estimation "
                                 "is not available for combinations-ctr')",
                                 s));
      }
    }
    (key == "simple_ctr" ? o.simple_ctr : o.combinations_ctr) = std::move(list);
  } else if (key == "per_feature_ctr") {
    for (const std::string& s : string_list(key, v)) {
      const auto colon = s.find(':');
      if (colon == std::string::npos) invalid(key, fmt::format("'{}' is not FeatureIndex:CtrDescription", s));
      const std::int32_t f = to_int(s.substr(0, colon), 0, 1 << 30, key, s);
      for (const std::string& d : split_on(s.substr(colon + 1), ';')) {
        o.per_feature_ctr[f].push_back(parse_ctr_spec(d, key));
      }
    }
  } else if (key == "max_ctr_complexity") {
    // Above 1: feature combinations (combinations.hpp; the host path, refused on a GPU by the trainer).
    o.max_ctr_complexity = integer_of(key, v, 1, 16);
  } else if (key == "counter_calc_method") {
    if (!v.is_string()) invalid(key, fmt::format("{} is not a string", v.dump()));
    const std::string s = v.get<std::string>();
    if (s == "SkipTest")
      o.counter_calc_method = counter_calc::skip_test;
    else if (s == "Full")
      o.counter_calc_method = counter_calc::full;
    else
      invalid(key, fmt::format("'{}' is not one of SkipTest, Full", s));
  } else if (key == "ctr_target_border_count") {
    o.ctr_target_border_count = integer_of(key, v, 1, max_target_borders);
  } else if (key == "ctr_leaf_count_limit") {
    // CatBoost's CPU-only bound on a projection's categories (its default, unlimited: the largest
    // unsigned 64-bit integer). A number, or its text.
    std::uint64_t limit = 0;
    bool ok = false;
    if (v.is_number_unsigned()) {
      limit = v.get<std::uint64_t>();
      ok = true;
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      ok = d >= 1 && d == std::floor(d) && d < 0x1p64;
      if (ok) limit = static_cast<std::uint64_t>(d);
    } else if (v.is_string()) {
      const std::string& t = v.get_ref<const std::string&>();
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), limit);
      ok = ec == std::errc() && end == t.data() + t.size() && !t.empty();
    }
    if (!ok || limit == 0) invalid(key, fmt::format("{} is not a positive integer", v.dump()));
    o.ctr_leaf_count_limit = limit;
  } else if (key == "store_all_simple_ctr") {
    // CatBoost's CPU-only exception to ctr_leaf_count_limit for single features.
    if (v.is_boolean()) {
      o.store_all_simple_ctr = v.get<bool>();
    } else if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1)) {
      o.store_all_simple_ctr = v.get<std::int64_t>() == 1;
    } else if (v.is_string() && (v.get<std::string>() == "true" || v.get<std::string>() == "false")) {
      o.store_all_simple_ctr = v.get<std::string>() == "true";
    } else {
      invalid(key, fmt::format("{} is not a boolean", v.dump()));
    }
  } else {
    invalid(key, "not a categorical-feature option");
  }
}

std::uint64_t leaf_count_limit_of(const options& o, const model::projection& proj) {
  const bool single = proj.cat_features.size() == 1 && proj.float_splits.empty() && proj.one_hot_splits.empty();
  return single && o.store_all_simple_ctr ? options::no_leaf_count_limit : o.ctr_leaf_count_limit;
}

void check_table_bounds_supported(const options& o, bool cpu) {
  if (cpu) return;
  if (o.ctr_leaf_count_limit != options::no_leaf_count_limit) {
    CBG_FAIL(status::not_implemented,
             fmt::format("parameter 'ctr_leaf_count_limit': {}: not implemented on a GPU (CatBoost's GPU trainer "
                         "refuses it too); a CPU context supports it",
                         o.ctr_leaf_count_limit));
  }
  if (o.store_all_simple_ctr) {
    CBG_FAIL(status::not_implemented,
             "parameter 'store_all_simple_ctr': true is not implemented on a GPU (CatBoost's GPU trainer refuses it "
             "too); a CPU context supports it");
  }
}

void apply_target_border_count(options& o) {
  if (!o.ctr_target_border_count || *o.ctr_target_border_count == 1) return;
  if (!o.simple_ctr) o.simple_ctr = default_ctrs(false);
  if (!o.combinations_ctr) o.combinations_ctr = default_ctrs(true);
  const auto apply = [&](std::vector<ctr_spec>& list) {
    for (ctr_spec& s : list) {
      if (s.type != model::ctr_type::counter && s.type != model::ctr_type::feature_freq)
        s.target_border_count = *o.ctr_target_border_count;
    }
  };
  apply(*o.simple_ctr);
  apply(*o.combinations_ctr);
  for (auto& [feature, list] : o.per_feature_ctr) apply(list);
}

const std::vector<ctr_spec>& simple_ctrs_of(const options& o, std::int32_t flat_index) {
  static const std::vector<ctr_spec> defaults = default_ctrs(false);
  if (const auto it = o.per_feature_ctr.find(flat_index); it != o.per_feature_ctr.end()) return it->second;
  if (o.simple_ctr) return *o.simple_ctr;
  return defaults;
}

std::uint32_t permutation_block_size(std::uint32_t fold_permutation_block, std::int64_t rows) {
  std::uint64_t block = fold_permutation_block == 0 ? 64 : fold_permutation_block;
  if (rows < 50000) return 1;
  if (block > 1) {
    std::uint64_t power = 1;  // CatBoost: 1 << IntLog2(block), IntLog2 = ceil(log2)
    while (power < block) power <<= 1;
    block = power;
    while (block * 128 > static_cast<std::uint64_t>(rows)) block >>= 1;
  }
  return static_cast<std::uint32_t>(block);
}

permutation_rule permutation_of(const options& o, std::uint64_t seed, std::int64_t rows) {
  permutation_rule r;
  r.seed = seed;
  r.identity = o.has_time;
  r.block = permutation_block_size(o.fold_permutation_block, rows);
  return r;
}

std::string ctr_spec_text(const ctr_spec& s) {
  std::string out = model::ctr_type_name(s.type);
  if (s.type != model::ctr_type::counter && s.type != model::ctr_type::feature_freq) {
    out += fmt::format(":TargetBorderCount={}:TargetBorderType={}", s.target_border_count,
                       border_type_text(s.target_border_type));
  }
  out += fmt::format(":CtrBorderCount={}:CtrBorderType={}", s.ctr_border_count, border_type_text(s.ctr_border_type));
  for (const prior& p : s.priors) out += fmt::format(":Prior={}/{}", p.num, p.denom);
  return out;
}

}  // namespace cbg::ctr
