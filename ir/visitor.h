// Visitor and mutator bases for writing analyses and passes.
//
// Both are driven by an explicit stack, never by recursion, so they handle IR
// of any depth. Children are visited in definition/evaluation order
// (parameters, then bindings in order, then the result), so a variable's
// definition is always seen before its uses.
#ifndef PLIR_IR_VISITOR_H_
#define PLIR_IR_VISITOR_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"

namespace plir {

// Pre/post-order visitor. Override Enter (return false to skip a node's
// children) and/or Leave. `is_def` is true for a variable in definition
// position (a parameter or a binding target) and false for a use.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  void Walk(const Node* root, std::string root_label = "");
  template <typename T>
  void Walk(const Ref<T>& root, std::string root_label = "") {
    Walk(static_cast<const Node*>(root.get()), std::move(root_label));
  }
  // Walks every item, in module order, with root label "@name".
  void WalkModule(const Module& m);

 protected:
  virtual bool Enter(const Node* /*n*/, bool /*is_def*/) { return true; }
  virtual void Leave(const Node* /*n*/, bool /*is_def*/) {}

  // The path from the root to the node being entered or left, as in
  // structural mismatches: "@main, body, block 0, binding 2 (%c), value".
  std::string CurrentPath() const;
  // The parent of the node being entered or left (null at the root).
  const Node* Parent() const;
  // The position of that node among its parent's children (for a call, 0
  // is the callee); 0 at the root. Ops are shared singletons: position, not
  // identity, tells a callee from an argument.
  size_t ChildIndex() const { return frames_.empty() ? 0 : frames_.back().next - 1; }

  // When false, type nodes are not visited.
  bool visit_types_ = true;

 private:
  struct Frame {
    const Node* n;
    bool def;
    size_t next;
    size_t count;
  };
  std::vector<Frame> frames_;
  std::string root_label_;
};

// Post-order rewriter. Children are rewritten first; a node none of whose
// children changed is passed to Rewrite as the original (pointer-equal)
// node, so a mutator that changes nothing returns the very same tree and
// every unchanged subtree stays shared. Types are not traversed.
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;

  Ref<Node> Mutate(const Ref<Node>& root);
  Expr MutateExpr(const Expr& e);
  Function MutateFunction(const Function& f);
  // Returns `m` itself if no item changed; otherwise a module sharing every
  // unchanged item.
  Module MutateModule(const Module& m);

 protected:
  // Called once per node after its children, with the node rebuilt from the
  // rewritten children (or the original if none changed). Return the
  // replacement: a node that fits the same slot. For a binding, returning
  // null removes it, and returning a BindingBlock splices its bindings in.
  virtual Ref<Node> Rewrite(const Ref<Node>& n) { return n; }
  // Called for each variable definition (parameter or binding target), in
  // order. Returning a different variable remaps every later use.
  virtual Var RewriteVarDef(const Var& v) { return v; }
  // Makes every later use of `from` read `to` instead.
  void RemapVar(const VarNode* from, Expr to) { remap_[from] = std::move(to); }
  // Scope hooks: called (pre-order) before the first binding of a block is
  // rewritten, and after its last one, before Rewrite of the block.
  virtual void EnterBlock(const BindingBlockNode& /*block*/) {}
  virtual void LeaveBlock(const BindingBlockNode& /*block*/) {}

 private:
  Ref<Node> RewriteUse(const Node* n);
  std::unordered_map<const VarNode*, Expr> remap_;
};

// A mutator that only replaces variables: Map(from, to), then Mutate*.
// Unchanged parts come back pointer-equal.
class VarSubstituter : public ExprMutator {
 public:
  void Map(const VarNode* from, Expr to) { RemapVar(from, std::move(to)); }
};

// Returns the variable uses (not definitions) under `root`, in pre-order,
// with repeats.
std::vector<const VarNode*> CollectVarUses(const Node* root);

// Returns a copy of `n` in which every variable defined inside it is a fresh
// variable (same name hint, type and kind); uses are renamed to match.
// Free variables are kept. The copy is structurally equal to the original.
Function DeepCopy(const Function& f);
Expr DeepCopy(const Expr& e);
Module DeepCopy(const Module& m);

}  // namespace plir

#endif  // PLIR_IR_VISITOR_H_
