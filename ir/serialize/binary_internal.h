// The binary format's layout, shared by its reader and writer (internal to
// ir/serialize/; docs/serialization.md describes it).
//
// Version 2 (written by SaveBinary) is laid out for loading: a fixed header
// with every section's count and size, then a string table (one blob and
// end offsets), a type table, a table of distinct attribute sets, the other
// nodes in post-order, and the items. Records refer to strings, types,
// attribute sets and earlier nodes by index, so the loader makes one linear
// pass and builds each node straight from its record. Version 1 (LEB128
// records through the shared node table, node_table.h) is still read
// (binary_v1.cc).
//
// Version 3 (written by SaveBinary by default) is version 2 with the tensor
// data moved out of the node records into a section of its own at the end
// of the file, each tensor at a multiple of 64 bytes, so that a loader can
// leave the bytes where they are (a file mapping) and give each constant a
// view of them: after the section table, a 32-byte entry (u64 count of
// distinct tensors, u64 absolute offset of the data, u64 its size, u64 its
// CRC-32C); a constant's record holds its type, its offset in the data and
// its size instead of the bytes. The header's checksum is the CRC-32C of
// everything from byte 32 to the data (checked on every load); the data's
// own CRC-32C is checked only on request (BinaryLoadOptions), so that
// loading stays lazy. docs/serialization.md has the layout.
#ifndef PLIR_IR_SERIALIZE_BINARY_INTERNAL_H_
#define PLIR_IR_SERIALIZE_BINARY_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "ir/status.h"

namespace plir {
struct BinaryParts;
struct BinarySink;
struct BinaryLoadOptions;
struct LoadFacts;
}  // namespace plir

namespace plir::internal::binary {

constexpr size_t kHeaderSize = 32;        // magic, version, flags, length, checksum
constexpr size_t kSectionTableSize = 80;  // 5 x (u64 count, u64 bytes)
constexpr size_t kPreambleSize = kHeaderSize + kSectionTableSize;
// Version 3: the tensor-data entry follows the section table.
constexpr size_t kV3PreambleSize = kPreambleSize + 32;
constexpr size_t kV3DataChecksumAt = kPreambleSize + 24;
// Version 4: the shard table follows the header (binary_shards.cc).
constexpr size_t kV4TableAt = kHeaderSize;
constexpr uint64_t kTensorAlignment = 64;
constexpr uint64_t AlignTensor(uint64_t n) {
  return (n + kTensorAlignment - 1) & ~(kTensorAlignment - 1);
}
enum Section { kStrings, kTypes, kAttrSets, kNodes, kItems, kNumSections };
const char* const kSectionNames[kNumSections] = {"string", "type", "attribute", "node", "item"};
constexpr uint8_t kShapeUnknown = 0;  // type records: rank only (maybe -1)
constexpr uint8_t kShapeKnown = 1;    // type records: the dims follow

// Appends little-endian integers and LEB128 varints to a string.
// The varint encoding of `v` (7 bits a byte, low first; at most 10 bytes)
// written at `p`; returns the end.
inline char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
// A signed value as the unsigned one its varint carries (zigzag).
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

class Out {
 public:
  std::string bytes;
  void Byte(uint8_t b) { bytes.push_back(static_cast<char>(b)); }
  void Raw(const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); }
  void Var(uint64_t v) {
    if (v < 0x80) return Byte(static_cast<uint8_t>(v));
    char buf[10];
    bytes.append(buf, static_cast<size_t>(PutVarint(buf, v) - buf));
  }
  void Signed(int64_t v) { Var(ZigZag(v)); }
  void F64(double d) { Raw(&d, 8); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
};

// The node children of `n` that the node table refers to (types and
// attribute sets live in their own tables): the i-th, or null past the end.
const Node* NodeChild(const Node* n, size_t i);

// A version 2 or 3 file (as pieces) of the items items[0, n). Every owned
// string of the result is a piece, in order, before the pieces that view
// tensor data. A variable in two of the items (an ill-formed module) keeps
// its identity: the writer checks for one and writes such items another
// way, unless `vars` is set, when it gets every variable written, in no
// order, for the caller to check (AnyRepeated) with those of other runs.
// `verified`: the caller vouches that the module verifies (plir::Verify),
// so that no variable is in two items: no check, and `vars` stays empty.
// `pool`: where the node section's chunks come from (else fresh ones).
BinaryParts WriteItems(const Item* items, size_t n, int version, std::vector<const VarNode*>* vars,
                       bool verified = false, class ChunkPool* pool = nullptr);

// Chunks for the node sections of writers that run one after another on a
// thread (version 4 shards written to a file as they are done): a chunk
// whose bytes are written out is taken by the next writer, its pages
// already faulted in, instead of a fresh one.
class ChunkPool {
 public:
  // A string of at least `n` bytes, its contents unspecified.
  std::string Take(size_t n);
  // `s` is free to reuse (kept if it is a chunk's size, at most a few).
  void Give(std::string s);

 private:
  std::mutex mu_;
  std::vector<std::string> free_;
};
// True iff a variable is in `vars` twice (sorts them).
bool AnyRepeated(std::vector<const VarNode*>& vars);
// Version 2, 3 or 4 (WriteSharded) of a module.
BinaryParts WriteParts(const Module& m, int version, bool verified = false);
std::string Concatenate(const BinaryParts& p);
// `facts`, when given, gets what the reader proved (LoadFacts); versions 2
// to 4.
StatusOr<Module> ReadV2(std::string_view bytes, LoadFacts* facts = nullptr);
// Version 3: the whole file. The reader checks the structure checksum;
// constants borrow their bytes from `bytes` holding `keepalive` when it is
// set, else copy them. `memory_ahead`: fault node memory in ahead on a
// helper thread (internal/node_memory_ahead.h), for a load that has the
// machine to itself.
StatusOr<Module> ReadV3(std::string_view bytes, std::shared_ptr<const void> keepalive,
                        bool verify_tensor_data, bool memory_ahead = true,
                        LoadFacts* facts = nullptr);

// Version 4: a table of version 3 shards, each the file of a contiguous run
// of the module's items, written and loaded in parallel (binary_shards.cc).
constexpr uint64_t kMaxShards = 1024;
// `shards`: how many (0: by the module's size, WriteSharded's rule). A
// module that would get fewer than 2 is written as version 3.
BinaryParts WriteSharded(const Module& m, size_t shards, bool verified = false);
// WriteSharded(m, 0, true) written to `sink` (SaveVerifiedBinaryTo).
Status WriteShardedTo(const Module& m, const BinarySink& sink);
// The whole file (its 32-byte header checked by LoadBinary).
StatusOr<Module> ReadV4(std::string_view bytes, const BinaryLoadOptions& options,
                        LoadFacts* facts = nullptr);
// Version 1: the payload after the 32-byte header.
// Checks the checksum (either offset basis PLIR ever wrote it with).
StatusOr<Module> ReadV1(std::string_view payload, uint64_t checksum);

}  // namespace plir::internal::binary

#endif  // PLIR_IR_SERIALIZE_BINARY_INTERNAL_H_
