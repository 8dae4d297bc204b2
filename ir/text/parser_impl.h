// The text parser's class, shared by its files (internal to ir/text/): one
// recursive-descent parser whose methods are split by sublanguage, as
// MLIR's AsmParser is:
//   parser.cc        token handling, module structure, function bodies, the API
//   parse_exprs.cc   expressions, calls, constants
//   parse_attrs.cc   attribute values
//   parse_types.cc   types and dimension expressions
//
// Errors are thrown as ParseFailure inside these files only and turned into
// a Status at the API boundary (ParseModule, ParseType); nothing escapes.
#ifndef PLIR_IR_TEXT_PARSER_IMPL_H_
#define PLIR_IR_TEXT_PARSER_IMPL_H_

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/checked_math.h"
#include "ir/internal/name_table.h"
#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/text/lexer.h"
#include "ir/text/parser.h"

namespace plir::text_internal {

using internal::Lexer;
using internal::Tok;
using internal::Token;

struct ParseFailure {
  std::string message;
  int64_t line;
  int64_t col;
};

struct Loc {
  int64_t line = 0;
  int64_t col = 0;
};

// Thrown when a value read after the raw scan of bindings (parse_parallel.cc)
// fails: the item is parsed again without the scan, which gives the module
// or the error the tokenizing parser gives.
struct SerialRetry {};

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
// variable it names now, or why it is no longer visible. 24 bytes (a Loc
// would make it 32): a million-binding function holds a million of these
// while it is parsed.
struct LocalName {
  enum State : uint8_t { kVisible, kDeadDataflow, kOutOfScope };
  LocalName() = default;
  LocalName(Var v, Loc at)
      : var(std::move(v)),
        line(at.line),
        col(static_cast<uint32_t>(std::min<int64_t>(at.col, UINT32_MAX))) {}
  // Where the variable was defined (a column past 4 GiB into one line reads
  // as 4294967295).
  Loc loc() const { return Loc{line, col}; }

  Var var;
  int64_t line = 0;
  uint32_t col = 0;
  State state = kVisible;
};
static_assert(sizeof(LocalName) <= 24);

// Formats "file:line:col: message", then the source line and a caret.
Status FormatError(std::string_view src, const std::string& filename, const ParseFailure& f);

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
      : src_(src),
        filename_(std::move(filename)),
        c_{Lexer(src), Token(), std::nullopt},
        module_(std::make_shared<ModuleItems>()),
        items_(module_->items),
        item_index_(module_->index) {
    Advance();
  }
  // A worker that parses bodies of `main`'s items on another thread.
  explicit TextParser(const TextParser& main)
      : src_(main.src_),
        done_with_(main.done_with_),
        filename_(main.filename_),
        c_{Lexer(main.src_), Token(), std::nullopt},
        module_(main.module_),
        items_(module_->items),
        item_index_(module_->index),
        allow_scan_(main.allow_scan_) {}

  // Parses the whole module. Bodies are parsed in two steps: first, in
  // order, the functions without a written return type (a call of one needs
  // its body's type, so they may parse each other on demand); then all the
  // others, on up to `threads` threads (each body only reads the now-known
  // signatures). The result and the error reported (the first step's first,
  // else that of the earliest failing function) do not depend on `threads`.
  void SetDoneWith(const std::function<void(size_t, size_t)>* f) { done_with_ = f; }
  void SetParallelCounter(size_t* count) { parallel_total_ = count; }
  void SetScanBindings(bool scan) { allow_scan_ = scan; }
  Module ParseModuleText(int threads);

  Type ParseStandaloneType();

 private:
  // ----- token handling (inline: every sublanguage file calls these) ------
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
  void ParseVersion();

  void ParseItemHeader();

  // Skips from '{' to its matching '}' with a raw byte scan (strings and
  // comments respected); the body is tokenized once, in the second pass.
  void SkipBracedBlock();

  Attrs ParseAttrMap();

  // ----- function bodies -------------------------------------------------
  // Per function body. One table holds every local name with its state (a
  // quarter of a large function's parse time went to four node-based string
  // maps); generated names index arrays (internal/name_table.h).
  struct FuncCtx {
    ItemInfo* item;
    internal::NameTable<LocalName> names;
    std::vector<NameHint> scope_names;  // names defined, innermost scope last
    std::vector<size_t> scope_marks;    // scope_names size at each scope's start
    // The parameters' scope and the body's: scope_marks' first two.
    static constexpr size_t kItemScopes = 2;
    uint32_t next_index = 0;  // the next variable's dense index
    size_t done_from = 0;     // the body's text not yet handed to done_with
    uint32_t defines = 0;
  };
  // Hands the current item's text behind the lexer to done_with_ (every
  // kDoneEvery definitions, less a margin; the rest when the body ends).
  static constexpr uint32_t kDoneEvery = 1 << 14;
  void DoneWithTextBehind(bool whole_body);

