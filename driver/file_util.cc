#include "driver/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <vector>

#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"

namespace plir {

// libcrypto (OpenSSL) computes the digest.
StatusOr<std::string> Sha256File(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound(path + ": cannot open: " + std::strerror(errno));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      EVP_MD_CTX_free(ctx);
      return Internal(path + ": read error: " + std::strerror(err));
    }
    EVP_DigestUpdate(ctx, buf, static_cast<size_t>(n));
  }
  close(fd);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 15]);
  }
  return hex;
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  // The module loader's reader (mapped when a regular file, read(2) from
  // pipes, devices and standard input), copied into a string.
  PLIR_ASSIGN_OR_RETURN(ModuleFile f, ModuleFile::Open(path));
  return std::string(f.contents());
}

void WritebackAhead::Wrote(size_t bytes) {
  written_ += bytes;
  if (!on_ || written_ - started_ < kStepBytes) return;
  // Whole pages only: the last partial page is written again next time.
  const uint64_t upto = written_ & ~uint64_t{4095};
  if (sync_file_range(fd_, static_cast<off_t>(started_), static_cast<off_t>(upto - started_),
                      SYNC_FILE_RANGE_WRITE) != 0) {
    on_ = false;  // a pipe, or a kernel or file system without it: the fsync does it all
    return;
  }
  started_ = upto;
}

namespace {
// Writes all of `data` at the file position (`offset` null) or at
// *offset (pwrite), retrying short writes and EINTR.
Status WriteAll(int fd, const uint64_t* offset, std::string_view data, const std::string& what) {
  size_t off = 0;
  while (off < data.size()) {
    const char* p = data.data() + off;
    const size_t left = data.size() - off;
    ssize_t n =
        offset ? pwrite(fd, p, left, static_cast<off_t>(*offset + off)) : write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal("error writing " + what + ": " + std::strerror(errno));
    }
    if (n == 0) return Internal("error writing " + what + ": no progress");
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}
}  // namespace

Status WriteAllToFd(int fd, std::string_view data, const std::string& what) {
  return WriteAll(fd, nullptr, data, what);
}

Status WriteAllToFdAt(int fd, uint64_t offset, std::string_view data, const std::string& what) {
  return WriteAll(fd, &offset, data, what);
}

namespace {
bool g_stdout_was_closed = false;
}  // namespace

void GuardStandardFds() {
  static const int kFlags[3] = {O_WRONLY, O_RDONLY, O_WRONLY};
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == 1) g_stdout_was_closed = true;
    int got = open("/dev/null", kFlags[fd] | O_NOCTTY);
    if (got >= 0 && got != fd) {
      dup2(got, fd);
      close(got);
    }
  }
}

Status CloseStdout() {
  errno = 0;
  std::cout.flush();
  bool failed = std::cout.fail() || std::ferror(stdout);
  int err = failed ? errno : 0;
  if (std::fflush(stdout) != 0) {
    failed = true;
    err = errno;
  }
  // The descriptor's own close: some file systems report a failed write
  // only here.
  if (close(1) != 0 && errno != EINTR && !(errno == EBADF && g_stdout_was_closed)) {
    failed = true;
    err = errno;
  }
  if (!failed) return Status::Ok();
  if (g_stdout_was_closed) return Internal("error writing standard output: it is closed");
  return Internal(std::string("error writing standard output: ") +
                  std::strerror(err != 0 ? err : EIO));
}

int FinishStdout(const char* tool, int rc, int error_rc, int ok_rc) {
  if (rc != ok_rc) {
    std::cout.flush();
    std::fflush(stdout);
    return rc;
  }
  Status s = CloseStdout();
  if (s.ok()) return rc;
  std::cerr << tool << ": " << s.message() << "\n";
  return error_rc;
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, std::span<const std::string_view>(&contents, 1));
}

namespace {

// The file a write to `path` must replace: `path` itself, or, through any
// chain of symbolic links, the file they point to (a link is followed, not
// replaced by a regular file). Links are followed at most 40 times, as the
// kernel does.
std::string WriteTarget(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat lst;
    if (lstat(p.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) return p;
    std::vector<char> buf(static_cast<size_t>(lst.st_size > 0 ? lst.st_size : 255) + 1);
    ssize_t n = readlink(p.c_str(), buf.data(), buf.size() - 1);
    if (n <= 0) return p;
    std::string target(buf.data(), static_cast<size_t>(n));
    if (target[0] != '/') {  // relative to the link's directory
      size_t slash = p.rfind('/');
      if (slash != std::string::npos) target = p.substr(0, slash + 1) + target;
    }
    p = target;
  }
  return p;
}

}  // namespace

