#include "driver/child_result.h"

#include <fcntl.h>
#include <sys/mman.h>  // memfd_create
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "driver/file_util.h"
#include "ir/op.h"
#include "ir/serialize/serialize.h"
#include "ir/support/mapping.h"
#include "ir/verifier.h"

namespace plir {
namespace {

constexpr char kMagic[8] = {'P', 'L', 'I', 'R', 'R', 'E', 'S', '\x01'};
constexpr size_t kHeaderSize = 32;
constexpr uint64_t kMaxNamesSize = uint64_t{16} << 20;
constexpr size_t kMaxNameSize = 512;
constexpr size_t kPayloadAlignment = 64;
constexpr const char* kStandInOrigin =
    "a plugin of the supervised child (stand-in in the supervisor)";

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void PutU64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint32_t GetU32(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
uint64_t GetU64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

Status WriteAt(int fd, std::string_view data, off_t at) {
  return WriteAllToFdAt(fd, static_cast<uint64_t>(at), data, "the result");
}

size_t PadTo64(uint64_t n) {
  return static_cast<size_t>((kPayloadAlignment - n % kPayloadAlignment) % kPayloadAlignment);
}

bool IsModuleKind(ChildResultKind k) { return k == ChildResultKind::kModule; }

bool IsOpNameChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

}  // namespace

StatusOr<int> CreateResultFile() {
  int fd = memfd_create("plir-result", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Internal(std::string("memfd_create: ") + std::strerror(errno));
  return fd;
}

Status WriteChildResult(int fd, ChildResultKind kind, const std::vector<std::string>& op_names,
                        std::string_view payload) {
  PLIR_ASSIGN_OR_RETURN(ChildResultWriter w, ChildResultWriter::Start(fd, kind, op_names));
  PLIR_RETURN_IF_ERROR(w.Append(payload));
  return w.Finish();
}

StatusOr<ChildResultWriter> ChildResultWriter::Start(int fd, ChildResultKind kind,
                                                     const std::vector<std::string>& op_names) {
  std::string names;
  for (const std::string& n : op_names) {
    names += n;
    names.push_back('\0');
  }
  // A module's payload starts at a multiple of 64 (NULs after the last
  // name), so that the parent's mapping has its version 3 tensor data
  // aligned as in a file and the constants can view it in place.
  if (IsModuleKind(kind)) names.append(PadTo64(kHeaderSize + names.size()), '\0');
  if (ftruncate(fd, 0) != 0)
    return Internal(std::string("resetting the result: ") + std::strerror(errno));
  PLIR_RETURN_IF_ERROR(WriteAt(fd, names, kHeaderSize));
  ChildResultWriter w;
  w.fd_ = fd;
  w.kind_ = kind;
  w.names_size_ = names.size();
  return w;
}

Status ChildResultWriter::Append(std::string_view data) {
  PLIR_RETURN_IF_ERROR(
      WriteAt(fd_, data, static_cast<off_t>(kHeaderSize + names_size_ + payload_size_)));
  payload_size_ += data.size();
  return Status::Ok();
}

Status ChildResultWriter::Finish() {
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof kMagic);
  PutU32(header + 8, static_cast<uint32_t>(kind_));
  PutU64(header + 16, names_size_);
  PutU64(header + 24, payload_size_);
  // The header last: a child that dies half-way leaves no valid magic.
  return WriteAt(fd_, std::string_view(header, kHeaderSize), 0);
}

Status WriteModuleResult(int fd, const std::vector<std::string>& op_names, const Module& m) {
  const BinaryParts parts = SaveBinaryParts(m);
  PLIR_ASSIGN_OR_RETURN(ChildResultWriter w,
                        ChildResultWriter::Start(fd, ChildResultKind::kModule, op_names));
  for (std::string_view piece : parts.pieces) PLIR_RETURN_IF_ERROR(w.Append(piece));
  return w.Finish();
}

ChildResult::ChildResult(ChildResult&& o) noexcept { *this = std::move(o); }

ChildResult& ChildResult::operator=(ChildResult&& o) noexcept {
  if (this != &o) {
    mapping_ = std::move(o.mapping_);
    map_size_ = o.map_size_;
    kind_ = o.kind_;
    op_names_ = std::move(o.op_names_);
    payload_ = o.payload_;
    o.map_size_ = 0;
    o.payload_ = {};
  }
  return *this;
}

ChildResult::~ChildResult() = default;

StatusOr<ChildResult> ReadChildResult(int fd, uint64_t max_bytes, std::string_view limit_flag) {
  // Sealed first: from here on, nobody can write, grow or shrink the file
  // (F_SEAL_WRITE fails while any process still maps it writably).
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    return FailedPrecondition(std::string("the child's result cannot be sealed: ") +
                              std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) return Internal(std::string("fstat: ") + std::strerror(errno));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) return FailedPrecondition("the child ended without handing over a result");
  if (size < kHeaderSize) return FailedPrecondition("the child's result is truncated");
  if (size > max_bytes)
    return ResourceExhausted("the child's result is larger than the limit of " +
                             std::to_string(max_bytes) + " bytes (" + std::string(limit_flag) +
                             ")");
  ChildResult r;
  r.map_size_ = static_cast<size_t>(size);
  r.mapping_ = MapReadOnly(fd, r.map_size_);
  if (!r.mapping_)
    return Internal(std::string("mapping the child's result: ") + std::strerror(errno));
  const auto* p = static_cast<const unsigned char*>(r.mapping_.get());
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0)
    return FailedPrecondition("the child's result has no valid header");
  uint32_t kind = GetU32(p + 8);
  uint64_t names_size = GetU64(p + 16), payload_size = GetU64(p + 24);
  if (kind < static_cast<uint32_t>(ChildResultKind::kModule) ||
      kind > static_cast<uint32_t>(ChildResultKind::kBytes))
    return FailedPrecondition("the child's result is of unknown kind " + std::to_string(kind));
  if (GetU32(p + 12) != 0 || names_size > kMaxNamesSize || payload_size > size ||
      names_size + payload_size != size - kHeaderSize)
    return FailedPrecondition("the child's result has inconsistent sizes");
  r.kind_ = static_cast<ChildResultKind>(kind);
  const char* names = reinterpret_cast<const char*>(p + kHeaderSize);
  if (names_size > 0 && names[names_size - 1] != '\0')
    return FailedPrecondition("the child's op-name table is not terminated");
  for (size_t at = 0; at < names_size;) {
    // The padding that aligns a module's payload: NULs to the end, ending
    // at a multiple of 64.
    if (names[at] == '\0' && (kHeaderSize + names_size) % kPayloadAlignment == 0 &&
        names_size - at < kPayloadAlignment &&
        std::all_of(names + at, names + names_size, [](char c) { return c == '\0'; }))
      break;
    size_t len = strnlen(names + at, names_size - at);
    std::string name(names + at, len);
    if (name.empty() || name.size() > kMaxNameSize)
      return FailedPrecondition("the child's op-name table holds an empty or too long name");
    for (unsigned char c : name)
      if (!IsOpNameChar(c))
        return FailedPrecondition("the child's op-name table holds a name with a byte 0x" +
                                  std::to_string(c) + " (not a letter, digit, '_' or '.')");
    r.op_names_.push_back(std::move(name));
    at += len + 1;
  }
  r.payload_ = std::string_view(names + names_size, static_cast<size_t>(payload_size));
  return r;
}

