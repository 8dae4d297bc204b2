// A seeded generator of random, well-formed modules for property tests and
// benchmarks. Covers every construct of the spec: ordinary and dataflow
// blocks, nested if, tuples and element access, every literal kind,
// constants of every dtype (inline and hex), symbolic dims, nested calls,
// calls of module functions, call_tir of externs, call_packed, vm.kill_object.
#ifndef PLIR_TESTING_RANDOM_MODULE_H_
#define PLIR_TESTING_RANDOM_MODULE_H_

#include <cstddef>
#include <cstdint>

#include "ir/module.h"

namespace plir::testing {

struct RandomModuleOptions {
  uint64_t seed = 1;
  // Total bindings over all functions (top-level and inside if branches).
  size_t num_bindings = 100;
  // Bindings per function; more bindings give more functions.
  size_t bindings_per_function = 100000;
  // Maximum nesting of if expressions.
  int max_if_depth = 3;
  // Also generate local functions (closures over the values in scope) and
  // calls of them (off by default: existing seeds keep their modules).
  bool local_functions = false;
};

// Returns a module that verifies, with about `num_bindings` bindings.
Module GenerateRandomModule(const RandomModuleOptions& options);

// Returns a copy of `m` that differs in exactly one place (an op, a literal,
// a constant byte, or an attribute), chosen by `seed`. The change keeps the
// module well-typed.
Module ApplySingleChange(const Module& m, uint64_t seed);

}  // namespace plir::testing

#endif  // PLIR_TESTING_RANDOM_MODULE_H_
