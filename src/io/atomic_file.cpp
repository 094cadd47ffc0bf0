// SPDX-License-Identifier: Apache-2.0
#include "cbg/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace cbg::io {

namespace {

[[noreturn]] void fail(const std::string& path, int error) {
  throw file_error("cannot write '" + path + "': " + std::strerror(error));
}

// The folder part of `path` ("." when it has none) and the name part.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// A symbolic link is followed, so that the file it points to is replaced, not the link.
std::string resolve_link(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

void sync_folder(const std::string& folder) noexcept {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename happened; a folder that cannot be synced is not an error
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

atomic_file::atomic_file(std::string path) : path_(resolve_link(path)) {
  if (path.empty()) throw file_error("cannot write a file with an empty name");
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(path, EISDIR);
    if (!S_ISREG(st.st_mode)) {  // a device or a FIFO: written in place
      fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (fd_ < 0) fail(path, errno);
      return;
    }
  }
  const auto [folder, name] = split_path(path_);
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; fd_ < 0; ++attempt) {
    temp_ = folder + "/." + name + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
      const int error = errno;
      temp_.clear();
      fail(path, error);
    }
  }
}

atomic_file::atomic_file(atomic_file&& other) noexcept
    : path_(std::move(other.path_)), temp_(std::move(other.temp_)), fd_(other.fd_), committed_(other.committed_) {
  other.fd_ = -1;
  other.temp_.clear();
  other.committed_ = true;
}

atomic_file::~atomic_file() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void atomic_file::write(std::string_view bytes) {
  if (fd_ < 0) throw file_error("cannot write '" + path_ + "': already closed");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path_, errno);
    }
    if (n == 0) fail(path_, EIO);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void atomic_file::finish() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  // Devices and FIFOs need no sync (and some refuse it).
  const bool synced = temp_.empty() || ::fsync(fd) == 0;
  const int sync_error = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced) fail(path_, sync_error);
  if (!closed) fail(path_, errno);
}

void atomic_file::commit() {
  if (committed_) return;
  finish();
  if (!temp_.empty()) {
    if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(path_, errno);
    sync_folder(split_path(path_).first);
  }
  committed_ = true;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  atomic_file f(path);
  f.write(bytes);
  f.commit();
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files) {
  std::vector<atomic_file> written;
  written.reserve(files.size());
  for (const auto& [path, bytes] : files) {
    written.emplace_back(path);
    written.back().write(bytes);
    written.back().finish();
  }
  for (atomic_file& f : written) f.commit();
}

}  // namespace cbg::io
