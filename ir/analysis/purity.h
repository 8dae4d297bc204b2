// Side effects of expressions and module functions (SDK analysis).
//
// The rule, used by every in-tree pass:
// - a call of an op has a side effect iff its OpDef says so (`pure = false`:
//   call_packed, vm.kill_object, a plugin's impure ops);
// - a call of a module function (`@f(...)`) has one iff @f's body has one,
//   transitively through the functions it calls (ImpureFunctions). Without
//   module knowledge (a null ImpureFunctions) every call of a module function
//   counts as a side effect: the conservative answer;
// - a call of an extern kernel has none: an extern computes its outputs from
//   its inputs (it is normally reached through call_tir, a pure op);
// - a call of a variable (a parameter or a local function) has one unless
//   the variable's type is a pure Callable; defining a local function has
//   none (its body's effects happen where it is called);
// - (the verifier admits no other callee; anything else would count as one);
// - `if`, tuples, element access, literals, constants and variables have no
//   effect of their own: an `if` has one iff a branch or its condition does.
#ifndef PLIR_IR_ANALYSIS_PURITY_H_
#define PLIR_IR_ANALYSIS_PURITY_H_

#include <string>
#include <string_view>
#include <unordered_set>

#include "ir/expr.h"
#include "ir/module.h"
#include "ir/op.h"

namespace plir {

// The module functions whose bodies (transitively) have side effects.
class ImpureFunctions {
 public:
  ImpureFunctions() = default;
  // One walk per function, then the callers of impure functions by work
  // list.
  static ImpureFunctions Compute(const Module& m);
  bool Contains(std::string_view name) const { return names_.count(std::string(name)) > 0; }
  size_t size() const { return names_.size(); }

 private:
  std::unordered_set<std::string> names_;
};

// True iff calling `callee` has a side effect by the rule above (with a
// null `functions`, every global callee has one).
inline bool CalleeHasSideEffects(const Node* callee, const ImpureFunctions* functions) {
  switch (callee->kind()) {
    case NodeKind::kOp:
      return !static_cast<const OpNode*>(callee)->pure();
    case NodeKind::kGlobalVar: {
      if (!functions) return true;
      const std::string& name = static_cast<const GlobalVarNode*>(callee)->name();
      return functions->Contains(name);
    }
    case NodeKind::kVar:
    case NodeKind::kLocalFn: {
      auto* ft = As<FuncTypeNode>(static_cast<const ExprNode*>(callee)->type());
      return !ft || !ft->pure();
    }
    default:
      return true;
  }
}

// True iff evaluating `root` (an expression, binding, block or body) may
// have a side effect. `functions`: what is known of the module's functions
// (null: every call of a module function is impure).
bool HasSideEffects(const Node* root, const ImpureFunctions* functions = nullptr);
inline bool IsPure(const Expr& e, const ImpureFunctions* functions = nullptr) {
  return !HasSideEffects(e.get(), functions);
}

// True iff `root` contains control flow (an `if`). Passes that move or merge
// values (CSE, LiftTransformParams) leave such values alone.
bool ContainsControlFlow(const Node* root);

}  // namespace plir

#endif  // PLIR_IR_ANALYSIS_PURITY_H_
