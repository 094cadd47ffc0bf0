// SPDX-License-Identifier: Apache-2.0
#include "column_description.hpp"

#include <array>
#include <charconv>
#include <fstream>
#include <istream>
#include <string_view>

#include <fmt/format.h>

#include "cbg/io/read_file.hpp"
#include "errors.hpp"
#include "text.hpp"

namespace cbgpu_bench {

namespace {

struct type_entry {
  std::string_view name;
  column_type type;
};

// CatBoost's column types (synonyms included) and what this tool makes of them.
constexpr std::array<type_entry, 15> supported_types{{
    {"Label", column_type::label},
    {"Target", column_type::label},
    {"Num", column_type::num},
    {"Categ", column_type::categ},
    {"Weight", column_type::weight},
    {"Baseline", column_type::baseline},
    {"Auxiliary", column_type::auxiliary},
    {"SampleId", column_type::sample_id},
    {"DocId", column_type::sample_id},
    {"GroupId", column_type::group_id},
    {"QueryId", column_type::group_id},
    {"SubgroupId", column_type::subgroup_id},
    {"GroupWeight", column_type::group_weight},
    {"Timestamp", column_type::timestamp},
    {"Text", column_type::text},
}};

// CatBoost types that are valid but need stages this tool does not have.
constexpr std::array<std::string_view, 2> later_types{"NumVector", "Position"};

constexpr const char* type_list =
    "Label (Target), Num, Categ, Weight, Baseline, Auxiliary, SampleId (DocId), GroupId (QueryId), SubgroupId, "
    "GroupWeight, Timestamp, Text";

column_type parse_type(std::string_view s, const std::string& where) {
  for (std::string_view later : later_types) {
    if (later == s) {
      throw not_implemented_error(fmt::format("{}: column type '{}' is not implemented (implemented: {})", where,
                                              visible_controls(s), type_list));
    }
  }
  for (const type_entry& e : supported_types) {
    if (e.name == s) return e.type;
  }
  throw usage_error(
      fmt::format("{}: unknown column type '{}' (expected one of {})", where, visible_controls(s), type_list));
}

}  // namespace

const char* type_name(column_type t) {
  for (const type_entry& e : supported_types) {
    if (e.type == t) return e.name.data();
  }
  return "?";
}

column_description read_column_description(const std::string& path) {
  try {
    cbg::io::require_regular_file(path);
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("column description: {}", e.what()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(fmt::format("cannot open column description '{}'", path));
  return read_column_description(in, path);
}

column_description read_column_description(std::istream& in, const std::string& path) {
  column_description cd;
  cd.path = path;
  std::string line;
  for (int64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line_no == 1) drop_utf8_bom(line);
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, line_no);
    const std::vector<std::string_view> fields = split(text, '\t');
    if (fields.size() < 2 || fields.size() > 3) {
      throw usage_error(
          fmt::format("{}: expected '<index><TAB><type>[<TAB><name>]', got '{}'", where, visible_controls(text)));
    }
    int64_t index = -1;
    const std::string_view idx = trim(fields[0]);
    const auto [end, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), index);
    if (ec != std::errc() || end != idx.data() + idx.size() || index < 0) {
      throw usage_error(
          fmt::format("{}: column index '{}' is not a non-negative integer", where, visible_controls(fields[0])));
    }
    column_spec spec;
    spec.type = parse_type(trim(fields[1]), where);
    if (fields.size() == 3) spec.name = std::string(trim(fields[2]));
    if (!cd.columns.emplace(index, spec).second) {
      throw usage_error(fmt::format("{}: column {} is described twice", where, index));
    }
  }
  if (in.bad()) throw usage_error(fmt::format("cannot read column description '{}'", path));
  return cd;
}

int64_t column_named(const column_description& cd, const std::string& name) {
  for (const auto& [index, spec] : cd.columns) {
    if (spec.name == name) return index;
  }
  return -1;
}

std::vector<column_spec> column_roles(const std::optional<column_description>& cd, int64_t n_columns) {
  std::vector<column_spec> roles(static_cast<std::size_t>(n_columns));
  if (!cd) {
    if (n_columns > 0) roles[0].type = column_type::label;
    return roles;
  }
  for (const auto& [index, spec] : cd->columns) {
    if (index >= n_columns) {
      throw usage_error(fmt::format("{}: describes column {}, but the data has only {} column{}", cd->path, index,
                                    n_columns, n_columns == 1 ? "" : "s"));
    }
    roles[static_cast<std::size_t>(index)] = spec;
  }
  return roles;
}

}  // namespace cbgpu_bench
