// SPDX-License-Identifier: Apache-2.0
// A fresh folder under the system's temporary folder for one test, removed (permissions restored
// first) at the end.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <iterator>
#include <string>

#include "support/catch.hpp"

namespace cbg::test {

struct scratch_dir {
  std::filesystem::path dir;
  scratch_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "cbgpu-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(dir, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  [[nodiscard]] std::string path(const char* name) const { return (dir / name).string(); }
  // How many entries the folder holds (a leftover temporary file would show here).
  [[nodiscard]] std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
  }
};

}  // namespace cbg::test
