// SPDX-License-Identifier: Apache-2.0
#include "cbg/io/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace cbg::io {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Refuses what is not a regular file of at most `max_bytes`.
void check_kind_and_size(const std::string& path, const struct stat& st, std::uint64_t max_bytes) {
  if (S_ISDIR(st.st_mode)) throw file_error("cannot read '" + path + "': " + std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode)) {
    throw file_error("cannot read '" + path + "': it is " + kind_of(st.st_mode) + ", not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    throw file_error("cannot read '" + path + "': it has " + std::to_string(size) + " bytes, more than the limit of " +
                     std::to_string(max_bytes) + " (CBGPU_MAX_INPUT_BYTES raises it)");
  }
}

// Closes the descriptor when the read ends, however it ends.
struct descriptor {
  int fd;
  ~descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::uint64_t max_input_bytes() {
  const char* text = std::getenv("CBGPU_MAX_INPUT_BYTES");
  if (text == nullptr) return default_max_input_bytes;
  std::uint64_t v = 0;
  const char* end = text + std::strlen(text);
  const auto [p, ec] = std::from_chars(text, end, v);
  return ec == std::errc{} && p == end && v > 0 ? v : default_max_input_bytes;
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below).
  const descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) throw file_error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) throw file_error("cannot read '" + path + "': " + std::strerror(errno));
  check_kind_and_size(path, st, max_bytes);
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {  // the size when opened: a file that grows meanwhile is read that far
    const ssize_t n = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw file_error("cannot read '" + path + "': " + std::strerror(errno));
    }
    if (n == 0) break;  // it shrank
    done += static_cast<std::size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

void require_regular_file(const std::string& path, std::uint64_t max_bytes) {
  struct stat st {};  // stat, not open: a FIFO is not waited on
  if (::stat(path.c_str(), &st) != 0) throw file_error("cannot open '" + path + "': " + std::strerror(errno));
  check_kind_and_size(path, st, max_bytes);
}

}  // namespace cbg::io
