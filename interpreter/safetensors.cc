#include "interpreter/safetensors.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>  // memfd_create
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "ir/support/mapping.h"

namespace plir {
namespace {

namespace od = simdjson::ondemand;

struct DtypeCode {
  DataType dt;
  const char* code;
};
constexpr DtypeCode kDtypes[] = {
    {DataType::kBool, "BOOL"},   {DataType::kInt8, "I8"},       {DataType::kInt16, "I16"},
    {DataType::kInt32, "I32"},   {DataType::kInt64, "I64"},     {DataType::kUInt8, "U8"},
    {DataType::kUInt16, "U16"},  {DataType::kUInt32, "U32"},    {DataType::kUInt64, "U64"},
    {DataType::kFloat16, "F16"}, {DataType::kBFloat16, "BF16"}, {DataType::kFloat32, "F32"},
    {DataType::kFloat64, "F64"},
};

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '\'' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
    if (out.size() > 200) return out + "...'";
  }
  return out + "'";
}

void AppendJsonString(std::string* out, std::string_view s) {
  *out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

std::string ErrnoText() { return std::strerror(errno); }

// Reads exactly `n` bytes at `offset`; false on a short read or error.
bool PreadFull(int fd, char* buf, uint64_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t r = pread(fd, buf, std::min<uint64_t>(n, 1 << 30), static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf += r;
    n -= r;
    offset += r;
  }
  return true;
}

bool WriteFull(int fd, const char* buf, uint64_t n) {
  while (n > 0) {
    ssize_t r = write(fd, buf, std::min<uint64_t>(n, 1 << 30));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    buf += r;
    n -= r;
  }
  return true;
}

uint64_t LoadLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Parses one tensor entry's object into `e`.
Status ParseEntry(od::value value, SafetensorsEntry* e, uint64_t data_size,
                  const std::string& where) {
  auto bad = [&](const std::string& what) { return InvalidArgument(where + ": " + what); };
  od::object obj;
  if (value.get_object().get(obj) != simdjson::SUCCESS)
    return bad("the entry is not a JSON object");
  bool have_dtype = false, have_shape = false, have_offsets = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return bad("malformed JSON key");
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS) return bad("malformed JSON value");
    if (key == "dtype") {
      if (have_dtype) return bad("'dtype' given twice");
      have_dtype = true;
      std::string_view code;
      if (v.get_string().get(code) != simdjson::SUCCESS) return bad("'dtype' is not a string");
      e->dtype = SafetensorsDtype(code);
      if (e->dtype == DataType::kUnknown) return bad("unknown or unsupported dtype " + Quote(code));
    } else if (key == "shape") {
      if (have_shape) return bad("'shape' given twice");
      have_shape = true;
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) return bad("'shape' is not an array");
      for (auto d : arr) {
        int64_t dim;
        if (d.get_int64().get(dim) != simdjson::SUCCESS || dim < 0)
          return bad("'shape' holds something other than a non-negative integer");
        if (e->shape.size() >= 64) return bad("'shape' has more than 64 dimensions");
        e->shape.push_back(dim);
      }
    } else if (key == "data_offsets") {
      if (have_offsets) return bad("'data_offsets' given twice");
      have_offsets = true;
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) return bad("'data_offsets' is not an array");
      uint64_t off[2];
      size_t n = 0;
      for (auto x : arr) {
        uint64_t u;
        if (x.get_uint64().get(u) != simdjson::SUCCESS)
          return bad("'data_offsets' holds something other than a non-negative integer");
        if (n < 2) off[n] = u;
        ++n;
      }
      if (n != 2) return bad("'data_offsets' must be [begin, end]");
      e->begin = off[0];
      e->end = off[1];
    } else {
      return bad("unknown field " + Quote(key));
    }
  }
  if (!have_dtype) return bad("no 'dtype'");
  if (!have_shape) return bad("no 'shape'");
  if (!have_offsets) return bad("no 'data_offsets'");
  if (e->begin > e->end)
    return bad("data_offsets [" + std::to_string(e->begin) + ", " + std::to_string(e->end) +
               "] run backwards");
  if (e->end > data_size)
    return bad("data_offsets [" + std::to_string(e->begin) + ", " + std::to_string(e->end) +
               "] run past the end of the data (" + std::to_string(data_size) + " bytes)");
  uint64_t bytes = DataTypeSize(e->dtype);
  for (int64_t d : e->shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      return bad("shape is too large");
  if (bytes != e->size())
    return bad(std::string(DataTypeName(e->dtype)) + " of this shape needs " +
               std::to_string(bytes) + " bytes, but data_offsets span " +
               std::to_string(e->size()));
  return Status::Ok();
}

