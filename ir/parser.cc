// Recursive-descent parser with a nesting limit. Two passes: the first reads
// every item's signature and skips bodies (items may refer to globals defined
// later), the second parses the bodies. A call of a function whose return
// type is not written and not yet known parses that function first.
//
// Errors are thrown as an internal exception type inside this file only and
// turned into a Status at the API boundary; nothing escapes.
#include "ir/parser.h"

#include "ir/checked_math.h"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "ir/internal/lexer.h"
#include "ir/internal/name_table.h"
#include "ir/op.h"
#include "ir/parallel.h"

namespace plir {

using internal::Lexer;
using internal::Tok;
using internal::Token;

namespace {

struct ParseFailure {
  std::string message;
  int line;
  int col;
};

struct Loc {
  int line = 0;
  int col = 0;
};

// Parser position: a lexer snapshot plus the current and peeked tokens.
struct Cursor {
  Lexer lex;
  Token cur;
  std::optional<Token> peek;
};

struct ItemInfo {
  std::string name;
  bool is_def = false;
  Loc loc;
  std::vector<Var> params;
  std::vector<Loc> param_locs;
  Type declared_ret;  // null if not written
  Type ret;           // known return type (declared or inferred)
  Attrs attrs;
  std::optional<Cursor> body;  // positioned at the body's '{'
  size_t body_bytes = 0;
  enum State { kPending, kParsing, kDone } state = kPending;
  Item result;
};

// What a local name means at the current point of a function body: the
// variable it names now, or why it is no longer visible.
struct LocalName {
  enum State : uint8_t { kVisible, kDeadDataflow, kOutOfScope };
  Var var;
  Loc loc;  // where the variable was defined
  State state = kVisible;
};

// Formats "file:line:col: message", then the source line and a caret.
Status FormatError(std::string_view src, const std::string& filename, const ParseFailure& f) {
  std::string msg = filename + ":" + std::to_string(f.line) + ":" + std::to_string(f.col) +
                    ": " + f.message;
  size_t pos = 0;
  for (int l = 1; l < f.line && pos != std::string_view::npos; ++l) {
    pos = src.find('\n', pos);
    if (pos != std::string_view::npos) ++pos;
  }
  if (pos != std::string_view::npos && pos <= src.size()) {
    size_t end = src.find('\n', pos);
    std::string_view line = src.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (!line.empty() && line.size() <= 200) {
      std::string caret;
      int col = 1;
      for (char ch : line) {
        if (col >= f.col) break;
        if ((static_cast<unsigned char>(ch) & 0xc0) != 0x80) {
          caret.push_back(ch == '\t' ? '\t' : ' ');
          ++col;
        }
      }
      msg += "\n  " + std::string(line) + "\n  " + caret + "^";
    }
  }
  return InvalidArgument(msg);
}

}  // namespace

// The items of the module being parsed: written by the first pass (headers)
// and by the serial part of the second; read-only while bodies are parsed in
// parallel, when each worker writes only the item it parses.
struct ModuleItems {
  std::vector<std::unique_ptr<ItemInfo>> items;
  std::unordered_map<std::string, size_t> index;
};

class TextParser {
 public:
  TextParser(std::string_view src, std::string filename)
      : src_(src), filename_(std::move(filename)), c_{Lexer(src), Token(), std::nullopt},
        module_(std::make_shared<ModuleItems>()), items_(module_->items),
        item_index_(module_->index) {
    Advance();
  }
  // A worker that parses bodies of `main`'s items on another thread.
  explicit TextParser(const TextParser& main)
      : src_(main.src_), filename_(main.filename_), c_{Lexer(main.src_), Token(), std::nullopt},
        module_(main.module_), items_(module_->items), item_index_(module_->index) {}

  // Parses the whole module. Bodies are parsed in two steps: first, in
  // order, the functions without a written return type (a call of one needs
  // its body's type, so they may parse each other on demand); then all the
  // others, on up to `threads` threads (each body only reads the now-known
  // signatures). The result and the error reported (the first step's first,
  // else that of the earliest failing function) do not depend on `threads`.
  Module ParseModuleText(int threads) {
    ParseVersion();
    while (c_.cur.kind != Tok::kEof) ParseItemHeader();
    std::vector<ItemInfo*> rest;
    size_t rest_bytes = 0;
    for (auto& item : items_) {
      if (item->state != ItemInfo::kPending) continue;
      if (!item->declared_ret) {
        ParseItemBody(*item);
      } else {
        rest.push_back(item.get());
        rest_bytes += item->body_bytes;
      }
    }
    // Threads pay off from about a megabyte of bodies.
    if (rest_bytes < (1u << 20)) threads = 1;
    size_t nthreads = ParallelThreads(rest.size(), threads);
    if (nthreads <= 1) {
      for (ItemInfo* item : rest)
        if (item->state == ItemInfo::kPending) ParseItemBody(*item);
    } else {
      std::vector<std::unique_ptr<TextParser>> workers(nthreads);
      std::vector<std::optional<ParseFailure>> failures(rest.size());
      std::atomic<size_t> first_failure{rest.size()};
      bool out_of_memory = false;
      std::mutex mu;
      ParallelFor(rest.size(), threads, [&](size_t i, size_t w) {
        if (i > first_failure.load(std::memory_order_relaxed)) return;  // moot now
        try {
          if (!workers[w]) workers[w] = std::make_unique<TextParser>(*this);
          workers[w]->ParseItemBody(*rest[i]);
        } catch (ParseFailure& f) {
          failures[i] = std::move(f);
          size_t cur = first_failure.load();
          while (i < cur && !first_failure.compare_exchange_weak(cur, i)) {}
        } catch (const std::bad_alloc&) {
          std::lock_guard<std::mutex> lock(mu);
          out_of_memory = true;
        }
      });
      if (out_of_memory) throw std::bad_alloc();
      size_t f = first_failure.load();
      if (f < rest.size()) throw std::move(*failures[f]);
    }
    std::vector<Item> out;
    out.reserve(items_.size());
    for (auto& item : items_) out.push_back(item->result);
    auto m = Module::Make(std::move(out));
    if (!m.ok()) Fail(m.status().message(), Loc{1, 1});
    return *m;
  }

  Type ParseStandaloneType() {
    Type t = ParseTypeAt(0);
    if (c_.cur.kind != Tok::kEof) FailExpected("end of input");
    return t;
  }

