#include "ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/internal/children.h"
#include "ir/internal/name_table.h"
#include "ir/internal/pointer_map.h"
#include "ir/internal/radix_sort.h"
#include "ir/internal/verify_dims.h"
#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/text_rules.h"
#include "ir/var_map.h"
#include "ir/visitor.h"

namespace plir {
namespace {

// What the lexer reads after '@' (any name characters), or as an
// attribute key (an identifier: not starting with a digit).
bool IsTextName(std::string_view s, bool is_key = false) {
  if (is_key) return IsAttrKeyText(s);  // the lexer's own token rule
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), IsIdentChar);
}

// For messages: control bytes escaped.
std::string PrintableName(std::string_view s) {
  std::string out;
  AppendQuoted(s, &out, QuoteStyle::kText);
  return out.substr(1, out.size() - 2);
}

// Strings must be valid UTF-8: JSON holds nothing else, and the text
// format's string literals are read as UTF-8. (Binary and JSON files, and
// plugins, can carry any bytes.)
bool AttrUtf8(const AttrValue& v) {
  switch (v.kind()) {
    case AttrValue::Kind::kString:
      return IsValidUtf8(v.as_string());
    case AttrValue::Kind::kList:
      for (const AttrValue& e : v.as_list())
        if (!AttrUtf8(e)) return false;  // depth bounded (kMaxAttrDepth)
      return true;
    case AttrValue::Kind::kMap:
      for (const auto& [key, value] : v.as_map())
        if (!IsValidUtf8(key) || !AttrUtf8(value)) return false;
      return true;
    default:
      return true;
  }
}

// The message for a string that is not valid UTF-8: `what` and the first
// bytes of the string (the caller's message escapes them).
std::string NotUtf8(const std::string& what, std::string_view s) {
  std::string shown;
  AppendQuoted(s.substr(0, 40), &shown, QuoteStyle::kText);
  if (s.size() > 40) shown.insert(shown.size() - 1, "...");
  return what + " " + shown +
         " is not valid UTF-8 (JSON and the text format hold only UTF-8 strings)";
}

// The nesting depth the parser counts when it reads the printed form of
// `item` (ir/parser.cc: a body at 1; a binding's value and annotation, and a
// body's result, one deeper; call arguments and sinfo, tuple fields, an if's
// condition and branches one deeper again; tuple type fields one deeper).
// Stops counting past `limit`. Shared nodes are revisited only at a greater
// depth, so a DAG from a binary file costs at most `limit` visits a node.
int TextDepth(const ItemNode* item, int limit) {
  std::vector<std::pair<const Node*, int>> stack;
  std::unordered_map<const Node*, int> best;
  auto push = [&](const Node* n, int d) {
    if (!n) return;
    auto [it, fresh] = best.emplace(n, d);
    if (!fresh) {
      if (it->second >= d) return;
      it->second = d;
    }
    stack.emplace_back(n, d);
  };
  for (const Var& p : item->params()) push(p->type().get(), 0);
  push(item->ret_type().get(), 0);
  if (auto* f = As<FunctionNode>(item)) push(f->body().get(), 1);
  int max = 0;
  while (!stack.empty()) {
    auto [n, d] = stack.back();
    stack.pop_back();
    max = std::max(max, d);
    if (max > limit) return max;
    switch (n->kind()) {
      case NodeKind::kSeqExpr: {
        auto* s = static_cast<const SeqExprNode*>(n);
        for (const Block& b : s->blocks())
          for (const Binding& bd : b->bindings()) {
            push(bd->value().get(), d + 1);
            push(bd->var()->type().get(), d + 1);
          }
        push(s->result().get(), d + 1);
        break;
      }
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(n);
        for (const Expr& a : c->args()) push(a.get(), d + 1);
        for (const Type& t : c->sinfo_args()) push(t.get(), d + 1);
        break;
      }
      case NodeKind::kTuple:
        for (const Expr& e : static_cast<const TupleNode*>(n)->fields()) push(e.get(), d + 1);
        break;
      case NodeKind::kIf: {
        auto* i = static_cast<const IfNode*>(n);
        push(i->cond().get(), d + 1);
        push(i->then_body().get(), d + 1);
        push(i->else_body().get(), d + 1);
        break;
      }
      case NodeKind::kTupleGetItem:
        push(static_cast<const TupleGetItemNode*>(n)->tuple().get(), d);
        break;
      case NodeKind::kTupleType:
        for (const Type& t : static_cast<const TupleTypeNode*>(n)->fields()) push(t.get(), d + 1);
        break;
      case NodeKind::kFuncType:
        for (const Type& t : static_cast<const FuncTypeNode*>(n)->fields()) push(t.get(), d + 1);
        break;
      case NodeKind::kLocalFn: {
        auto* f = static_cast<const LocalFnNode*>(n);
        for (const Var& p : f->params()) push(p->type().get(), d + 1);
        push(f->ret_type().get(), d + 1);
        push(f->body().get(), d + 1);
        break;
      }
      default:
        break;
    }
  }
  return max;
}

}  // namespace
namespace {

std::string VarName(const VarNode* v) { return "%" + v->name_hint(); }

// What verifying one item leaves for the module-level checks.
struct ItemReport {
  std::vector<VerifyError> errors;
  // Uses of variables bound neither in scope nor earlier in this item: index
  // into `errors`, and the variable. Whether it is bound in another item
  // (then it is used out of its scope) is settled once all items are done.
  std::vector<std::pair<size_t, const VarNode*>> unresolved;
  // Every variable this item binds, for the check that no variable is bound
  // in two items.
  std::vector<const VarNode*> defined;
};

// Verifies one item. Items are independent (variables never cross items),
// so they are verified in parallel, each with tables that hold only its own
// variables, indexed by their dense index (name_table.h); the checks that
// involve several items run afterwards (VerifyModule).
class Verifier : public IRVisitor {
 public:
  // `cross_item`: the module-wide checks follow, which read each item's
  // defined variables (VerifyParsedModule has none).
  Verifier(const Module& m, const VerifyOptions& options, bool cross_item)
      : module_(m),
        max_errors_(options.max_errors),
        keep_recorded_type_(options.keep_recorded_type),
        collect_defined_(cross_item) {
    visit_types_ = false;
  }