// Deletes a file unless released.
struct TempFile {
  std::string path;
  int fd = -1;
  ~TempFile() {
    if (fd >= 0) close(fd);
    if (!path.empty()) unlink(path.c_str());
  }
};

}  // namespace

std::string_view SafetensorsDtypeName(DataType dt) {
  for (const DtypeCode& c : kDtypes)
    if (c.dt == dt) return c.code;
  return {};
}

DataType SafetensorsDtype(std::string_view code) {
  for (const DtypeCode& c : kDtypes)
    if (code == c.code) return c.dt;
  return DataType::kUnknown;
}

int64_t SafetensorsHeader::Find(std::string_view name) const {
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == name) return static_cast<int64_t>(i);
  return -1;
}

StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view json, uint64_t data_size,
                                                   const std::string& file) {
  auto bad = [&](const std::string& what) { return InvalidArgument(file + ": " + what); };
  SafetensorsHeader h;
  h.data_start = 8 + json.size();
  h.data_size = data_size;
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS)
    return bad("the header is not valid JSON");
  od::object obj;
  if (auto err = doc.get_object().get(obj); err != simdjson::SUCCESS)
    return bad(err == simdjson::INCORRECT_TYPE ? "the header is not a JSON object"
                                               : "the header is not valid JSON");
  std::unordered_set<std::string> names;
  bool have_metadata = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      return bad("the header is not valid JSON (a key)");
    od::value v;
    if (field.value().get(v) != simdjson::SUCCESS)
      return bad("the header is not valid JSON (a value)");
    if (key == "__metadata__") {
      if (have_metadata) return bad("__metadata__ given twice");
      have_metadata = true;
      od::object meta;
      if (v.get_object().get(meta) != simdjson::SUCCESS)
        return bad("__metadata__ is not a JSON object");
      for (auto m : meta) {
        std::string_view mk, mv;
        if (m.unescaped_key().get(mk) != simdjson::SUCCESS)
          return bad("__metadata__: malformed key");
        std::string k(mk);
        if (m.value().get_string().get(mv) != simdjson::SUCCESS)
          return bad("__metadata__: the value of " + Quote(k) + " is not a string");
        h.metadata.emplace_back(std::move(k), std::string(mv));
      }
      continue;
    }
    std::string name(key);
    if (!names.insert(name).second) return bad("tensor " + Quote(name) + " appears twice");
    SafetensorsEntry e;
    e.name = name;
    PLIR_RETURN_IF_ERROR(ParseEntry(v, &e, data_size, file + ": tensor " + Quote(name)));
    h.entries.push_back(std::move(e));
  }
  const char* rest;
  if (doc.current_location().get(rest) == simdjson::SUCCESS)
    return bad("the header has data after its JSON object");
  // File order; the ranges must tile the data section.
  std::stable_sort(h.entries.begin(), h.entries.end(),
                   [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  uint64_t cursor = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry& e : h.entries) {
    if (e.begin < cursor)
      return bad("tensor " + Quote(e.name) + ": data_offsets [" + std::to_string(e.begin) + ", " +
                 std::to_string(e.end) + "] overlap tensor " + Quote(prev->name) + " [" +
                 std::to_string(prev->begin) + ", " + std::to_string(prev->end) + "]");
    if (e.begin > cursor)
      return bad("bytes " + std::to_string(cursor) + " to " + std::to_string(e.begin) +
                 " of the data belong to no tensor (before tensor " + Quote(e.name) + ")");
    cursor = e.end;
    prev = &e;
  }
  if (cursor != data_size)
    return bad("the data section has " + std::to_string(data_size - cursor) +
               " bytes after the last tensor (the header describes " + std::to_string(cursor) +
               " of " + std::to_string(data_size) + ")");
  return h;
}

