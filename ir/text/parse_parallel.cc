// Bindings of the printer's form read by a raw byte scan, and one large
// block (dataflow or ordinary) parsed on several threads (issue 25: a
// module of one function of a million bindings otherwise parses on one
// thread). The scan is used in every body of a written return type; its
// values go to the pool in bodies of a megabyte or more.
//
// A binding's variable must exist before any later value that names it is
// parsed, and variables are numbered and named in order, so a block is
// read in windows of bindings, each in two steps:
//   1. a raw byte scan (ScanSimpleBindings) finds each binding of the simple
//      form `%name: TYPE = VALUE;` (all on one line, no braces, no comments
//      in it, ASCII only: what the printer writes for ASCII names and
//      strings): the spans of its name, its type and its value up to the
//      ';'. Then this thread parses each type (once per distinct spelling)
//      and makes and defines the variable as ParseBinding would (same
//      order, same index, same dataflow flag, same location);
//   2. the values are parsed (on the pool in a large body, each run by a
//      worker parser that reads this one's names), each seeing only the
//      variables numbered before the one it binds. The next window's byte
//      scan, which reads only the text, runs beside them.
// The raw scan only decides where statements start and end; the tokens are
// the lexer's, and a value must end at the ';' the scan found. Anything
// else (another form, a redefinition, an unreadable type) ends the scan
// there, and the serial parser goes on from that statement. A value that
// fails to parse throws SerialRetry: the item is parsed again without the
// scan, so a module and an error message are the tokenizing parser's,
// whatever the number of threads.
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "ir/internal/node_memory_ahead.h"
#include "ir/text/parser_impl.h"
#include "ir/text_rules.h"

