// SPDX-License-Identifier: Apache-2.0
// Whole-file reads bounded by the file: only regular files are read (a folder, a FIFO, /dev/zero or
// a terminal is refused, so nothing blocks or reads forever), and at most a cap of bytes, so that a
// corrupt or hostile input cannot make the reader allocate without limit. Self-contained, like
// atomic_file.hpp, so that the command line tool compiles it too.
#pragma once

#include <cstdint>
#include <string>

#include "cbg/io/atomic_file.hpp"  // file_error

namespace cbg::io {

// The cap: 16 GiB, or the byte count in the environment variable CBGPU_MAX_INPUT_BYTES (read on
// each call; a value that is not a positive integer is ignored).
inline constexpr std::uint64_t default_max_input_bytes = std::uint64_t{16} << 30;
std::uint64_t max_input_bytes();

// The bytes of the regular file `path`. Throws file_error naming the path and the reason ("cannot
// open 'm.cbm': No such file or directory", "cannot read 'd': Is a directory", "... is a FIFO, not a
// regular file", "... is 20 GiB, more than the limit of ...").
std::string read_file(const std::string& path, std::uint64_t max_bytes = max_input_bytes());

// The same checks without reading, for readers that stream the file: throws file_error unless
// `path` is a regular file of at most `max_bytes`.
void require_regular_file(const std::string& path, std::uint64_t max_bytes = max_input_bytes());

}  // namespace cbg::io
