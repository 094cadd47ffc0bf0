// SPDX-License-Identifier: Apache-2.0
// The parameter table (cbg/train/param_table.hpp): every entry parses its default, its aliases, its
// bounds and choices; the stored flat_params keep their JSON types and round-trip; and the list in
// cbg_train's documentation (capi/include/cbgpu/cbgpu.h) names exactly the table's parameters.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cbg/core/error.hpp"
#include "cbg/train/param_table.hpp"
#include "cbg/train/params.hpp"
#include "support/catch.hpp"

namespace tr = cbg::train;
using nlohmann::json;

namespace {

struct outcome {
  bool ok = true;
  cbg::status code = cbg::status::ok;
  std::string message;
};

outcome parse(const std::string& text) {
  try {
    (void)tr::parse_params(text);
    return {};
  } catch (const cbg::error& e) {
    return {false, e.code(), e.what()};
  }
}

std::string one(std::string_view name, const std::string& value_json) {
  return fmt::format(R"({{"{}": {}}})", name, value_json);
}

// The resolved parameters as the model stores them, without flat_params (what the caller set).
std::string effective(const std::string& text) {
  tr::data_facts f;
  f.rows = 1000;
  f.features = 30;
  f.classes = 2;
  json j = json::parse(tr::catboost_params_json(tr::resolve_params(tr::parse_params(text), f), {}));
  j.erase("flat_params");
  return j.dump();
}

// A valid value of a parameter that has no default to give.
std::string sample_value(const tr::param_spec& s) {
  static const std::map<std::string_view, std::string> custom{
      {"eval_metric", R"("RMSE")"},
      {"custom_metric", R"(["RMSE", "MAE"])"},
      {"class_names", "[0, 1]"},
      {"simple_ctr", R"(["Borders"])"},
      {"combinations_ctr", R"("Counter")"},
      {"per_feature_ctr", R"(["0:Borders"])"},
      {"max_ctr_complexity", "2"},
      {"per_float_feature_quantization", R"(["0:border_count=8,border_type=Median"])"},
  };
  if (!s.default_json.empty()) return std::string(s.default_json);
  if (const auto it = custom.find(s.name); it != custom.end()) return it->second;
  switch (s.kind) {
    case tr::value_kind::integer:
      return fmt::format("{}", static_cast<std::int64_t>(s.lo));
    case tr::value_kind::number:
      return fmt::format("{}", s.lo_open ? s.hi : s.lo);
    case tr::value_kind::boolean:
      return "true";
    case tr::value_kind::choice:
      return fmt::format(R"("{}")", s.choices.front());
    case tr::value_kind::text:
      return R"("x")";
    case tr::value_kind::custom:
      break;
  }
  FAIL("no sample value for " << s.name);
  return {};
}

// Parameters that only make sense with another one.
std::string with_context(std::string_view name, const std::string& value_json) {
  static const std::map<std::string_view, std::string> needs{
      {"subsample", R"("bootstrap_type": "Bernoulli")"},  {"mvs_reg", R"("bootstrap_type": "MVS")"},
      {"target_border", R"("loss_function": "Logloss")"}, {"classes_count", R"("loss_function": "MultiClass")"},
      {"class_names", R"("loss_function": "Logloss")"},
  };
  const auto it = needs.find(name);
  if (it == needs.end()) return one(name, value_json);
  return fmt::format(R"({{"{}": {}, {}}})", name, value_json, it->second);
}

std::string read_source_file(const std::string& relative) {
  for (const std::string& root : {std::string("."), std::string(CBG_TEST_SOURCE_DIR) + "/.."}) {
    std::ifstream in(root + "/" + relative);
    if (in) {
      std::stringstream s;
      s << in.rdbuf();
      return s.str();
    }
  }
  FAIL("cannot read " << relative);
  return {};
}

}  // namespace

