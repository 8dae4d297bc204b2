// File helpers for the command-line tools.
#ifndef PLIR_DRIVER_FILE_UTIL_H_
#define PLIR_DRIVER_FILE_UTIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ir/status.h"

namespace plir {

// Reads a whole file ("-" reads standard input).
StatusOr<std::string> ReadFileToString(const std::string& path);

// The lowercase hex SHA-256 of a file's contents.
StatusOr<std::string> Sha256File(const std::string& path);

// Writes all of `data` to `fd` (retrying short writes and EINTR); the
// error names `what` ("standard output", a path).
Status WriteAllToFd(int fd, std::string_view data, const std::string& what);
// The same at `offset` of the file (pwrite), leaving its position as it was.
Status WriteAllToFdAt(int fd, uint64_t offset, std::string_view data, const std::string& what);

// The standard descriptors, guarded. Call first in main(): a descriptor
// 0, 1 or 2 that is closed is opened on /dev/null the wrong way round
// (fd 1 read-only, fd 0 write-only, fd 2 write-only), so that no file the
// tool opens later takes its number, and a write to a closed standard
// output fails (EBADF) instead of landing in that file or nowhere.
void GuardStandardFds();
// Flushes std::cout and stdout and closes fd 1. Returns an error, naming
// standard output, iff any write to it failed since the start (a full
// disk, a closed descriptor: `tool >&-`) or the flush or the close failed.
// Call once, at the end of a successful run.
Status CloseStdout();
// main()'s last step for a tool: when `rc` is `ok_rc`, standard output is
// closed with CloseStdout(); if that fails, prints "TOOL: MESSAGE" and
// returns `error_rc`. Otherwise returns `rc`.
int FinishStdout(const char* tool, int rc, int error_rc = 1, int ok_rc = 0);

// Async-signal-safe: removes the temporary files of AtomicOutputs that are
// not yet committed (what the SIGINT/SIGTERM/SIGHUP handler does; another
// handler of those signals, the supervisor's, calls it too).
void RemoveTemporaryFilesNow();

// Starts the kernel's writeback of a regular file as it grows, for a file
// that is fsynced when complete (AtomicOutput::Commit): after every
// kStepBytes written, sync_file_range(SYNC_FILE_RANGE_WRITE) submits what
// was written since the last call and returns without waiting for it. The
// disk then writes while the rest is produced, and the fsync at the end
// waits for the last stretch, not the whole file. Where the call fails (a
// pipe, a file system without it) it stops trying; the fsync does it all.
class WritebackAhead {
 public:
  static constexpr uint64_t kStepBytes = uint64_t{8} << 20;
  explicit WritebackAhead(int fd = -1) : fd_(fd), on_(fd >= 0) {}
  // `bytes` more were written at the end of the file.
  void Wrote(size_t bytes);

 private:
  int fd_;
  bool on_;
  uint64_t written_ = 0;
  uint64_t started_ = 0;  // writeback submitted up to here
};

// Writes `contents` to `path` atomically: the data goes to a temporary file
// in the same directory, which is flushed and then renamed over `path`. On
// failure the temporary file is removed and `path` is left untouched. A
// `path` that exists and is not a regular file (/dev/null, a pipe) is written
// in place instead. An existing file keeps its mode; a symbolic link is
// followed, and the file it points to is replaced (the link stays).
Status WriteFileAtomically(const std::string& path, std::string_view contents);
// An output file written the same way, piece by piece: the data goes to a
// temporary file beside the target, which Commit() renames into place and
// Abort() (or the destructor) removes. Where the file system allows it
// (O_TMPFILE: ext4, xfs, btrfs, tmpfs) the temporary file has no name until
// Commit() links it in and at once renames it over the target, so that
// SIGKILL leaves nothing behind unless it lands between those two calls;
// elsewhere it is named TARGET.tmp.PID.XXXXXX from the start and removed if
// SIGINT, SIGTERM or SIGHUP ends the process first. Either way, a
// TARGET.tmp.PID.X that a killed process left is removed by the next
// Commit() to the same target (if the process is gone and the file is this
// user's). When root replaces another user's file,
// the file keeps its owner and group (and its mode, as always).
class AtomicOutput {
 public:
  static StatusOr<AtomicOutput> Create(const std::string& path);
  AtomicOutput(AtomicOutput&& o) noexcept;
  AtomicOutput& operator=(AtomicOutput&&) = delete;
  ~AtomicOutput();
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // A device, pipe or FIFO, written where it is: what is written there
  // cannot be taken back by Abort().
  bool in_place() const { return tmp_.empty() && !anonymous_; }
  Status Write(std::string_view data);
  Status Commit();
  void Abort();

 private:
  AtomicOutput() = default;
  Status LinkAnonymous();
  // Aborts and returns an error naming the output, `what` and errno.
  Status Fail(const std::string& what);
  std::string path_;        // the file replaced (links followed)
  std::string tmp_;         // the named temporary file, if any
  bool anonymous_ = false;  // fd_ is an O_TMPFILE file, linked in at Commit()
  int fd_ = -1;
  int slot_ = -1;
  WritebackAhead writeback_;
};

// The same for contents in pieces, written in order (no concatenated copy).
Status WriteFileAtomically(const std::string& path, std::span<const std::string_view> parts);

}  // namespace plir

#endif  // PLIR_DRIVER_FILE_UTIL_H_
