// SPDX-License-Identifier: Apache-2.0
// The one table of training parameters: for each, CatBoost's name and aliases, the JSON type it is
// stored with, how its value is read and checked (bounds, allowed values, values recognised but not
// implemented), its default and CatBoost's GPU default where that differs, a doc line, and the
// field of train_params it sets. parse_params() (params.hpp) is driven by it; a unit test holds the
// parameter list of cbg_train's documentation (capi/include/cbgpu/cbgpu.h) equal to it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cbg/core/param_type.hpp"

namespace cbg::train {

struct train_params;

// How a parameter's value is read before the table's setter gets it.
enum class value_kind : std::uint8_t {
  integer,  // an integer in [lo, hi] (a JSON number or numeric text)
  number,   // a number in [lo, hi], or (lo, hi] when lo_open
  boolean,  // true/false, 0/1 or their text
  choice,   // one of `choices` (text); a value of `not_implemented` is refused as not implemented
  text,     // any string
  custom,   // read by the setter itself (descriptions, lists, values of several types)
};

// A value as the setter receives it: the raw JSON, and the reading its kind asks for.
struct param_value {
  const std::string& key;       // the canonical name
  const nlohmann::json& raw;    // the value as given
  const nlohmann::json& given;  // the whole parameter object (a few parameters look at others)
  std::int64_t integer = 0;     // value_kind::integer
  double number = 0;            // value_kind::number
  bool boolean = false;         // value_kind::boolean
  std::size_t choice = 0;       // value_kind::choice: the index into choices
  std::string text;             // value_kind::choice and value_kind::text
};

using param_setter = void (*)(train_params&, const param_value&);

struct param_spec {
  std::string_view name;                  // CatBoost's canonical name
  std::vector<std::string_view> aliases;  // CatBoost's other names for it (its Python package's)
  param_type stored = param_type::text;   // the JSON type it is stored with in the model's flat_params
  value_kind kind = value_kind::custom;
  double lo = 0, hi = 0;  // integer and number bounds (also documented for some custom ones)
  bool lo_open = false;
  std::vector<std::string_view> choices;          // value_kind::choice
  std::vector<std::string_view> not_implemented;  // recognised values refused as not implemented
  // The default as JSON text; empty when it depends on the data or other parameters (the doc line
  // says how). `implies` is set when giving the parameter, even with its default value, changes
  // other defaults (e.g. od_wait switches the overfitting detector on).
  std::string_view default_json;
  bool implies = false;
  std::string_view catboost_gpu_default;  // empty: the same as ours
  std::string_view doc;
  param_setter set = nullptr;
  [[nodiscard]] bool has_bounds() const noexcept { return lo < hi; }
};

// Every parameter the trainer takes, the categorical-feature options included.
const std::vector<param_spec>& param_table();
// The parameter of a canonical name or an alias, or nullptr.
const param_spec* find_param(std::string_view name_or_alias) noexcept;
// Whether `name` is one of CatBoost's parameters that the table lacks (refused as not implemented,
// where other unknown names are invalid arguments).
bool is_unimplemented_catboost_param(std::string_view name) noexcept;

// Throws cbg::error(invalid_argument) "parameter 'key': what".
[[noreturn]] void invalid_param(const std::string& key, const std::string& what);

// Readers of one JSON value for the custom setters; `key` names the parameter in errors
// (cbg::error invalid_argument).
std::string read_text(const std::string& key, const nlohmann::json& v);
double read_number(const std::string& key, const nlohmann::json& v);
bool read_boolean(const std::string& key, const nlohmann::json& v);
std::int64_t read_integer(const std::string& key, const nlohmann::json& v, std::int64_t lo, std::int64_t hi);

}  // namespace cbg::train
