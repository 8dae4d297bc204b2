#include "ir/visitor.h"

#include <cstdio>
#include <cstdlib>

#include "ir/internal/children.h"
#include "ir/op.h"

namespace plir {

using internal::ChildAt;
using internal::NumChildren;

void IRVisitor::Walk(const Node* root, std::string root_label) {
  root_label_ = std::move(root_label);
  frames_.clear();
  if (!root) return;
  if (!visit_types_ && IsTypeKind(root->kind())) return;
  auto enter = [&](const Node* n, bool def) {
    if (Enter(n, def)) {
      size_t k = NumChildren(n, def);
      frames_.push_back({n, def, 0, k});
    } else {
      Leave(n, def);
    }
  };
  enter(root, false);
  while (!frames_.empty()) {
    Frame& f = frames_.back();
    if (f.next == f.count) {
      Frame done = f;
      frames_.pop_back();  // the parent's current child is `done` again
      Leave(done.n, done.def);
      continue;
    }
    internal::Child c = ChildAt(f.n, f.def, f.next++);
    if (!c.node || (!visit_types_ && IsTypeKind(c.node->kind()))) continue;
    enter(c.node, c.is_def);
  }
}

void IRVisitor::WalkModule(const Module& m) {
  for (const Item& it : m.items()) Walk(it.get(), "@" + it->name());
}

std::string IRVisitor::CurrentPath() const {
  // During Enter and Leave, frames_ holds the node's ancestors; each
  // contributes the label of its current child.
  std::string path = root_label_;
  for (size_t k = 0; k < frames_.size(); ++k) {
    if (!path.empty()) path += ", ";
    path += internal::ChildLabel(frames_[k].n, frames_[k].next - 1);
  }
  return path.empty() ? "root" : path;
}

const Node* IRVisitor::Parent() const { return frames_.empty() ? nullptr : frames_.back().n; }

// ---------------------------------------------------------------------------
// ExprMutator

namespace {

[[noreturn]] void SlotError(const char* what, const Node* got) {
  std::fprintf(stderr, "plir: ExprMutator::Rewrite returned %s where %s was expected\n",
               got ? NodeKindName(got->kind()) : "null", what);
  std::abort();
}

template <typename T>
Ref<T> Expect(const Ref<Node>& n, const char* what) {
  if (!n || n->kind() != T::kKind) SlotError(what, n.get());
  return Downcast<T>(n);
}

Expr ExpectExpr(const Ref<Node>& n) {
  if (!n || !IsExprKind(n->kind())) SlotError("an expression", n.get());
  return Downcast<ExprNode>(n);
}

// Builds a node of n's kind with the given (mutator-visible) children.
Ref<Node> Rebuild(const Node* n, std::vector<Ref<Node>>& c) {
  switch (n->kind()) {
    case NodeKind::kTuple: {
      std::vector<Expr> fields;
      for (auto& x : c) fields.push_back(ExpectExpr(x));
      return TupleNode::Make(std::move(fields));
    }
    case NodeKind::kTupleGetItem: {
      auto* t = static_cast<const TupleGetItemNode*>(n);
      Expr tuple = ExpectExpr(c[0]);
      auto r = TupleGetItemNode::Make(tuple, t->index());
      if (r.ok()) return *r;
      return TupleGetItemNode::MakeUnchecked(tuple, t->index(), t->type());
    }
    case NodeKind::kCall: {
      auto* call = static_cast<const CallNode*>(n);
      Expr callee = ExpectExpr(c[0]);
      std::vector<Expr> args;
      for (size_t i = 1; i < c.size(); ++i) args.push_back(ExpectExpr(c[i]));
      return RebuildCall(*call, callee, std::move(args));
    }
    case NodeKind::kIf: {
      Expr cond = ExpectExpr(c[0]);
      auto t = Expect<SeqExprNode>(c[1], "a body");
      auto e = Expect<SeqExprNode>(c[2], "a body");
      auto r = IfNode::Make(cond, t, e);
      if (r.ok()) return *r;
      return IfNode::MakeUnchecked(cond, t, e, static_cast<const IfNode*>(n)->type());
    }
    case NodeKind::kSeqExpr: {
      std::vector<Block> blocks;
      for (size_t i = 0; i + 1 < c.size(); ++i)
        if (c[i]) blocks.push_back(Expect<BindingBlockNode>(c[i], "a block"));
      return SeqExprNode::Make(std::move(blocks), ExpectExpr(c.back()));
    }
    case NodeKind::kBindingBlock: {
      std::vector<Binding> bindings;
      for (auto& x : c) {
        if (!x) continue;  // removed
        if (x->kind() == NodeKind::kBindingBlock) {
          for (const Binding& b : As<BindingBlockNode>(x)->bindings()) bindings.push_back(b);
        } else {
          bindings.push_back(Expect<VarBindingNode>(x, "a binding"));
        }
      }
      return BindingBlockNode::Make(std::move(bindings),
                                    static_cast<const BindingBlockNode*>(n)->is_dataflow());
    }
    case NodeKind::kVarBinding:
      return VarBindingNode::Make(Expect<VarNode>(c[1], "a variable"), ExpectExpr(c[0]));
    case NodeKind::kFunction: {
      auto* f = static_cast<const FunctionNode*>(n);
      std::vector<Var> params;
      for (size_t i = 0; i + 1 < c.size(); ++i)
        params.push_back(Expect<VarNode>(c[i], "a variable"));
      return FunctionNode::Make(f->name(), std::move(params), f->ret_type(),
                                Expect<SeqExprNode>(c.back(), "a body"), f->attrs());
    }
    case NodeKind::kLocalFn: {
      auto* f = static_cast<const LocalFnNode*>(n);
      std::vector<Var> params;
      for (size_t i = 0; i + 1 < c.size(); ++i)
        params.push_back(Expect<VarNode>(c[i], "a variable"));
      return LocalFnNode::Make(std::move(params), f->ret_type(),
                               Expect<SeqExprNode>(c.back(), "a body"));
    }
    case NodeKind::kExternFunc: {
      auto* f = static_cast<const ExternFuncNode*>(n);
      std::vector<Var> params;
      for (auto& x : c) params.push_back(Expect<VarNode>(x, "a variable"));
      return ExternFuncNode::Make(f->name(), std::move(params), f->ret_type(), f->attrs());
    }
    default:
      return Ref<Node>(n);
  }
}

// Mutator-visible children: like internal::ChildAt but without types.
size_t MutChildren(const Node* n, bool def) {
  switch (n->kind()) {
    case NodeKind::kVar:
    case NodeKind::kConstant:
      return 0;
    case NodeKind::kCall:
      return 1 + static_cast<const CallNode*>(n)->args().size();
    case NodeKind::kFunction:
      return static_cast<const FunctionNode*>(n)->params().size() + 1;
    case NodeKind::kLocalFn:
      return static_cast<const LocalFnNode*>(n)->params().size() + 1;
    case NodeKind::kExternFunc:
      return static_cast<const ExternFuncNode*>(n)->params().size();
    default:
      return IsTypeKind(n->kind()) ? 0 : NumChildren(n, def);
  }
}

internal::Child MutChildAt(const Node* n, bool def, size_t i) {
  if (n->kind() == NodeKind::kFunction) {
    auto* f = static_cast<const FunctionNode*>(n);
    if (i < f->params().size()) return {f->params()[i].get(), true};
    return {f->body().get(), false};
  }
  if (n->kind() == NodeKind::kLocalFn) {
    auto* f = static_cast<const LocalFnNode*>(n);
    if (i < f->params().size()) return {f->params()[i].get(), true};
    return {f->body().get(), false};
  }
  return ChildAt(n, def, i);
}

}  // namespace

Ref<Node> ExprMutator::RewriteUse(const Node* n) {
  auto it = remap_.find(static_cast<const VarNode*>(n));
  if (it != remap_.end()) return it->second;
  return Ref<Node>(n);
}

Ref<Node> ExprMutator::Mutate(const Ref<Node>& root) {
  struct Frame {
    const Node* n;
    bool def;
    size_t next;
    size_t count;
    bool changed;
    std::vector<Ref<Node>> kids;
  };
  // Leaves are handled without a frame.
  auto leaf = [&](const Node* n, bool def) -> Ref<Node> {
    if (n->kind() == NodeKind::kVar) {
      if (def) {
        Var v(static_cast<const VarNode*>(n));
        Var nv = RewriteVarDef(v);
        if (nv.get() != v.get()) RemapVar(v.get(), nv);
        return nv;
      }
      return Rewrite(RewriteUse(n));
    }
    return Rewrite(Ref<Node>(n));
  };
  if (!root) return root;
  if (MutChildren(root.get(), false) == 0) return leaf(root.get(), false);
  std::vector<Frame> stack;
  stack.push_back({root.get(), false, 0, MutChildren(root.get(), false), false, {}});
  if (root->kind() == NodeKind::kBindingBlock)
    EnterBlock(*static_cast<const BindingBlockNode*>(root.get()));
  Ref<Node> result;
  while (true) {
    Frame& f = stack.back();
    if (f.next == f.count) {
      if (f.n->kind() == NodeKind::kBindingBlock)
        LeaveBlock(*static_cast<const BindingBlockNode*>(f.n));
      Ref<Node> built = f.changed ? Rebuild(f.n, f.kids) : Ref<Node>(f.n);
      Ref<Node> out = Rewrite(built);
      stack.pop_back();
      if (stack.empty()) {
        result = std::move(out);
        break;
      }
      Frame& p = stack.back();
      const Node* orig = MutChildAt(p.n, p.def, p.next - 1).node;
      if (out.get() != orig) p.changed = true;
      p.kids.push_back(std::move(out));
      continue;
    }
    internal::Child c = MutChildAt(f.n, f.def, f.next++);
    size_t k = MutChildren(c.node, c.is_def);
    if (k == 0) {
      Ref<Node> out = leaf(c.node, c.is_def);
      if (out.get() != c.node) f.changed = true;
      f.kids.push_back(std::move(out));
    } else {
      stack.push_back({c.node, c.is_def, 0, k, false, {}});
      stack.back().kids.reserve(k);
      if (c.node->kind() == NodeKind::kBindingBlock)
        EnterBlock(*static_cast<const BindingBlockNode*>(c.node));
    }
  }
  return result;
}

Expr ExprMutator::MutateExpr(const Expr& e) { return ExpectExpr(Mutate(e)); }

Function ExprMutator::MutateFunction(const Function& f) {
  return Expect<FunctionNode>(Mutate(f), "a function");
}

Module ExprMutator::MutateModule(const Module& m) {
  Module out = m;
  for (const Item& it : m.items()) {
    Ref<Node> r = Mutate(it);
    if (r.get() == it.get()) continue;
    if (!r || (r->kind() != NodeKind::kFunction && r->kind() != NodeKind::kExternFunc))
      SlotError("a module item", r.get());
    out = out.WithItem(Downcast<ItemNode>(r));
  }
  return out;
}

std::vector<const VarNode*> CollectVarUses(const Node* root) {
  class Collector : public IRVisitor {
   public:
    Collector() { visit_types_ = false; }
    std::vector<const VarNode*> vars;

   protected:
    bool Enter(const Node* n, bool is_def) override {
      if (n->kind() == NodeKind::kVar) {
        if (!is_def) vars.push_back(static_cast<const VarNode*>(n));
        return false;
      }
      return true;
    }
  } c;
  c.Walk(root);
  return std::move(c.vars);
}

namespace {
class DeepCopier : public ExprMutator {
 protected:
  Var RewriteVarDef(const Var& v) override {
    return VarNode::Make(v->hint(), v->type(), v->is_dataflow(),
                         v->index());  // same place, same index
  }
};
}  // namespace

Function DeepCopy(const Function& f) { return DeepCopier().MutateFunction(f); }
Expr DeepCopy(const Expr& e) { return DeepCopier().MutateExpr(e); }
Module DeepCopy(const Module& m) {
  std::vector<Item> items;
  for (const Item& it : m.items()) items.push_back(Downcast<ItemNode>(DeepCopier().Mutate(it)));
  return *Module::Make(std::move(items));
}

}  // namespace plir
