// One loader for every format: the format is detected from the contents
// (binary magic, a leading '{' for JSON, else text), and files are read
// through one size-capped path that refuses directories and devices.
#include "ir/serialize/module_file.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include "ir/serialize/internal.h"
#include "ir/serialize/page_releaser.h"
#include "ir/serialize/serialize.h"
#include "ir/support/mapping.h"
#include "ir/text/parser.h"

namespace plir {

ModuleFormat DetectFormat(std::string_view contents) {
  if (contents.size() >= 8 && std::memcmp(contents.data(), kBinaryMagic, 8) == 0)
    return ModuleFormat::kBinary;
  size_t i = contents.find_first_not_of(" \t\r\n");
  if (i != std::string_view::npos && contents[i] == '{') return ModuleFormat::kJson;
  return ModuleFormat::kText;
}

StatusOr<Module> LoadModule(std::string_view contents, const std::string& name) {
  return LoadModule(contents, name, nullptr);
}

StatusOr<Module> LoadModule(std::string_view contents, const std::string& name, LoadFacts* facts) {
  if (facts) *facts = LoadFacts();
  switch (DetectFormat(contents)) {
    case ModuleFormat::kBinary: {
      auto m = LoadBinary(contents, {}, facts);
      if (!m.ok()) return m.status().WithPrefix(name);
      return m;
    }
    case ModuleFormat::kJson: {
      auto m = LoadJson(contents);
      if (!m.ok()) return m.status().WithPrefix(name);
      return m;
    }
    case ModuleFormat::kText: {
      ParseOptions o;
      o.filename = name;
      auto m = ParseModule(contents, o);
      if (facts) facts->bindings_unshared = m.ok();
      return m;
    }
  }
  return Internal("unreachable");
}

// ---------------------------------------------------------------------------
// Files.

ModuleFile::ModuleFile(ModuleFile&& o) noexcept { *this = std::move(o); }

ModuleFile& ModuleFile::operator=(ModuleFile&& o) noexcept {
  if (this == &o) return *this;
  Release();
  mapped_ = o.mapped_;
  map_size_ = o.map_size_;
  mapping_ = std::move(o.mapping_);
  size_ = o.size_;
  padding_ = o.padding_;
  buffer_ = std::move(o.buffer_);
  data_ = mapped_ ? o.data_ : buffer_.data();
  o.data_ = nullptr;
  o.size_ = o.padding_ = o.map_size_ = 0;
  o.mapped_ = false;
  return *this;
}

ModuleFile::~ModuleFile() { Release(); }

void ModuleFile::Release() {
  mapping_.reset();  // unmaps, unless a loaded module's constants still borrow from it
  mapped_ = false;
  data_ = nullptr;
  size_ = padding_ = map_size_ = 0;
  std::string().swap(buffer_);
}

namespace {
std::atomic<uint64_t> g_max_input_bytes{ModuleFile::kDefaultMaxBytes};
}  // namespace

void ModuleFile::SetMaxBytes(uint64_t max_bytes) { g_max_input_bytes.store(max_bytes); }
uint64_t ModuleFile::MaxBytes() { return g_max_input_bytes.load(); }

StatusOr<ModuleFile> ModuleFile::Open(const std::string& path) {
  ModuleFile f;
  int fd = 0;
  struct stat st {};
  const uint64_t max_bytes = MaxBytes();
  auto too_large = [&]() {
    return ResourceExhausted((path == "-" ? std::string("<stdin>") : path) +
                             ": input larger than the limit of " + std::to_string(max_bytes) +
                             " bytes (--max-input-bytes)");
  };
  if (path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NotFound(path + ": cannot open file: " + std::strerror(errno));
    if (fstat(fd, &st) != 0) {
      int err = errno;
      close(fd);
      return Internal(path + ": cannot stat file: " + std::strerror(err));
    }
    // Regular files, pipes and sockets only: a directory or a device
    // (/dev/zero, /dev/urandom, a terminal) is not a module.
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
      close(fd);
      return InvalidArgument(path + (S_ISDIR(st.st_mode) ? ": is a directory, not a file"
                                                         : ": is a device, not a regular file"));
    }
    // Blocking reads from here on (O_NONBLOCK only kept open() of a FIFO
    // without a writer from hanging).
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
      close(fd);
      return too_large();
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      size_t size = static_cast<size_t>(st.st_size);
      // Every format is read whole, and is mapped with its pages read in
      // up front, except binary version 3: its constants keep viewing the
      // mapping, and their pages are read when first used.
      char head[12] = {};
      bool lazy = false;
      if (pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head) &&
          std::memcmp(head, kBinaryMagic, 8) == 0) {
        uint32_t version;
        std::memcpy(&version, head + 8, 4);
        lazy = version >= 3;
      }
      if (auto mapping = MapReadOnly(fd, size, 0, /*populate=*/!lazy)) {
        close(fd);
        long page = sysconf(_SC_PAGESIZE);
        f.mapping_ = std::move(mapping);
        f.data_ = static_cast<const char*>(f.mapping_.get());
        f.size_ = f.map_size_ = size;
        f.mapped_ = true;
        // The rest of the last page reads as zeros.
        f.padding_ = page > 0 && size % page ? page - size % page : 0;
        return f;
      }
    }
  }
  // Pipes, devices, files that report no size (/proc), or mmap failed: read.
  // Memory may run out below --max-input-bytes (an address-space limit, a
  // small machine): that is a message naming what was read, not bad_alloc.
  auto out_of_memory = [&]() {
    if (fd != 0) close(fd);
    return ResourceExhausted((path == "-" ? std::string("standard input") : path) +
                             ": out of memory after " + std::to_string(f.buffer_.size()) +
                             " bytes; --max-input-bytes caps it");
  };
  try {
    if (S_ISREG(st.st_mode) && st.st_size > 0)
      f.buffer_.reserve(static_cast<size_t>(st.st_size) + simdjson::SIMDJSON_PADDING);
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
  char chunk[1 << 16];
  while (true) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      if (fd != 0) close(fd);
      return Internal((path == "-" ? std::string("<stdin>") : path) +
                      ": read error: " + std::strerror(err));
    }
    if (f.buffer_.size() + static_cast<uint64_t>(n) > max_bytes) {  // endless input
      if (fd != 0) close(fd);
      return too_large();
    }
    try {
      f.buffer_.append(chunk, static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
      return out_of_memory();
    }
  }
  try {
    f.buffer_.append(simdjson::SIMDJSON_PADDING, '\0');
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  }
  if (fd != 0) close(fd);
  f.size_ = f.buffer_.size() - simdjson::SIMDJSON_PADDING;
  f.padding_ = simdjson::SIMDJSON_PADDING;
  f.data_ = f.buffer_.data();
  return f;
}

