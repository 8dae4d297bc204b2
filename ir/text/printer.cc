#include "ir/text/printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/internal/name_table.h"
#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/text_rules.h"
#include "ir/var_map.h"

namespace plir {
namespace {

// Appends one constant element, read from `p`, in the text spelling of `dt`.
// Returns false if the value has no decimal spelling (inf/nan).
bool AppendElement(DataType dt, const char* p, std::string* out) {
  char buf[64];
  auto put_float = [&](float f) {
    if (!std::isfinite(f)) return false;
    auto r = std::to_chars(buf, buf + sizeof buf, f);
    out->append(buf, r.ptr);
    return true;
  };
  switch (dt) {
    case DataType::kBool:
      out->append(*p ? "true" : "false");
      return true;
    case DataType::kInt8: {
      int8_t v;
      std::memcpy(&v, p, 1);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kUInt8: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kUInt16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kUInt32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kUInt64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      out->append(std::to_string(v));
      return true;
    }
    case DataType::kFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return put_float(HalfToFloat(v));
    }
    case DataType::kBFloat16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return put_float(BFloat16ToFloat(v));
    }
    case DataType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return put_float(v);
    }
    case DataType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      if (!std::isfinite(v)) return false;
      auto r = std::to_chars(buf, buf + sizeof buf, v);
      out->append(buf, r.ptr);
      return true;
    }
    default:
      return false;
  }
}

class TextPrinter {
 public:
  explicit TextPrinter(const PrintOptions& o) : opts_(o) {}

  std::string TakeOutput() { return std::move(out_); }
  // Hands the text printed so far to `flush` at a line end once it holds
  // about kFlushBytes (the text after it is unchanged: nothing looks back).
  static constexpr size_t kFlushBytes = 1 << 20;
  void SetFlush(std::function<void(std::string&)> flush) {
    flush_ = std::move(flush);
    out_.reserve(kFlushBytes + (kFlushBytes >> 2));
  }
  void AppendRaw(std::string_view s) { out_.append(s); }
  // Threads for the bindings of one large block (0: DefaultThreads()), for
  // a printer that prints items one at a time (so one large function is
  // not printed by one thread); 1 (the default) prints serially.
  void set_block_threads(int threads) { block_threads_ = threads; }

  void PrintItem(const ItemNode* item) {
    names_.Clear();
    if (auto* f = As<FunctionNode>(item)) names_.Expect(VarIndexBound(*f));
    used_.Clear();
    next_suffix_.Clear();
    bool is_def = item->kind() == NodeKind::kFunction;
    out_.append(is_def ? "def @" : "extern @").append(item->name()).push_back('(');
    for (size_t i = 0; i < item->params().size(); ++i) {
      if (i) out_.append(", ");
      const VarNode* p = item->params()[i].get();
      out_.push_back('%');
      AppendName(p);
      out_.append(": ");
      AppendType(p->type(), &out_);
    }
    out_.append(") -> ");
    AppendType(item->ret_type(), &out_);
    if (!item->attrs().empty()) {
      out_.append(" attrs {");
      bool first = true;
      for (const auto& [k, v] : item->attrs().entries()) {
        if (!first) out_.append(", ");
        first = false;
        out_.append(k.str()).append(" = ");
        v.AppendTo(&out_);
      }
      out_.push_back('}');
    }
    if (!is_def) return;
    out_.append(" {");
    auto* f = static_cast<const FunctionNode*>(item);
    stack_.push_back(Work::Text("}"));
    stack_.push_back(Work::Simple(Work::kNewline));
    stack_.push_back(Work::Simple(Work::kDedent));
    stack_.push_back(Work::Seq(f->body().get(), 0, -1));
    stack_.push_back(Work::Simple(Work::kIndent));
    Run();
  }

  void PrintExpr(const ExprNode* e) {
    stack_.push_back(Work::Expr(e));
    Run();
  }

 private:
  struct Work {
    enum Kind : uint8_t { kExpr, kText, kOwnedText, kNewline, kIndent, kDedent, kSeq };
    Kind kind;
    const Node* node = nullptr;
    const char* text = nullptr;
    std::string owned;
    int64_t block = 0;
    int64_t binding = 0;

