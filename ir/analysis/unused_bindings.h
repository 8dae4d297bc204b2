// Unused bindings (SDK analysis and its one rewrite): the pure bindings of
// a function whose variable nothing uses, and their removal. Shared by
// DeadCodeElimination and the greedy pattern driver (ir/rewrite.h).
#ifndef PLIR_IR_ANALYSIS_UNUSED_BINDINGS_H_
#define PLIR_IR_ANALYSIS_UNUSED_BINDINGS_H_

#include <cstddef>
#include <memory>
#include <unordered_set>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"

namespace plir {

// Erases the bindings whose variable is never used and whose value has no
// side effect (ir/analysis/purity.h), in every body of a function, nested
// bodies first: TVM's RemoveAllUnused. A binding used only by erased ones
// is erased too (each body is scanned backwards with its live variables).
// A local function's body is cleaned like any other; the variables it
// captures stay live while it does. Blocks left empty are dropped.
//
// Calls of module functions: with a module, impure iff the function is
// (ImpureFunctions, computed on the first such call); without one, impure.
// Cost: one walk of every value per body; live sets indexed by
// VarNode::index().
class UnusedBindingRemover {
 public:
  explicit UnusedBindingRemover(const Module* module = nullptr);
  ~UnusedBindingRemover();
  UnusedBindingRemover(const UnusedBindingRemover&) = delete;
  UnusedBindingRemover& operator=(const UnusedBindingRemover&) = delete;

  // Only the bindings of these variables may be erased (and, as they are,
  // the variables their values use): what a rewrite left unused. Null (the
  // default): any binding. The set grows as bindings are erased.
  void RestrictTo(std::unordered_set<const VarNode*>* candidates) { candidates_ = candidates; }

  // Returns `f` without its unused bindings; `f` itself iff none is. An
  // extern kernel comes back as it is. Nesting deeper than 64 levels is
  // handled by an ExprMutator (no recursion on the input's depth).
  Item Remove(const Item& f);
  Function Remove(const Function& f) { return Downcast<FunctionNode>(Remove(Item(f))); }
  // Bindings erased so far.
  size_t erased() const;

  // Remove(item) for each item of `module`, on up to `threads` threads
  // (0: DefaultThreads()), with one remover per thread and the module's
  // impure functions computed once for all. The items in order; an item
  // with nothing to remove is the same pointer.
  static std::vector<Item> RemoveFromEach(const Module& module, int threads);

 private:
  class Impl;
  explicit UnusedBindingRemover(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::unordered_set<const VarNode*>* candidates_ = nullptr;
};

// One function, once: UnusedBindingRemover(module).Remove(f).
Function RemoveUnusedBindings(const Function& f, const Module* module = nullptr);

}  // namespace plir

#endif  // PLIR_IR_ANALYSIS_UNUSED_BINDINGS_H_
