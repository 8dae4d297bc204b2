// How the supervised child hands its result to the supervisor.
//
// The child never writes the user's output. It writes its result into an
// anonymous file (a memfd) that the parent created before the fork, then
// exits. Only when the child and every process it started are dead does
// the parent seal the file against writes (so nothing can change it while
// it is read), read it with bounds checked, and check it with its own code:
// a module is loaded and verified in the parent, and the parent prints the
// output and writes it. Nothing the child wrote reaches the user's output
// byte for byte.
//
// The format (little-endian):
//
//   magic "PLIRRES\x01"                  8 bytes
//   u32 kind                             1: a module, 2: text, 3: bytes
//   u32 reserved                         0
//   u64 names_size                       bytes of the op-name table
//   u64 payload_size
//   names                                op names, each NUL-terminated; for a
//                                        module, then NULs up to a multiple of
//                                        64 bytes from the file's start
//   payload                              a binary module (kind 1), text
//                                        (kind 2), bytes the parent checks
//                                        with its own reader (kind 3: plir-run's
//                                        safetensors outputs), or a module as
//                                        shards (kind 4, below)
//
// and the file is exactly 32 + names_size + payload_size bytes. The names
// are the ops that plugins registered in the child: the parent, which
// loads no plugin, gives them stand-ins so that the module loads (see
// VerifyOptions::keep_recorded_type).
//
// Kind 4 is a module whose items were split into contiguous groups, each
// saved as a binary module of its own, so that the child saves them and the
// parent loads them on several threads (one binary module is written and
// read by one thread: 0.2 s each way at 1M ops in 1,000 functions). Its
// payload (which starts at a multiple of 64, as kind 1's does):
//
//   u64 n                                number of shards, 1 to 1024
//   u64 size[n]                          each shard's bytes
//   NULs up to a multiple of 64
//   shard 0, NULs up to a multiple of 64, shard 1, ...
//
// and it ends where the last shard's padding does. The parent loads every
// shard, joins their items in shard order into one module (two items of one
// name fail, as in any module) and verifies that.
#ifndef PLIR_DRIVER_CHILD_RESULT_H_
#define PLIR_DRIVER_CHILD_RESULT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"

namespace plir {

enum class ChildResultKind : uint32_t { kModule = 1, kText = 2, kBytes = 3 };

// Creates the anonymous file (sealable, close-on-exec) in the parent.
StatusOr<int> CreateResultFile();

// In the child: replaces the file's contents with a result.
Status WriteChildResult(int fd, ChildResultKind kind, const std::vector<std::string>& op_names,
                        std::string_view payload);

// The same in pieces, without the whole payload in memory: Start() empties
// the file and writes the op names, Append() adds to the payload in order,
// Finish() writes the header, last (a child that dies before leaves no
// valid magic).
class ChildResultWriter {
 public:
  static StatusOr<ChildResultWriter> Start(int fd, ChildResultKind kind,
                                           const std::vector<std::string>& op_names = {});
  Status Append(std::string_view data);
  Status Finish();

 private:
  ChildResultWriter() = default;
  int fd_ = -1;
  ChildResultKind kind_ = ChildResultKind::kText;
  uint64_t names_size_ = 0;
  uint64_t payload_size_ = 0;
};

// In the child: `m` as a module result, written piece by piece (no
// file-sized string next to the module). The payload is the binary format's
// newest version: a large module is version 4's shards, saved here and
// loaded by LoadResultModule in parallel (docs/serialization.md).
Status WriteModuleResult(int fd, const std::vector<std::string>& op_names, const Module& m);

// A result as the parent read it: owns a read-only mapping of the sealed
// file, which the views point into.
class ChildResult {
 public:
  ChildResult() = default;
  ChildResult(ChildResult&& o) noexcept;
  ChildResult& operator=(ChildResult&& o) noexcept;
  ChildResult(const ChildResult&) = delete;
  ChildResult& operator=(const ChildResult&) = delete;
  ~ChildResult();

  ChildResultKind kind() const { return kind_; }
  const std::vector<std::string>& op_names() const { return op_names_; }
  std::string_view payload() const { return payload_; }
  // The mapping's owner: a module loaded from the payload may keep viewing
  // it (the file is sealed) after this result is gone.
  const std::shared_ptr<const void>& mapping() const { return mapping_; }
  // Drops this result's hold on the mapping and its views (what a module
  // loaded from it keeps viewing stays mapped).
  void ReleaseMapping() {
    mapping_.reset();
    map_size_ = 0;
    payload_ = {};
  }

 private:
  friend StatusOr<ChildResult> ReadChildResult(int fd, uint64_t max_bytes,
                                               std::string_view limit_flag);
  std::shared_ptr<const void> mapping_;  // unmaps when the last holder goes
  size_t map_size_ = 0;
  ChildResultKind kind_ = ChildResultKind::kText;
  std::vector<std::string> op_names_;
  std::string_view payload_;
};

// In the parent, once no other process can hold the file: seals it against
// writes, growth and shrinking, maps it and checks the layout. Fails if the
// file is empty (the child wrote no result), larger than `max_bytes` (the
// error names `limit_flag`), does not have the layout above, or if a
// process still maps it writably.
StatusOr<ChildResult> ReadChildResult(int fd, uint64_t max_bytes,
                                      std::string_view limit_flag = "--max-input-bytes");

// In the parent: the module of a kind-1 or kind-4 result, loaded (a
// kind-4 result's shards in parallel) and verified by the parent's own
// code. The op names that are not registered get stand-ins (registered for
// the life of the process) whose calls keep their recorded type; every
// other call is re-inferred as usual. The module is built before it is
// verified; when none of its constants views the mapping, `r` lets it go
// then (its payload reads empty after), so the verify does not add to a
// peak that still holds the file.
StatusOr<Module> LoadResultModule(ChildResult& r);

}  // namespace plir

#endif  // PLIR_DRIVER_CHILD_RESULT_H_
