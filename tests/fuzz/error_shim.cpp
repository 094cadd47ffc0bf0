// SPDX-License-Identifier: Apache-2.0
// The fuzz targets link the model IO sources alone: this replaces src/core/error.cpp (which needs
// the CUDA runtime) with the one function model IO uses.
#include "cbg/core/error.hpp"

namespace cbg::detail {
void throw_error(status code, const std::string& message, const char*, int) { throw error(code, message); }
}  // namespace cbg::detail
