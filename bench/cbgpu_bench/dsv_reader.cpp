// SPDX-License-Identifier: Apache-2.0
#include "dsv_reader.hpp"

#include <array>
#include <charconv>
#include <fstream>
#include <istream>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "cbg/io/read_file.hpp"
#include "errors.hpp"
#include "text.hpp"

namespace cbgpu_bench {

namespace {

// Spellings of a missing numeric value (read as NaN).
constexpr std::array<std::string_view, 10> missing_spellings{
    "", "nan", "NaN", "NAN", "NA", "N/A", "n/a", "null", "NULL", "None"};

std::optional<float> parse_float(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  float v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string strip_scheme(const std::string& path) {
  const std::size_t sep = path.find("://");
  if (sep == std::string::npos) return path;
  const std::string scheme = path.substr(0, sep);
  if (scheme == "dsv") return path.substr(sep + 3);
  throw not_implemented_error(fmt::format(
      "'{}': the {} pool format is not supported yet; use a delimiter-separated file", path, scheme));
}

// Converts the fields of one row into the dataset, by column role.
class row_sink {
 public:
  row_sink(loaded_dataset& data, std::vector<column_spec> roles, std::vector<std::string> header)
      : data_(data), roles_(std::move(roles)) {
    for (std::size_t c = 0; c < roles_.size(); ++c) {
      const column_spec& r = roles_[c];
      switch (r.type) {
        case column_type::label: ++data_.label_dims; break;
        case column_type::baseline: ++data_.baseline_dims; break;
        case column_type::auxiliary: ++data_.auxiliary_columns; break;
        case column_type::weight:
          if (data_.has_weight) throw usage_error("the column description has two Weight columns");
          data_.has_weight = true;
          break;
        case column_type::num:
        case column_type::categ: {
          feature_column f;
          f.name = !r.name.empty() ? r.name : (c < header.size() ? header[c] : std::string());
          f.source_column = static_cast<int64_t>(c);
          f.categorical = r.type == column_type::categ;
          data_.features.push_back(std::move(f));
          dictionaries_.emplace_back();
          break;
        }
      }
    }
  }

  void add(const std::vector<std::string_view>& fields, int64_t line_no) {
    std::size_t feature = 0;
    for (std::size_t c = 0; c < roles_.size(); ++c) {
      const std::string_view field = fields[c];
      switch (roles_[c].type) {
        case column_type::label: data_.label.push_back(number(field, c, line_no, "label")); break;
        case column_type::weight: data_.weight.push_back(number(field, c, line_no, "weight")); break;
        case column_type::baseline:
          data_.baseline.push_back(number(field, c, line_no, "baseline"));
          break;
        case column_type::auxiliary: break;
        case column_type::num: {
          feature_column& f = data_.features[feature];
          f.values.push_back(numeric_feature(field, c, line_no));
          ++feature;
          break;
        }
        case column_type::categ: {
          feature_column& f = data_.features[feature];
          auto& dict = dictionaries_[feature];
          const auto [it, added] = dict.try_emplace(std::string(trim(field)), f.distinct);
          if (added) {
            f.categories.push_back(it->first);
            ++f.distinct;
          }
          f.codes.push_back(it->second);
          ++feature;
          break;
        }
      }
    }
    ++data_.rows;
  }

 private:
  std::string where(std::size_t column, int64_t line_no) const {
    return fmt::format("{}:{}, column {}", data_.path, line_no, column);
  }
  float number(std::string_view field, std::size_t column, int64_t line_no, const char* role) {
    const std::optional<float> v = parse_float(field);
    if (!v) {
      throw usage_error(fmt::format("{}: {} '{}' is not a number", where(column, line_no), role,
                                    visible_controls(trim(field))));
    }
    return *v;
  }
  float numeric_feature(std::string_view field, std::size_t column, int64_t line_no) {
    const std::string_view s = trim(field);
    for (std::string_view missing : missing_spellings) {
      if (s == missing) return std::numeric_limits<float>::quiet_NaN();
    }
    const std::optional<float> v = parse_float(s);
    if (!v) {
      throw usage_error(fmt::format("{}: '{}' is not a number (mark the column Categ in the "
                                    "column description if it is categorical)",
                                    where(column, line_no), visible_controls(s)));
    }
    return *v;
  }

  loaded_dataset& data_;
  std::vector<column_spec> roles_;
  std::vector<std::unordered_map<std::string, int64_t>> dictionaries_;  // per feature
};

}  // namespace

char parse_delimiter(const std::string& text) {
  if (text == "\\t" || text == "tab" || text == "\t") return '\t';
  if (text.size() == 1) return text[0];
  throw usage_error(fmt::format("--delimiter: '{}' is not a single character", text));
}

loaded_dataset read_dsv(const std::string& given_path, const dsv_format& format,
                        const std::optional<column_description>& cd) {
  const std::string path = strip_scheme(given_path);
  try {
    cbg::io::require_regular_file(path);  // a folder, FIFO or /dev/zero would never give rows
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("pool file: {}", e.what()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(fmt::format("cannot open pool file '{}'", path));
  return read_dsv(in, path, format, cd);
}

loaded_dataset read_dsv(std::istream& in, const std::string& path, const dsv_format& format,
                        const std::optional<column_description>& cd) {
  loaded_dataset data;
  data.path = path;

  std::optional<row_sink> sink;
  std::vector<std::string> header;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1) drop_utf8_bom(line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string_view> fields = split(line, format.delimiter);
    if (format.has_header && line_no == 1) {
      for (std::string_view f : fields) header.emplace_back(trim(f));
      data.n_columns = static_cast<int64_t>(fields.size());
      continue;
    }
    if (line.empty()) continue;  // blank lines (a trailing one, typically) carry no row
    if (data.n_columns == 0) data.n_columns = static_cast<int64_t>(fields.size());
    if (static_cast<int64_t>(fields.size()) != data.n_columns) {
      throw usage_error(fmt::format("{}:{}: {} column{} but {} expected (delimiter {})", path,
                                    line_no, fields.size(), fields.size() == 1 ? "" : "s",
                                    data.n_columns,
                                    format.delimiter == '\t' ? std::string("TAB")
                                                             : fmt::format("'{}'", format.delimiter)));
    }
    if (!sink) sink.emplace(data, column_roles(cd, data.n_columns), header);
    sink->add(fields, line_no);
  }
  if (in.bad()) throw usage_error(fmt::format("cannot read pool file '{}'", path));
  if (data.rows == 0) throw usage_error(fmt::format("pool file '{}' has no data rows", path));
  return data;
}

}  // namespace cbgpu_bench