namespace {

Status CheckHeaderLength(uint64_t n, uint64_t file_size, const std::string& file) {
  if (n > kMaxSafetensorsHeader)
    return InvalidArgument(file + ": header length " + std::to_string(n) +
                           " is absurd (more than " + std::to_string(kMaxSafetensorsHeader) +
                           " bytes): not a safetensors file?");
  if (n > file_size - 8)
    return InvalidArgument(file + ": header length " + std::to_string(n) +
                           " runs past the end of the file (" + std::to_string(file_size) +
                           " bytes): truncated?");
  if (n < 2)
    return InvalidArgument(file + ": header length " + std::to_string(n) +
                           " is too short for a JSON object");
  return Status::Ok();
}

}  // namespace

StatusOr<SafetensorsHeader> ParseSafetensors(std::string_view bytes, const std::string& file) {
  if (bytes.size() < 8)
    return InvalidArgument(file + ": truncated: " + std::to_string(bytes.size()) +
                           " bytes, less than the 8-byte header length");
  uint64_t n = LoadLE64(bytes.data());
  PLIR_RETURN_IF_ERROR(CheckHeaderLength(n, bytes.size(), file));
  return ParseSafetensorsHeader(bytes.substr(8, n), bytes.size() - 8 - n, file);
}

StatusOr<std::unique_ptr<SafetensorsReader>> SafetensorsReader::Open(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound(path + ": cannot open: " + ErrnoText());
  auto fail = [&](Status s) {
    close(fd);
    return s;
  };
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(Internal(path + ": cannot stat: " + ErrnoText()));
  if (!S_ISREG(st.st_mode)) return fail(InvalidArgument(path + ": not a regular file"));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  char len[8];
  if (size < 8 || !PreadFull(fd, len, 8, 0))
    return fail(InvalidArgument(path + ": truncated: " + std::to_string(size) +
                                " bytes, less than the 8-byte header length"));
  uint64_t n = LoadLE64(len);
  Status s = CheckHeaderLength(n, size, path);
  if (!s.ok()) return fail(s);
  std::string json(n, '\0');
  if (!PreadFull(fd, json.data(), n, 8))
    return fail(Internal(path + ": cannot read the header: " + ErrnoText()));
  auto h = ParseSafetensorsHeader(json, size - 8 - n, path);
  if (!h.ok()) return fail(h.status());
  return std::unique_ptr<SafetensorsReader>(new SafetensorsReader(path, fd, std::move(h).value()));
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0) close(fd_);
}

StatusOr<Tensor> SafetensorsReader::Read(size_t i) const {
  if (i >= header_.entries.size())
    return InvalidArgument(path_ + ": no tensor " + std::to_string(i) + " (the file has " +
                           std::to_string(header_.entries.size()) + ")");
  const SafetensorsEntry& e = header_.entries[i];
  // Checked before the buffer is allocated: a file may declare any size.
  if (e.size() > static_cast<uint64_t>(MaxTensorBytes()))
    return ResourceExhausted(path_ + ": tensor " + Quote(e.name) + " has " +
                             std::to_string(e.size()) + " bytes, more than the limit of " +
                             std::to_string(MaxTensorBytes()) + " bytes (--max-tensor-bytes)");
  Tensor t;
  t.dtype = e.dtype;
  t.shape = e.shape;
  std::shared_ptr<WritableTensorBytes> buf =
      AllocateTensorBufferForOverwrite(e.size());  // read in full
  if (!PreadFull(fd_, buf->mutable_data(), e.size(), header_.data_start + e.begin))
    return Internal(path_ + ": tensor " + Quote(e.name) +
                    ": read failed (was the file truncated?)");
  t.data = std::move(buf);
  return t;
}

