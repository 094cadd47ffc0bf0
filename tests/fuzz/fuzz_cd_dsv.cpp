// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the CLI's .cd reader and DSV reader, in memory. The input is split at its first
// NUL byte: the part before is the .cd text, the part after the data text (no NUL: data only, no
// .cd). Accepted, or refused with usage_error / not_implemented_error: anything else is a finding.
// Build and run: scripts/fuzz.sh cd_dsv [runs]
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "bench/cbgpu_bench/column_description.hpp"
#include "bench/cbgpu_bench/dsv_reader.hpp"
#include "bench/cbgpu_bench/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  try {
    std::optional<cbgpu_bench::column_description> cd;
    if (nul != std::string_view::npos) {
      std::istringstream text{std::string(input.substr(0, nul))};
      cd = cbgpu_bench::read_column_description(text, "fuzz.cd");
    }
    const std::string rows(nul == std::string_view::npos ? input : input.substr(nul + 1));
    for (const bool header : {false, true}) {
      std::istringstream text(rows);
      (void)cbgpu_bench::read_dsv(text, "fuzz.tsv", cbgpu_bench::dsv_format{'\t', header}, cd);
    }
  } catch (const cbgpu_bench::usage_error&) {
  } catch (const cbgpu_bench::not_implemented_error&) {}
  return 0;
}