  // Verifies `item`. One verifier serves item after item (a thread's),
  // reusing its tables' memory.
  ItemReport Run(const ItemNode* item) {
    current_item_ = item;
    Reset();
    // One allocation of the variables' table, and of the lists of them,
    // instead of doubling series (at a million variables, 16 MB instead of
    // 32 MB first written for the table, 8 MB instead of 16 MB a list).
    if (auto* f = As<FunctionNode>(item)) {
      const size_t bound = VarIndexBound(*f);
      state_.Expect(bound);
      scope_order_.reserve(bound);
      if (collect_defined_) report_.defined.reserve(bound);
    }
    if (!FastItem(item)) {
      // Another shape, or an error: the generic walk, which knows the path
      // of every node, from a clean state.
      Reset();
      Walk(item, "@" + item->name());
      // Flat functions (the fast shape) are 3 levels deep; others may be
      // nested beyond what the parser reads back: refuse them here, so that
      // the printer never writes text the parser rejects.
      if (errors_.size() < max_errors_ && TextDepth(item, kMaxNestingDepth) > kMaxNestingDepth)
        errors_.push_back(
            {"@" + item->name(), "nested deeper than " + std::to_string(kMaxNestingDepth) +
                                     " levels, more than the text format reads back"});
    }
    report_.errors = std::move(errors_);
    return std::move(report_);
  }

 protected:
  bool Enter(const Node* n, bool is_def) override {
    if (errors_.size() >= max_errors_) return false;
    switch (n->kind()) {
      case NodeKind::kVar:
        if (is_def)
          Define(static_cast<const VarNode*>(n));
        else
          Use(static_cast<const VarNode*>(n));
        return false;
      case NodeKind::kGlobalVar: {
        auto* g = static_cast<const GlobalVarNode*>(n);
        if (!module_.Contains(g->name())) Error("unknown global @" + g->name());
        return false;
      }
      case NodeKind::kStringImm: {
        const std::string& v = static_cast<const StringImmNode*>(n)->value();
        if (!IsValidUtf8(v)) Error(NotUtf8("the string", v));
        return false;
      }
      case NodeKind::kSeqExpr:
      case NodeKind::kFunction:
      case NodeKind::kExternFunc:
      case NodeKind::kLocalFn:
        scope_marks_.push_back(scope_order_.size());
        return true;
      case NodeKind::kBindingBlock:
        blocks_.push_back(
            {static_cast<const BindingBlockNode*>(n)->is_dataflow(), scope_order_.size()});
        return true;
      default:
        return true;
    }
  }

