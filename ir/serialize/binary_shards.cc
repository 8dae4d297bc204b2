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
#include <mutex>
#include <optional>

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

// How a module is split: its items, and the first item of each of its k
// shards (and the end). k < 2: written as version 3.
struct ShardPlan {
  std::vector<Item> items;
  size_t k = 0;
  std::vector<size_t> bounds;
};

ShardPlan PlanShards(const Module& m, size_t shards) {
  ShardPlan plan;
  plan.items = m.items();
  const std::vector<Item>& items = plan.items;
  std::vector<uint64_t> weights(items.size());
  uint64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) total += weights[i] = ItemWeight(items[i]);
  size_t k = shards ? shards : std::min<uint64_t>(kAutoShards, total / kShardWeight);
  plan.k = std::min({k, items.size(), static_cast<size_t>(kMaxShards)});
  if (plan.k >= 2) plan.bounds = ShardBounds(weights, plan.k);
  return plan;
}

// The end of the shard table of k shards, and where the first shard starts
// (a multiple of 64).
uint64_t TableEnd(uint64_t k) { return kTableAt + 8 + 8 * k; }
uint64_t FirstShardAt(uint64_t k) { return AlignTensor(TableEnd(k)); }

// The bytes before the first shard: the header, the shard table of shards
// of these sizes, and zeros to a multiple of 64.
std::string ShardTableHead(const std::vector<uint64_t>& sizes) {
  const size_t k = sizes.size();
  std::string head(kBinaryMagic, 8);
  const uint32_t version = 4, flags = 0;
  head.append(reinterpret_cast<const char*>(&version), 4);
  head.append(reinterpret_cast<const char*>(&flags), 4);
  head.append(16, '\0');  // the length and the checksum, below
  PutU64(head, k);
  uint64_t at = FirstShardAt(k);
  for (uint64_t size : sizes) {
    PutU64(head, size);
    at = AlignTensor(at + size);
  }
  head.resize(FirstShardAt(k), '\0');
  const uint64_t length = at - kHeaderSize;
  const uint64_t checksum = Crc32c(std::string_view(head).substr(kHeaderSize));
  std::memcpy(&head[16], &length, 8);
  std::memcpy(&head[24], &checksum, 8);
  return head;
}

const std::string& Zeros() {
  static const std::string zeros(kTensorAlignment, '\0');
  return zeros;
}

// The zeros after a shard of `size` bytes, to the next multiple of 64.
std::string_view ShardPadding(uint64_t size) {
  return std::string_view(Zeros()).substr(0, AlignTensor(size) - size);
}

// The file of a planned module, every shard in memory (WriteSharded).
BinaryParts WritePlanned(const ShardPlan& plan, bool verified) {
  const std::vector<Item>& items = plan.items;
  const size_t k = plan.k;
  if (k < 2) return WriteItems(items.data(), items.size(), 3, nullptr, verified);
  const std::vector<size_t>& bounds = plan.bounds;
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

  std::vector<uint64_t> sizes(k);
  for (size_t s = 0; s < k; ++s) sizes[s] = parts[s].size();
  BinaryParts out;
  out.pieces.push_back(out.owned.emplace_back(ShardTableHead(sizes)));
  for (BinaryParts& p : parts) {
    // WriteItems's owned strings are its first pieces, in order: each moves
    // here and becomes its piece again; the rest view tensor data.
    for (size_t i = 0; i < p.pieces.size(); ++i) {
      if (i < p.owned.size())
        out.pieces.push_back(out.owned.emplace_back(std::move(p.owned[i])));
      else
        out.pieces.push_back(p.pieces[i]);
    }
    if (std::string_view pad = ShardPadding(p.size()); !pad.empty()) out.pieces.push_back(pad);
  }
  return out;
}

}  // namespace

BinaryParts WriteSharded(const Module& m, size_t shards, bool verified) {
  return WritePlanned(PlanShards(m, shards), verified);
}