StatusOr<Module> LoadModule(const ModuleFile& file, const std::string& name) {
  return LoadModule(file, name, nullptr);
}

StatusOr<Module> LoadModule(const ModuleFile& file, const std::string& name, LoadFacts* facts) {
  if (facts) *facts = LoadFacts();
  if (DetectFormat(file) == ModuleFormat::kBinary && file.keepalive()) {
    BinaryLoadOptions o;
    o.keepalive = file.keepalive();  // version 3 constants view the mapping
    auto m = LoadBinary(file.contents(), o, facts);
    if (!m.ok()) return m.status().WithPrefix(name);
    return m;
  }
  if (DetectFormat(file) == ModuleFormat::kJson && file.padding() >= simdjson::SIMDJSON_PADDING) {
    auto m = internal::LoadJsonText(file.contents(), /*padded=*/true);  // in place, no copy
    if (!m.ok()) return m.status().WithPrefix(name);
    return m;
  }
  if (DetectFormat(file) == ModuleFormat::kText && file.mapped()) {
    // The text's pages go back as the parser finishes with them (a private
    // read-only mapping: touched again, they read back from the file): at
    // the end of a large parse, the input is no longer part of the peak.
    internal::TextPageReleaser releaser(file.contents().data());
    ParseOptions o;
    o.filename = name;
    o.done_with = [&releaser](size_t begin, size_t end) { releaser.Done(begin, end); };
    StatusOr<Module> m = ParseModule(file.contents(), o);
    releaser.ReleaseAll();
    if (facts) facts->bindings_unshared = m.ok();
    return m;
  }
  return LoadModule(file.contents(), name, facts);
}

StatusOr<Module> LoadModuleFile(const std::string& path) {
  PLIR_ASSIGN_OR_RETURN(ModuleFile f, ModuleFile::Open(path));
  return LoadModule(f, path == "-" ? "<stdin>" : path);
}

}  // namespace plir
