// Symbolic dimensions, checked per function for the verifier.
#include "ir/internal/verify_dims.h"

#include <algorithm>
#include <string>

#include "ir/op.h"
#include "ir/value_table.h"

namespace plir::internal {

namespace {

// Symbolic dimensions: a dimension name used in a function body (in a
// variable's type or a call's sinfo_args) must be bound where it is used:
// by a parameter's type, or by an earlier `match_cast` (whose target type
// binds the names it introduces) in the same or an enclosing body, as in
// Relax. The return type may name what the body binds (the parser infers it
// from the body). A shape value (`shape[(n,)]`) uses its names. Extern kernels are signatures whose
// names are per call, and are not checked.
class SymbolicDimChecker {
 public:
  SymbolicDimChecker(const FunctionNode* f, std::vector<VerifyError>* errors, size_t max_errors)
      : f_(f), errors_(errors), max_errors_(max_errors) {}

  void Run() {
    for (const Var& p : f_->params()) Bind(p->type());
    Walk(f_->body().get(), "@" + f_->name() + ", body", 0);
  }

 private:
  static constexpr int kMaxDepth = 1000;

  // The names `t` uses (`defs_only`: those it can bind, which are the
  // dimensions that are a bare name; a name inside an expression such as
  // `m * n` is only a use, as in Relax).
  static void Collect(const Type& t, std::vector<Symbol>* out, bool defs_only = false) {
    if (!t) return;
    auto dim = [&](const Dim& d) {
      if (d.is_const()) return;
      if (!defs_only)
        DimNames(d, out);
      else if (!DimIsExpr(d))
        out->push_back(d.sym);
    };
    switch (t->kind()) {
      case NodeKind::kTensorType:
        for (const Dim& d : static_cast<const TensorTypeNode*>(t.get())->shape()) dim(d);
        break;
      case NodeKind::kShapeType:
        for (const Dim& d : static_cast<const ShapeTypeNode*>(t.get())->values()) dim(d);
        break;
      case NodeKind::kPrimType:
        if (static_cast<const PrimTypeNode*>(t.get())->has_value())
          dim(static_cast<const PrimTypeNode*>(t.get())->value());
        break;
      case NodeKind::kTupleType:
        for (const Type& f : static_cast<const TupleTypeNode*>(t.get())->fields())
          Collect(f, out, defs_only);
        break;
      default:
        break;
    }
  }
  bool IsBound(Symbol s) const {
    return std::find(bound_.begin(), bound_.end(), s) != bound_.end();
  }
  void Bind(const Type& t) {
    std::vector<Symbol> syms;
    Collect(t, &syms, /*defs_only=*/true);
    for (Symbol s : syms)
      if (!IsBound(s)) bound_.push_back(s);
  }
  void Check(const Type& t, const std::string& path) {
    std::vector<Symbol> syms;
    Collect(t, &syms);
    for (Symbol s : syms) {
      if (IsBound(s) || errors_->size() >= max_errors_) continue;
      // Report each name once.
      if (std::find(reported_.begin(), reported_.end(), s) != reported_.end()) continue;
      reported_.push_back(s);
      errors_->push_back({path, "symbolic dimension " + s.str() +
                                    " is not bound here (bind it with a parameter's type or a "
                                    "match_cast before its use)"});
    }
  }
  // Checks `t` when it names a dimension that is not bound; the path is
  // built only then.
  template <typename Path>
  void CheckUnbound(const Type& t, const Path& path) {
    if (t.get() == last_nameless_) return;
    std::vector<Symbol> syms;
    Collect(t, &syms);
    if (syms.empty()) {
      // Names no dimension: never reported, wherever it is. Most bindings
      // of a body share a few type nodes (the parser makes one per
      // spelling), so the next binding's type is usually this one.
      last_nameless_ = t.get();
      return;
    }
    for (Symbol s : syms)
      if (!IsBound(s)) return Check(t, path());
  }
  static bool IsMatchCast(const ExprNode* e) {
    if (e->kind() != NodeKind::kCall) return false;
    auto* op = As<OpNode>(static_cast<const CallNode*>(e)->callee());
    return op && op->name() == "match_cast";
  }
  void Walk(const SeqExprNode* seq, const std::string& path, int depth) {
    if (depth > kMaxDepth) return;
    size_t mark = bound_.size();
    const auto& blocks = seq->blocks();
    for (size_t bi = 0; bi < blocks.size(); ++bi) {
      const auto& bindings = blocks[bi]->bindings();
      for (size_t j = 0; j < bindings.size(); ++j) {
        const VarBindingNode* b = bindings[j].get();
        auto where = [&] {
          return path + ", block " + std::to_string(bi) + ", binding " + std::to_string(j) + " (%" +
                 b->var()->name_hint() + ")";
        };
        if (OpCallOnVars(b->value())) {
          // An op on variables without sinfo_args (the common binding:
          // `%y = add(%x, %c)`): Value() has nothing to check in it, and it
          // binds nothing, match_cast or not.
        } else if (IsMatchCast(b->value().get())) {
          auto* c = static_cast<const CallNode*>(b->value().get());
          for (const Expr& a : c->args()) Value(a.get(), where, depth + 1);
          for (const Type& t : c->sinfo_args()) Bind(t);
        } else {
          Value(b->value().get(), where, depth + 1);
        }
        if (b->var()->type()) CheckUnbound(b->var()->type(), [&] { return where() + ", type"; });
      }
    }
    Value(
        seq->result().get(), [&] { return path + ", result"; }, depth + 1);
    bound_.resize(mark);
  }
  template <typename Where>
  void Value(const ExprNode* e, const Where& where, int depth) {
    if (depth > kMaxDepth) return;
    switch (e->kind()) {
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(e);
        for (const Type& t : c->sinfo_args())
          CheckUnbound(t, [&] { return where() + ", sinfo_args"; });
        for (const Expr& a : c->args()) Value(a.get(), where, depth + 1);
        break;
      }
      case NodeKind::kTuple:
        for (const Expr& f : static_cast<const TupleNode*>(e)->fields())
          Value(f.get(), where, depth + 1);
        break;
      case NodeKind::kTupleGetItem:
        Value(static_cast<const TupleGetItemNode*>(e)->tuple().get(), where, depth + 1);
        break;
      case NodeKind::kIf: {
        auto* n = static_cast<const IfNode*>(e);
        Value(n->cond().get(), where, depth + 1);
        Walk(n->then_body().get(), where() + ", value, then", depth + 1);
        Walk(n->else_body().get(), where() + ", value, else", depth + 1);
        break;
      }
      case NodeKind::kSeqExpr:
        Walk(static_cast<const SeqExprNode*>(e), where(), depth + 1);
        break;
      case NodeKind::kShapeExpr:
      case NodeKind::kPrimExpr:
        CheckUnbound(e->type(), [&] {
          return where() + (e->kind() == NodeKind::kShapeExpr ? ", shape value" : ", value");
        });
        break;
      case NodeKind::kLocalFn: {
        // A local function binds the names of its parameters' types, as a
        // function does, for its body only.
        auto* f = static_cast<const LocalFnNode*>(e);
        size_t mark = bound_.size();
        for (const Var& p : f->params()) Bind(p->type());
        Walk(f->body().get(), where() + ", value, fn body", depth + 1);
        bound_.resize(mark);
        break;
      }
      default:
        break;
    }
  }

  const FunctionNode* f_;
  std::vector<VerifyError>* errors_;
  size_t max_errors_;
  std::vector<Symbol> bound_;
  std::vector<Symbol> reported_;
  const TypeNode* last_nameless_ = nullptr;  // a type that names no dimension
};

}  // namespace

void CheckSymbolicDims(const FunctionNode* f, std::vector<VerifyError>* errors, size_t max_errors) {
  SymbolicDimChecker(f, errors, max_errors).Run();
}

}  // namespace plir::internal