TEST_CASE("param table: every entry is complete", "[train][params]") {
  std::set<std::string_view> names;
  for (const tr::param_spec& s : tr::param_table()) {
    CAPTURE(s.name);
    CHECK(names.insert(s.name).second);
    for (std::string_view a : s.aliases) CHECK(names.insert(a).second);
    CHECK(!s.doc.empty());
    CHECK(s.set != nullptr);
    if (s.kind == tr::value_kind::integer || s.kind == tr::value_kind::number) CHECK(s.has_bounds());
    if (s.kind == tr::value_kind::choice) CHECK(!s.choices.empty());
    if (!s.default_json.empty()) CHECK_NOTHROW(json::parse(s.default_json));
    CHECK(tr::find_param(s.name) == &s);
    for (std::string_view a : s.aliases) CHECK(tr::find_param(a) == &s);
  }
  CHECK(tr::find_param("depht") == nullptr);
}

TEST_CASE("param table: every parameter parses its default, which changes nothing", "[train][params]") {
  const std::string base = effective(R"({"learning_rate": 0.1})");
  for (const tr::param_spec& s : tr::param_table()) {
    if (s.default_json.empty()) continue;
    CAPTURE(s.name);
    const std::string given = fmt::format(R"({{"learning_rate": 0.1, "{}": {}}})", s.name, s.default_json);
    const outcome o = parse(given);
    CHECK(o.ok);
    CHECK(o.message.empty());
    if (o.ok && !s.implies) CHECK(effective(given) == base);
  }
}

TEST_CASE("param table: an alias is its parameter", "[train][params]") {
  for (const tr::param_spec& s : tr::param_table()) {
    for (std::string_view alias : s.aliases) {
      CAPTURE(s.name, alias);
      const std::string value = sample_value(s);
      const tr::train_params by_name = tr::parse_params(with_context(s.name, value));
      const tr::train_params by_alias = tr::parse_params(with_context(alias, value));
      CHECK(by_alias.flat_json == by_name.flat_json);
      CHECK(by_alias.given == by_name.given);
      const outcome twice = parse(fmt::format(R"({{"{}": {}, "{}": {}}})", s.name, value, alias, value));
      CHECK(twice.code == cbg::status::invalid_argument);
      CHECK(twice.message == fmt::format("parameter '{}' is given twice (through an alias)", s.name));
    }
  }
  const outcome unknown = parse(R"({"depht": 6})");
  CHECK(unknown.code == cbg::status::invalid_argument);
  CHECK(unknown.message == "unknown parameter 'depht' (cbgpu takes CatBoost's parameter names)");
}

TEST_CASE("param table: the bounds are what the parser takes", "[train][params]") {
  for (const tr::param_spec& s : tr::param_table()) {
    if (!s.has_bounds()) continue;
    CAPTURE(s.name);
    const auto text = [&](double d) {
      return s.kind == tr::value_kind::number ? fmt::format("{}", d) : fmt::format("{}", static_cast<std::int64_t>(d));
    };
    const double step = s.kind == tr::value_kind::number ? std::max(1.0, std::fabs(s.lo)) : 1.0;
    const double below = s.lo_open ? s.lo : s.lo - step;
    const double above = s.hi + (s.kind == tr::value_kind::number ? std::max(1.0, std::fabs(s.hi)) : 1.0);
    for (const double outside : {below, above}) {
      CAPTURE(outside);
      const outcome o = parse(with_context(s.name, text(outside)));
      CHECK(o.code == cbg::status::invalid_argument);
      CHECK(o.message.find(fmt::format("parameter '{}'", s.name)) != std::string::npos);
    }
    // Inside (the closed ends): accepted, or refused for another reason (e.g. not implemented).
    for (const double inside : {s.lo_open ? s.hi : s.lo, s.hi}) {
      CAPTURE(inside);
      const outcome o = parse(with_context(s.name, text(inside)));
      CHECK(o.message.find("is outside") == std::string::npos);
      CHECK(o.message.find("is not an integer in") == std::string::npos);
      CHECK((o.ok || o.code == cbg::status::not_implemented));
    }
  }
  const outcome depth = parse(R"({"depth": 17})");
  CHECK(depth.message == "parameter 'depth': 17 is not an integer in [1, 16]");
  const outcome lr = parse(R"({"learning_rate": 0})");
  CHECK(lr.message == "parameter 'learning_rate': 0 is outside (0, 1000000]");
}

