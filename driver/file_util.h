// File helpers for the command-line tools.
#ifndef PLIR_DRIVER_FILE_UTIL_H_
#define PLIR_DRIVER_FILE_UTIL_H_

#include <span>
#include <string>
#include <string_view>

#include "ir/status.h"

namespace plir {

// Reads a whole file ("-" reads standard input).
StatusOr<std::string> ReadFileToString(const std::string& path);

// The lowercase hex SHA-256 of a file's contents.
StatusOr<std::string> Sha256File(const std::string& path);

// Writes `contents` to `path` atomically: the data goes to a temporary file
// in the same directory, which is flushed and then renamed over `path`. On
// failure the temporary file is removed and `path` is left untouched. A
// `path` that exists and is not a regular file (/dev/null, a pipe) is written
// in place instead. An existing file keeps its mode; a symbolic link is
// followed, and the file it points to is replaced (the link stays).
Status WriteFileAtomically(const std::string& path, std::string_view contents);
// An output file written the same way, piece by piece: the data goes to a
// temporary file beside the target, which Commit() renames into place and
// Abort() (or the destructor) removes. The temporary file is also removed if
// SIGINT, SIGTERM or SIGHUP ends the process first. fd() may be handed to
// another process that writes the data.
class AtomicOutput {
 public:
  static StatusOr<AtomicOutput> Create(const std::string& path);
  AtomicOutput(AtomicOutput&& o) noexcept;
  AtomicOutput& operator=(AtomicOutput&&) = delete;
  ~AtomicOutput();
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  Status Write(std::string_view data);
  Status Commit();
  void Abort();

 private:
  AtomicOutput() = default;
  std::string path_;  // the file replaced (links followed)
  std::string tmp_;   // empty when writing in place
  int fd_ = -1;
  int slot_ = -1;
};

// The same for contents in pieces, written in order (no concatenated copy).
Status WriteFileAtomically(const std::string& path, std::span<const std::string_view> parts);

}  // namespace plir

#endif  // PLIR_DRIVER_FILE_UTIL_H_