  void Leave(const Node* n, bool /*is_def*/) override {
    if (errors_.size() >= max_errors_) return;
    switch (n->kind()) {
      case NodeKind::kSeqExpr: {
        // A body: of a function, or a branch of an if; never a value.
        const Node* parent = Parent();
        bool ok = parent &&
                  (parent->kind() == NodeKind::kFunction || parent->kind() == NodeKind::kLocalFn ||
                   (parent->kind() == NodeKind::kIf && ChildIndex() != 0));
        if (!ok)
          Error("a body ({ ... }) is used as a value; only a function or an if branch has one");
        PopScope();
        break;
      }
      case NodeKind::kExternFunc:
        PopScope();
        break;
      case NodeKind::kBindingBlock: {
        BlockContext block = blocks_.back();
        blocks_.pop_back();
        if (block.dataflow) CloseDataflowBlock(block.start);
        break;
      }
      case NodeKind::kVarBinding: {
        auto* b = static_cast<const VarBindingNode*>(n);
        if (!TypeCompatible(b->var()->type(), b->value()->type()))
          Error("the annotation " + TypeToString(b->var()->type()) + " of " +
                VarName(b->var().get()) + " is incompatible with its value's type " +
                TypeToString(b->value()->type()));
        break;
      }
      case NodeKind::kFunction: {
        PopScope();
        auto* f = static_cast<const FunctionNode*>(n);
        if (!TypeCompatible(f->ret_type(), f->body()->type()))
          Error("the return type " + TypeToString(f->ret_type()) +
                " is incompatible with the body's type " + TypeToString(f->body()->type()));
        break;
      }
      case NodeKind::kLocalFn: {
        PopScope();
        auto* f = static_cast<const LocalFnNode*>(n);
        if (!TypeCompatible(f->ret_type(), f->body()->type()))
          Error("the local function's return type " + TypeToString(f->ret_type()) +
                " is incompatible with its body's type " + TypeToString(f->body()->type()));
        CheckRecordedType(n, LocalFnNode::Make(f->params(), f->ret_type(), f->body())->type(),
                          "local function");
        break;
      }
      case NodeKind::kCall:
        CheckCall(static_cast<const CallNode*>(n));
        break;
      case NodeKind::kOp: {
        // The text format writes an op only as a callee: `add(...)`.
        auto* call = As<CallNode>(Parent());
        if (!call || ChildIndex() != 0)
          Error("op " + static_cast<const OpNode*>(n)->name() +
                " is used as a value; an op can only be called");
        break;
      }
      case NodeKind::kIf: {
        auto* f = static_cast<const IfNode*>(n);
        auto r = IfNode::Make(f->cond(), f->then_body(), f->else_body());
        if (!r.ok())
          Error(r.status().message());
        else
          CheckRecordedType(n, (*r)->type(), "if");
        break;
      }
      case NodeKind::kTupleGetItem: {
        auto* t = static_cast<const TupleGetItemNode*>(n);
        auto r = TupleGetItemNode::Make(t->tuple(), t->index());
        if (!r.ok())
          Error(r.status().message());
        else
          CheckRecordedType(n, (*r)->type(), "tuple element access");
        break;
      }
      case NodeKind::kTuple: {
        auto* t = static_cast<const TupleNode*>(n);
        std::vector<Type> fields;
        for (const Expr& e : t->fields()) fields.push_back(e->type());
        CheckRecordedType(n, TupleTypeNode::Make(std::move(fields)), "tuple");
        break;
      }
      default:
        break;
    }
  }

 private:
  struct BlockContext {
    bool dataflow;
    size_t start;  // scope_order_ size when the block began
  };

  // Dataflow variables die with their block; outputs live on.
  void CloseDataflowBlock(size_t start) {
    size_t kept = start;
    for (size_t i = start; i < scope_order_.size(); ++i) {
      const VarNode* v = scope_order_[i];
      if (v->is_dataflow())
        state_.Set(v, kEscaped);
      else
        scope_order_[kept++] = v;
    }
    scope_order_.resize(kept);
  }

  // The common shape, checked by direct loops instead of the generic walk:
  // a function whose bindings' values and result are variables, atoms, or
  // calls whose operands are. The checks are the generic walk's (Define,
  // CheckCall, the annotation and return-type rules), in its order. Returns
  // false for any other shape or any error; then the generic walk runs, so
  // errors keep their paths.
  bool FastItem(const ItemNode* item) {
    if (item->kind() != NodeKind::kFunction) return false;
    auto* f = static_cast<const FunctionNode*>(item);
    for (const Var& p : f->params())
      if (!FastDefine(p.get(), false)) return false;
    const SeqExprNode* body = f->body().get();
    for (const Block& block : body->blocks()) {
      bool dataflow = block->is_dataflow();
      size_t start = scope_order_.size();
      for (const Binding& b : block->bindings()) {
        const ExprNode* value = b->value().get();
        if (!FastValue(value, true) || !FastDefine(b->var().get(), dataflow)) return false;
        if (b->var()->type() != value->type() && !TypeCompatible(b->var()->type(), value->type()))
          return false;
      }
      if (dataflow) CloseDataflowBlock(start);
    }
    if (!FastValue(body->result().get(), true)) return false;
    return TypeCompatible(f->ret_type(), body->type()) && errors_.empty();
  }

