// SPDX-License-Identifier: Apache-2.0
// Format dispatch and files.
#include <string>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/io/atomic_file.hpp"
#include "cbg/io/read_file.hpp"
#include "cbg/model/io.hpp"

namespace cbg::model {

model read_model(const void* data, std::size_t size, file_format format) {
  CBG_EXPECTS(data != nullptr || size == 0, status::null_pointer, "model bytes are NULL");
  switch (format) {
    case file_format::cbm:
      return read_cbm(data, size);
    case file_format::json:
      return read_json(std::string_view(static_cast<const char*>(data), size));
  }
  CBG_FAIL(status::invalid_argument, fmt::format("unknown model format {}", static_cast<int>(format)));
}

std::vector<std::uint8_t> write_model(const model& m, file_format format) {
  switch (format) {
    case file_format::cbm:
      return write_cbm(m);
    case file_format::json: {
      const std::string text = write_json(m);
      return {text.begin(), text.end()};
    }
  }
  CBG_FAIL(status::invalid_argument, fmt::format("unknown model format {}", static_cast<int>(format)));
}

model load_model_file(const std::string& path, file_format format) {
  if (format != file_format::cbm && format != file_format::json)
    CBG_FAIL(status::invalid_argument, fmt::format("unknown model format {}", static_cast<int>(format)));
  std::string bytes;
  try {
    bytes = io::read_file(path);
  } catch (const io::file_error& e) {
    CBG_FAIL(status::io, fmt::format("model file: {}", e.what()));
  }
  return read_model(bytes.data(), bytes.size(), format);
}

void save_model_file(const model& m, const std::string& path, file_format format) {
  const auto bytes = write_model(m, format);
  try {
    io::write_file_atomically(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  } catch (const io::file_error& e) {
    CBG_FAIL(status::io, fmt::format("model file: {}", e.what()));
  }
}

}  // namespace cbg::model
