// safetensors files: the format model weights ship in.
//
//   [8 bytes: N, little-endian u64][N bytes: JSON header][data]
//
// The header maps each tensor name to {"dtype", "shape", "data_offsets":
// [begin, end]} (offsets relative to the data section), plus an optional
// "__metadata__" object of strings. The reader checks everything before any
// tensor is read: the file holds the header, the header is a JSON object of
// well-formed entries with known dtypes and distinct names, each entry's
// byte range matches dtype x shape and lies inside the data, and the ranges
// tile the data section without overlap or gap (as the reference
// implementation requires). Errors name the file and the tensor.
//
// "File order" is the order of the tensors' data in the file (what the
// reference writer also uses for the header).
#ifndef PLIR_INTERPRETER_SAFETENSORS_H_
#define PLIR_INTERPRETER_SAFETENSORS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/status.h"
#include "kernels/tensor.h"

namespace plir {

// The safetensors dtype code of `dt` ("F32", "BF16", "I64", "BOOL", ...),
// empty if it has none.
std::string_view SafetensorsDtypeName(DataType dt);
// The DataType of a safetensors dtype code; kUnknown if PLIR has none.
DataType SafetensorsDtype(std::string_view code);

// Largest header accepted (the reference implementation's limit).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

struct SafetensorsEntry {
  std::string name;
  DataType dtype = DataType::kUnknown;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range in the data section
  uint64_t size() const { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in file order
  std::vector<std::pair<std::string, std::string>> metadata;
  uint64_t data_start = 0;  // file offset of the data section: 8 + N
  uint64_t data_size = 0;
  // Index of the entry named `name`, or -1.
  int64_t Find(std::string_view name) const;
};

// Validates the JSON header (`json`, N bytes) of a file `file` whose data
// section has `data_size` bytes.
StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view json, uint64_t data_size,
                                                   const std::string& file);
// Validates a whole file held in memory (the fuzz target's entry).
StatusOr<SafetensorsHeader> ParseSafetensors(std::string_view bytes, const std::string& file);

// Reads tensors from a file one at a time (pread of just that range).
class SafetensorsReader {
 public:
  static StatusOr<std::unique_ptr<SafetensorsReader>> Open(const std::string& path);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader&) = delete;
  SafetensorsReader& operator=(const SafetensorsReader&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  const std::vector<SafetensorsEntry>& entries() const { return header_.entries; }
  // Reads entry i into a buffer from AllocateTensorBuffer (the interpreter's
  // tracked memory when called inside it). A tensor of more bytes than
  // MaxTensorBytes() (plir-run's --max-tensor-bytes) is ResourceExhausted,
  // naming the file and the tensor, before anything is allocated.
  StatusOr<Tensor> Read(size_t i) const;
  // Entry i viewing the file in place when it is at least kMapBytes and its
  // offset keeps the dtype's alignment: a private read-only mapping of its
  // pages, read in up front and unmapped when the last reference to the
  // tensor goes (its bytes are borrowed, not allocated: a tracker counts
  // them with MemoryTracker::Count). Otherwise, and where mmap fails, it is
  // Read(i). The file must not be rewritten in place while such a tensor
  // lives (reading past a truncation is SIGBUS, as with any mapping).
  static constexpr uint64_t kMapBytes = 64 << 10;
  StatusOr<Tensor> ReadMapped(size_t i) const;

 private:
  SafetensorsReader(std::string path, int fd, SafetensorsHeader header)
      : path_(std::move(path)), fd_(fd), header_(std::move(header)) {}
  std::string path_;
  int fd_ = -1;
  SafetensorsHeader header_;
};

// Writes tensors as they arrive, in any order, holding none of them: each
// Add() appends the data to an unlinked spool file next to the output;
// Finish() writes the header (tensors in index order, data laid out in that
// order) and copies the data behind it into a temporary file that is then
// renamed over `path`. The bytes depend only on the (index, name, tensor)
// set, not on the order of Add() calls. Without Finish(), nothing is
// written.
//
// CreateInMemory() spools into an anonymous file instead (memory, given
// back tensor by tensor as FinishTo() copies it), and FinishTo() hands the
// file's bytes, in order, to `write` instead of a file: plir-run's
// sandboxed child, which may create no file, passes them to the parent.
class SafetensorsWriter {
 public:
  static StatusOr<std::unique_ptr<SafetensorsWriter>> Create(const std::string& path);
  // `name` is what messages call the file.
  static StatusOr<std::unique_ptr<SafetensorsWriter>> CreateInMemory(const std::string& name);
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  // Fails on a duplicate index or name, a dtype safetensors cannot hold, or
  // an I/O error.
  Status Add(int64_t index, std::string name, const Tensor& t);
  Status Finish();
  Status FinishTo(const std::function<Status(std::string_view)>& write);
  size_t size() const { return items_.size(); }
  // The tensors' bytes added so far (the file is this plus its header).
  uint64_t spooled_bytes() const { return spooled_; }

 private:
  struct Item {
    int64_t index;
    std::string name;
    DataType dtype;
    std::vector<int64_t> shape;
    uint64_t spool_offset, bytes;
  };
  SafetensorsWriter(std::string path, int spool) : path_(std::move(path)), spool_(spool) {}
  // The file's bytes, in order, to `write`.
  Status WriteFile(const std::function<Status(std::string_view)>& write);
  std::string path_;
  int spool_ = -1;
  bool in_memory_ = false;
  uint64_t spooled_ = 0;
  bool finished_ = false;
  std::vector<Item> items_;
};

// Writes `tensors` (name, tensor) in this order.
Status WriteSafetensors(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace plir

#endif  // PLIR_INTERPRETER_SAFETENSORS_H_