  // Checks a use; `call_ok`: a call of atoms is allowed here.
  bool FastValue(const ExprNode* e, bool call_ok) {
    switch (e->kind()) {
      case NodeKind::kVar: {
        const uint8_t* state = state_.Find(static_cast<const VarNode*>(e));
        return state && *state == kInScope;
      }
      case NodeKind::kGlobalVar:
        return module_.Contains(static_cast<const GlobalVarNode*>(e)->name());
      case NodeKind::kStringImm:
        return IsValidUtf8(static_cast<const StringImmNode*>(e)->value());
      case NodeKind::kPrimValue:
      case NodeKind::kConstant:
      case NodeKind::kShapeExpr:
      case NodeKind::kPrimExpr:
        return true;
      case NodeKind::kCall: {
        if (!call_ok) return false;
        auto* c = static_cast<const CallNode*>(e);
        // An op is only ever a callee (elsewhere the generic walk reports it).
        if (c->callee()->kind() != NodeKind::kOp && !FastValue(c->callee().get(), false))
          return false;
        for (const Expr& a : c->args())
          if (!FastValue(a.get(), false)) return false;
        CheckCall(c);
        return errors_.empty();
      }
      default:
        return false;
    }
  }

  bool FastDefine(const VarNode* v, bool in_dataflow_block) {
    if (v->is_dataflow() && !in_dataflow_block) return false;
    if (!IsValidUtf8(v->hint().prefix().str())) return false;
    if (!state_.Insert(v, kInScope).second) return false;
    scope_order_.push_back(v);
    if (collect_defined_) report_.defined.push_back(v);
    return true;
  }

  void PopScope() {
    size_t mark = scope_marks_.back();
    scope_marks_.pop_back();
    while (scope_order_.size() > mark) {
      state_.Set(scope_order_.back(), kOutOfScope);
      scope_order_.pop_back();
    }
  }

  bool InDataflowBlock() const { return !blocks_.empty() && blocks_.back().dataflow; }

  void Error(std::string message) {
    if (errors_.size() < max_errors_) errors_.push_back({CurrentPath(), std::move(message)});
  }

  void Define(const VarNode* v) {
    if (const std::string& prefix = v->hint().prefix().str(); !IsValidUtf8(prefix))
      Error(NotUtf8("the name of variable", prefix));
    if (!state_.Insert(v, kInScope).second) {
      Error("variable " + VarName(v) + " is bound more than once");
      return;
    }
    if (v->is_dataflow()) {
      const Node* parent = Parent();
      bool in_block_binding =
          parent && parent->kind() == NodeKind::kVarBinding && InDataflowBlock();
      if (!in_block_binding)
        Error("dataflow variable " + VarName(v) + " is bound outside a dataflow block");
    }
    scope_order_.push_back(v);
    if (collect_defined_) report_.defined.push_back(v);
  }

  void Use(const VarNode* v) {
    const uint8_t* state = state_.Find(v);
    if (state && *state == kInScope) return;
    if (state && *state == kEscaped) {
      Error("dataflow variable " + VarName(v) +
            " is used outside its dataflow block (list it in the block's output line)");
    } else if (state) {
      Error("variable " + VarName(v) + " is used outside the scope where it is bound");
    } else if (IsBoundIn(current_item_, v)) {
      Error("variable " + VarName(v) + " is used before its definition");
    } else {
      // "not defined", unless an earlier item binds it (VerifyModule).
      Error("variable " + VarName(v) + " is not defined");
      if (errors_.size() <= max_errors_) report_.unresolved.emplace_back(errors_.size() - 1, v);
    }
  }

  static bool IsBoundIn(const Node* root, const VarNode* v) {
    class Finder : public IRVisitor {
     public:
      explicit Finder(const VarNode* v) : v_(v) { visit_types_ = false; }
      bool found = false;

     protected:
      bool Enter(const Node* n, bool is_def) override {
        if (n == v_ && is_def) found = true;
        return !found;
      }
      const VarNode* v_;
    } finder(v);
    finder.Walk(root);
    return finder.found;
  }

  // A node read from a file carries the type it was saved with; it must be
  // the type its operands give it (the parser and builders derive it).
  void CheckRecordedType(const Node* n, const Type& derived, const char* what) {
    const Type& recorded = static_cast<const ExprNode*>(n)->type();
    if (recorded != derived && !TypeCompatible(derived, recorded))
      Error(std::string("the ") + what + "'s recorded type " + TypeToString(recorded) +
            " disagrees with the type of its operands " + TypeToString(derived));
  }