    static Work Simple(Kind k) {
      Work w;
      w.kind = k;
      return w;
    }
    static Work Expr(const Node* n) {
      Work w;
      w.kind = kExpr;
      w.node = n;
      return w;
    }
    static Work Text(const char* t) {
      Work w;
      w.kind = kText;
      w.text = t;
      return w;
    }
    static Work Owned(std::string s) {
      Work w;
      w.kind = kOwnedText;
      w.owned = std::move(s);
      return w;
    }
    static Work Seq(const Node* n, int64_t b, int64_t i) {
      Work w;
      w.kind = kSeq;
      w.node = n;
      w.block = b;
      w.binding = i;
      return w;
    }
  };

  // Indentation stops growing at kMaxIndent levels, so that deeply nested
  // IR prints in linear space.
  static constexpr int kMaxIndent = 32;

  // Hands the text printed so far to flush_ once it holds kFlushBytes.
  void MaybeFlush() {
    if (flush_ && out_.size() >= kFlushBytes) {
      flush_(out_);
      out_.clear();  // the capacity stays
    }
  }

  void Newline() {
    MaybeFlush();
    out_.push_back('\n');
    out_.append(static_cast<size_t>(std::min(indent_, kMaxIndent)) * 2, ' ');
  }

  // Returns the printed name of `v`: its hint with non-name characters
  // replaced, made unique within the item by a `_N` suffix. Names are kept
  // as NameHints (prefix + number), so the common case (a clean, unique
  // generated name) builds no string and indexes arrays (name_table.h).
  NameHint NameOf(const VarNode* v) {
    if (shared_names_) return *shared_names_->Find(v);  // all named first
    if (const NameHint* known = names_.Find(v)) return *known;
    NameHint base = CleanName(v->hint());
    NameHint name = base;
    if (!used_.Insert(name, 0).second) {
      int64_t* k = next_suffix_.Insert(base, 0).first;
      std::string prefix = base.str() + "_";
      do {
        name = NameHint(prefix + std::to_string(++*k));
      } while (used_.Find(name));
      used_.Insert(name, 0);
    }
    names_.Insert(v, name);
    return name;
  }

  // `hint` with every character outside [A-Za-z0-9_] replaced by '_', or
  // "v" if it is empty.
  static NameHint CleanName(const NameHint& hint) {
    if (hint.empty()) return NameHint("v");
    const std::string& prefix = hint.prefix().str();
    if (std::all_of(prefix.begin(), prefix.end(), IsIdentChar)) return hint;
    std::string s = hint.str();
    for (char& c : s)
      if (!IsIdentChar(c)) c = '_';
    return NameHint(s);
  }

  void AppendName(const VarNode* v) { NameOf(v).AppendTo(&out_); }
  void PrintVar(const VarNode* v) {
    out_.push_back('%');
    AppendName(v);
  }

  void Run() {
    while (!stack_.empty()) {
      Work w = std::move(stack_.back());
      stack_.pop_back();
      switch (w.kind) {
        case Work::kText:
          out_.append(w.text);
          break;
        case Work::kOwnedText:
          out_.append(w.owned);
          break;
        case Work::kNewline:
          Newline();
          break;
        case Work::kIndent:
          ++indent_;
          break;
        case Work::kDedent:
          --indent_;
          break;
        case Work::kSeq:
          StepSeq(static_cast<const SeqExprNode*>(w.node), w.block, w.binding);
          break;
        case Work::kExpr:
          PrintNode(w.node);
          break;
      }
    }
  }

  // Prints the body `s` one step at a time: (block, -1) opens block `block`,
  // (block, i) prints binding i, (block, n) closes the block.
  void StepSeq(const SeqExprNode* s, int64_t bi, int64_t ji) {
    if (bi == static_cast<int64_t>(s->blocks().size())) {
      Newline();
      stack_.push_back(Work::Expr(s->result().get()));
      return;
    }
    const BindingBlockNode* b = s->blocks()[bi].get();
    int64_t n = static_cast<int64_t>(b->bindings().size());
    if (ji < 0) {
      if (b->is_dataflow()) {
        Newline();
        out_.append("dataflow {");
        ++indent_;
      }
      stack_.push_back(Work::Seq(s, bi, 0));
      return;
    }
    if (ji < n) {
      if (ji == 0 && PrintBindingsInParallel(b)) {
        stack_.push_back(Work::Seq(s, bi, n));
        return;
      }
      stack_.push_back(Work::Seq(s, bi, ji + 1));
      PushBinding(b->bindings()[ji].get());
      return;
    }
    if (b->is_dataflow()) {
      bool first = true;
      for (const Binding& x : b->bindings()) {
        if (x->var()->is_dataflow()) continue;
        if (first) {
          Newline();
          out_.append("output ");
        } else {
          out_.append(", ");
        }
        first = false;
        out_.push_back('%');
        AppendName(x->var().get());
      }
      if (!first) out_.push_back(';');
      --indent_;
      Newline();
      out_.push_back('}');
    }
    stack_.push_back(Work::Seq(s, bi + 1, -1));
  }

