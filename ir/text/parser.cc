// Recursive-descent parser with a nesting limit. Two passes: the first reads
// every item's signature and skips bodies (items may refer to globals defined
// later), the second parses the bodies. A call of a function whose return
// type is not written and not yet known parses that function first.
//
// The class and its sublanguage files: parser_impl.h.
#include <algorithm>

#include "ir/text/parser_impl.h"

namespace plir::text_internal {

namespace {

// The excerpt shows at most this many bytes of the line on each side of the
// error's column (the whole line when it is shorter): a 3 GB line costs no
// more than a short one.
constexpr size_t kExcerptBytes = 100;

}  // namespace

// Formats "file:line:col: message", then an excerpt of the source line with
// a caret under the column. The excerpt is bounded (kExcerptBytes each side
// of the column) and printable: control bytes and bytes that are not valid
// UTF-8 show as \xHH, never raw.
Status FormatError(std::string_view src, const std::string& filename, const ParseFailure& f) {
  std::string msg =
      filename + ":" + std::to_string(f.line) + ":" + std::to_string(f.col) + ": " + f.message;
  size_t pos = 0;
  for (int64_t l = 1; l < f.line && pos != std::string_view::npos; ++l) {
    pos = src.find('\n', pos);
    if (pos != std::string_view::npos) ++pos;
  }
  if (pos == std::string_view::npos || pos > src.size()) return InvalidArgument(msg);
  // The column's byte offset in the line (columns count characters, not
  // UTF-8 continuation bytes, as the lexer counts them), looking no
  // further than the line's end.
  size_t at = pos;
  for (int64_t col = 1; at < src.size() && src[at] != '\n';) {
    if ((static_cast<unsigned char>(src[at]) & 0xc0) != 0x80) {
      if (col >= f.col) break;
      ++col;
    }
    ++at;  // as far as the lexer read already: no more work than the parse
  }
  size_t from = pos;
  if (at - pos > kExcerptBytes) from = at - kExcerptBytes;
  while (from < at && (static_cast<unsigned char>(src[from]) & 0xc0) == 0x80) ++from;
  size_t end = from;
  size_t limit = std::min(src.size(), at + kExcerptBytes);
  while (end < limit && src[end] != '\n') ++end;
  if (end == pos) return InvalidArgument(msg);
  std::string line, caret;
  if (from > pos) line = "...", caret = "   ";
  static const char* kHex = "0123456789abcdef";
  for (size_t i = from; i < end;) {
    size_t n = Utf8SequenceLength(src.substr(i, end - i));
    unsigned char c = static_cast<unsigned char>(src[i]);
    bool before = i < at;
    if (n == 1 && c >= 0x20 && c != 0x7f) {
      line.push_back(src[i]);
      if (before) caret.push_back(' ');
    } else if (c == '\t') {
      line.push_back('\t');
      if (before) caret.push_back('\t');
    } else if (n > 1 && src.substr(i, n) != "\xef\xbb\xbf") {  // a BOM is invisible: escaped
      line.append(src.substr(i, n));
      if (before) caret.push_back(' ');
    } else {  // a control byte, or not UTF-8: four characters
      n = 1;
      line += "\\x";
      line.push_back(kHex[c >> 4]);
      line.push_back(kHex[c & 15]);
      if (before) caret += "    ";
    }
    i += n;
  }
  if (end < src.size() && src[end] != '\n') line += "...";
  msg += "\n  " + line + "\n  " + caret + "^";
  return InvalidArgument(msg);
}

Module TextParser::ParseModuleText(int threads) {
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
    // One body (or little text): its large blocks may use the threads.
    for (ItemInfo* item : rest)
      if (item->state == ItemInfo::kPending) ParseItemBodyInParallel(*item, threads);
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
        workers[w]->ParseItemBodyInParallel(*rest[i], 1);
      } catch (ParseFailure& f) {
        failures[i] = std::move(f);
        size_t cur = first_failure.load();
        while (i < cur && !first_failure.compare_exchange_weak(cur, i)) {
        }
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

Type TextParser::ParseStandaloneType() {
  Type t = ParseTypeAt(0);
  if (c_.cur.kind != Tok::kEof) FailExpected("end of input");
  return t;
}

void TextParser::ParseVersion() {
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

void TextParser::ParseItemHeader() {
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
      item->params.push_back(
          VarNode::Make(NameHint(name), t, false, static_cast<uint32_t>(item->params.size())));
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

void TextParser::SkipBracedBlock() {
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

Attrs TextParser::ParseAttrMap() {
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

void TextParser::ParseItemBody(ItemInfo& item) {
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
  ctx.done_from = c_.lex.offset();
  SeqExpr body = ParseBody(1);
  DoneWithTextBehind(/*whole_body=*/true);
  if (item.declared_ret && !TypeCompatible(item.declared_ret, body->type()))
    Fail("@" + item.name + " returns " + TypeToString(body->type()) +
             ", which does not match its declared return type " + TypeToString(item.declared_ret),
         body_loc);
  item.result = FunctionNode::Make(item.name, item.params, item.declared_ret, body, item.attrs);
  // A declared return type is item.ret from the header on, and calls parsed
  // on other threads read it meanwhile (ParseGlobalRef): it is not written
  // again (ThreadSanitizer saw the rewrite of the same value race with
  // those reads).
  if (!item.declared_ret) item.ret = item.result->ret_type();
  item.state = ItemInfo::kDone;
  ctx_ = saved_ctx;
  c_ = std::move(saved);
  --on_demand_depth_;
}

void TextParser::CheckNotVisible(const NameHint& name, Loc loc) {
  const LocalName* n = ctx_->names.Find(name);
  if (n && n->state == LocalName::kVisible)
    Fail("%" + name.str() + " is already defined at " + std::to_string(n->loc().line) + ":" +
             std::to_string(n->loc().col),
         loc);
}

void TextParser::DoneWithTextBehind(bool whole_body) {
  if (!done_with_) return;
  // Within the body, what lies a margin behind the lexer's offset is behind
  // the current token and any token read ahead; at its end, the text up to
  // the current token (the one after the closing brace).
  constexpr size_t kMargin = 1 << 16;
  size_t end = c_.lex.offset();
  const char* cur = c_.cur.text.data();
  if (!whole_body || c_.peek || cur < src_.data() || cur > src_.data() + src_.size())
    end = end > kMargin ? end - kMargin : 0;
  else
    end = static_cast<size_t>(cur - src_.data());
  if (end > ctx_->done_from) {
    (*done_with_)(ctx_->done_from, end);
    ctx_->done_from = end;
  }
}

void TextParser::Define(const Var& v, const NameHint& name, Loc loc) {
  if (done_with_ && ++ctx_->defines % kDoneEvery == 0) DoneWithTextBehind(false);
  auto [entry, inserted] = ctx_->names.Insert(name, LocalName{v, loc});
  if (!inserted) {
    if (entry->state == LocalName::kVisible)
      Fail("%" + name.str() + " is already defined at " + std::to_string(entry->loc().line) + ":" +
               std::to_string(entry->loc().col),
           loc);
    *entry = LocalName{v, loc};
  }
  // The item's own scopes (its parameters' and its body's) end with the
  // item, and its table with them: only names of nested scopes are recorded
  // to be put out of scope (at a million bindings, 16 MB not held).
  if (ctx_->scope_marks.size() > FuncCtx::kItemScopes) ctx_->scope_names.push_back(name);
}

Var TextParser::LookupLocal(const Token& t) {
  const LocalName* n = ctx_->names.Find(NameHint(t.text));
  if (n && n->state == LocalName::kVisible) {
    if (n->var->index() >= visible_below_) Fail("used before its definition", LocOf(t));
    return n->var;
  }
  std::string name(t.text);
  if (n && n->state == LocalName::kDeadDataflow)
    Fail("%" + name + " is a dataflow variable of the block at " + std::to_string(n->loc().line) +
             ":" + std::to_string(n->loc().col) +
             " and is not visible outside it (list it in the block's output line)",
         LocOf(t));
  if (n)
    Fail("%" + name + " (defined at " + std::to_string(n->loc().line) + ":" +
             std::to_string(n->loc().col) +
             ") is not visible here: it is local to an if branch or a local function",
         LocOf(t));
  Fail("undefined variable %" + name, LocOf(t));
}

SeqExpr TextParser::ParseBody(int depth) {
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
        if (scan_simple_ && next == Tok::kColon) {
          const size_t before = ordinary.size();
          ParseSimpleBindingsInParallel(depth, false, &ordinary);
          if (ordinary.size() > before) continue;
        }
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

Binding TextParser::ParseBinding(int depth, bool in_dataflow_block) {
  std::string_view name_text = c_.cur.text;
  NameHint name(name_text);
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
  // A dataflow block's variable is a dataflow variable until its output
  // line lists it (ParseDataflowBlock).
  Var v = VarNode::Make(name, annotation ? annotation : value->type(), in_dataflow_block,
                        ctx_->next_index++);
  Define(v, name, loc);
  return VarBindingNode::Make(v, std::move(value));
}

Block TextParser::ParseDataflowBlock(int depth) {
  Loc block_loc = Here();
  Advance();  // dataflow
  Expect(Tok::kLBrace, "'{'");
  std::vector<Binding> bindings;
  // Variables numbered from here on are this block's (or of bodies nested
  // in it, which are out of scope again by the output line).
  uint32_t first_index = ctx_->next_index;
  if (scan_simple_) ParseSimpleBindingsInParallel(depth, true, &bindings);
  while (Is(Tok::kLocal)) bindings.push_back(ParseBinding(depth, true));
  if (IsIdent("output")) {
    Advance();
    std::unordered_set<std::string_view> listed;
    if (!Is(Tok::kSemi)) {
      while (true) {
        if (!Is(Tok::kLocal)) FailExpected("a variable of this block in the output line");
        std::string_view name = c_.cur.text;
        const LocalName* n = ctx_->names.Find(NameHint(name));
        if (!n || n->state != LocalName::kVisible || n->var->index() < first_index)
          Fail("%" + std::string(name) + " in the output line is not bound in this dataflow block",
               Here());
        if (!listed.insert(name).second)
          Fail("%" + std::string(name) + " is listed twice in the output line", Here());
        // Made in this block as a dataflow variable, and held by nothing
        // outside this parse yet: it leaves the block.
        n->var->ClearDataflowWhileUnshared();
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

}  // namespace plir::text_internal

namespace plir {

using text_internal::FormatError;
using text_internal::ParseFailure;
using text_internal::TextParser;

StatusOr<Module> ParseModule(std::string_view text, const ParseOptions& options) {
  try {
    TextParser p(text, options.filename);
    if (options.done_with) p.SetDoneWith(&options.done_with);
    p.SetScanBindings(options.scan_bindings);
    if (options.parallel_bindings) {
      *options.parallel_bindings = 0;
      p.SetParallelCounter(options.parallel_bindings);
    }
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

}  // namespace plir