namespace plir::text_internal {

namespace {

constexpr size_t kWindowBindings = 1 << 16;  // step 1 then step 2, per window
constexpr size_t kRunBindings = 1 << 12;     // values per task of step 2
constexpr size_t kMinBodyBytes = 1 << 20;    // smaller bodies parse serially

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// The bytes the raw scan's type and value loops act on, by class; every
// other byte (most of them) is skipped by a loop of one table load per byte
// instead of a dozen compares (the compares were most of the scan's time).
enum ScanClass : uint8_t { kPlain = 0, kOpen, kClose, kEquals, kSemi, kQuote, kStop };
struct ScanTables {
  std::array<uint8_t, 256> type{}, value{};
};
constexpr ScanTables MakeScanTables() {
  ScanTables t;
  for (int c = 0x80; c < 256; ++c) t.type[c] = t.value[c] = kStop;  // not ASCII
  for (char c : {'(', '['})
    t.type[static_cast<uint8_t>(c)] = t.value[static_cast<uint8_t>(c)] = kOpen;
  for (char c : {')', ']'})
    t.type[static_cast<uint8_t>(c)] = t.value[static_cast<uint8_t>(c)] = kClose;
  // A type ends at its '='; no string, scope, statement end, comment or
  // constant in it, and on one line.
  t.type['='] = kEquals;
  for (char c : {'\n', '\r', '"', '{', '}', ';', '/', '<', '>'})
    t.type[static_cast<uint8_t>(c)] = kStop;
  // A value ends at its ';'; strings are skipped; no scope or comment in it,
  // and on one line.
  t.value[';'] = kSemi;
  t.value['"'] = kQuote;
  for (char c : {'\n', '\r', '{', '}', '/'}) t.value[static_cast<uint8_t>(c)] = kStop;
  return t;
}
constexpr ScanTables kScan = MakeScanTables();
// Columns count characters: with ASCII only on a scanned line (up to where
// the scan stops), a column is the first token's plus the bytes between.
bool IsAscii(char c) { return static_cast<unsigned char>(c) < 0x80; }

}  // namespace

void TextParser::ParseItemBodyInParallel(ItemInfo& item, int threads) {
  if (!allow_scan_) return ParseItemBody(item);
  if (threads <= 0) threads = DefaultThreads();
  Cursor saved = c_;
  FuncCtx* saved_ctx = ctx_;
  const int saved_depth = on_demand_depth_;
  scan_simple_ = true;
  block_threads_ = threads >= 2 && item.body_bytes >= kMinBodyBytes ? threads : 1;
  parallel_count_ = 0;
  // One large body: this thread makes every variable in order (step 1 of
  // each window) while the other cores wait, and a third of that was page
  // faults in new node memory. A helper faults it in ahead, on a core that
  // is idle then. This thread builds about 1.4 bytes of nodes per byte of
  // text (all the variables, its share of the values); the estimate may be
  // over (it costs address space, not memory).
  std::optional<internal::NodeMemoryAhead> ahead;
  if (block_threads_ > 1) ahead.emplace(2 * item.body_bytes);
  try {
    ParseItemBody(item);
    if (parallel_total_) *parallel_total_ += parallel_count_;
  } catch (const SerialRetry&) {
    c_ = std::move(saved);
    ctx_ = saved_ctx;
    on_demand_depth_ = saved_depth;
    visible_below_ = UINT32_MAX;
    item.state = ItemInfo::kPending;
    scan_simple_ = false;
    block_threads_ = 1;
    ParseItemBody(item);
  }
  scan_simple_ = false;
  block_threads_ = 1;
}

Type TextParser::ParseTypeBetween(size_t type_off, size_t eq_off, int64_t line, size_t line_start,
                                  int depth) {
  Cursor saved = c_;
  Type t;
  try {
    c_.lex.SeekTo(type_off, line, static_cast<int64_t>(type_off - line_start) + 1);
    c_.peek.reset();
    Advance();
    t = ParseTypeAt(depth);
    if (!Is(Tok::kEq) || c_.cur.text.data() != src_.data() + eq_off) t = Type();
  } catch (const ParseFailure&) {
    t = Type();
  }
  c_ = std::move(saved);
  return t;
}

void TextParser::ScanSimpleBindings(ScanAt* at, size_t max, std::vector<RawBinding>* out) const {
  const char* s = src_.data();
  const size_t n = src_.size();
  size_t p = at->p;
  int64_t line = at->line;
  size_t line_start = at->line_start;
  out->clear();
  while (out->size() < max && p < n && s[p] == '%') {
    size_t q = p + 1;
    while (q < n && IsIdentChar(s[q])) ++q;
    if (q == p + 1) break;
    const size_t name_end = q;
    while (q < n && IsSpace(s[q])) ++q;
    if (q >= n || s[q] != ':') break;
    ++q;
    while (q < n && IsSpace(s[q])) ++q;
    // The type: to the '=' outside brackets.
    const size_t type_off = q;
    int nest = 0;
    bool ok = true;
    for (; q < n; ++q) {
      while (q < n && kScan.type[static_cast<uint8_t>(s[q])] == kPlain) ++q;
      if (q >= n) break;
      const uint8_t c = kScan.type[static_cast<uint8_t>(s[q])];
      if (c == kOpen) {
        ++nest;
      } else if (c == kClose) {
        if (--nest < 0) ok = false;
      } else if (c == kEquals) {
        if (nest == 0) break;
      } else {
        ok = false;
      }
      if (!ok) break;
    }
    if (!ok || q >= n || s[q] != '=') break;
    const size_t eq_off = q;
    size_t type_end = eq_off;
    while (type_end > type_off && IsSpace(s[type_end - 1])) --type_end;
    if (type_end == type_off) break;
    // The value: to the ';' outside brackets and strings.
    ++q;
    while (q < n && IsSpace(s[q])) ++q;
    const size_t value_off = q;
    nest = 0;
    for (; q < n; ++q) {
      while (q < n && kScan.value[static_cast<uint8_t>(s[q])] == kPlain) ++q;
      if (q >= n) break;
      const uint8_t c = kScan.value[static_cast<uint8_t>(s[q])];
      if (c == kSemi) {
        if (nest == 0) break;
      } else if (c == kOpen) {
        ++nest;
      } else if (c == kClose) {
        if (--nest < 0) ok = false;
      } else if (c == kQuote) {  // a string: to its closing quote on this line
        for (++q; q < n && s[q] != '"'; ++q) {
          if (s[q] == '\n' || s[q] == '\r' || !IsAscii(s[q])) ok = false;
          if (s[q] == '\\') {  // an escaped line end is a line: not here
            if (q + 1 < n && (s[q + 1] == '\n' || s[q + 1] == '\r')) ok = false;
            ++q;
          }
          if (!ok) break;
        }
        if (q >= n) ok = false;
      } else {
        ok = false;  // a nested scope, a comment, more than one line
      }
      if (!ok) break;
    }
    if (!ok || q >= n || s[q] != ';' || q == value_off) break;
    if (q - p > UINT32_MAX || p - line_start >= UINT32_MAX) break;  // RawBinding's 32-bit offsets
    auto rel = [p](size_t off) { return static_cast<uint32_t>(off - p); };
    out->push_back({p, line, static_cast<uint32_t>(p - line_start + 1), rel(name_end),
                    rel(type_off), rel(type_end), rel(eq_off), rel(value_off), rel(q)});
    // To the next statement: spaces, line ends and line comments.
    p = q + 1;
    while (p < n) {
      if (IsSpace(s[p]) || (s[p] == '\r' && p + 1 < n && s[p + 1] == '\n')) {
        ++p;
      } else if (s[p] == '\n') {
        ++line;
        line_start = ++p;
      } else if (s[p] == '/' && p + 1 < n && s[p + 1] == '/') {
        while (p < n && s[p] != '\n' && s[p] != '\r') ++p;
      } else {
        break;
      }
    }
  }
  *at = ScanAt{p, line, line_start};
}

void TextParser::ParseSimpleBindingsInParallel(int depth, bool in_dataflow_block,
                                               std::vector<Binding>* bindings) {
  if (!Is(Tok::kLocal)) return;
  const char* s = src_.data();
  std::unordered_map<std::string_view, Type>& types = types_by_spelling_;
  std::vector<SimpleBinding>& window = window_;
  // The current token is `%name`; the lexer is past it (and a token peeked,
  // maybe: the position is reset after each window). The line start makes
  // p - line_start + 1 the token's column (on a line with UTF-8 before it,
  // not the line's first byte).
  ScanAt at;
  at.p = static_cast<size_t>(c_.cur.text.data() - s) - 1;
  at.line = c_.cur.line;
  at.line_start = at.p - static_cast<size_t>(c_.cur.col - 1);
  ScanSimpleBindings(&at, kWindowBindings, &raw_);
  while (!raw_.empty()) {
    // Step 1: the variables, in order, as ParseBinding makes them.
    window.clear();
    for (const RawBinding& r : raw_) {
      const std::string_view spelling(s + r.Abs(r.type_off), r.type_end - r.type_off);
      Type type;
      if (auto it = types.find(spelling); it != types.end()) {
        type = it->second;
      } else {
        type =
            ParseTypeBetween(r.Abs(r.type_off), r.Abs(r.eq_off), r.line, r.line_start(), depth + 1);
        if (!type) break;
        types.emplace(spelling, type);
      }
      // As ParseBinding: the name must not be visible (else the serial
      // parser reports it, after the values before it).
      const std::string_view name_text(s + r.at + 1, r.name_end - 1);
      NameHint name(name_text);
      const LocalName* known = ctx_->names.Find(name);
      if (known && known->state == LocalName::kVisible) break;
      Var v = VarNode::Make(name, type, in_dataflow_block, ctx_->next_index++);
      Define(v, name, Loc{r.line, static_cast<int64_t>(r.col)});
      window.push_back(
          {std::move(v), r.Abs(r.value_off), r.Abs(r.semi_off), r.line, r.line_start()});
    }
    if (window.empty()) return;
    // Step 2; beside it, when this window is full, the next one's raw scan
    // (it reads only the text, while the values read the names), into raw_,
    // which step 1 is done with.
    const bool full = window.size() == kWindowBindings;
    ParseValuesInParallel(
        depth, window, bindings,
        full ? std::function<void()>([&] { ScanSimpleBindings(&at, kWindowBindings, &raw_); })
             : nullptr);
    // Go on after the window's last ';', as the serial parser would be.
    const SimpleBinding& last = window.back();
    c_.lex.SeekTo(last.semi_off + 1, last.line,
                  static_cast<int64_t>(last.semi_off + 1 - last.line_start) + 1);
    c_.peek.reset();
    Advance();
    DoneWithTextBehind(false);
    if (!full) return;  // stopped before another form
  }
}

bool TextParser::ParseValues(int depth, const std::vector<SimpleBinding>& window, size_t lo,
                             size_t hi, Binding* out) {
  for (size_t j = lo; j < hi; ++j) {
    const SimpleBinding& b = window[j];
    c_.lex.SeekTo(b.value_off, b.line, static_cast<int64_t>(b.value_off - b.line_start) + 1);
    c_.peek.reset();
    Advance();
    visible_below_ = b.var->index();
    Expr value = ParseExpr(depth + 1);
    // ParseBinding's checks: the value ends at the ';' and fits the
    // annotation (interned: an equal type is the same node, so the
    // variable's type is what ParseBinding would give it).
    if (!Is(Tok::kSemi) || c_.cur.text.data() != src_.data() + b.semi_off ||
        !TypeCompatible(b.var->type(), value->type()))
      return false;
    out[j - lo] = VarBindingNode::Make(b.var, std::move(value));
  }
  return true;
}

void TextParser::ParseValuesInParallel(int depth, const std::vector<SimpleBinding>& window,
                                       std::vector<Binding>* bindings,
                                       const std::function<void()>& beside) {
  const size_t base = bindings->size();
  bindings->resize(base + window.size());
  Binding* out = bindings->data() + base;
  const size_t runs = (window.size() + kRunBindings - 1) / kRunBindings;
  if (block_threads_ <= 1 || runs <= 1) {  // on this thread, by this parser
    bool ok = false;
    try {
      ok = ParseValues(depth, window, 0, window.size(), out);
    } catch (const ParseFailure&) {
    }
    visible_below_ = UINT32_MAX;
    if (!ok) throw SerialRetry{};
    if (beside) beside();
    return;
  }
  std::atomic<bool> failed{false}, out_of_memory{false};
  const size_t extra = beside ? 1 : 0;  // task 0 runs `beside`
  ParallelFor(runs + extra, block_threads_, [&](size_t task, size_t) {
    if (failed.load(std::memory_order_relaxed)) return;
    if (extra && task == 0) {
      try {
        beside();
      } catch (const std::bad_alloc&) {
        out_of_memory = true;
        failed = true;
      }
      return;
    }
    const size_t r = task - extra;
    try {
      TextParser worker(*this);
      worker.ctx_ = ctx_;  // read only: values define nothing
      const size_t lo = r * kRunBindings, hi = std::min(window.size(), lo + kRunBindings);
      if (!worker.ParseValues(depth, window, lo, hi, out + lo)) failed = true;
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
      failed = true;
    } catch (...) {  // ParseFailure: the serial parse reports it
      failed = true;
    }
  });
  if (out_of_memory) throw std::bad_alloc();
  if (failed) throw SerialRetry{};
  parallel_count_ += window.size();
}

}  // namespace plir::text_internal