  void CheckCall(const CallNode* c) {
    for (const auto& e : c->attrs().entries()) {
      if (!IsTextName(e.first.str(), /*is_key=*/true))
        Error("attribute key '" + PrintableName(e.first.str()) +
              "' cannot be written in the text format");
      else if (!AttrUtf8(e.second))
        Error("attribute '" + e.first.str() +
              "' holds a string that is not valid UTF-8 (JSON "
              "and the text format hold only UTF-8 strings)");
    }
    if (auto* g = As<GlobalVarNode>(c->callee())) {
      Item item = module_.Lookup(g->name());
      if (!item) return;  // reported as an unknown global
      if (item->kind() == NodeKind::kExternFunc) {
        Error("@" + g->name() + " is an extern kernel; call it through call_tir");
        return;
      }
      if (c->args().size() != item->params().size()) {
        Error("@" + g->name() + " takes " + std::to_string(item->params().size()) +
              " argument(s), got " + std::to_string(c->args().size()));
        return;
      }
      for (size_t i = 0; i < c->args().size(); ++i)
        if (!TypeCompatible(c->args()[i]->type(), item->params()[i]->type()))
          Error("argument " + std::to_string(i) + " of @" + g->name() + " has type " +
                TypeToString(c->args()[i]->type()) + ", the parameter expects " +
                TypeToString(item->params()[i]->type()));
      if (!TypeCompatible(c->type(), item->ret_type()))
        Error("the call's type " + TypeToString(c->type()) + " does not match @" + g->name() +
              "'s return type " + TypeToString(item->ret_type()));
      return;
    }
    if (c->callee()->kind() == NodeKind::kVar) {
      // A call of a function value: its Callable type decides.
      if (!c->attrs().empty() || !c->sinfo_args().empty()) {
        Error("a call of a function value takes no attributes or sinfo_args");
        return;
      }
      auto r = MakeValueCall(c->callee(), ToVector(c->args()));
      if (!r.ok())
        Error(r.status().message());
      else if ((*r)->type() != c->type())
        Error("the call's recorded type " + TypeToString(c->type()) +
              " disagrees with the callee's return type " + TypeToString((*r)->type()));
      return;
    }
    auto* op = As<OpNode>(c->callee());
    if (!op) {
      Error("the callee of a call must be an op, a global function or a variable of Callable type");
      return;
    }
    if (op->name() == "call_tir" && !c->args().empty()) {
      if (auto* k = As<GlobalVarNode>(c->args()[0])) {
        Item item = module_.Lookup(k->name());
        if (item && item->kind() != NodeKind::kExternFunc)
          Error("call_tir needs an extern kernel, but @" + k->name() + " is a function");
      }
    }
    if (keep_recorded_type_ && keep_recorded_type_(*op)) return;
    // Made by MakeOpCall or MakeOpCallFrom (the parser's calls, the
    // rewriting SDK's): this same inference gave it its type, and neither
    // the node nor its operands have changed since. Inferring it again was
    // 40-50% of the verification of a parsed 1M-op module (ir_bench
    // VerifyParsedModule).
    if (c->type_inferred()) return;
    InferMemo::Slot* slot = memo_.Lookup(c);
    if (slot && slot->type) {  // the same op, attributes and operand types as a call checked
      if (slot->type != c->type()) RecordedTypeDisagrees(c, slot->type);
      return;
    }
    auto r = InferOpCallType(Downcast<OpNode>(c->callee()), c->args(), c->attrs(), c->sinfo_args());
    if (!r.ok()) {
      Error(r.status().message());
      return;
    }
    if (slot) slot->type = *r;
    // Exactly the inferred type: the parser gives a call no other (a binary
    // or JSON file may record any), so the printed text would read back as
    // a different module, or not at all.
    if (*r != c->type()) RecordedTypeDisagrees(c, *r);
  }

  void RecordedTypeDisagrees(const CallNode* c, const Type& inferred) {
    Error("the call's recorded type " + TypeToString(c->type()) +
          " disagrees with the inferred type " + TypeToString(inferred));
  }

