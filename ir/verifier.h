// The well-formedness verifier.
//
// Checks: every variable is bound exactly once and only used after its
// binding, inside its scope (if branches are scopes); dataflow variables are
// bound only in dataflow blocks and not used outside them; globals resolve to
// module items (@f(...) calls a function, call_tir calls an extern); and
// types are consistent (annotations vs values, return types vs bodies, call
// arguments vs parameters, op calls re-inferred). Iterative: any depth.
#ifndef PLIR_IR_VERIFIER_H_
#define PLIR_IR_VERIFIER_H_

#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"

namespace plir {

struct VerifyError {
  std::string path;     // "@main, body, block 0, binding 2 (%c), value, argument 0"
  std::string message;  // "variable %b used before its definition"
  std::string ToString() const { return path + ": " + message; }
};

// Returns every problem found (at most `max_errors`), in pre-order.
std::vector<VerifyError> VerifyModule(const Module& m, size_t max_errors = 20);

// Returns OK iff `m` is well-formed; otherwise FailedPrecondition whose
// message lists the problems, one per line.
Status Verify(const Module& m);

}  // namespace plir

#endif  // PLIR_IR_VERIFIER_H_