  // A binding's type annotation. Types are interned and a body's bindings
  // share a few of them, so the text of the last one is kept (AppendType
  // walked each type on a stack of its own: 69K allocations printing 69K
  // bindings).
  void AppendBindingType(const Type& t) {
    if (t.get() != last_type_.get()) {
      last_type_text_.clear();
      AppendType(t, &last_type_text_);
      last_type_ = t;
    }
    out_.append(last_type_text_);
  }

  // Starts binding `bind`: its line up to " = ", then its value and ";",
  // at once when nothing in the value needs the stack, else as work on it.
  void PushBinding(const VarBindingNode* bind) {
    Newline();
    out_.push_back('%');
    AppendName(bind->var().get());
    out_.append(": ");
    AppendBindingType(bind->var()->type());
    out_.append(" = ");
    const Node* value = bind->value().get();
    if (value->kind() == NodeKind::kCall) {
      auto* c = static_cast<const CallNode*>(value);
      if (CallPrintsDirectly(c)) {  // most values
        PrintCallNow(c);
        out_.push_back(';');
        return;
      }
    } else if (IsAtomic(bind->value())) {
      PrintNode(value);
      out_.push_back(';');
      return;
    }
    stack_.push_back(Work::Text(";"));
    stack_.push_back(Work::Expr(value));
  }

  // One large block's bindings printed by several threads, with the same
  // bytes as a serial print. Names depend on the order in which variables
  // are first printed, so this thread names them first, in that order: a
  // binding's value must name no variable of its own (only variables
  // already named, and no nested scope: if, fn, a body), which holds for a
  // well-formed block of calls, tuples and leaves. Then runs of bindings
  // print on the pool, each into its own buffer with the names read from
  // this printer, and are appended in order, a window of runs at a time
  // (at most a few megabytes held beyond the output). Returns false, having
  // printed nothing, when the block is small, the printer is serial, or a
  // value does not qualify; the variables named by then are named as a
  // serial print would have named them.
  static constexpr size_t kParallelMinBindings = 1 << 14;
  static constexpr size_t kBindingsPerRun = 1 << 13;
  bool PrintBindingsInParallel(const BindingBlockNode* b) {
    const auto& binds = b->bindings();
    if (block_threads_ == 1 || binds.size() < kParallelMinBindings) return false;
    const int threads = block_threads_ > 0 ? block_threads_ : DefaultThreads();
    if (threads < 2) return false;
    std::vector<const Expr*> todo;
    for (const Binding& bind : binds) {
      todo.assign(1, &bind->value());
      while (!todo.empty()) {
        const Expr& e = *todo.back();
        todo.pop_back();
        const Node* n = e.get();
        if (n->kind() == NodeKind::kVar) {
          if (!names_.Find(static_cast<const VarNode*>(n))) return false;
          continue;
        }
        if (IsAtomic(e)) continue;  // the other leaves
        switch (n->kind()) {
          case NodeKind::kTuple:
            for (const Expr& f : static_cast<const TupleNode*>(n)->fields()) todo.push_back(&f);
            break;
          case NodeKind::kTupleGetItem:
            todo.push_back(&static_cast<const TupleGetItemNode*>(n)->tuple());
            break;
          case NodeKind::kCall: {
            auto* c = static_cast<const CallNode*>(n);
            todo.push_back(&c->callee());
            for (const Expr& a : c->args()) todo.push_back(&a);
            break;
          }
          default:
            return false;  // a nested scope, or a node a binding never holds
        }
      }
      NameOf(bind->var().get());
    }
    const size_t runs = (binds.size() + kBindingsPerRun - 1) / kBindingsPerRun;
    const size_t window = static_cast<size_t>(threads) * 2;
    // The runs' buffers keep their capacity from window to window: a fresh
    // buffer per run grew by doubling through new mappings (each larger
    // block of 128 KiB or more is one in plir-opt), and faulting their pages
    // in was a third of the page faults of printing one function.
    std::vector<std::string> texts(std::min(window, runs));
    for (size_t first = 0; first < runs; first += window) {
      const size_t k = std::min(window, runs - first);
      ParallelFor(k, threads, [&](size_t r, size_t) {
        TextPrinter run(opts_);
        run.out_.swap(texts[r]);
        run.shared_names_ = &names_;
        run.indent_ = indent_;
        const size_t lo = (first + r) * kBindingsPerRun;
        const size_t hi = std::min(binds.size(), lo + kBindingsPerRun);
        for (size_t j = lo; j < hi; ++j) {
          run.PushBinding(binds[j].get());
          run.Run();
        }
        texts[r].swap(run.out_);
      });
      for (size_t r = 0; r < k; ++r) {
        // Streamed as it is, when the printer streams (no copy into out_).
        if (flush_) {
          if (!out_.empty()) flush_(out_);
          out_.clear();
          flush_(texts[r]);
        } else {
          out_.append(texts[r]);
        }
        texts[r].clear();
      }
    }
    return true;
  }

