// Splitting a module by function into shards that can be compiled apart
// (one build action each), and joining the results (plir-shard).
//
// A shard holds a contiguous run of the module's items (functions and
// externs, in module order), then, for every item of another shard that its
// items reference, a stub with that item's signature, marked with the
// attribute `shard_extern = true`: for an extern, a copy of it; for a
// function, a def whose body only calls itself (PLIR's externs are called
// through call_tir alone, so a direct call of one would not verify). Function
// passes see the shard's own functions in full; MergeShards drops the marked
// stubs and concatenates the
// shards' own items in shard order, which restores the module's order, so
// that merging the per-shard results of function passes gives exactly what
// running them on the whole module gives.
#ifndef PLIR_CLI_MODULE_SHARDS_H_
#define PLIR_CLI_MODULE_SHARDS_H_

#include <cstddef>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"

namespace plir {

// The attribute that marks a shard's stubs of other shards' items.
inline constexpr char kShardExternAttr[] = "shard_extern";

// Splits `m` into `n` shards (n >= 1) of contiguous items, balanced by the
// number of IR nodes of each item. A module with fewer items than `n` gives
// empty shards at the end. Fails if `m` already has `shard_extern` items.
StatusOr<std::vector<Module>> SplitByFunction(const Module& m, size_t n);

// Joins shards written by SplitByFunction (and transformed since): each
// shard's own items, in shard order. Fails, naming the shards, if an item is
// owned by two shards or a marked stub names an item no shard owns.
StatusOr<Module> MergeShards(const std::vector<Module>& shards);

}  // namespace plir

#endif  // PLIR_CLI_MODULE_SHARDS_H_
