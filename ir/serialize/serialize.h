// JSON and binary serialization of modules.
//
// Both formats store every node once, however often it is shared, children
// before parents (see docs/serialization.md); loading shares them again, and
// variables keep their identity (a variable and all its uses are one node).
// Loading validates everything it reads: corrupt or truncated input is an
// error, never a crash, and no allocation is sized by a count or length
// before that count is checked against the input's size.
#ifndef PLIR_IR_SERIALIZE_SERIALIZE_H_
#define PLIR_IR_SERIALIZE_SERIALIZE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"
#include "ir/support/fnv.h"

namespace plir {

inline constexpr int kJsonFormatVersion = 1;
// SaveBinary writes this version by default; LoadBinary reads versions
// kOldestBinaryFormatVersion to kNewestBinaryFormatVersion.
inline constexpr int kBinaryFormatVersion = 4;
inline constexpr int kNewestBinaryFormatVersion = 4;
inline constexpr int kOldestBinaryFormatVersion = 1;
// The first 8 bytes of every binary module.
inline constexpr char kBinaryMagic[8] = {'\x89', 'P', 'L', 'I', 'R', '\r', '\n', '\x1a'};

std::string SaveJson(const Module& m);
StatusOr<Module> LoadJson(std::string_view text);

struct BinarySaveOptions {
  // 2, 3 or 4 (docs/serialization.md). 3: tensor data aligned in a section
  // of its own, for loading in place. 4: a large module split by items into
  // version 3 shards, written and loaded in parallel; a module with fewer
  // than about 8,000 top-level bindings (or one item) is written as 3.
  int version = kBinaryFormatVersion;
};
std::string SaveBinary(const Module& m);
std::string SaveBinary(const Module& m, const BinarySaveOptions& options);
// SaveBinary's bytes in pieces, in file order, for writing out without the
// whole file in one string: the header and the sections (owned), and for
// version 3 each tensor's bytes viewed where the module's constants hold
// them (valid while the module lives). Concatenated, the pieces are
// SaveBinary(m, options).
struct BinaryParts {
  std::deque<std::string> owned;  // a deque: the pieces' views stay valid
  std::vector<std::string_view> pieces;
  size_t size() const;
};
BinaryParts SaveBinaryParts(const Module& m, const BinarySaveOptions& options = {});
// SaveBinaryParts of a module that the caller has verified (plir::Verify),
// or verifies before it keeps the file: the same bytes, without the
// writer's own check for a variable in two items, which only an ill-formed
// module has (such a module, written this way, may load with that
// variable as two).
BinaryParts SaveVerifiedBinaryParts(const Module& m, const BinarySaveOptions& options = {});
// Where SaveVerifiedBinaryTo writes: `append` takes the file's bytes in
// order; `write_at` (optional) writes bytes at an offset of what `append`
// wrote, as pwrite does on a file.
struct BinarySink {
  std::function<Status(std::string_view bytes)> append;
  std::function<Status(uint64_t offset, std::string_view bytes)> write_at;
};
// SaveVerifiedBinaryParts's bytes, written to `sink`. With `write_at`, a
// version 4 file goes out shard by shard as the shards are done, its shard
// table last, over zeros that held its place: the whole file is never in
// memory, and the memory of a shard that is out serves the next. The first
// error of `sink` is returned; what was written by then is not a module.
Status SaveVerifiedBinaryTo(const Module& m, const BinarySaveOptions& options,
                            const BinarySink& sink);
// Version 4 with `shards` shards (at most one an item; 1024 at most), where
// SaveBinary picks the count by the module's size: for tests and tools. A
// module that gets fewer than 2 (or whose variables are shared by items)
// is written as version 3.
BinaryParts SaveBinaryShards(const Module& m, size_t shards);

struct BinaryLoadOptions {
  // Version 3: when set, constants borrow their bytes from the input instead
  // of copying them, and hold this object, which must keep the input's
  // bytes valid and unchanged for as long as it lives (a file mapping, a
  // sealed memfd's mapping). Null: the bytes are copied.
  std::shared_ptr<const void> keepalive;
  // Version 3: also check the tensor data's own checksum (reads every byte
  // of it; off by default, so that the data pages in only when used).
  // Versions 1 and 2 always check their one checksum, which covers it.
  bool verify_tensor_data = false;
};
// What a loader proved about the module it returned, beyond what every
// loaded module satisfies.
struct LoadFacts {
  // No variable is bound in two items, so VerifyModule's check across items
  // (a sort of a record of every binding) can find nothing: errors aside,
  // VerifyParsedModule gives its verdict (ir/verifier.h). Set for a parsed
  // text module (the parser makes each item's variables) and for a binary
  // module of versions 2 to 4 whose records show it: every variable bound
  // once, and every record that binds one, or holds one that does, referred
  // to once. A well-formed module always shows it; a file may refer to one
  // node from several places, so it is checked, not assumed.
  bool bindings_unshared = false;
};

StatusOr<Module> LoadBinary(std::string_view bytes);
StatusOr<Module> LoadBinary(std::string_view bytes, const BinaryLoadOptions& options);
// `facts` (not null) gets what the loader proved; all false on an error.
StatusOr<Module> LoadBinary(std::string_view bytes, const BinaryLoadOptions& options,
                            LoadFacts* facts);
// Checks the checksum of a version 3 file's tensor data (and that the file
// is a well-formed binary module, as LoadBinary would); version 1 and 2
// files: the same as loading them.
Status VerifyBinaryTensorData(std::string_view bytes);

// The binary format's checksum is CRC-32C (ir/support/crc32c.h) from version
// 3, Fnv1a64 (ir/support/fnv.h) before. Reading a file in any format:
// ir/serialize/module_file.h.

}  // namespace plir

#endif  // PLIR_IR_SERIALIZE_SERIALIZE_H_