  void ParseItemBody(ItemInfo& item);

  void CheckNotVisible(const NameHint& name, Loc loc);

  // Makes `name` name `v` from here on.
  void Define(const Var& v, const NameHint& name, Loc loc);

  Var LookupLocal(const Token& t);

  // body := '{' (binding | dataflow-block)* expr '}'
  SeqExpr ParseBody(int depth);

  // A binding of an ordinary block or of a dataflow block: in one, its
  // variable is made a dataflow variable (the output line, read after the
  // bindings, clears the flag of those it lists).
  Binding ParseBinding(int depth, bool in_dataflow_block);

  Block ParseDataflowBlock(int depth);

  // ----- the raw scan of bindings, and large blocks on several threads
  // (parse_parallel.cc) ---------------------------------------------------
  // A binding `%name: TYPE = VALUE;` on one line, found by a raw scan.
  struct SimpleBinding {
    Var var;
    size_t value_off;   // the value's first byte
    size_t semi_off;    // its ';'
    int64_t line;       // the line holding both
    size_t line_start;  // that line's first byte
  };
  // Step 1a of the scan: where the parts of a binding of that form are;
  // nothing made yet. 48 bytes (a window of them is held): offsets
  // within the binding are 32-bit, counted from its '%' (a binding of more
  // than 4 GiB, or a '%' that far into its line, ends the scan).
  struct RawBinding {
    size_t at;                    // the '%'
    int64_t line;                 // the line holding all of it
    uint32_t col;                 // the '%''s column: at - that line's first byte + 1
    uint32_t name_end;            // the name is (at, at + name_end)
    uint32_t type_off, type_end;  // the type's spelling
    uint32_t eq_off;              // the '=' after it
    uint32_t value_off;           // the value's first byte
    uint32_t semi_off;            // its ';'
    size_t Abs(uint32_t off) const { return at + off; }
    size_t line_start() const { return at + 1 - col; }
  };
  static_assert(sizeof(RawBinding) <= 48);
  // Where the raw scan goes on: a statement's first byte, its line, and a
  // line start such that the byte's column is p - line_start + 1.
  struct ScanAt {
    size_t p;
    int64_t line;
    size_t line_start;
  };
  // Reads up to `max` bindings of the simple form from `at` into `out`,
  // stopping at the first statement of another form; leaves `at` at the
  // statement after the last one read. Reads src_ only: it runs on the pool
  // while the values of the window before are parsed.
  void ScanSimpleBindings(ScanAt* at, size_t max, std::vector<RawBinding>* out) const;
  // Parses `item`'s body with the raw scan of bindings (unless
  // ParseOptions::scan_bindings is off), its values on up to `threads`
  // threads when the body is large; on SerialRetry, again without the scan.
  void ParseItemBodyInParallel(ItemInfo& item, int threads);
  // At a binding of a dataflow block or of an ordinary one (as for
  // ParseBinding): parses the bindings of simple form
  // from here on, windows of them at a time: this thread reads each
  // binding's name and type and defines its variable, in order, then the
  // values are parsed on the pool. Stops at the first statement of another
  // form (the caller goes on serially from there; if that is the first,
  // nothing changed). Throws SerialRetry if a value fails to parse.
  void ParseSimpleBindingsInParallel(int depth, bool in_dataflow_block,
                                     std::vector<Binding>* bindings);
  // The type written from `type_off` to the '=' at `eq_off`, or null.
  Type ParseTypeBetween(size_t type_off, size_t eq_off, int64_t line, size_t line_start, int depth);
  // The values of `window`, appended to `bindings`; `beside` (if set) runs
  // on the pool with them (the next window's raw scan).
  void ParseValuesInParallel(int depth, const std::vector<SimpleBinding>& window,
                             std::vector<Binding>* bindings,
                             const std::function<void()>& beside = nullptr);
  // Parses the values of window[lo, hi) into out[0, hi - lo); false if one
  // does not end at its ';' or does not fit its variable's type.
  bool ParseValues(int depth, const std::vector<SimpleBinding>& window, size_t lo, size_t hi,
                   Binding* out);

  // ----- expressions -----------------------------------------------------
  Expr ParseExpr(int depth);

  int64_t ParseInt64(const Token& t);

  double ParseDouble(const Token& t);

  bool IsFloatWord() const { return IsIdent("inf") || IsIdent("nan"); }

  Expr ParsePrimary(int depth);

  // Returns the item named by the global token `t`; fails if there is none.
  ItemInfo& GlobalInfo(const Token& t);

  Expr ParseGlobalRef(int depth);

