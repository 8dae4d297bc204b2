#include "runtime/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "ir/serialize.h"

namespace plir {

StatusOr<std::string> ReadFileToString(const std::string& path) {
  // The module loader's reader (mapped when a regular file, read(2) from
  // pipes, devices and standard input), copied into a string.
  PLIR_ASSIGN_OR_RETURN(ModuleFile f, ModuleFile::Open(path));
  return std::string(f.contents());
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

Status WriteFileAtomically(const std::string& requested, std::span<const std::string_view> parts) {
  const std::string path = WriteTarget(requested);
  // Devices, pipes and the like (-o /dev/null, -o /dev/stdout) are written
  // in place: renaming a temporary file over them would replace them.
  struct stat st;
  bool exists = stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    std::ofstream out(path, std::ios::binary);
    for (std::string_view part : parts) out.write(part.data(), static_cast<std::streamsize>(part.size()));
    out.flush();
    if (!out) return Internal(path + ": write failed: " + std::strerror(errno));
    return Status::Ok();
  }
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) return Internal(path + ": cannot create a temporary file: " + std::strerror(errno));
  std::string tmp(name.data());
  auto fail = [&](const std::string& what) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return Internal(path + ": " + what + ": " + std::strerror(err));
  };
  for (std::string_view part : parts) {
    size_t off = 0;
    while (off < part.size()) {
      ssize_t n = write(fd, part.data() + off, part.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail("write failed");
      }
      off += static_cast<size_t>(n);
    }
  }
  // mkstemp creates 0600. An existing file keeps its mode; a new one gets
  // the usual permissions (umask applies).
  if (exists) {
    fchmod(fd, st.st_mode & 07777);
  } else {
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
  }
  if (fsync(fd) != 0) return fail("fsync failed");
  if (close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Internal(path + ": close failed: " + std::strerror(err));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Internal(path + ": cannot rename the temporary file into place: " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace plir
