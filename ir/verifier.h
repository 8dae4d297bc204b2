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

#include <functional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"

namespace plir {

class OpNode;

struct VerifyError {
  std::string path;     // "@main, body, block 0, binding 2 (%c), value, argument 0"
  std::string message;  // "variable %b used before its definition"
  std::string ToString() const { return path + ": " + message; }
};

struct VerifyOptions {
  size_t max_errors = 20;
  // Calls of the ops this accepts keep their recorded type: it is not
  // re-inferred, and their arity and attributes are not checked. plir-opt's
  // supervisor checks a plugin child's result with stand-ins for the ops
  // that plugins define: their inference is plugin code, which it never
  // runs. Everything else is checked as usual.
  std::function<bool(const OpNode&)> keep_recorded_type;
};

// Returns every problem found (at most `max_errors`), in pre-order.
std::vector<VerifyError> VerifyModule(const Module& m, size_t max_errors = 20);
std::vector<VerifyError> VerifyModule(const Module& m, const VerifyOptions& options);

// Returns OK iff `m` is well-formed; otherwise FailedPrecondition whose
// message lists the problems, one per line.
Status Verify(const Module& m);
Status Verify(const Module& m, const VerifyOptions& options);

}  // namespace plir

#endif  // PLIR_IR_VERIFIER_H_