  struct CallArgs {
    std::vector<Expr> args;
    std::vector<Loc> arg_locs;
    std::vector<Attrs::Entry> attrs;
    Loc first_attr;
    std::vector<Type> sinfo;
  };

  // Parses `(args, key=value, sinfo_args=[...])` into `out`, cleared first
  // (its vectors keep their capacity).
  void ParseCallArgsInto(int depth, CallArgs& out);
  CallArgs ParseCallArgs(int depth) {
    CallArgs out;
    ParseCallArgsInto(depth, out);
    return out;
  }

  Expr ParseOpCall(int depth);

  Expr ParseIf(int depth);

  // fn '(' (%name ':' type),* ')' ('->' type)? body
  Expr ParseLocalFn(int depth);

  // const<Type>[elems] | const<Type>x"hex"
  Expr ParseConstant();

  template <typename T>
  void PutRaw(T v, std::string* out);

  void AppendElement(DataType dt, std::string* out);

  // ----- attribute values ------------------------------------------------
  bool AtTypeStart() const;

  AttrValue ParseAttrScalar();

  // A scalar, a list `[v, ...]` or a map `{key = v, ...}` (keys are names or
  // strings), nested at most AttrValue::kMaxAttrDepth deep.
  AttrValue ParseAttrValue(int depth = 0);

  // ----- types -----------------------------------------------------------
  // A dimension: an integer, a name, or an expression over them with `+`,
  // `-`, `*` and parentheses (`n + 1`, `(r + 1) * 8`).
  Dim ParseDimSum(int depth);
  Dim ParseDimProduct(int depth);
  Dim ParseDimAtom(int depth);

  std::vector<Dim> ParseDims();

  DataType ParseDTypeName();

  int ParseNdim();

  Type ParseTypeAt(int depth);

  std::string_view src_;
  const std::function<void(size_t, size_t)>* done_with_ = nullptr;  // ParseOptions::done_with
  std::string filename_;
  Cursor c_;
  std::shared_ptr<ModuleItems> module_;
  std::vector<std::unique_ptr<ItemInfo>>& items_;
  std::unordered_map<std::string, size_t>& item_index_;
  FuncCtx* ctx_ = nullptr;
  int on_demand_depth_ = 0;
  std::unordered_map<std::string, Op> op_cache_;  // the registry takes a lock per lookup
  // ParseOpCall's arguments, reused: a fresh CallArgs a call cost four
  // vector allocations and frees (bench/RESULTS.md). A stack, not one per
  // parse depth: a call nested in another's arguments, or in a body parsed
  // on demand from them (which starts again at depth 1), takes the next
  // entry while the outer one is half built. Pointers, so that growing the
  // stack moves no CallArgs in use.
  std::vector<std::unique_ptr<CallArgs>> call_args_scratch_;
  size_t call_args_in_use_ = 0;
  // Takes the next free entry for its lifetime (also when a Fail throws).
  struct ScratchCallArgs {
    explicit ScratchCallArgs(TextParser& p) : parser(p), args(Take(p)) {}
    ~ScratchCallArgs() { --parser.call_args_in_use_; }
    static CallArgs& Take(TextParser& p) {
      if (p.call_args_scratch_.size() == p.call_args_in_use_)
        p.call_args_scratch_.push_back(std::make_unique<CallArgs>());
      return *p.call_args_scratch_[p.call_args_in_use_++];
    }
    TextParser& parser;
    CallArgs& args;
  };
  int dim_terms_ = 0;  // operands of the dimension expression being read
  // Bindings of the printer's form are read by the raw scan
  // (ParseSimpleBindingsInParallel): set while a body of a declared return
  // type parses (ParseItemBodyInParallel, which catches SerialRetry).
  bool scan_simple_ = false;
  bool allow_scan_ = true;  // ParseOptions::scan_bindings
  // Threads for the values of a large block (1: this thread).
  int block_threads_ = 1;
  // The raw scan's types by spelling (types are interned and context-free;
  // the views are into src_) and its window, kept for the next body.
  std::unordered_map<std::string_view, Type> types_by_spelling_;
  std::vector<SimpleBinding> window_;
  // The raw scan of a window; read by step 1, then the next window's, which
  // is scanned while the values are parsed (they read `window_`).
  std::vector<RawBinding> raw_;
  // While a value is parsed on another thread: the index of the variable it
  // binds; a name of a variable at or past it is not visible yet.
  uint32_t visible_below_ = UINT32_MAX;
  size_t parallel_count_ = 0;         // this item's bindings parsed on the pool
  size_t* parallel_total_ = nullptr;  // ParseOptions::parallel_bindings
};

}  // namespace plir::text_internal

#endif  // PLIR_IR_TEXT_PARSER_IMPL_H_
