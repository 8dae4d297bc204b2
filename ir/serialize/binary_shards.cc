// Version 4 of the binary format: a module as a table of version 3 shards,
// each the complete file of a contiguous run of its items, so that both
// ends work on all cores: the writer saves the shards in parallel, and the
// loader loads them in parallel and concatenates their items.
//
// Layout (docs/serialization.md):
//   bytes 0-31  the header every version has: magic, u32 version (4), u32
//               flags (0), u64 bytes after the header, u64 CRC-32C of bytes
//               32 to the first shard (the shard table and its padding)
//   byte 32     u64 shard count (2 to kMaxShards), then a u64 size a shard
//   ...         zeros to a multiple of 64
//   each shard  a version 3 file (its own checksums), starting at a multiple
//               of 64 so that its tensor data is aligned as in a file of its
//               own, then zeros to the next multiple of 64
//
// A shard is self-contained: a node that items of two shards share (a
// global, an op, a constant) has a record in each, and loads as two equal
// nodes (equal by structure, not by address).
// A variable in items of two shards (an ill-formed module) would lose its
// identity that way; such a module is written as version 3.
#include <algorithm>
#include <cstring>

#include "ir/parallel.h"
#include "ir/serialize/binary_internal.h"
#include "ir/serialize/serialize.h"
#include "ir/support/crc32c.h"

namespace plir::internal::binary {
namespace {

// WriteSharded's rule for how many shards a module gets when not told: one
// per kShardWeight bindings, at most kAutoShards (enough for the cores of a
// workstation, few enough that each shard's tables stay a small part of it).
constexpr uint64_t kShardWeight = 4096;
constexpr size_t kAutoShards = 16;

constexpr uint64_t kTableAt = kV4TableAt;

// An item's share of the work of writing and loading it: its top-level
// bindings (the nodes grow with them), and 1 so that none is free.
uint64_t ItemWeight(const Item& item) {
  uint64_t w = 1 + item->params().size();
  if (item->kind() != NodeKind::kFunction) return w;
  for (const Block& b : static_cast<const FunctionNode*>(item.get())->body()->blocks())
    w += b->bindings().size();
  return w;
}

// The first item of each of `k` contiguous runs of about equal weight (and
// the end), every run non-empty (k <= items).
std::vector<size_t> ShardBounds(const std::vector<uint64_t>& weights, size_t k) {
  const size_t n = weights.size();
  uint64_t total = 0;
  for (uint64_t w : weights) total += w;
  std::vector<size_t> bounds{0};
  uint64_t sum = 0;
  size_t i = 0;
  for (size_t j = 1; j < k; ++j) {
    const uint64_t want = total / k * j + total % k * j / k;
    // At least one item in this run, and one left for each run after it.
    do sum += weights[i++];
    while (sum < want && i < n - (k - j));
    bounds.push_back(i);
  }
  bounds.push_back(n);
  return bounds;
}

void PutU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
uint64_t GetU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Status Corrupt(const std::string& what) {
  return InvalidArgument("corrupt binary module: " + what);
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

}  // namespace

BinaryParts WriteSharded(const Module& m, size_t shards, bool verified) {
  const std::vector<Item> items = m.items();
  std::vector<uint64_t> weights(items.size());
  uint64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) total += weights[i] = ItemWeight(items[i]);
  size_t k = shards ? shards : std::min<uint64_t>(kAutoShards, total / kShardWeight);
  k = std::min({k, items.size(), static_cast<size_t>(kMaxShards)});
  if (k < 2) return WriteItems(items.data(), items.size(), 3, nullptr, verified);
  const std::vector<size_t> bounds = ShardBounds(weights, k);
  std::vector<BinaryParts> parts(k);
  std::vector<std::vector<const VarNode*>> vars(k);
  ParallelFor(k, 0, [&](size_t s, size_t) {
    parts[s] =
        WriteItems(items.data() + bounds[s], bounds[s + 1] - bounds[s], 3, &vars[s], verified);
  });
  // A variable in two items (ill-formed): in two shards it would load as
  // two; within one, the shard's writer would have written it another way.
  // Either way, one version 3 file keeps it (WriteItems checks on its own).
  // A verified module has none: the check (a concatenation and a sort of
  // every variable, on one thread: 60 of the 250 ms of writing 1M ops in
  // 1,000 functions under `perf record`) is skipped.
  if (!verified) {
    std::vector<const VarNode*> all = std::move(vars[0]);
    for (size_t s = 1; s < k; ++s) {
      all.insert(all.end(), vars[s].begin(), vars[s].end());
      std::vector<const VarNode*>().swap(vars[s]);
    }
    if (AnyRepeated(all)) return WriteItems(items.data(), items.size(), 3, nullptr);
  }