StatusOr<Module> LoadResultModule(ChildResult& r) {
  if (!IsModuleKind(r.kind()))
    return FailedPrecondition("the child handed over text where a module was expected");
  OpRegistry& ops = OpRegistry::Global();
  for (const std::string& name : r.op_names()) {
    if (ops.Lookup(name)) continue;  // a core op (or an earlier stand-in) keeps its checks
    OpDef d;
    d.name = name;
    d.description = "stand-in for an op a plugin defined (its type is taken as recorded)";
    d.min_args = 0;
    d.max_args = -1;
    d.origin = kStandInOrigin;
    d.infer = [name](ExprSpan, const Attrs&, TypeSpan) -> StatusOr<Type> {
      return FailedPrecondition("op " + name + " is a plugin's: the supervisor cannot infer it");
    };
    PLIR_RETURN_IF_ERROR(ops.Register(std::move(d)));
  }
  // The sealed file cannot change or shrink: the constants may view it.
  BinaryLoadOptions load;
  load.keepalive = r.mapping();
  StatusOr<Module> m = LoadBinary(r.payload(), load);
  if (!m.ok())
    return FailedPrecondition("the child's result does not load: " + m.status().message());
  load.keepalive.reset();
  // No constant views the file: its pages (the whole result) go before the
  // verify allocates (1M ops in 1,000 functions: 26 MB of the parent's peak).
  if (r.mapping().use_count() == 1) r.ReleaseMapping();
  VerifyOptions options;
  // Compared as strings of known length: a core op's origin ("core")
  // differs in size, with no strlen per call.
  options.keep_recorded_type = [origin = std::string(kStandInOrigin)](const OpNode& op) {
    return op.def().origin == origin;
  };
  if (Status s = Verify(*m, options); !s.ok())
    return FailedPrecondition("the child's result does not verify: " + s.message());
  return m;
}

}  // namespace plir