  void PrintConstant(const ConstantNode* c) {
    out_.append("const<");
    AppendType(c->type(), &out_);
    out_.push_back('>');
    const TensorTypeNode& t = c->tensor_type();
    DataType dt = t.dtype();
    int64_t n = t.NumElements();
    int size = DataTypeSize(dt);
    const TensorBytes& data = c->data();
    if (static_cast<size_t>(n) <= opts_.max_inline_elements) {
      std::string elems = "[";
      bool ok = true;
      for (int64_t i = 0; i < n && ok; ++i) {
        if (i) elems.append(", ");
        ok = AppendElement(dt, data.data() + i * size, &elems);
      }
      if (ok) {
        out_.append(elems).push_back(']');
        return;
      }
    }
    static const char* kHex = "0123456789abcdef";
    out_.append("x\"");
    size_t at = out_.size();
    out_.resize(at + 2 * data.size());  // written in place, two digits a byte
    char* w = out_.data() + at;
    for (unsigned char byte : data) {
      *w++ = kHex[byte >> 4];
      *w++ = kHex[byte & 15];
    }
    out_.push_back('"');
  }

  // What follows a call's arguments: its attributes, its sinfo_args, ')'.
  static void AppendCallTail(const CallNode* c, std::string* out) {
    if (c->attrs().empty() && c->sinfo_args().empty()) {  // most calls
      out->push_back(')');
      return;
    }
    bool first = c->args().empty();  // no ", " before the first item
    auto separate = [&] {
      if (!first) out->append(", ");
      first = false;
    };
    for (const auto& [k, v] : c->attrs().entries()) {
      separate();
      out->append(k.str()).push_back('=');
      v.AppendTo(out);
    }
    if (!c->sinfo_args().empty()) {
      separate();
      out->append("sinfo_args=[");
      for (size_t i = 0; i < c->sinfo_args().size(); ++i) {
        if (i) out->append(", ");
        AppendType(c->sinfo_args()[i], out);
      }
      out->push_back(']');
    }
    out->push_back(')');
  }

  // Whether PrintNode writes the call at once, pushing no work: its callee
  // and its arguments are atoms (IsAtomic), which it writes at once.
  static bool CallPrintsDirectly(const CallNode* c) {
    if (!IsAtomic(c->callee())) return false;
    for (const Expr& a : c->args())
      if (!IsAtomic(a)) return false;
    return true;
  }

  // A call that CallPrintsDirectly accepts, written now: nothing in it waits
  // on the stack (most values: an op on variables), so it needs none of
  // the work items, about seven a binding, each with a string.
  void PrintCallNow(const CallNode* c) {
    PrintNode(c->callee().get());
    out_.push_back('(');
    for (size_t i = 0; i < c->args().size(); ++i) {
      if (i) out_.append(", ");
      const Node* a = c->args()[i].get();
      if (a->kind() == NodeKind::kVar)  // the usual argument, without the switch
        PrintVar(static_cast<const VarNode*>(a));
      else
        PrintNode(a);
    }
    AppendCallTail(c, &out_);
  }

