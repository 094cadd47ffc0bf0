// SPDX-License-Identifier: Apache-2.0
// Writing files without destroying the old ones: every failure (a folder in the way, a missing or
// read-only folder, the file size limit) leaves the old file as it was and no temporary behind, and
// names the path and the operating system's reason.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cbg/io/atomic_file.hpp"
#include "support/catch.hpp"
#include "support/scratch_dir.hpp"

namespace fs = std::filesystem;

namespace {

using scratch = cbg::test::scratch_dir;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The message of the file_error `write` throws, or "" when it throws none.
template <class F>
std::string failure_of(F&& write) {
  try {
    write();
  } catch (const cbg::io::file_error& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("atomic file: replaces the old file and leaves nothing else", "[io]") {
  const scratch s;
  const std::string p = s.path("model.cbm");
  cbg::io::write_file_atomically(p, "old");
  cbg::io::write_file_atomically(p, "new contents");
  CHECK(read(p) == "new contents");
  CHECK(s.entries() == 1);
}

TEST_CASE("atomic file: a folder in the way is refused, the folder untouched", "[io]") {
  const scratch s;
  const std::string p = s.path("target");
  fs::create_directory(p);
  const std::string msg = failure_of([&] { cbg::io::write_file_atomically(p, "bytes"); });
  CHECK(msg.find("Is a directory") != std::string::npos);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(fs::is_directory(p));
  CHECK(s.entries() == 1);
}

TEST_CASE("atomic file: a missing folder names the path and the reason", "[io]") {
  const scratch s;
  const std::string p = s.path("no_such_dir/m.cbm");
  const std::string msg = failure_of([&] { cbg::io::write_file_atomically(p, "bytes"); });
  CHECK(msg.find("No such file or directory") != std::string::npos);
  CHECK(msg.find(p) != std::string::npos);
}

TEST_CASE("atomic file: the file size limit (RLIMIT_FSIZE) keeps the old file", "[io]") {
  const scratch s;
  const std::string p = s.path("model.cbm");
  cbg::io::write_file_atomically(p, "old model");
  // In a child process: the limit and the ignored SIGXFSZ stay there.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(3);
    const std::string msg = failure_of([&] { cbg::io::write_file_atomically(p, std::string(65536, 'x')); });
    ::_exit(msg.find("File too large") != std::string::npos && msg.find(p) != std::string::npos ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read(p) == "old model");
  CHECK(s.entries() == 1);  // the temporary was removed
}

TEST_CASE("atomic file: a read-only folder keeps the old file", "[io]") {
  if (::geteuid() == 0) {
    WARN("SKIPPED: running as root, which ignores folder permissions");
    return;
  }
  const scratch s;
  const std::string p = s.path("model.cbm");
  cbg::io::write_file_atomically(p, "old model");
  fs::permissions(s.dir, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string msg = failure_of([&] { cbg::io::write_file_atomically(p, "new"); });
  fs::permissions(s.dir, fs::perms::owner_all);
  CHECK(msg.find("Permission denied") != std::string::npos);
  CHECK(read(p) == "old model");
  CHECK(s.entries() == 1);
}

TEST_CASE("atomic files: several files all or nothing", "[io]") {
  const scratch s;
  const std::string a = s.path("model.cbm"), b = s.path("model.cbm.json");
  cbg::io::write_file_atomically(a, "old cbm");
  fs::create_directory(b);  // the second target cannot be written
  const std::string msg = failure_of([&] { cbg::io::write_files_atomically({{a, "new cbm"}, {b, "new json"}}); });
  CHECK(msg.find("Is a directory") != std::string::npos);
  CHECK(read(a) == "old cbm");
  CHECK(s.entries() == 2);

  fs::remove(b);
  cbg::io::write_files_atomically({{a, "new cbm"}, {b, "new json"}});
  CHECK(read(a) == "new cbm");
  CHECK(read(b) == "new json");
  CHECK(s.entries() == 2);
}

TEST_CASE("atomic file: devices are written in place, not replaced", "[io]") {
  cbg::io::write_file_atomically("/dev/null", "discarded");
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("atomic file: a symbolic link's target is replaced, the link kept", "[io]") {
  const scratch s;
  const std::string target = s.path("real.cbm"), link = s.path("link.cbm");
  cbg::io::write_file_atomically(target, "old");
  fs::create_symlink(target, link);
  cbg::io::write_file_atomically(link, "new");
  CHECK(fs::is_symlink(link));
  CHECK(read(target) == "new");
}