  // The types inferred for op calls whose operands are all variables, by
  // op, attribute list (its identity) and the variables' types (types are
  // interned: one node per type), without sinfo_args. Such a call's
  // inference reads nothing else, so a call with the same key has the same
  // type. A call made by MakeOpCall was inferred when it was built
  // (type_inferred()); one read from a binary or JSON file was not, and a
  // million of them repeat a handful of keys (re-inferring each was about a
  // third of verifying a binary load of one 1M-op function:
  // bench/RESULTS.md). Only successes are kept: a call that fails is
  // inferred again, for its message. A key's slot is overwritten by the
  // next key hashed there.
  struct InferMemo {
    static constexpr size_t kMaxArgs = 4, kSlots = 256;
    struct Slot {
      const void* op = nullptr;
      const void* attrs = nullptr;
      size_t nargs = 0;
      const void* args[kMaxArgs] = {};
      Type type;  // null: empty
    };
    std::vector<Slot> slots;

    // The slot for `c`'s key, claimed for it (emptied if another key held
    // it); null for a call the memo does not serve.
    Slot* Lookup(const CallNode* c) {
      ExprSpan args = c->args();
      if (args.size() > kMaxArgs || !c->sinfo_args().empty()) return nullptr;
      const void* types[kMaxArgs];
      uint64_t h = internal::HashMix(reinterpret_cast<uintptr_t>(c->callee().get()),
                                     reinterpret_cast<uintptr_t>(c->attrs().identity()));
      for (size_t i = 0; i < args.size(); ++i) {
        if (args[i]->kind() != NodeKind::kVar) return nullptr;
        types[i] = args[i]->type().get();
        h = internal::HashMix(h, reinterpret_cast<uintptr_t>(types[i]));
      }
      if (slots.empty()) slots.resize(kSlots);
      Slot& s = slots[h % kSlots];
      bool same =
          s.op == c->callee().get() && s.attrs == c->attrs().identity() && s.nargs == args.size();
      for (size_t i = 0; same && i < args.size(); ++i) same = s.args[i] == types[i];
      if (!same) {
        s.op = c->callee().get();
        s.attrs = c->attrs().identity();
        s.nargs = args.size();
        for (size_t i = 0; i < args.size(); ++i) s.args[i] = types[i];
        s.type = Type();
      }
      return &s;
    }
  };

  // Forgets the item verified last (its errors, report and tables; the
  // tables keep their memory).
  void Reset() {
    errors_.clear();
    report_ = ItemReport();
    state_.Clear();
    scope_order_.clear();
    scope_marks_.clear();
    blocks_.clear();
  }