TEST_CASE("param table: choices, and the recognised ones that are not implemented", "[train][params]") {
  for (const tr::param_spec& s : tr::param_table()) {
    if (s.kind != tr::value_kind::choice) continue;
    CAPTURE(s.name);
    for (std::string_view c : s.choices) {
      const outcome o = parse(with_context(s.name, fmt::format(R"("{}")", c)));
      CHECK(o.message.find("is not one of") == std::string::npos);
    }
    const outcome wrong = parse(one(s.name, R"("NoSuchChoice")"));
    CHECK(wrong.code == cbg::status::invalid_argument);
    CHECK(wrong.message ==
          fmt::format("parameter '{}': 'NoSuchChoice' is not one of {}", s.name, fmt::join(s.choices, ", ")));
    for (std::string_view n : s.not_implemented) {
      const outcome o = parse(one(s.name, fmt::format(R"("{}")", n)));
      CHECK(o.code == cbg::status::not_implemented);
      CHECK(o.message.find(fmt::format("parameter '{}': {}", s.name, n)) != std::string::npos);
    }
  }
  CHECK(parse(R"({"grow_policy": "Lossguide"})").message ==
        "parameter 'grow_policy': Lossguide is not implemented (implemented: SymmetricTree)");
}

TEST_CASE("param table: stored parameters keep their JSON types and round-trip", "[train][params]") {
  const tr::train_params p = tr::parse_params(
      R"({"depth": "6", "eta": "0.1", "verbose": "0", "allow_writing_files": "false", "custom_loss": ["RMSE"],
          "random_seed": "12345678901234567890", "border_count": 64.0, "simple_ctr": "Borders",
          "loss_function": "RMSE", "od_pval": 0})");
  CHECK(p.flat_json ==
        R"({"allow_writing_files":false,"border_count":64,"custom_metric":["RMSE"],"depth":6,"learning_rate":0.1,)"
        R"("loss_function":"RMSE","od_pval":0,"random_seed":12345678901234567890,"simple_ctr":"Borders",)"
        R"("verbose":false})");
  CHECK(tr::parse_params(p.flat_json).flat_json == p.flat_json);
  // Every parameter: what is stored parses again to the same.
  for (const tr::param_spec& s : tr::param_table()) {
    CAPTURE(s.name);
    const tr::train_params q = tr::parse_params(with_context(s.name, sample_value(s)));
    CHECK(tr::parse_params(q.flat_json).flat_json == q.flat_json);
  }
}