StatusOr<Tensor> SafetensorsReader::ReadMapped(size_t i) const {
  if (i >= header_.entries.size()) return Read(i);  // the error
  const SafetensorsEntry& e = header_.entries[i];
  const uint64_t offset = header_.data_start + e.begin;
  const size_t align = std::max<size_t>(1, DataTypeSize(e.dtype));
  const long page = sysconf(_SC_PAGESIZE);
  if (e.size() < kMapBytes || page <= 0 || offset % align != 0 ||
      e.size() > static_cast<uint64_t>(MaxTensorBytes()))
    return Read(i);
  const uint64_t start = offset - offset % static_cast<uint64_t>(page);
  const size_t length = static_cast<size_t>(offset + e.size() - start);
  std::shared_ptr<const void> mapping = MapReadOnly(fd_, length, start, /*populate=*/true);
  if (!mapping) return Read(i);
  const void* p = mapping.get();
  Tensor t;
  t.dtype = e.dtype;
  t.shape = e.shape;
  t.data = std::make_shared<const TensorBytes>(static_cast<const char*>(p) + (offset - start),
                                               e.size(), std::move(mapping));
  return t;
}

StatusOr<std::unique_ptr<SafetensorsWriter>> SafetensorsWriter::Create(const std::string& path) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  std::string spool = dir + "/.plir-spool-XXXXXX";
  int fd = mkstemp(spool.data());
  if (fd < 0) return Internal(path + ": cannot create a spool file in " + dir + ": " + ErrnoText());
  unlink(spool.c_str());  // anonymous: gone when closed
  return std::unique_ptr<SafetensorsWriter>(new SafetensorsWriter(path, fd));
}

StatusOr<std::unique_ptr<SafetensorsWriter>> SafetensorsWriter::CreateInMemory(
    const std::string& name) {
  int fd = memfd_create("plir-spool", MFD_CLOEXEC);
  if (fd < 0) return Internal(name + ": cannot create an anonymous spool file: " + ErrnoText());
  auto w = std::unique_ptr<SafetensorsWriter>(new SafetensorsWriter(name, fd));
  w->in_memory_ = true;
  return w;
}

SafetensorsWriter::~SafetensorsWriter() {
  if (spool_ >= 0) close(spool_);
}

Status SafetensorsWriter::Add(int64_t index, std::string name, const Tensor& t) {
  if (finished_) return FailedPrecondition(path_ + ": the file is already written");
  if (SafetensorsDtypeName(t.dtype).empty())
    return InvalidArgument(path_ + ": tensor " + Quote(name) + ": dtype " +
                           std::string(DataTypeName(t.dtype)) + " has no safetensors code");
  if (!t.data || t.NumBytes() != static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype))
    return InvalidArgument(path_ + ": tensor " + Quote(name) + ": data does not match its shape");
  if (name == "__metadata__")
    return InvalidArgument(path_ + ": '__metadata__' cannot name a tensor");
  for (const Item& it : items_) {
    if (it.index == index)
      return InvalidArgument(path_ + ": output " + std::to_string(index) + " given twice");
    if (it.name == name) return InvalidArgument(path_ + ": tensor " + Quote(name) + " given twice");
  }
  if (!WriteFull(spool_, t.data->data(), t.NumBytes()))
    return Internal(path_ + ": tensor " + Quote(name) + ": cannot spool the data: " + ErrnoText());
  items_.push_back({index, std::move(name), t.dtype, t.shape, spooled_, t.NumBytes()});
  spooled_ += t.NumBytes();
  return Status::Ok();
}