 private:
  // ----- token handling -------------------------------------------------
  void Advance() {
    if (c_.peek) {
      c_.cur = std::move(*c_.peek);
      c_.peek.reset();
    } else {
      c_.cur = c_.lex.Next();
    }
    if (c_.cur.kind == Tok::kError) Fail(std::string(c_.cur.text), LocOf(c_.cur));
  }
  const Token& PeekNext() {
    if (!c_.peek) {
      c_.peek = c_.lex.Next();
      // An error in the peeked token is reported when it becomes current.
    }
    return *c_.peek;
  }
  static Loc LocOf(const Token& t) { return Loc{t.line, t.col}; }
  Loc Here() const { return LocOf(c_.cur); }

  [[noreturn]] void Fail(std::string message, Loc loc) {
    throw ParseFailure{std::move(message), loc.line, loc.col};
  }
  [[noreturn]] void FailExpected(const std::string& what) {
    Fail("expected " + what + ", found " + internal::DescribeToken(c_.cur), Here());
  }
  bool Is(Tok k) const { return c_.cur.kind == k; }
  bool IsIdent(std::string_view s) const { return c_.cur.kind == Tok::kIdent && c_.cur.text == s; }
  void Expect(Tok k, const char* what) {
    if (!Is(k)) FailExpected(what);
    Advance();
  }
  bool Accept(Tok k) {
    if (!Is(k)) return false;
    Advance();
    return true;
  }
  void ExpectIdent(std::string_view s) {
    if (!IsIdent(s)) FailExpected("'" + std::string(s) + "'");
    Advance();
  }
  void CheckDepth(int depth) {
    if (depth > kMaxNestingDepth)
      Fail("nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels", Here());
  }

  // ----- module structure ------------------------------------------------
  void ParseVersion() {
    if (!Is(Tok::kHash)) return;
    Advance();
    Expect(Tok::kLBracket, "'[' after '#'");
    ExpectIdent("version");
    Expect(Tok::kEq, "'='");
    if (!Is(Tok::kString)) FailExpected("a version string");
    if (c_.cur.value != "1")
      Fail("unsupported format version \"" + std::string(c_.cur.value) +
               "\"; this parser reads version \"1\"",
           Here());
    Advance();
    Expect(Tok::kRBracket, "']'");
  }

