// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the CLI's .cd reader and DSV reader. The input is split at its first NUL byte:
// the part before is the .cd file, the part after the data file (no NUL: data only, no .cd). Both
// are written to files, since the readers take paths. Accepted, or refused with usage_error /
// not_implemented_error: anything else is a finding. Build and run: scripts/fuzz.sh cd_dsv [runs]
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "bench/cbgpu_bench/column_description.hpp"
#include "bench/cbgpu_bench/dsv_reader.hpp"
#include "bench/cbgpu_bench/errors.hpp"

namespace {

std::string write_file(const char* suffix, std::string_view bytes) {
  const std::string path = "/tmp/cbgpu-fuzz-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  try {
    std::optional<cbgpu_bench::column_description> cd;
    if (nul != std::string_view::npos) {
      cd = cbgpu_bench::read_column_description(write_file(".cd", input.substr(0, nul)));
    }
    const std::string_view rows = nul == std::string_view::npos ? input : input.substr(nul + 1);
    for (const bool header : {false, true}) {
      (void)cbgpu_bench::read_dsv(write_file(".tsv", rows), cbgpu_bench::dsv_format{'\t', header}, cd);
    }
  } catch (const cbgpu_bench::usage_error&) {
  } catch (const cbgpu_bench::not_implemented_error&) {
  }
  return 0;
}
