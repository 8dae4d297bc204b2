// One loader for every format and every tool: text, JSON and binary are told
// apart by their contents, and a file is read through one path that refuses
// directories and devices and caps the size (an endless pipe or /proc file
// stops there). plir-opt, plir-run, plir-diff and plir-reduce all read
// modules through it.
#ifndef PLIR_IR_SERIALIZE_MODULE_FILE_H_
#define PLIR_IR_SERIALIZE_MODULE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ir/module.h"
#include "ir/status.h"

namespace plir {

struct LoadFacts;  // serialize.h

enum class ModuleFormat { kText, kJson, kBinary };
// Detects the format of `contents` by magic (binary), a leading '{' (JSON),
// else text.
ModuleFormat DetectFormat(std::string_view contents);
// Loads a module in any format; `name` is used in messages.
StatusOr<Module> LoadModule(std::string_view contents, const std::string& name);
// And tells `facts` (not null) what the loader proved (serialize.h).
StatusOr<Module> LoadModule(std::string_view contents, const std::string& name, LoadFacts* facts);

// The contents of a file, memory-mapped (read-only, private) when the path
// names a non-empty regular file, else read into memory ("-" is standard
// input). Converts to std::string_view, so it can stand in for the file's
// contents as a string; the view is valid while this object lives.
class ModuleFile {
 public:
  // Fails on a directory or a device, and on more than MaxBytes() bytes
  // (an endless pipe or /proc file stops there).
  static StatusOr<ModuleFile> Open(const std::string& path);
  // The process-wide input size cap (plir-opt --max-input-bytes).
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{16} << 30;  // 16 GiB
  static void SetMaxBytes(uint64_t max_bytes);
  static uint64_t MaxBytes();

  ModuleFile(ModuleFile&& o) noexcept;
  ModuleFile& operator=(ModuleFile&& o) noexcept;
  ModuleFile(const ModuleFile&) = delete;
  ModuleFile& operator=(const ModuleFile&) = delete;
  ~ModuleFile();

  std::string_view contents() const { return {data_, size_}; }
  operator std::string_view() const { return contents(); }  // NOLINT: implicit
  // Unmaps or frees the contents early (contents() is empty afterwards).
  // Loaded modules do not depend on it: the constants of a binary version
  // 3 module loaded from the mapping hold it (keepalive()), and it is
  // unmapped when the last of them goes.
  void Close() { Release(); }
  bool mapped() const { return mapped_; }
  // The mapping's owner (null when the contents were read into memory):
  // what a loader that views the contents in place holds on to. A mapped
  // file must not be truncated or rewritten in place while this lives
  // (writing a new file and renaming it over, as PLIR's tools do, is fine).
  const std::shared_ptr<const void>& keepalive() const { return mapping_; }
  // Readable, zero bytes that follow contents() in memory (the rest of the
  // mapping's last page, or the padding of the buffer); JSON parses in place
  // when there are at least 64.
  size_t padding() const { return padding_; }

 private:
  ModuleFile() = default;
  void Release();
  const char* data_ = nullptr;
  size_t size_ = 0;
  size_t padding_ = 0;
  bool mapped_ = false;
  size_t map_size_ = 0;
  std::shared_ptr<const void> mapping_;  // unmaps when the last holder goes
  std::string buffer_;                   // when not mapped
};

// Loads a module in any format from `file` (a JSON file parses in place
// when the file has the padding); `name` is used in messages. A call
// LoadModule(file, name) with a ModuleFile picks this overload.
StatusOr<Module> LoadModule(const ModuleFile& file, const std::string& name);
StatusOr<Module> LoadModule(const ModuleFile& file, const std::string& name, LoadFacts* facts);

// Loads the module in the file at `path` ("-": standard input, named
// "<stdin>") in any format, parsing straight from the file's memory mapping
// when it is a regular file. Messages name `path`.
StatusOr<Module> LoadModuleFile(const std::string& path);

}  // namespace plir

#endif  // PLIR_IR_SERIALIZE_MODULE_FILE_H_