Status SafetensorsWriter::WriteFile(const std::function<Status(std::string_view)>& write) {
  std::vector<const Item*> order;
  for (const Item& it : items_) order.push_back(&it);
  std::sort(order.begin(), order.end(),
            [](const Item* a, const Item* b) { return a->index < b->index; });
  std::string header = "{";
  uint64_t offset = 0;
  for (const Item* it : order) {
    if (header.size() > 1) header += ',';
    AppendJsonString(&header, it->name);
    header += ":{\"dtype\":\"";
    header += SafetensorsDtypeName(it->dtype);
    header += "\",\"shape\":[";
    for (size_t i = 0; i < it->shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(it->shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + it->bytes) + "]}";
    offset += it->bytes;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  if (Status s = write(std::string_view(len, 8)); !s.ok())
    return Internal(path_ + ": write failed: " + s.message());
  if (Status s = write(header); !s.ok()) return Internal(path_ + ": write failed: " + s.message());
  std::vector<char> buf(std::min<uint64_t>(8 << 20, std::max<uint64_t>(spooled_, 1)));
  for (const Item* it : order) {
    uint64_t done = 0;
    while (done < it->bytes) {
      uint64_t n = std::min<uint64_t>(buf.size(), it->bytes - done);
      if (!PreadFull(spool_, buf.data(), n, it->spool_offset + done))
        return Internal(path_ + ": tensor " + Quote(it->name) + ": write failed: " + ErrnoText());
      if (Status s = write(std::string_view(buf.data(), n)); !s.ok())
        return Internal(path_ + ": tensor " + Quote(it->name) + ": write failed: " + s.message());
      done += n;
    }
    // An anonymous spool is memory: what is copied is given back.
    if (in_memory_ && it->bytes > 0)
      fallocate(spool_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                static_cast<off_t>(it->spool_offset), static_cast<off_t>(it->bytes));
  }
  return Status::Ok();
}

Status SafetensorsWriter::Finish() {
  if (finished_) return FailedPrecondition(path_ + ": the file is already written");
  finished_ = true;
  // Write into a temporary file next to the output, then rename it over.
  struct stat st;
  bool in_place = stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);  // /dev/null, a pipe
  TempFile tmp;
  if (in_place) {
    tmp.fd = open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (tmp.fd < 0) return Internal(path_ + ": cannot open: " + ErrnoText());
  } else {
    tmp.path = path_ + ".tmp-XXXXXX";
    tmp.fd = mkstemp(tmp.path.data());
    if (tmp.fd < 0) {
      tmp.path.clear();
      return Internal(path_ + ": cannot create a temporary file: " + ErrnoText());
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(tmp.fd, 0666 & ~mask);
  }
  PLIR_RETURN_IF_ERROR(WriteFile([&](std::string_view data) -> Status {
    if (!WriteFull(tmp.fd, data.data(), data.size())) return Internal(ErrnoText());
    return Status::Ok();
  }));
  if (!in_place) {
    if (fsync(tmp.fd) != 0) return Internal(path_ + ": fsync failed: " + ErrnoText());
    if (rename(tmp.path.c_str(), path_.c_str()) != 0)
      return Internal(path_ + ": cannot rename the temporary file into place: " + ErrnoText());
    tmp.path.clear();  // renamed: keep
  }
  close(spool_);
  spool_ = -1;
  return Status::Ok();
}

Status SafetensorsWriter::FinishTo(const std::function<Status(std::string_view)>& write) {
  if (finished_) return FailedPrecondition(path_ + ": the file is already written");
  finished_ = true;
  PLIR_RETURN_IF_ERROR(WriteFile(write));
  close(spool_);
  spool_ = -1;
  return Status::Ok();
}

Status WriteSafetensors(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& tensors) {
  PLIR_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsWriter> w, SafetensorsWriter::Create(path));
  for (size_t i = 0; i < tensors.size(); ++i)
    PLIR_RETURN_IF_ERROR(w->Add(static_cast<int64_t>(i), tensors[i].first, tensors[i].second));
  return w->Finish();
}

}  // namespace plir