  const Module& module_;
  size_t max_errors_;
  const std::function<bool(const OpNode&)>& keep_recorded_type_;
  const Node* current_item_ = nullptr;
  const bool collect_defined_;
  std::vector<VerifyError> errors_;
  ItemReport report_;
  // Every variable of this item bound so far, with where it stands now. One
  // table indexed by the variables' dense index instead of three node-based
  // sets (a quarter of plir-opt's time at 200k bindings went to their
  // inserts, erases and rehashes).
  enum : uint8_t { kInScope = 1, kOutOfScope = 2, kEscaped = 3 };
  VarMap<uint8_t> state_;
  std::vector<const VarNode*> scope_order_;
  std::vector<size_t> scope_marks_;
  std::vector<BlockContext> blocks_;
  InferMemo memo_;  // kept from item to item: the module holds its keys
};

// Returns the path of the definition of `v` in `item` (for the error on a
// variable bound in two items).
std::string DefinitionPath(const ItemNode* item, const VarNode* v) {
  class Finder : public IRVisitor {
   public:
    explicit Finder(const VarNode* v) : v_(v) { visit_types_ = false; }
    std::string path;

   protected:
    bool Enter(const Node* n, bool is_def) override {
      if (!path.empty()) return false;
      if (n == v_ && is_def) path = CurrentPath();
      return path.empty();
    }
    const VarNode* v_;
  } finder(v);
  finder.Walk(item, "@" + item->name());
  return finder.path;
}

// A (variable, item) record in 8 bytes: the item's number in the address's
// unused top 16 bits. User-space addresses have 47 bits on x86-64 and 48 on
// AArch64 (5-level paging gives more only to mappings asked for above
// that); where one does not fit, or the items do not, the records are
// 16-byte pairs. At a million bindings the pairs, their sort buffer and the
// lists they were made from were the largest allocation of a round trip on
// 1,000 functions (40 MB).
struct PackedBinding {
  static constexpr int kShift = 48;
  uint64_t bits = 0;
  PackedBinding() = default;  // RadixSortByAddress's buffer
  PackedBinding(const VarNode* v, uint32_t item)
      : bits(reinterpret_cast<uintptr_t>(v) | (uint64_t{item} << kShift)) {}
  static bool Fit(const std::vector<ItemReport>& reports) {
    if (reports.size() > (size_t{1} << (64 - kShift))) return false;
    uintptr_t any = 0;
    for (const ItemReport& r : reports)
      for (const VarNode* v : r.defined) any |= reinterpret_cast<uintptr_t>(v);
    return (uint64_t{any} >> kShift) == 0;
  }
};
const VarNode* VarOf(const PackedBinding& r) {
  return reinterpret_cast<const VarNode*>(r.bits & ((uint64_t{1} << PackedBinding::kShift) - 1));
}
uint32_t ItemOf(const PackedBinding& r) {
  return static_cast<uint32_t>(r.bits >> PackedBinding::kShift);
}
const VarNode* VarOf(const std::pair<const VarNode*, uint32_t>& r) { return r.first; }
uint32_t ItemOf(const std::pair<const VarNode*, uint32_t>& r) { return r.second; }

// Appends "bound more than once" for each variable bound in two items, in
// address order, naming the item before. Frees each report's `defined` list
// once it is copied.
//
// On a large module the records are split by a hash of the address into
// one part per thread: each part is sorted and searched on its own thread,
// and the parts' findings (rare: each is an error) are merged in address
// order, so the errors are those one sort of all the records gives. The
// split reads every list once per part, then the lists are freed before the
// sorts, which keeps the peak at one copy of the records and a sort buffer.
template <typename Record>
void FindBoundInTwoItems(const ItemList& items, std::vector<ItemReport>& reports, size_t max_errors,
                         std::vector<VerifyError>* errors) {
  size_t total = 0;
  for (const ItemReport& r : reports) total += r.defined.size();
  const size_t parts = total < (size_t{1} << 16) ? 1 : ParallelThreads(total, 0);
  auto part_of = [parts](const VarNode* v) {
    return ((reinterpret_cast<uintptr_t>(v) >> 3) * uint64_t{0x9E3779B97F4A7C15} >> 40) % parts;
  };
  std::vector<std::vector<Record>> records(parts);
  ParallelFor(parts, 0, [&](size_t p, size_t) {
    std::vector<Record>& mine = records[p];
    mine.reserve(total / parts + total / (8 * parts) + 16);
    for (size_t i = 0; i < reports.size(); ++i)
      for (const VarNode* v : reports[i].defined)
        if (parts == 1 || part_of(v) == p) mine.emplace_back(v, static_cast<uint32_t>(i));
  });
  for (ItemReport& r : reports) std::vector<const VarNode*>().swap(r.defined);
  struct Found {
    const VarNode* var;
    uint32_t item, before;
  };
  std::vector<std::vector<Found>> found(parts);
  ParallelFor(parts, 0, [&](size_t p, size_t) {
    std::vector<Record>& all = records[p];
    // Stable: equal variables stay in item order.
    internal::RadixSortByAddress(all, [](const Record& e) { return VarOf(e); });
    for (size_t k = 1; k < all.size() && found[p].size() < max_errors; ++k) {
      const VarNode* v = VarOf(all[k]);
      if (v != VarOf(all[k - 1]) || ItemOf(all[k]) == ItemOf(all[k - 1])) continue;
      found[p].push_back({v, ItemOf(all[k]), ItemOf(all[k - 1])});
    }
    std::vector<Record>().swap(all);
  });
  std::vector<Found> merged;
  for (const std::vector<Found>& f : found) merged.insert(merged.end(), f.begin(), f.end());
  std::stable_sort(merged.begin(), merged.end(),
                   [](const Found& a, const Found& b) { return a.var < b.var; });
  for (const Found& f : merged) {
    if (errors->size() >= max_errors) break;
    errors->push_back({DefinitionPath(items[f.item].get(), f.var),
                       "variable " + VarName(f.var) + " is bound more than once (also in @" +
                           items[f.before]->name() + ")"});
  }
}

}  // namespace

std::vector<VerifyError> VerifyModule(const Module& m, size_t max_errors) {
  VerifyOptions options;
  options.max_errors = max_errors;
  return VerifyModule(m, options);
}