namespace {

// Temporary files to remove if SIGINT, SIGTERM or SIGHUP ends the process
// (fixed slots: the handler may only use async-signal-safe calls).
constexpr int kCleanupSlots = 16;
constexpr size_t kCleanupPath = 4096;
char g_cleanup[kCleanupSlots][kCleanupPath];
std::atomic<bool> g_cleanup_used[kCleanupSlots];

void OnTerminatingSignal(int sig) {
  RemoveTemporaryFilesNow();
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallCleanupHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring
      // Another handler (the supervisor's) is in place: it removes the
      // files itself (RemoveTemporaryFilesNow).
      if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
      struct sigaction sa {};
      sa.sa_handler = OnTerminatingSignal;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  });
}

}  // namespace

void RemoveTemporaryFilesNow() {
  for (int i = 0; i < kCleanupSlots; ++i)
    if (g_cleanup_used[i].load()) unlink(g_cleanup[i]);
}

namespace {

int AddCleanup(const std::string& path) {
  if (path.size() >= kCleanupPath) return -1;
  InstallCleanupHandlers();
  for (int i = 0; i < kCleanupSlots; ++i) {
    if (g_cleanup_used[i].load()) continue;
    std::memcpy(g_cleanup[i], path.c_str(), path.size() + 1);
    g_cleanup_used[i].store(true);
    return i;
  }
  return -1;
}

void RemoveCleanup(int slot) {
  if (slot >= 0) g_cleanup_used[slot].store(false);
}

// TARGET.tmp.PID.: the temporary files of one process, for one target.
std::string TemporaryPrefix(const std::string& target) {
  return target + ".tmp." + std::to_string(getpid()) + ".";
}

// Removes TARGET.tmp.PID.X files whose process is gone (a SIGKILL between the
// link and the rename of Commit), if they are regular files of this user.
// Another live process's temporary file is left alone, and so is anything
// else in the directory.
void SweepDeadTemporaries(const std::string& target) {
  size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : target.substr(0, slash);
  const std::string prefix =
      (slash == std::string::npos ? target : target.substr(slash + 1)) + ".tmp.";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const pid_t self = getpid();
  while (const dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = name.substr(prefix.size());
    size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos || dot > 9 || dot + 1 == rest.size()) continue;
    long pid = 0;
    bool digits = true;
    for (char c : rest.substr(0, dot)) {
      if (c < '0' || c > '9') digits = false;
      pid = pid * 10 + (c - '0');
    }
    if (!digits || pid <= 0 || pid == self) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
      continue;  // alive, or not ours to judge
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) continue;
    unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

}  // namespace