  void PrintNode(const Node* n) {
    switch (n->kind()) {
      case NodeKind::kVar:
        PrintVar(static_cast<const VarNode*>(n));
        return;
      case NodeKind::kGlobalVar:
        out_.push_back('@');
        out_.append(static_cast<const GlobalVarNode*>(n)->name());
        return;
      case NodeKind::kOp:
        out_.append(static_cast<const OpNode*>(n)->name());
        return;
      case NodeKind::kPrimValue: {
        auto* p = static_cast<const PrimValueNode*>(n);
        if (p->dtype() == DataType::kFloat64)
          AppendFloat(p->float_value(), &out_);
        else if (p->dtype() == DataType::kBool)
          out_.append(p->int_value() ? "true" : "false");
        else
          out_.append(std::to_string(p->int_value()));
        return;
      }
      case NodeKind::kStringImm:
        AppendQuoted(static_cast<const StringImmNode*>(n)->value(), &out_);
        return;
      case NodeKind::kPrimExpr:
        out_.append("prim[")
            .append(DimToString(static_cast<const PrimExprNode*>(n)->value()))
            .append("]");
        return;
      case NodeKind::kShapeExpr: {
        // `shape[(2, n)]`: the spelling of its type `Shape[(2, n)]`, lower-case.
        std::string t = TypeToString(static_cast<const ShapeExprNode*>(n)->type());
        t[0] = 's';
        out_.append(t);
        return;
      }
      case NodeKind::kConstant:
        PrintConstant(static_cast<const ConstantNode*>(n));
        return;
      case NodeKind::kTuple: {
        const auto& f = static_cast<const TupleNode*>(n)->fields();
        out_.push_back('(');
        stack_.push_back(Work::Text(f.size() == 1 ? ",)" : ")"));
        for (size_t i = f.size(); i-- > 0;) {
          stack_.push_back(Work::Expr(f[i].get()));
          if (i) stack_.push_back(Work::Text(", "));
        }
        return;
      }
      case NodeKind::kTupleGetItem: {
        auto* t = static_cast<const TupleGetItemNode*>(n);
        stack_.push_back(Work::Owned("." + std::to_string(t->index())));
        stack_.push_back(Work::Expr(t->tuple().get()));
        return;
      }
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(n);
        if (CallPrintsDirectly(c)) {
          PrintCallNow(c);
          return;
        }
        std::string tail;
        AppendCallTail(c, &tail);
        stack_.push_back(Work::Owned(std::move(tail)));
        for (size_t i = c->args().size(); i-- > 0;) {
          stack_.push_back(Work::Expr(c->args()[i].get()));
          if (i) stack_.push_back(Work::Text(", "));
        }
        stack_.push_back(Work::Text("("));
        const Node* callee = c->callee().get();
        if (IsAtomic(c->callee())) {
          PrintNode(callee);
        } else {
          stack_.push_back(Work::Expr(callee));
        }
        return;
      }
      case NodeKind::kIf: {
        auto* f = static_cast<const IfNode*>(n);
        out_.append("if (");
        stack_.push_back(Work::Text("}"));
        stack_.push_back(Work::Simple(Work::kNewline));
        stack_.push_back(Work::Simple(Work::kDedent));
        stack_.push_back(Work::Seq(f->else_body().get(), 0, -1));
        stack_.push_back(Work::Simple(Work::kIndent));
        stack_.push_back(Work::Text("} else {"));
        stack_.push_back(Work::Simple(Work::kNewline));
        stack_.push_back(Work::Simple(Work::kDedent));
        stack_.push_back(Work::Seq(f->then_body().get(), 0, -1));
        stack_.push_back(Work::Simple(Work::kIndent));
        stack_.push_back(Work::Text(") {"));
        stack_.push_back(Work::Expr(f->cond().get()));
        return;
      }
      case NodeKind::kLocalFn: {
        auto* f = static_cast<const LocalFnNode*>(n);
        out_.append("fn(");
        for (size_t i = 0; i < f->params().size(); ++i) {
          if (i) out_.append(", ");
          const VarNode* p = f->params()[i].get();
          out_.push_back('%');
          AppendName(p);
          out_.append(": ");
          AppendType(p->type(), &out_);
        }
        out_.append(") -> ");
        AppendType(f->ret_type(), &out_);
        out_.append(" {");
        stack_.push_back(Work::Text("}"));
        stack_.push_back(Work::Simple(Work::kNewline));
        stack_.push_back(Work::Simple(Work::kDedent));
        stack_.push_back(Work::Seq(f->body().get(), 0, -1));
        stack_.push_back(Work::Simple(Work::kIndent));
        return;
      }
      case NodeKind::kSeqExpr:
        // Not expressible as an operand in the text format (the verifier
        // rejects it); printed as a braced body for debugging.
        out_.push_back('{');
        stack_.push_back(Work::Text("}"));
        stack_.push_back(Work::Simple(Work::kNewline));
        stack_.push_back(Work::Simple(Work::kDedent));
        stack_.push_back(Work::Seq(n, 0, -1));
        stack_.push_back(Work::Simple(Work::kIndent));
        return;
      default:
        if (IsTypeKind(n->kind())) {
          AppendType(Type(static_cast<const TypeNode*>(n)), &out_);
        } else {
          out_.append("<").append(NodeKindName(n->kind())).append(">");
        }
    }
  }

  const PrintOptions& opts_;
  std::string out_;
  Type last_type_;              // AppendBindingType's last type (held: its address stays its own)
  std::string last_type_text_;  // and its text
  std::function<void(std::string&)> flush_;
  int indent_ = 0;
  std::vector<Work> stack_;
  // Per item: printed names by variable, the names taken, the next suffix
  // to try per base name, and the bytes behind those views.
  VarMap<NameHint> names_;
  internal::NameTable<char> used_;
  internal::NameTable<int64_t> next_suffix_;
  // Printing a run of a large block's bindings: the names, read-only, of
  // the printer of that block (PrintBindingsInParallel).
  const VarMap<NameHint>* shared_names_ = nullptr;
  int block_threads_ = 1;
};

}  // namespace