namespace {

// VerifyModule, with the checks across items (`cross_item`) or without
// (VerifyParsedModule).
std::vector<VerifyError> VerifyItems(const Module& m, const VerifyOptions& options,
                                     bool cross_item) {
  const size_t max_errors = options.max_errors;
  const ItemList& items = m.items();
  // Names the text format cannot spell (from JSON or binary input) would be
  // printed as text the parser cannot read back: refuse them here.
  std::vector<VerifyError> name_errors;
  for (const Item& it : items) {
    if (!IsTextName(it->name()) && name_errors.size() < max_errors)
      name_errors.push_back(
          {"@" + PrintableName(it->name()),
           "the name cannot be written in the text format (letters, digits and '_')"});
    for (const auto& e : it->attrs().entries()) {
      if (name_errors.size() >= max_errors) break;
      if (!IsTextName(e.first.str(), /*is_key=*/true))
        name_errors.push_back({"@" + PrintableName(it->name()) + ", attrs",
                               "attribute key '" + PrintableName(e.first.str()) +
                                   "' cannot be written in the text format"});
      else if (!AttrUtf8(e.second))
        name_errors.push_back({"@" + PrintableName(it->name()) + ", attrs",
                               "attribute '" + e.first.str() +
                                   "' holds a string that is not valid UTF-8 (JSON and the text "
                                   "format hold only UTF-8 strings)"});
    }
  }
  if (!name_errors.empty()) return name_errors;
  // Two independent tasks per item, so that one large function keeps two
  // threads busy: the verifier's walk, and the walk for symbolic
  // dimensions, whose errors come after the verifier's.
  std::vector<ItemReport> reports(items.size());
  std::vector<std::vector<VerifyError>> dim_errors(items.size());
  // A verifier a thread: its tables, sized for one function, serve the
  // next (a verifier an item allocated and first wrote them again: at 1M
  // ops in 1,000 functions, 1.6K of the binary round trip's 6.5K page
  // faults, `perf record -e page-faults`).
  std::vector<std::optional<Verifier>> verifiers(ParallelThreads(2 * items.size(), 0));
  ParallelFor(2 * items.size(), 0, [&](size_t t, size_t worker) {
    const size_t i = t / 2;
    if (t % 2 == 0) {
      // One item cannot bind a variable another binds: no list for that.
      std::optional<Verifier>& v = verifiers[worker];
      if (!v) v.emplace(m, options, cross_item && items.size() > 1);
      reports[i] = v->Run(items[i].get());
    } else if (auto* f = As<FunctionNode>(items[i]))
      internal::CheckSymbolicDims(f, &dim_errors[i], max_errors);
  });
  for (size_t i = 0; i < items.size(); ++i)
    for (VerifyError& e : dim_errors[i])
      if (reports[i].errors.size() < max_errors) reports[i].errors.push_back(std::move(e));

  // A use that no scope of its item explains is "used outside the scope
  // where it is bound" if an earlier item binds the variable. (A parsed
  // module's uses are all explained: the parser resolved them.)
  bool any_unresolved = false;
  for (const ItemReport& r : reports) any_unresolved |= !r.unresolved.empty();
  if (any_unresolved) {
    internal::PointerMap<uint32_t> defined_in;
    for (size_t i = 0; i < reports.size(); ++i) {
      for (const auto& [at, v] : reports[i].unresolved) {
        const uint32_t* where = defined_in.Find(v);
        if (where && *where < i)
          reports[i].errors[at].message =
              "variable " + VarName(v) + " is used outside the scope where it is bound";
      }
      for (const VarNode* v : reports[i].defined) defined_in.Insert(v, static_cast<uint32_t>(i));
    }
  }

  std::vector<VerifyError> errors;
  for (ItemReport& r : reports)
    for (VerifyError& e : r.errors)
      if (errors.size() < max_errors) errors.push_back(std::move(e));

  // No variable may be bound in two items. Each item checked its own; here,
  // sort (variable, item) records and look for a variable in two items.
  if (cross_item && items.size() > 1 && errors.size() < max_errors) {
    if (PackedBinding::Fit(reports))
      FindBoundInTwoItems<PackedBinding>(items, reports, max_errors, &errors);
    else
      FindBoundInTwoItems<std::pair<const VarNode*, uint32_t>>(items, reports, max_errors, &errors);
  }
  return errors;
}

Status ErrorsToStatus(const std::vector<VerifyError>& errors) {
  if (errors.empty()) return Status::Ok();
  std::string msg = "the module is not well-formed:";
  for (const VerifyError& e : errors) msg += "\n  " + e.ToString();
  return FailedPrecondition(msg);
}

}  // namespace

std::vector<VerifyError> VerifyModule(const Module& m, const VerifyOptions& options) {
  return VerifyItems(m, options, /*cross_item=*/true);
}

std::vector<VerifyError> VerifyParsedModule(const Module& m, const VerifyOptions& options) {
  return VerifyItems(m, options, /*cross_item=*/false);
}

Status Verify(const Module& m) { return Verify(m, VerifyOptions()); }

Status Verify(const Module& m, const VerifyOptions& options) {
  return ErrorsToStatus(VerifyModule(m, options));
}

Status VerifyParsed(const Module& m) {
  return ErrorsToStatus(VerifyParsedModule(m, VerifyOptions()));
}

}  // namespace plir
