// SPDX-License-Identifier: Apache-2.0
// A minimal streaming JSON writer for the --json record (the tool depends on no JSON library).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cbgpu_bench {

class json_writer {
 public:
  json_writer& begin_object();
  json_writer& end_object();
  json_writer& begin_array();
  json_writer& end_array();
  json_writer& key(std::string_view k);  // inside an object, before each value

  json_writer& value(std::string_view s);
  json_writer& value(const char* s) { return value(std::string_view(s)); }
  json_writer& value(double d);  // NaN and infinities become null
  json_writer& value(int64_t i);
  json_writer& value(uint64_t u);
  json_writer& value(int32_t i) { return value(static_cast<int64_t>(i)); }
  json_writer& value(bool b);
  json_writer& null();
  json_writer& raw(std::string_view json);  // a value that is already JSON text

  const std::string& str() const { return out_; }

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace cbgpu_bench
