// SPDX-License-Identifier: Apache-2.0
// Whole-file reads bounded by the input: regular files only (a folder, /dev/zero or a FIFO is refused
// at once, never read forever or waited on) and at most the size cap.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cbg/io/read_file.hpp"
#include "support/catch.hpp"
#include "support/scratch_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::string failure_of(const std::string& path, std::uint64_t cap = cbg::io::default_max_input_bytes) {
  try {
    (void)cbg::io::read_file(path, cap);
  } catch (const cbg::io::file_error& e) {
    return e.what();
  }
  return {};
}

using scratch = cbg::test::scratch_dir;

bool has(const std::string& text, const char* words) { return text.find(words) != std::string::npos; }

}  // namespace

TEST_CASE("read file: a regular file whole, and every refusal named", "[io]") {
  const scratch s;
  const std::string p = (s.dir / "m.cbm").string();
  std::ofstream(p, std::ios::binary) << std::string("CBM1\0\1", 6);
  CHECK(cbg::io::read_file(p) == std::string("CBM1\0\1", 6));

  CHECK(has(failure_of(p, 5), "6 bytes, more than the limit of 5"));
  CHECK(has(failure_of((s.dir / "missing.cbm").string()), "cannot open"));
  CHECK(has(failure_of((s.dir / "missing.cbm").string()), "No such file or directory"));
  CHECK(has(failure_of(s.dir.string()), "Is a directory"));
  CHECK(has(failure_of("/dev/zero"), "a character device, not a regular file"));
  const std::string fifo = (s.dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(has(failure_of(fifo), "a FIFO, not a regular file"));  // refused at once: no writer waited for
}

TEST_CASE("read file: the cap comes from CBGPU_MAX_INPUT_BYTES when set", "[io]") {
  ::setenv("CBGPU_MAX_INPUT_BYTES", "1234", 1);
  CHECK(cbg::io::max_input_bytes() == 1234);
  ::setenv("CBGPU_MAX_INPUT_BYTES", "lots", 1);
  CHECK(cbg::io::max_input_bytes() == cbg::io::default_max_input_bytes);
  ::unsetenv("CBGPU_MAX_INPUT_BYTES");
  CHECK(cbg::io::max_input_bytes() == cbg::io::default_max_input_bytes);
}
