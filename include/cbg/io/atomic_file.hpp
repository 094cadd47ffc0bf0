// SPDX-License-Identifier: Apache-2.0
// Files written so that a failure never destroys what was there: the bytes go to a temporary file in
// the target's folder, are flushed and synced, and only then renamed over the target. A reader sees
// the old file or the new one, never a part; on any failure the old file is untouched and the
// temporary removed. Used by every file the library and cbgpu-bench write. Self-contained (no other
// part of the core), so that the command line tool compiles it too.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cbg::io {

// A file could not be written; what() names the path and the operating system's reason
// ("cannot write 'out/model.cbm': No space left on device").
class file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The new version of one file. Targets that exist and are neither regular files nor folders (a
// terminal, /dev/null, a FIFO) are written in place: renaming over them would replace the device.
class atomic_file {
 public:
  explicit atomic_file(std::string path);  // creates the temporary; file_error if it cannot
  atomic_file(atomic_file&& other) noexcept;
  atomic_file& operator=(atomic_file&&) = delete;
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  ~atomic_file();  // removes the temporary unless committed

  void write(std::string_view bytes);
  // Flushes, syncs and closes the temporary: after this, only the rename is left.
  void finish();
  // finish() unless done, then renames the temporary over the target.
  void commit();
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;  // the target (symbolic links resolved)
  std::string temp_;  // empty when writing in place
  int fd_ = -1;
  bool committed_ = false;
};

void write_file_atomically(const std::string& path, std::string_view bytes);

// Several files, all or nothing: every temporary is written and synced before the first rename, so
// that running out of space, a folder in the way or a missing permission leaves every old file as it
// was. (Only a rename failing between two others, which needs the folder to change meanwhile, could
// leave some files new.)
void write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files);

}  // namespace cbg::io