// The shards go out in order as they are done, while later ones are still
// being written, and each one's node chunks then serve a later shard
// (ChunkPool): of the 16 shards of a 1M-op module, a few are held at a
// time instead of all 21 MB, and the chunks are faulted in once. The shard
// table, known last, goes over the zeros that held its place.
Status WriteShardedTo(const Module& m, const BinarySink& sink) {
  const ShardPlan plan = PlanShards(m, 0);
  const size_t k = plan.k;
  if (k < 2 || !sink.write_at) {
    const BinaryParts parts = WritePlanned(plan, /*verified=*/true);
    for (std::string_view piece : parts.pieces) PLIR_RETURN_IF_ERROR(sink.append(piece));
    return Status::Ok();
  }
  PLIR_RETURN_IF_ERROR(sink.append(std::string(FirstShardAt(k), '\0')));
  ChunkPool pool;
  std::mutex mu;
  std::vector<std::optional<BinaryParts>> done(k);  // written, not yet out
  std::vector<uint64_t> sizes(k);
  size_t next = 0;       // the first shard not yet out
  bool writing = false;  // a thread is putting shards out
  Status failed = Status::Ok();
  ParallelFor(k, 0, [&](size_t s, size_t) {
    const Item* first = plan.items.data() + plan.bounds[s];
    BinaryParts parts = WriteItems(first, plan.bounds[s + 1] - plan.bounds[s], 3, nullptr,
                                   /*verified=*/true, &pool);
    std::unique_lock<std::mutex> lock(mu);
    done[s] = std::move(parts);
    if (writing) return;  // that thread takes this one too, in its turn
    writing = true;
    while (next < k && done[next]) {
      const size_t at = next++;
      BinaryParts& p = *done[at];
      const bool ok = failed.ok();
      lock.unlock();
      Status w = Status::Ok();
      if (ok) {
        for (std::string_view piece : p.pieces)
          if (w = sink.append(piece); !w.ok()) break;
        if (w.ok()) w = sink.append(ShardPadding(p.size()));
      }
      const uint64_t size = p.size();
      for (std::string& owned : p.owned) pool.Give(std::move(owned));
      lock.lock();
      sizes[at] = size;
      done[at].reset();
      if (!w.ok() && failed.ok()) failed = w;
    }
    writing = false;
  });
  PLIR_RETURN_IF_ERROR(failed);
  return sink.write_at(0, ShardTableHead(sizes));
}

StatusOr<Module> ReadV4(std::string_view bytes, const BinaryLoadOptions& options,
                        LoadFacts* facts) {
  const uint64_t k = GetU64(bytes.data() + kTableAt);
  if (k < 2 || k > kMaxShards)
    return Corrupt("version 4 shard count " + std::to_string(k) + " (2 to " +
                   std::to_string(kMaxShards) + ")");
  const uint64_t first = FirstShardAt(k);
  if (first > bytes.size())
    return Corrupt("the shard table (" + std::to_string(k) + " shards) runs past the file (" +
                   std::to_string(bytes.size()) + " bytes)");
  uint64_t checksum = GetU64(bytes.data() + 24);
  if (Crc32c(bytes.substr(kTableAt, first - kTableAt)) != checksum)
    return Corrupt("checksum mismatch (the shard table, bytes 32 to " + std::to_string(first) +
                   ")");
  if (!AllZero(bytes.substr(TableEnd(k), first - TableEnd(k))))
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
  // Shards share no node: each proves its own items' bindings unshared.
  std::vector<LoadFacts> shard_facts(k);
  ParallelFor(k, 0, [&](size_t s, size_t) {
    // The shard's own header, as LoadBinary checks it, then its sections;
    // no helper thread faulting memory ahead: the cores are all loading.
    std::string_view v = views[s];
    uint32_t flags;
    std::memcpy(&flags, v.data() + 12, 4);
    if (v.size() < kV3PreambleSize || flags != 0 || GetU64(v.data() + 16) != v.size() - 32)
      loaded[s] = Corrupt("its header does not fit its " + std::to_string(v.size()) + " bytes");
    else
      loaded[s] = ReadV3(v, options.keepalive, options.verify_tensor_data, false, &shard_facts[s]);
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
  if (facts)
    facts->bindings_unshared = std::all_of(shard_facts.begin(), shard_facts.end(),
                                           [](const LoadFacts& f) { return f.bindings_unshared; });
  return m;
}

}  // namespace plir::internal::binary