StatusOr<AtomicOutput> AtomicOutput::Create(const std::string& requested) {
  AtomicOutput out;
  out.path_ = WriteTarget(requested);
  // Devices, pipes and the like (-o /dev/null, -o /dev/stdout) are written
  // in place: renaming a temporary file over them would replace them.
  struct stat st;
  bool exists = stat(out.path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return InvalidArgument(out.path_ + ": is a directory");
  if (exists && !S_ISREG(st.st_mode)) {
    // A FIFO that nobody reads would block the open until someone does
    // (forever, after a whole run): it is refused at once instead. One with
    // a reader is written like a device.
    const bool fifo = S_ISFIFO(st.st_mode);
    out.fd_ = open(out.path_.c_str(), O_WRONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
    if (out.fd_ < 0 && fifo && errno == ENXIO)
      return FailedPrecondition(out.path_ +
                                ": is a FIFO that no process has open for reading (writing it "
                                "would wait forever); start its reader first, or name a regular "
                                "file");
    if (out.fd_ < 0)
      return Internal(out.path_ + ": cannot open for writing: " + std::strerror(errno));
    if (fifo) {
      int flags = fcntl(out.fd_, F_GETFL);
      if (flags >= 0) fcntl(out.fd_, F_SETFL, flags & ~O_NONBLOCK);
    }
    return out;
  }
  // A file with no name first (nothing to clean up, whatever ends the
  // process); a named one where the file system cannot.
  size_t slash = out.path_.rfind('/');
  std::string dir = slash == std::string::npos ? "."
                    : slash == 0               ? "/"
                                               : out.path_.substr(0, slash);
  out.fd_ = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  out.anonymous_ = out.fd_ >= 0;
  if (!out.anonymous_) {
    std::string tmpl = TemporaryPrefix(out.path_) + "XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    out.fd_ = mkstemp(name.data());
    if (out.fd_ < 0)
      return Internal(out.path_ + ": cannot create a temporary file: " + std::strerror(errno));
    out.tmp_ = name.data();
    out.slot_ = AddCleanup(out.tmp_);
  }
  // The file is created 0600. An existing file keeps its mode (and, when
  // root replaces it, its owner and group: chown first, since it clears the
  // set-id bits); a new one gets the usual permissions (umask applies).
  if (exists) {
    if (geteuid() == 0 && (st.st_uid != 0 || st.st_gid != 0)) {
      int ignored = fchown(out.fd_, st.st_uid, st.st_gid);
      (void)ignored;
    }
    fchmod(out.fd_, st.st_mode & 07777);
  } else {
    mode_t mask = umask(0);
    umask(mask);
    fchmod(out.fd_, 0666 & ~mask);
  }
  out.writeback_ = WritebackAhead(out.fd_);
  return out;
}

AtomicOutput::AtomicOutput(AtomicOutput&& o) noexcept
    : path_(std::move(o.path_)),
      tmp_(std::move(o.tmp_)),
      anonymous_(o.anonymous_),
      fd_(o.fd_),
      slot_(o.slot_),
      writeback_(o.writeback_) {
  o.fd_ = -1;
  o.slot_ = -1;
  o.tmp_.clear();
  o.anonymous_ = false;
}

AtomicOutput::~AtomicOutput() { Abort(); }

Status AtomicOutput::Write(std::string_view data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd_, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal(path_ + ": write failed: " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  if (!in_place()) writeback_.Wrote(data.size());
  return Status::Ok();
}

Status AtomicOutput::Fail(const std::string& what) {
  int err = errno;
  Abort();
  return Internal(path_ + ": " + what + ": " + std::strerror(err));
}

Status AtomicOutput::Commit() {
  if (fd_ < 0) return Internal(path_ + ": output already closed");
  if (tmp_.empty() && !anonymous_) {  // written in place
    int rc = close(fd_);
    fd_ = -1;
    if (rc != 0) return Internal(path_ + ": close failed: " + std::strerror(errno));
    return Status::Ok();
  }
  if (fsync(fd_) != 0) return Fail("fsync failed");
  // The data is on disk: from here to the rename, the file has a name, so
  // link and rename come one right after the other (the close waits), and a
  // SIGKILL in between is the only way a TARGET.tmp.PID.X is left behind. The
  // next write of the same target removes it (SweepDeadTemporaries).
  if (anonymous_) PLIR_RETURN_IF_ERROR(LinkAnonymous());
  if (rename(tmp_.c_str(), path_.c_str()) != 0)
    return Fail("cannot rename the temporary file into place");
  RemoveCleanup(slot_);
  slot_ = -1;
  tmp_.clear();
  int rc = close(fd_);
  fd_ = -1;
  // After fsync, a failing close cannot lose data that is already in place.
  (void)rc;
  SweepDeadTemporaries(path_);
  return Status::Ok();
}

// An O_TMPFILE output gets a name for the final rename.
Status AtomicOutput::LinkAnonymous() {
  // linkat cannot replace a file: link the data in under a fresh name, then
  // rename that over the target (a named file exists for these two calls
  // only, and is removed on SIGINT/SIGTERM/SIGHUP as ever).
  const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 100 && tmp_.empty(); ++attempt) {
    std::string name = TemporaryPrefix(path_);
    unsigned char random[6];
    if (getentropy(random, sizeof random) != 0) return Fail("getentropy failed");
    for (unsigned char r : random) name.push_back(kChars[r % (sizeof kChars - 1)]);
    slot_ = AddCleanup(name);
    if (linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0 ||
        (errno == ENOENT && linkat(fd_, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0)) {
      tmp_ = name;
      break;
    }
    int err = errno;
    RemoveCleanup(slot_);
    slot_ = -1;
    if (err != EEXIST) {
      errno = err;
      return Fail("cannot link the temporary file in");
    }
  }
  if (tmp_.empty()) return Fail("cannot link the temporary file in");
  anonymous_ = false;
  return Status::Ok();
}

void AtomicOutput::Abort() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  anonymous_ = false;
  if (!tmp_.empty()) unlink(tmp_.c_str());
  tmp_.clear();
  RemoveCleanup(slot_);
  slot_ = -1;
}

Status WriteFileAtomically(const std::string& requested, std::span<const std::string_view> parts) {
  PLIR_ASSIGN_OR_RETURN(AtomicOutput out, AtomicOutput::Create(requested));
  for (std::string_view part : parts) PLIR_RETURN_IF_ERROR(out.Write(part));
  return out.Commit();
}

}  // namespace plir