std::vector<std::string> PrintModuleParts(const Module& m, const PrintOptions& options) {
  // Items print independently (names are unique per item), so they print in
  // parallel into separate buffers, in module order: the output is
  // byte-identical to a serial run.
  const ItemList& items = m.items();
  std::vector<std::string> parts(items.size() + 1);
  if (options.version_header) parts[0] = "#[version = \"1\"]\n";
  int threads = items.size() < 2 ? 1 : options.threads;
  ParallelFor(items.size(), threads, [&](size_t i, size_t) {
    TextPrinter p(options);
    if (threads == 1) p.set_block_threads(options.threads);
    if (i) p.AppendRaw("\n");  // a blank line between items
    p.PrintItem(items[i].get());
    p.AppendRaw("\n");
    parts[i + 1] = p.TakeOutput();
  });
  return parts;
}

Status PrintModuleTo(const Module& m, const std::function<Status(std::string_view)>& sink,
                     const PrintOptions& options) {
  Status status = Status::Ok();
  auto put = [&](std::string_view piece) {
    if (status.ok() && !piece.empty()) status = sink(piece);
  };
  if (options.version_header) put("#[version = \"1\"]\n");
  const ItemList& items = m.items();
  const int threads = options.threads > 0 ? options.threads : DefaultThreads();
  if (items.size() < 2 || threads < 2) {
    // One item at a time on this thread, each streamed as it prints.
    for (size_t i = 0; i < items.size() && status.ok(); ++i) {
      TextPrinter p(options);
      p.set_block_threads(threads);
      p.SetFlush([&](std::string& text) { put(text); });
      if (i) p.AppendRaw("\n");
      p.PrintItem(items[i].get());
      p.AppendRaw("\n");
      put(p.TakeOutput());
    }
    return status;
  }
  // Windows of items printed in parallel (as PrintModuleParts does), handed
  // over in order before the next window: at most one window's text held.
  const size_t window = static_cast<size_t>(threads) * 16;
  std::vector<std::string> parts;
  for (size_t first = 0; first < items.size() && status.ok(); first += window) {
    const size_t n = std::min(window, items.size() - first);
    parts.assign(n, std::string());
    ParallelFor(n, threads, [&](size_t k, size_t) {
      TextPrinter p(options);
      if (first + k) p.AppendRaw("\n");
      p.PrintItem(items[first + k].get());
      p.AppendRaw("\n");
      parts[k] = p.TakeOutput();
    });
    for (std::string& part : parts) put(part);
  }
  return status;
}

std::string PrintModule(const Module& m, const PrintOptions& options) {
  std::vector<std::string> parts = PrintModuleParts(m, options);
  size_t total = 0;
  for (const std::string& p : parts) total += p.size();
  std::string out;
  out.reserve(total);
  for (std::string& p : parts) {
    out.append(p);
    std::string().swap(p);
  }
  return out;
}

std::string PrintItem(const Item& item, const PrintOptions& options) {
  TextPrinter p(options);
  p.set_block_threads(options.threads);
  p.PrintItem(item.get());
  return p.TakeOutput();
}

std::string PrintExpr(const Expr& e, const PrintOptions& options) {
  TextPrinter p(options);
  p.PrintExpr(e.get());
  return p.TakeOutput();
}

}  // namespace plir