  std::string head(kBinaryMagic, 8);
  const uint32_t version = 4, flags = 0;
  head.append(reinterpret_cast<const char*>(&version), 4);
  head.append(reinterpret_cast<const char*>(&flags), 4);
  head.append(16, '\0');  // the length and the checksum, below
  PutU64(head, k);
  uint64_t at = AlignTensor(kTableAt + 8 + 8 * k);
  for (const BinaryParts& p : parts) {
    PutU64(head, p.size());
    at = AlignTensor(at + p.size());
  }
  head.resize(AlignTensor(head.size()), '\0');
  const uint64_t length = at - kHeaderSize;
  const uint64_t checksum = Crc32c(std::string_view(head).substr(kHeaderSize));
  std::memcpy(&head[16], &length, 8);
  std::memcpy(&head[24], &checksum, 8);

  static const std::string kZeros(kTensorAlignment, '\0');
  BinaryParts out;
  out.pieces.push_back(out.owned.emplace_back(std::move(head)));
  for (BinaryParts& p : parts) {
    // WriteItems's owned strings are its first pieces, in order: each moves
    // here and becomes its piece again; the rest view tensor data.
    for (size_t i = 0; i < p.pieces.size(); ++i) {
      if (i < p.owned.size())
        out.pieces.push_back(out.owned.emplace_back(std::move(p.owned[i])));
      else
        out.pieces.push_back(p.pieces[i]);
    }
    if (size_t pad = AlignTensor(p.size()) - p.size())
      out.pieces.push_back(std::string_view(kZeros).substr(0, pad));
  }
  return out;
}

StatusOr<Module> ReadV4(std::string_view bytes, const BinaryLoadOptions& options) {
  const uint64_t k = GetU64(bytes.data() + kTableAt);
  if (k < 2 || k > kMaxShards)
    return Corrupt("version 4 shard count " + std::to_string(k) + " (2 to " +
                   std::to_string(kMaxShards) + ")");
  const uint64_t first = AlignTensor(kTableAt + 8 + 8 * k);
  if (first > bytes.size())
    return Corrupt("the shard table (" + std::to_string(k) + " shards) runs past the file (" +
                   std::to_string(bytes.size()) + " bytes)");
  uint64_t checksum = GetU64(bytes.data() + 24);
  if (Crc32c(bytes.substr(kTableAt, first - kTableAt)) != checksum)
    return Corrupt("checksum mismatch (the shard table, bytes 32 to " + std::to_string(first) +
                   ")");
  if (!AllZero(bytes.substr(kTableAt + 8 + 8 * k, first - (kTableAt + 8 + 8 * k))))
    return Corrupt("nonzero bytes after the shard table");
  std::vector<std::string_view> views(k);
  uint64_t at = first;
  for (uint64_t s = 0; s < k; ++s) {
    const uint64_t size = GetU64(bytes.data() + kTableAt + 8 + 8 * s);
    if (size > bytes.size() - at)
      return Corrupt("shard " + std::to_string(s) + " (" + std::to_string(size) +
                     " bytes from byte " + std::to_string(at) + ") runs past the file (" +
                     std::to_string(bytes.size()) + " bytes)");
    views[s] = bytes.substr(at, size);
    at += size;
    const uint64_t pad = AlignTensor(at) - at;
    if (pad > bytes.size() - at || !AllZero(bytes.substr(at, pad)))
      return Corrupt("shard " + std::to_string(s) +
                     " is not followed by zeros to a multiple of 64");
    at += pad;
    uint32_t version = 0;
    if (size >= 12) std::memcpy(&version, views[s].data() + 8, 4);
    if (size < 12 || std::memcmp(views[s].data(), kBinaryMagic, 8) != 0 || version != 3)
      return Corrupt("shard " + std::to_string(s) + " is not a version 3 module");
  }
  if (at != bytes.size())
    return Corrupt(std::to_string(bytes.size() - at) + " bytes after the last shard");

  std::vector<StatusOr<Module>> loaded(k, Module());
  ParallelFor(k, 0, [&](size_t s, size_t) {
    // The shard's own header, as LoadBinary checks it, then its sections;
    // no helper thread faulting memory ahead: the cores are all loading.
    std::string_view v = views[s];
    uint32_t flags;
    std::memcpy(&flags, v.data() + 12, 4);
    if (v.size() < kV3PreambleSize || flags != 0 || GetU64(v.data() + 16) != v.size() - 32)
      loaded[s] = Corrupt("its header does not fit its " + std::to_string(v.size()) + " bytes");
    else
      loaded[s] = ReadV3(v, options.keepalive, options.verify_tensor_data, false);
  });
  std::vector<Item> items;
  for (uint64_t s = 0; s < k; ++s) {
    if (!loaded[s].ok()) {
      std::string inner = loaded[s].status().message();
      const std::string prefix = "corrupt binary module: ";
      if (inner.compare(0, prefix.size(), prefix) == 0) inner.erase(0, prefix.size());
      return Corrupt("shard " + std::to_string(s) + " of " + std::to_string(k) + ": " + inner);
    }
    for (const Item& item : loaded[s]->items()) items.push_back(item);
  }
  loaded.clear();
  auto m = Module::Make(std::move(items));
  if (!m.ok()) return Corrupt(m.status().message());
  return m;
}

}  // namespace plir::internal::binary