TEST_CASE("param table: cbg_train's documentation lists exactly the table's parameters", "[train][params]") {
  const std::string header = read_source_file("capi/include/cbgpu/cbgpu.h");
  const std::size_t start = header.find("@param params_json");
  const std::size_t end = header.find("@param eval_pool", start);
  REQUIRE(start != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string block = header.substr(start, end - start);
  std::set<std::string> words;
  const std::regex word("[a-z][a-z0-9_]*");
  for (auto it = std::sregex_iterator(block.begin(), block.end(), word); it != std::sregex_iterator(); ++it) {
    words.insert(it->str());
  }
  std::set<std::string> names;
  for (const tr::param_spec& s : tr::param_table()) {
    names.emplace(s.name);
    for (std::string_view a : s.aliases) names.emplace(a);
  }
  for (const std::string& n : names) {
    CAPTURE(n);
    CHECK(words.contains(n));  // a parameter the documentation does not name
  }
  // Every snake_case word of the block is a parameter, but for these.
  const std::set<std::string> not_parameters{"params_json", "variance_power",    "learn_error",        "test_error",
                                             "time_left",   "catboost_training", "cbg_context_desc_t", "use_weights",
                                             "skip_train",    // metric parameters
                                             "border_type"};  // a key of per_float_feature_quantization
  for (const std::string& w : words) {
    if (w.find('_') == std::string::npos || not_parameters.contains(w)) continue;
    CAPTURE(w);
    CHECK(names.contains(w));  // the documentation names a parameter the table does not have
  }
}

namespace {

const char* type_text(cbg::param_type t) {
  switch (t) {
    case cbg::param_type::text:
      return "string";
    case cbg::param_type::integer:
      return "integer";
    case cbg::param_type::number:
      return "number";
    case cbg::param_type::boolean:
      return "boolean";
    case cbg::param_type::text_or_list:
      return "string or list of strings";
    case cbg::param_type::verbosity:
      return "boolean or integer";
    case cbg::param_type::number_list:
      return "list";
  }
  return "?";
}

std::string range_text(const tr::param_spec& s) {
  std::string out;
  if (s.has_bounds()) {
    const auto end = [&](double d) {
      return s.kind == tr::value_kind::number ? fmt::format("{}", d) : fmt::format("{}", static_cast<std::int64_t>(d));
    };
    if (s.lo <= -1e300 && s.hi >= 1e300)
      out = "any number";
    else if (s.hi >= 1e300)
      out = fmt::format("≥ {}", end(s.lo));
    else
      out = fmt::format("{}{}, {}]", s.lo_open ? "(" : "[", end(s.lo), end(s.hi));
  }
  if (!s.choices.empty()) out = fmt::format("{}", fmt::join(s.choices, ", "));
  if (!s.not_implemented.empty()) {
    out += fmt::format("{}not implemented: {}", out.empty() ? "" : "; ", fmt::join(s.not_implemented, ", "));
  }
  return out;
}

// docs/parameters.md, rendered from the table.
std::string parameters_page() {
  std::string out =
      "<!-- Generated from the parameter table (src/train/param_table.cpp) by the unit test \"param table: "
      "docs/parameters.md is the table\"; CBG_WRITE_DOCS=1 rewrites it. -->\n"
      "# Training parameters\n\n"
      "`cbg_train()` (and the Python package's `train`, `CatBoostClassifier`, `CatBoostRegressor`) take CatBoost's "
      "parameters by CatBoost's names and aliases, as a JSON object; values may also be given as text (`\"6\"`, "
      "`\"true\"`). The model stores what was given in its `params` info (`flat_params`) with the types below. "
      "Defaults are CatBoost's GPU defaults; the column *CatBoost GPU default* names the few that differ. An empty "
      "default depends on the data or on other parameters (the description says how).\n\n"
      "| Name | Aliases | Type | Default | Values | CatBoost GPU default | Description |\n"
      "|---|---|---|---|---|---|---|\n";
  const auto code = [](std::string_view s) { return s.empty() ? std::string() : fmt::format("`{}`", s); };
  for (const tr::param_spec& s : tr::param_table()) {
    std::vector<std::string> aliases;
    for (std::string_view a : s.aliases) aliases.push_back(code(a));
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", s.name, fmt::join(aliases, ", "),
                       type_text(s.stored), code(s.default_json), range_text(s), s.catboost_gpu_default, s.doc);
  }
  return out;
}

}  // namespace

TEST_CASE("param table: docs/parameters.md is the table", "[train][params]") {
  const std::string expected = parameters_page();
  if (const char* write = std::getenv("CBG_WRITE_DOCS"); write != nullptr && std::string(write) == "1") {
    std::ofstream(std::string(CBG_TEST_SOURCE_DIR) + "/../docs/parameters.md") << expected;
  }
  CHECK(read_source_file("docs/parameters.md") == expected);  // CBG_WRITE_DOCS=1 rewrites it
}