  void ParseItemHeader() {
    auto item = std::make_unique<ItemInfo>();
    if (IsIdent("def")) {
      item->is_def = true;
    } else if (!IsIdent("extern")) {
      FailExpected("'def' or 'extern'");
    }
    Advance();
    if (!Is(Tok::kGlobal)) FailExpected("a global name (@name)");
    item->name = std::string(c_.cur.text);
    item->loc = Here();
    auto dup = item_index_.find(item->name);
    if (dup != item_index_.end()) {
      const Loc& prev = items_[dup->second]->loc;
      Fail("@" + item->name + " is already defined at " + std::to_string(prev.line) + ":" +
               std::to_string(prev.col),
           Here());
    }
    Advance();
    Expect(Tok::kLParen, "'(' to start the parameter list");
    std::unordered_map<std::string, Loc> seen;
    if (!Is(Tok::kRParen)) {
      while (true) {
        if (!Is(Tok::kLocal)) FailExpected("a parameter (%name: Type)");
        std::string_view name = c_.cur.text;
        Loc loc = Here();
        if (seen.count(std::string(name)))
          Fail("parameter %" + std::string(name) + " is declared twice", loc);
        seen.emplace(name, loc);
        Advance();
        Expect(Tok::kColon, "':' and the parameter's type");
        Type t = ParseTypeAt(0);
        // Parameters are the function's first variables: indices 0..n-1.
        item->params.push_back(VarNode::Make(NameHint(name), t, false,
                                             static_cast<uint32_t>(item->params.size())));
        item->param_locs.push_back(loc);
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    Expect(Tok::kRParen, "',' or ')' in the parameter list");
    if (Accept(Tok::kArrow)) {
      item->declared_ret = ParseTypeAt(0);
      item->ret = item->declared_ret;
    } else if (!item->is_def) {
      FailExpected("'->' and the return type of the extern");
    }
    if (IsIdent("attrs")) {
      Advance();
      item->attrs = ParseAttrMap();
    }
    if (item->is_def) {
      if (!Is(Tok::kLBrace)) FailExpected("'{' to start the function body");
      item->body = c_;
      size_t body_start = c_.lex.offset();
      SkipBracedBlock();
      item->body_bytes = c_.lex.offset() - body_start;
    } else {
      item->state = ItemInfo::kDone;
      item->result = ExternFuncNode::Make(item->name, item->params, item->ret, item->attrs);
    }
    item_index_.emplace(item->name, items_.size());
    items_.push_back(std::move(item));
  }

  // Skips from '{' to its matching '}' with a raw byte scan (strings and
  // comments respected); the body is tokenized once, in the second pass.
  void SkipBracedBlock() {
    Loc open = Here();
    Cursor at_brace = c_;
    c_.peek.reset();
    if (c_.lex.SkipBracedBody()) {
      Advance();
      return;
    }
    // Unterminated: tokenize from the brace, so that a bad token inside
    // (an unterminated string, say) is what gets reported.
    c_ = std::move(at_brace);
    int depth = 0;
    do {
      if (Is(Tok::kEof)) Fail("unterminated function body: no '}' matches this '{'", open);
      if (Is(Tok::kLBrace)) ++depth;
      if (Is(Tok::kRBrace)) --depth;
      Advance();
    } while (depth > 0);
  }

  Attrs ParseAttrMap() {
    Expect(Tok::kLBrace, "'{' to start the attributes");
    std::vector<Attrs::Entry> entries;
    std::unordered_map<std::string, Loc> seen;
    if (!Is(Tok::kRBrace)) {
      while (true) {
        if (!Is(Tok::kIdent)) FailExpected("an attribute name");
        std::string key(c_.cur.text);
        if (seen.count(key)) Fail("attribute '" + key + "' given twice", Here());
        seen.emplace(key, Here());
        Advance();
        Expect(Tok::kEq, "'=' after the attribute name");
        entries.emplace_back(Symbol(key), ParseAttrValue());
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    Expect(Tok::kRBrace, "',' or '}' in the attributes");
    return *Attrs::Make(std::move(entries));
  }

  // ----- function bodies -------------------------------------------------
  // Per function body. One table holds every local name with its state (a
  // quarter of a large function's parse time went to four node-based string
  // maps); generated names index arrays (internal/name_table.h).
  struct FuncCtx {
    ItemInfo* item;
    internal::NameTable<LocalName> names;
    std::vector<NameHint> scope_names;  // names defined, innermost scope last
    std::vector<size_t> scope_marks;            // scope_names size at each scope's start
    uint32_t next_index = 0;                    // the next variable's dense index
  };

  void ParseItemBody(ItemInfo& item) {
    if (++on_demand_depth_ > 64)
      Fail("too many nested functions without a return type; write '-> Type' on @" + item.name,
           item.loc);
    item.state = ItemInfo::kParsing;
    Cursor saved = c_;
    FuncCtx* saved_ctx = ctx_;
    FuncCtx ctx{&item, {}, {}, {}, 0};
    ctx_ = &ctx;
    c_ = *item.body;
    c_.lex.DetachStorage();  // bodies may be parsed on several threads
    ctx.scope_marks.push_back(0);
    for (size_t i = 0; i < item.params.size(); ++i)
      Define(item.params[i], item.params[i]->hint(), item.param_locs[i]);
    ctx.next_index = static_cast<uint32_t>(item.params.size());
    Loc body_loc = Here();
    SeqExpr body = ParseBody(1);
    if (item.declared_ret && !TypeCompatible(item.declared_ret, body->type()))
      Fail("@" + item.name + " returns " + TypeToString(body->type()) +
               ", which does not match its declared return type " +
               TypeToString(item.declared_ret),
           body_loc);
    item.result = FunctionNode::Make(item.name, item.params, item.declared_ret, body, item.attrs);
    item.ret = item.result->ret_type();
    item.state = ItemInfo::kDone;
    ctx_ = saved_ctx;
    c_ = std::move(saved);
    --on_demand_depth_;
  }

  void CheckNotVisible(const NameHint& name, Loc loc) {
    const LocalName* n = ctx_->names.Find(name);
    if (n && n->state == LocalName::kVisible)
      Fail("%" + name.str() + " is already defined at " + std::to_string(n->loc.line) +
               ":" + std::to_string(n->loc.col),
           loc);
  }

  // Makes `name` name `v` from here on.
  void Define(const Var& v, const NameHint& name, Loc loc) {
    auto [entry, inserted] = ctx_->names.Insert(name, LocalName{v, loc});
    if (!inserted) {
      if (entry->state == LocalName::kVisible)
        Fail("%" + name.str() + " is already defined at " +
                 std::to_string(entry->loc.line) + ":" + std::to_string(entry->loc.col),
             loc);
      *entry = LocalName{v, loc};
    }
    ctx_->scope_names.push_back(name);
  }

  Var LookupLocal(const Token& t) {
    const LocalName* n = ctx_->names.Find(NameHint(t.text));
    if (n && n->state == LocalName::kVisible) return n->var;
    std::string name(t.text);
    if (n && n->state == LocalName::kDeadDataflow)
      Fail("%" + name + " is a dataflow variable of the block at " +
               std::to_string(n->loc.line) + ":" + std::to_string(n->loc.col) +
               " and is not visible outside it (list it in the block's output line)",
           LocOf(t));
    if (n)
      Fail("%" + name + " (defined at " + std::to_string(n->loc.line) + ":" +
               std::to_string(n->loc.col) + ") is not visible here: it is local to an if branch or a local function",
           LocOf(t));
    Fail("undefined variable %" + name, LocOf(t));
  }

  // body := '{' (binding | dataflow-block)* expr '}'
  SeqExpr ParseBody(int depth) {
    CheckDepth(depth);
    Expect(Tok::kLBrace, "'{'");
    ctx_->scope_marks.push_back(ctx_->scope_names.size());
    std::vector<Block> blocks;
    std::vector<Binding> ordinary;
    auto flush = [&]() {
      if (!ordinary.empty()) blocks.push_back(BindingBlockNode::Make(std::move(ordinary), false));
      ordinary.clear();
    };
    while (true) {
      if (Is(Tok::kLocal)) {
        Tok next = PeekNext().kind;
        if (next == Tok::kColon || next == Tok::kEq) {
          ordinary.push_back(ParseBinding(depth, false));
          continue;
        }
      }
      if (IsIdent("dataflow") && PeekNext().kind == Tok::kLBrace) {
        flush();
        blocks.push_back(ParseDataflowBlock(depth));
        continue;
      }
      break;
    }
    flush();
    if (Is(Tok::kRBrace)) FailExpected("a result expression before '}'");
    Expr result = ParseExpr(depth + 1);
    Expect(Tok::kRBrace, "'}' after the result expression (a body ends with one expression)");
    for (size_t i = ctx_->scope_marks.back(); i < ctx_->scope_names.size(); ++i) {
      LocalName* n = ctx_->names.Find(ctx_->scope_names[i]);
      if (n && n->state == LocalName::kVisible) n->state = LocalName::kOutOfScope;
    }
    ctx_->scope_names.resize(ctx_->scope_marks.back());
    ctx_->scope_marks.pop_back();
    return SeqExprNode::Make(std::move(blocks), std::move(result));
  }

  Binding ParseBinding(int depth, bool in_dataflow) {
    NameHint name(c_.cur.text);
    Loc loc = Here();
    CheckNotVisible(name, loc);
    Advance();
    Type annotation;
    Loc ann_loc;
    if (Accept(Tok::kColon)) {
      ann_loc = Here();
      annotation = ParseTypeAt(depth + 1);
    }
    Expect(Tok::kEq, "'=' in the binding");
    Loc value_loc = Here();
    Expr value = ParseExpr(depth + 1);
    Expect(Tok::kSemi, "';' after the binding");
    if (annotation && !TypeCompatible(annotation, value->type()))
      Fail("the annotation " + TypeToString(annotation) + " of %" + name.str() +
               " is incompatible with its value's type " + TypeToString(value->type()),
           ann_loc);
    (void)value_loc;
    // An annotation equal to the inferred type shares the inferred type's
    // node: one type node instead of two per binding.
    if (annotation && TypeEqual(annotation, value->type())) annotation = value->type();
    Var v = VarNode::Make(name, annotation ? annotation : value->type(), in_dataflow,
                          ctx_->next_index++);
    Define(v, name, loc);
    return VarBindingNode::Make(v, std::move(value));
  }

  Block ParseDataflowBlock(int depth) {
    Loc block_loc = Here();
    Advance();  // dataflow
    Expect(Tok::kLBrace, "'{'");
    std::vector<Binding> bindings;
    // Variables numbered from here on are this block's (or of bodies nested
    // in it, which are out of scope again by the output line).
    uint32_t first_index = ctx_->next_index;
    while (Is(Tok::kLocal)) bindings.push_back(ParseBinding(depth, true));
    if (IsIdent("output")) {
      Advance();
      if (!Is(Tok::kSemi)) {
        while (true) {
          if (!Is(Tok::kLocal)) FailExpected("a variable of this block in the output line");
          std::string_view name = c_.cur.text;
          const LocalName* n = ctx_->names.Find(NameHint(name));
          if (!n || n->state != LocalName::kVisible || n->var->index() < first_index)
            Fail("%" + std::string(name) + " in the output line is not bound in this dataflow block",
                 Here());
          if (!n->var->is_dataflow())
            Fail("%" + std::string(name) + " is listed twice in the output line", Here());
          n->var->set_dataflow(false);
          Advance();
          if (Accept(Tok::kComma)) continue;
          break;
        }
      }
      Expect(Tok::kSemi, "',' or ';' in the output line");
    }
    if (!Is(Tok::kRBrace)) {
      if (Is(Tok::kLocal)) FailExpected("'}' (bindings must come before the output line)");
      FailExpected("a binding, the output line, or '}' in the dataflow block");
    }
    Advance();
    (void)block_loc;
    for (const Binding& b : bindings) {
      if (!b->var()->is_dataflow()) continue;
      LocalName* n = ctx_->names.Find(b->var()->hint());
      if (n && n->state == LocalName::kVisible) n->state = LocalName::kDeadDataflow;
    }
    return BindingBlockNode::Make(std::move(bindings), true);
  }

  // ----- expressions -----------------------------------------------------
  Expr ParseExpr(int depth) {
    CheckDepth(depth);
    Expr e = ParsePrimary(depth);
    while (Is(Tok::kDot)) {
      Advance();
      if (!Is(Tok::kInt)) FailExpected("a tuple index after '.'");
      Loc loc = Here();
      int64_t index = ParseInt64(c_.cur);
      Advance();
      auto r = TupleGetItemNode::Make(e, index);
      if (!r.ok()) Fail(r.status().message(), loc);
      e = *r;
    }
    return e;
  }

  int64_t ParseInt64(const Token& t) {
    int64_t v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      Fail("integer " + std::string(t.text) + " does not fit in int64", LocOf(t));
    return v;
  }

  double ParseDouble(const Token& t) {
    if (t.text == "inf") return INFINITY;
    if (t.text == "-inf") return -INFINITY;
    if (t.text == "nan") return NAN;
    double v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec == std::errc::result_out_of_range)
      Fail("float " + std::string(t.text) + " is out of range", LocOf(t));
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      Fail("malformed float " + std::string(t.text), LocOf(t));
    return v;
  }

  bool IsFloatWord() const { return IsIdent("inf") || IsIdent("nan"); }

  Expr ParsePrimary(int depth) {
    const Token& t = c_.cur;
    switch (t.kind) {
      case Tok::kLocal: {
        Token name = t;
        Var v = LookupLocal(t);
        Advance();
        if (!Is(Tok::kLParen)) return v;
        // A call of a function value: `%f(args)`.
        CallArgs args = ParseCallArgs(depth);
        if (!args.attrs.empty() || !args.sinfo.empty())
          Fail("a call of a function value takes no attributes or sinfo_args",
               args.attrs.empty() ? LocOf(name) : args.first_attr);
        auto call = MakeValueCall(v, std::move(args.args));
        if (!call.ok()) Fail(call.status().message(), LocOf(name));
        return *call;
      }
      case Tok::kGlobal:
        return ParseGlobalRef(depth);
      case Tok::kLParen: {
        Advance();
        if (Accept(Tok::kRParen)) return TupleNode::Make({});
        Expr first = ParseExpr(depth + 1);
        if (Accept(Tok::kRParen)) return first;  // grouping
        std::vector<Expr> fields{first};
        while (Accept(Tok::kComma)) {
          if (Is(Tok::kRParen)) break;
          fields.push_back(ParseExpr(depth + 1));
        }
        Expect(Tok::kRParen, "',' or ')' in the tuple");
        return TupleNode::Make(std::move(fields));
      }
      case Tok::kInt: {
        int64_t v = ParseInt64(t);
        Advance();
        return PrimValueNode::Int(v);
      }
      case Tok::kFloat: {
        double v = ParseDouble(t);
        Advance();
        return PrimValueNode::Float(v);
      }
      case Tok::kString: {
        Expr e = StringImmNode::Make(std::string(t.value));
        Advance();
        return e;
      }
      case Tok::kIdent: {
        if (t.text == "true" || t.text == "false") {
          bool b = t.text == "true";
          Advance();
          return PrimValueNode::Bool(b);
        }
        Tok next = PeekNext().kind;
        if (t.text == "const" && next == Tok::kLAngle) return ParseConstant();
        if (t.text == "if" && next == Tok::kLParen) return ParseIf(depth);
        if (t.text == "prim" && next == Tok::kLBracket) {
          // `prim[n + 1]`: a symbolic int64 value (Relax's R.prim_value(n + 1)).
          Advance();
          Advance();  // '['
          Dim d = ParseDimSum(0);
          Expect(Tok::kRBracket, "']' to close the value");
          return PrimExprNode::Make(d);
        }
        if (t.text == "shape" && next == Tok::kLBracket) {
          // `shape[(2, n)]`: a shape value (Relax's R.shape([2, n])).
          Advance();
          Advance();  // '['
          std::vector<Dim> dims = ParseDims();
          Expect(Tok::kRBracket, "']' to close the shape value");
          return ShapeExprNode::Make(std::move(dims));
        }
        if (t.text == "fn" && next == Tok::kLParen) return ParseLocalFn(depth);
        if (next == Tok::kLParen) return ParseOpCall(depth);
        if (IsFloatWord()) {
          double v = ParseDouble(t);
          Advance();
          return PrimValueNode::Float(v);
        }
        Fail("expected an expression, found " + internal::DescribeToken(t) +
                 " (an op call needs '(')",
             Here());
      }
      default:
        FailExpected("an expression");
    }
  }

  // Returns the item named by the global token `t`; fails if there is none.
  ItemInfo& GlobalInfo(const Token& t) {
    std::string name(t.text);
    auto it = item_index_.find(name);
    if (it == item_index_.end()) {
      std::vector<std::string> names;
      for (auto& i : items_) names.push_back(i->name);
      std::string msg = "unknown global @" + name;
      auto close = ClosestNames(name, names, 1);
      if (!close.empty()) msg += "; did you mean @" + close[0] + "?";
      Fail(msg, LocOf(t));
    }
    return *items_[it->second];
  }

  Expr ParseGlobalRef(int depth) {
    Token t = c_.cur;
    ItemInfo& info = GlobalInfo(t);
    GlobalVar gv = GlobalVarNode::Make(info.name);
    Advance();
    if (!Is(Tok::kLParen)) return gv;
    if (!info.is_def)
      Fail("@" + info.name + " is an extern kernel; call it through call_tir", LocOf(t));
    Loc open = Here();
    CallArgs args = ParseCallArgs(depth);
    if (!args.attrs.empty())
      Fail("a call of a module function takes no attributes (only sinfo_args)", args.first_attr);
    if (args.args.size() != info.params.size())
      Fail("@" + info.name + " takes " + std::to_string(info.params.size()) +
               " argument(s), got " + std::to_string(args.args.size()),
           open);
    for (size_t i = 0; i < args.args.size(); ++i)
      if (!TypeCompatible(args.args[i]->type(), info.params[i]->type()))
        Fail("argument " + std::to_string(i) + " of @" + info.name + " has type " +
                 TypeToString(args.args[i]->type()) + ", the parameter expects " +
                 TypeToString(info.params[i]->type()),
             args.arg_locs[i]);
    if (!info.ret) {
      if (info.state == ItemInfo::kParsing)
        Fail("cannot infer the return type of @" + info.name +
                 ", which is called before its body is complete; write '-> Type' on it",
             LocOf(t));
      ParseItemBody(info);
    }
    return MakeGlobalCall(gv, std::move(args.args), info.ret, std::move(args.sinfo));
  }

  struct CallArgs {
    std::vector<Expr> args;
    std::vector<Loc> arg_locs;
    std::vector<Attrs::Entry> attrs;
    Loc first_attr;
    std::vector<Type> sinfo;
  };

  CallArgs ParseCallArgs(int depth) {
    Expect(Tok::kLParen, "'('");
    CallArgs out;
    std::unordered_map<std::string, Loc> seen;
    bool keywords = false;
    bool have_sinfo = false;
    if (!Is(Tok::kRParen)) {
      while (true) {
        if (Is(Tok::kIdent) && PeekNext().kind == Tok::kEq) {
          std::string key(c_.cur.text);
          Loc loc = Here();
          if (seen.count(key)) Fail("attribute '" + key + "' given twice", loc);
          seen.emplace(key, loc);
          Advance();
          Advance();  // '='
          keywords = true;
          if (key == "sinfo_args") {
            have_sinfo = true;
            Expect(Tok::kLBracket, "'[' and a list of types for sinfo_args");
            if (!Is(Tok::kRBracket)) {
              while (true) {
                out.sinfo.push_back(ParseTypeAt(depth + 1));
                if (Accept(Tok::kComma)) continue;
                break;
              }
            }
            Expect(Tok::kRBracket, "',' or ']' in sinfo_args");
          } else {
            if (out.attrs.empty()) out.first_attr = loc;
            out.attrs.emplace_back(Symbol(key), ParseAttrValue());
          }
        } else {
          if (keywords) Fail("positional argument after keyword arguments", Here());
          out.arg_locs.push_back(Here());
          out.args.push_back(ParseExpr(depth + 1));
        }
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    (void)have_sinfo;
    Expect(Tok::kRParen, "',' or ')' in the argument list");
    return out;
  }

  Expr ParseOpCall(int depth) {
    Token t = c_.cur;
    std::string name(t.text);
    Op op;
    if (auto it = op_cache_.find(name); it != op_cache_.end()) {
      op = it->second;
    } else {
      op = OpRegistry::Global().Lookup(name);
      if (op) op_cache_.emplace(name, op);
    }
    if (!op) {
      std::string msg = "unknown op '" + name + "'";
      auto close = ClosestNames(name, OpRegistry::Global().Names(), 1);
      if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
      Fail(msg, LocOf(t));
    }
    Advance();
    CallArgs args = ParseCallArgs(depth);
    if (name == "call_tir" && !args.args.empty()) {
      if (auto* g = As<GlobalVarNode>(args.args[0])) {
        ItemInfo& info = *items_[item_index_.at(g->name())];
        if (info.is_def)
          Fail("call_tir needs an extern kernel, but @" + g->name() + " is a function",
               args.arg_locs[0]);
      }
    }
    auto attrs = Attrs::Make(std::move(args.attrs));
    if (!attrs.ok()) Fail(attrs.status().message(), LocOf(t));
    auto call = MakeOpCall(op, std::move(args.args), *attrs, std::move(args.sinfo));
    if (!call.ok()) Fail(call.status().message(), LocOf(t));
    return *call;
  }

  Expr ParseIf(int depth) {
    Loc loc = Here();
    Advance();  // if
    Expect(Tok::kLParen, "'(' after 'if'");
    Expr cond = ParseExpr(depth + 1);
    Expect(Tok::kRParen, "')' after the condition");
    if (!Is(Tok::kLBrace)) FailExpected("'{' to start the then branch");
    SeqExpr then_body = ParseBody(depth + 1);
    ExpectIdent("else");
    if (!Is(Tok::kLBrace)) FailExpected("'{' to start the else branch");
    SeqExpr else_body = ParseBody(depth + 1);
    auto r = IfNode::Make(cond, then_body, else_body);
    if (!r.ok()) Fail(r.status().message(), loc);
    return *r;
  }

  // fn '(' (%name ':' type),* ')' ('->' type)? body
  Expr ParseLocalFn(int depth) {
    Loc loc = Here();
    Advance();  // fn
    Expect(Tok::kLParen, "'(' after 'fn'");
    // The parameters are visible in the body only.
    ctx_->scope_marks.push_back(ctx_->scope_names.size());
    std::vector<Var> params;
    if (!Is(Tok::kRParen)) {
      while (true) {
        if (!Is(Tok::kLocal)) FailExpected("a parameter '%name: Type'");
        NameHint name(c_.cur.text);
        Loc ploc = Here();
        CheckNotVisible(name, ploc);
        Advance();
        Expect(Tok::kColon, "':' and the parameter's type");
        Type t = ParseTypeAt(depth + 1);
        Var p = VarNode::Make(name, t, false, ctx_->next_index++);
        Define(p, name, ploc);
        params.push_back(p);
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    Expect(Tok::kRParen, "',' or ')' after the parameters");
    Type declared;
    if (Accept(Tok::kArrow)) declared = ParseTypeAt(depth + 1);
    if (!Is(Tok::kLBrace)) FailExpected("'{' to start the local function's body");
    Loc body_loc = Here();
    SeqExpr body = ParseBody(depth + 1);
    if (declared && !TypeCompatible(declared, body->type()))
      Fail("the local function returns " + TypeToString(body->type()) +
               ", which does not match its declared return type " + TypeToString(declared),
           body_loc);
    for (size_t i = ctx_->scope_marks.back(); i < ctx_->scope_names.size(); ++i) {
      LocalName* n = ctx_->names.Find(ctx_->scope_names[i]);
      if (n && n->state == LocalName::kVisible) n->state = LocalName::kOutOfScope;
    }
    ctx_->scope_names.resize(ctx_->scope_marks.back());
    ctx_->scope_marks.pop_back();
    (void)loc;
    return LocalFnNode::Make(std::move(params), declared, std::move(body));
  }

  // const<Type>[elems] | const<Type>x"hex"
  Expr ParseConstant() {
    Loc loc = Here();
    Advance();  // const
    Expect(Tok::kLAngle, "'<'");
    Loc type_loc = Here();
    Type type = ParseTypeAt(1);
    Expect(Tok::kRAngle, "'>' after the constant's type");
    auto* tt = As<TensorTypeNode>(type);
    if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
      Fail("a constant needs a tensor type with a static shape and a dtype, not " +
               TypeToString(type),
           type_loc);
    // Reject sizes that cannot be real before allocating anything.
    uint64_t count = 1;
    for (const Dim& d : tt->shape()) {
      if (d.value < 0) Fail("negative dimension in a constant's type", type_loc);
      if (d.value != 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d.value))
        Fail("constant of type " + TypeToString(type) + " is too large", type_loc);
      count *= static_cast<uint64_t>(d.value);
    }
    DataType dt = tt->dtype();
    size_t size = static_cast<size_t>(DataTypeSize(dt));
    auto data = std::make_shared<std::string>();
    if (Is(Tok::kHexString)) {
      if (c_.cur.value.size() != count * size)
        Fail("the hex payload has " + std::to_string(c_.cur.value.size()) + " bytes; " +
                 TypeToString(type) + " needs " + std::to_string(count * size),
             Here());
      data->assign(c_.cur.value);
      Advance();
    } else {
      Expect(Tok::kLBracket, "'[' and the elements, or a hex payload x\"...\"");
      if (count * size <= src_.size() * 8 + 64) data->reserve(count * size);
      uint64_t n = 0;
      if (!Is(Tok::kRBracket)) {
        while (true) {
          if (n == count)
            Fail(TypeToString(type) + " has " + std::to_string(count) + " elements; found more",
                 Here());
          AppendElement(dt, data.get());
          ++n;
          if (Accept(Tok::kComma)) continue;
          break;
        }
      }
      if (!Is(Tok::kRBracket)) FailExpected("',' or ']' in the constant's elements");
      if (n != count)
        Fail(TypeToString(type) + " has " + std::to_string(count) + " elements; found " +
                 std::to_string(n),
             Here());
      Advance();
    }
    auto c = ConstantNode::Make(type, std::move(data));
    if (!c.ok()) Fail(c.status().message(), loc);
    return *c;
  }

  template <typename T>
  void PutRaw(T v, std::string* out) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    out->append(buf, sizeof(T));
  }

  void AppendElement(DataType dt, std::string* out) {
    const Token& t = c_.cur;
    Loc loc = Here();
    auto range_error = [&]() {
      Fail("element " + std::string(t.text) + " does not fit in " +
               std::string(DataTypeName(dt)),
           loc);
    };
    if (dt == DataType::kBool) {
      if (IsIdent("true") || IsIdent("false")) {
        out->push_back(IsIdent("true") ? 1 : 0);
      } else if (Is(Tok::kInt) && (t.text == "0" || t.text == "1")) {
        out->push_back(t.text == "1" ? 1 : 0);
      } else {
        FailExpected("a bool element (true or false)");
      }
      Advance();
      return;
    }
    if (IsFloat(dt)) {
      if (!Is(Tok::kInt) && !Is(Tok::kFloat) && !IsFloatWord())
        FailExpected("a numeric element");
      const char* b = t.text.data();
      const char* e = b + t.text.size();
      if (dt == DataType::kFloat64) {
        PutRaw(ParseDouble(t), out);
      } else {
        float f;
        if (t.text == "inf" || t.text == "-inf" || t.text == "nan") {
          f = static_cast<float>(ParseDouble(t));
        } else {
          auto r = std::from_chars(b, e, f);
          if (r.ec == std::errc::result_out_of_range) range_error();
          if (r.ec != std::errc() || r.ptr != e) Fail("malformed number " + std::string(t.text), loc);
        }
        if (dt == DataType::kFloat32) PutRaw(f, out);
        else if (dt == DataType::kFloat16) PutRaw(FloatToHalf(f), out);
        else PutRaw(FloatToBFloat16(f), out);
      }
      Advance();
      return;
    }
    if (!Is(Tok::kInt)) FailExpected(std::string("an integer element of ") +
                                     std::string(DataTypeName(dt)));
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    auto parse = [&](auto& v) {
      auto r = std::from_chars(b, e, v);
      if (r.ec != std::errc() || r.ptr != e) range_error();
    };
    switch (dt) {
      case DataType::kInt8: { int8_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kInt16: { int16_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kInt32: { int32_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kInt64: { int64_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kUInt8: { uint8_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kUInt16: { uint16_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kUInt32: { uint32_t v = 0; parse(v); PutRaw(v, out); break; }
      case DataType::kUInt64: { uint64_t v = 0; parse(v); PutRaw(v, out); break; }
      default: range_error();
    }
    Advance();
  }

  // ----- attribute values ------------------------------------------------
  bool AtTypeStart() const {
    return IsIdent("Tensor") || IsIdent("Object") || IsIdent("Prim") || IsIdent("Shape") ||
           Is(Tok::kLParen);
  }

  AttrValue ParseAttrScalar() {
    const Token& t = c_.cur;
    AttrValue v;
    if (Is(Tok::kInt)) {
      v = AttrValue::Int(ParseInt64(t));
    } else if (Is(Tok::kFloat) || IsFloatWord()) {
      v = AttrValue::Float(ParseDouble(t));
    } else if (IsIdent("true") || IsIdent("false")) {
      v = AttrValue::Bool(IsIdent("true"));
    } else if (Is(Tok::kString)) {
      v = AttrValue::String(std::string(t.value));
    } else if (AtTypeStart()) {
      return AttrValue::OfType(ParseTypeAt(1));
    } else {
      FailExpected("an attribute value (integer, float, bool, string, type, list or map)");
    }
    Advance();
    return v;
  }

  // A scalar, a list `[v, ...]` or a map `{key = v, ...}` (keys are names or
  // strings), nested at most AttrValue::kMaxAttrDepth deep.
  AttrValue ParseAttrValue(int depth = 0) {
    if (!Is(Tok::kLBracket) && !Is(Tok::kLBrace)) return ParseAttrScalar();
    if (depth >= AttrValue::kMaxAttrDepth)
      Fail("attribute value nested deeper than " + std::to_string(AttrValue::kMaxAttrDepth) +
               " levels",
           Here());
    if (Accept(Tok::kLBracket)) {
      std::vector<AttrValue> items;
      if (!Is(Tok::kRBracket)) {
        while (true) {
          items.push_back(ParseAttrValue(depth + 1));
          if (Accept(Tok::kComma)) continue;
          break;
        }
      }
      Expect(Tok::kRBracket, "',' or ']' in the list");
      return AttrValue::List(std::move(items));
    }
    Advance();  // '{'
    std::vector<AttrValue::MapEntry> entries;
    std::unordered_map<std::string, Loc> seen;
    if (!Is(Tok::kRBrace)) {
      while (true) {
        if (!Is(Tok::kIdent) && !Is(Tok::kString)) FailExpected("a map key (a name or a string)");
        std::string key = Is(Tok::kString) ? std::string(c_.cur.value) : std::string(c_.cur.text);
        if (seen.count(key)) Fail("map key '" + key + "' given twice", Here());
        seen.emplace(key, Here());
        Advance();
        Expect(Tok::kEq, "'=' after the map key");
        entries.emplace_back(std::move(key), ParseAttrValue(depth + 1));
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    Expect(Tok::kRBrace, "',' or '}' in the map");
    return *AttrValue::Map(std::move(entries));
  }

  // ----- types -----------------------------------------------------------
  // A dimension: an integer, a name, or an expression over them with `+`,
  // `-`, `*` and parentheses (`n + 1`, `(r + 1) * 8`).
  Dim ParseDimSum(int depth) {
    if (depth == 0) dim_terms_ = 0;
    Dim d = ParseDimProduct(depth);
    while (true) {
      if (Accept(Tok::kPlus)) {
        d = DimAdd(d, ParseDimProduct(depth));
      } else if (Accept(Tok::kMinus)) {
        d = DimSub(d, ParseDimProduct(depth));
      } else if (Is(Tok::kInt) && c_.cur.text.starts_with("-")) {  // `n -1`: lexed as -1
        int64_t v = ParseInt64(c_.cur);
        if (v == INT64_MIN) Fail("integer " + std::string(c_.cur.text) + " is out of range", Here());
        Advance();
        d = DimSub(d, Dim::Const(-v));
      } else {
        return d;
      }
    }
  }
  Dim ParseDimProduct(int depth) {
    Dim d = ParseDimAtom(depth);
    while (Accept(Tok::kStar)) d = DimMul(d, ParseDimAtom(depth));
    return d;
  }
  Dim ParseDimAtom(int depth) {
    if (depth > 64) Fail("dimension expression nested too deeply", Here());
    if (++dim_terms_ > (kMaxDimTerms + 1) / 2)
      Fail("dimension expression with more than " + std::to_string((kMaxDimTerms + 1) / 2) + " operands", Here());
    if (Is(Tok::kInt)) {
      int64_t v = ParseInt64(c_.cur);
      if (v < 0) Fail("negative dimension " + std::to_string(v), Here());
      Advance();
      return Dim::Const(v);
    }
    if (Is(Tok::kIdent) && c_.cur.text.find('.') == std::string_view::npos) {
      Dim d = Dim::Sym(Symbol(c_.cur.text));
      Advance();
      return d;
    }
    if (Accept(Tok::kLParen)) {
      Dim d = ParseDimSum(depth + 1);
      Expect(Tok::kRParen, "')' in the dimension expression");
      return d;
    }
    FailExpected("a dimension (an integer, a name or an expression)");
  }

  std::vector<Dim> ParseDims() {
    Expect(Tok::kLParen, "'(' to start the shape");
    std::vector<Dim> dims;
    if (!Is(Tok::kRParen)) {
      while (true) {
        dims.push_back(ParseDimSum(0));
        if (Accept(Tok::kComma)) {
          if (Is(Tok::kRParen)) break;
          continue;
        }
        break;
      }
    }
    Expect(Tok::kRParen, "',' or ')' in the shape");
    return dims;
  }

  DataType ParseDTypeName() {
    if (!Is(Tok::kIdent)) FailExpected("a dtype (float32, int64, ...)");
    auto dt = ParseDataType(c_.cur.text);
    if (!dt) {
      std::vector<std::string> names;
      for (int i = 1; i <= static_cast<int>(DataType::kFloat64); ++i)
        names.emplace_back(DataTypeName(static_cast<DataType>(i)));
      std::string msg = "unknown dtype '" + std::string(c_.cur.text) + "'";
      auto close = ClosestNames(c_.cur.text, names, 1);
      if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
      Fail(msg, Here());
    }
    Advance();
    return *dt;
  }

  int ParseNdim() {
    ExpectIdent("ndim");
    Expect(Tok::kEq, "'=' after ndim");
    if (!Is(Tok::kInt)) FailExpected("the rank (an integer)");
    int64_t v = ParseInt64(c_.cur);
    if (v < 0 || v > 1 << 20) Fail("invalid rank " + std::to_string(v), Here());
    Advance();
    return static_cast<int>(v);
  }

  Type ParseTypeAt(int depth) {
    CheckDepth(depth);
    if (Is(Tok::kLParen)) {
      Advance();
      if (Accept(Tok::kRParen)) return TupleTypeNode::Make({});
      Type first = ParseTypeAt(depth + 1);
      if (Accept(Tok::kRParen)) return first;  // grouping; one-tuples need a comma
      std::vector<Type> fields{first};
      while (Accept(Tok::kComma)) {
        if (Is(Tok::kRParen)) break;
        fields.push_back(ParseTypeAt(depth + 1));
      }
      Expect(Tok::kRParen, "',' or ')' in the tuple type");
      return TupleTypeNode::Make(std::move(fields));
    }
    if (!Is(Tok::kIdent)) FailExpected("a type");
    if (IsIdent("Object")) {
      Advance();
      return ObjectTypeNode::Get();
    }
    if (IsIdent("Prim")) {
      Advance();
      Expect(Tok::kLBracket, "'[' after Prim");
      DataType dt = ParseDTypeName();
      if (Accept(Tok::kComma)) {  // Prim[int64, value=n]
        ExpectIdent("value");
        Expect(Tok::kEq, "'=' after value");
        Dim v = ParseDimSum(0);
        Expect(Tok::kRBracket, "']'");
        return PrimTypeNode::MakeValue(dt, v);
      }
      Expect(Tok::kRBracket, "']'");
      return PrimTypeNode::Make(dt);
    }
    if (IsIdent("Callable")) {
      // Callable[(T1, T2), R] or Callable[(T1, T2), R, pure=false]
      Advance();
      Expect(Tok::kLBracket, "'[' after Callable");
      Expect(Tok::kLParen, "'(' and the parameter types of the Callable");
      std::vector<Type> params;
      if (!Is(Tok::kRParen)) {
        while (true) {
          params.push_back(ParseTypeAt(depth + 1));
          if (Accept(Tok::kComma)) continue;
          break;
        }
      }
      Expect(Tok::kRParen, "',' or ')' in the Callable's parameter types");
      Expect(Tok::kComma, "',' and the Callable's return type");
      Type ret = ParseTypeAt(depth + 1);
      bool pure = true;
      if (Accept(Tok::kComma)) {
        if (!IsIdent("pure")) FailExpected("'pure=true' or 'pure=false'");
        Advance();
        Expect(Tok::kEq, "'=' after pure");
        if (IsIdent("true")) pure = true;
        else if (IsIdent("false")) pure = false;
        else FailExpected("true or false");
        Advance();
      }
      Expect(Tok::kRBracket, "']' to close the Callable type");
      return FuncTypeNode::Make(std::move(params), std::move(ret), pure);
    }
    if (IsIdent("Shape")) {
      Advance();
      if (!Accept(Tok::kLBracket)) return ShapeTypeNode::MakeRank(-1);
      Type t = Is(Tok::kLParen) ? ShapeTypeNode::Make(ParseDims())
                                : ShapeTypeNode::MakeRank(ParseNdim());
      Expect(Tok::kRBracket, "']'");
      return t;
    }
    if (IsIdent("Tensor")) {
      Advance();
      if (!Accept(Tok::kLBracket)) return TensorTypeNode::MakeRank(-1, DataType::kUnknown);
      std::optional<std::vector<Dim>> dims;
      int ndim = -1;
      DataType dt = DataType::kUnknown;
      bool need_dtype = true;
      if (Is(Tok::kLParen)) {
        Loc at = Here();
        dims = ParseDims();
        int64_t count = 1;
        for (const Dim& d : *dims) {
          if (!d.is_const()) continue;
          auto r = CheckedMul(count, d.value);
          if (!r) Fail("the tensor shape has more elements than fit in 64 bits", at);
          count = *r;
        }
        need_dtype = Accept(Tok::kComma);
      } else if (IsIdent("ndim")) {
        ndim = ParseNdim();
        need_dtype = Accept(Tok::kComma);
      }
      if (need_dtype) dt = ParseDTypeName();
      Expect(Tok::kRBracket, "']' to close the tensor type");
      return dims ? TensorTypeNode::Make(std::move(*dims), dt) : TensorTypeNode::MakeRank(ndim, dt);
    }
    Fail("unknown type '" + std::string(c_.cur.text) +
             "' (expected Tensor, Object, Prim, Shape, Callable or a tuple)",
         Here());
  }

  std::string_view src_;
  std::string filename_;
  Cursor c_;
  std::shared_ptr<ModuleItems> module_;
  std::vector<std::unique_ptr<ItemInfo>>& items_;
  std::unordered_map<std::string, size_t>& item_index_;
  FuncCtx* ctx_ = nullptr;
  int on_demand_depth_ = 0;
  std::unordered_map<std::string, Op> op_cache_;  // the registry takes a lock per lookup
  int dim_terms_ = 0;  // operands of the dimension expression being read
};

StatusOr<Module> ParseModule(std::string_view text, const ParseOptions& options) {
  try {
    TextParser p(text, options.filename);
    return p.ParseModuleText(options.threads);
  } catch (const ParseFailure& f) {
    return FormatError(text, options.filename, f);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(options.filename + ": out of memory while parsing");
  }
}

StatusOr<Type> ParseType(std::string_view text, const ParseOptions& options) {
  try {
    TextParser p(text, options.filename);
    return p.ParseStandaloneType();
  } catch (const ParseFailure& f) {
    return FormatError(text, options.filename, f);
  }
}

StatusOr<Module> ParseModuleFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return NotFound(path + ": cannot open file: " + std::strerror(errno));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return Internal(path + ": read error");
  }
  ParseOptions options;
  options.filename = path == "-" ? "<stdin>" : path;
  return ParseModule(text, options);
}

}  // namespace plir
