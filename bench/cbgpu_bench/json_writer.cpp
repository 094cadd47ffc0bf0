// SPDX-License-Identifier: Apache-2.0
#include "json_writer.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cbgpu_bench {

namespace {

void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  out += '"';
}

}  // namespace

void json_writer::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

json_writer& json_writer::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_object() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

json_writer& json_writer::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

json_writer& json_writer::end_array() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

json_writer& json_writer::key(std::string_view k) {
  before_value();
  append_escaped(out_, k);
  out_ += ':';
  after_key_ = true;
  return *this;
}

json_writer& json_writer::value(std::string_view s) {
  before_value();
  append_escaped(out_, s);
  return *this;
}

json_writer& json_writer::value(double d) {
  before_value();
  out_ += std::isfinite(d) ? fmt::format("{}", d) : std::string("null");
  return *this;
}

json_writer& json_writer::value(int64_t i) {
  before_value();
  out_ += fmt::format("{}", i);
  return *this;
}

json_writer& json_writer::value(uint64_t u) {
  before_value();
  out_ += fmt::format("{}", u);
  return *this;
}

json_writer& json_writer::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

json_writer& json_writer::null() {
  before_value();
  out_ += "null";
  return *this;
}

json_writer& json_writer::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

}  // namespace cbgpu_bench
