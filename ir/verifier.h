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

// For a module just returned by ParseModule (ir/text/parser.h), and only
// for one: VerifyModule's errors, without its module-wide check that no
// variable is bound in two items. The text parser rules that out: it makes
// each variable of an item while parsing that item, one per definition, and
// resolves names only within the item. (That check sorts a record of every
// binding: 4% of the text round trip's CPU on 1M ops in 1,000 functions.)
// A module from JSON, binary or a pass may share a variable between items:
// verify it with VerifyModule, unless its loader proved that none is
// (LoadFacts::bindings_unshared, ir/serialize/serialize.h). The parser
// fuzzer checks on every input it parses that the two agree.
std::vector<VerifyError> VerifyParsedModule(const Module& m, const VerifyOptions& options);
Status VerifyParsed(const Module& m);

}  // namespace plir

#endif  // PLIR_IR_VERIFIER_H_
