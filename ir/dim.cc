// The dimension algebra: canonical text of dimension expressions, folding,
// evaluation and substitution (ir/dim.h).
#include "ir/dim.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "ir/checked_math.h"
#include "ir/text_rules.h"

namespace plir {

std::string DimToString(const Dim& d) {
  return d.is_const() ? std::to_string(d.value) : d.sym.str();
}

// ----- dimension expressions ---------------------------------------------
namespace {

// An expression tree, parsed from a Dim's text when an operation needs it.
struct DimTerm {
  enum Kind { kConst, kName, kAdd, kSub, kMul } kind = kConst;
  int64_t value = 0;
  Symbol name;
  int a = -1, b = -1;  // operands (indices into the tree's nodes)
};
struct DimTree {
  std::vector<DimTerm> nodes;
  int root = -1;
};

constexpr int kMaxDimDepth = 64;

// Names in dimensions are the text format's identifiers (ir/text_rules.h).

class DimTextParser {
 public:
  explicit DimTextParser(std::string_view s) : s_(s) {}
  StatusOr<DimTree> Parse() {
    DimTree t;
    PLIR_ASSIGN_OR_RETURN(t.root, Sum(&t, 0));
    Space();
    if (p_ != s_.size()) return Bad("unexpected '" + std::string(1, s_[p_]) + "'");
    return t;
  }

 private:
  Status Bad(const std::string& what) const {
    return InvalidArgument("malformed dimension \"" + std::string(s_) + "\": " + what);
  }
  void Space() {
    while (p_ < s_.size() && s_[p_] == ' ') ++p_;
  }
  StatusOr<int> Sum(DimTree* t, int depth) {
    PLIR_ASSIGN_OR_RETURN(int l, Product(t, depth));
    while (true) {
      Space();
      if (p_ >= s_.size() || (s_[p_] != '+' && s_[p_] != '-')) return l;
      DimTerm::Kind k = s_[p_++] == '+' ? DimTerm::kAdd : DimTerm::kSub;
      PLIR_ASSIGN_OR_RETURN(int r, Product(t, depth));
      t->nodes.push_back({k, 0, Symbol(), l, r});
      l = static_cast<int>(t->nodes.size()) - 1;
    }
  }
  StatusOr<int> Product(DimTree* t, int depth) {
    PLIR_ASSIGN_OR_RETURN(int l, Atom(t, depth));
    while (true) {
      Space();
      if (p_ >= s_.size() || s_[p_] != '*') return l;
      ++p_;
      PLIR_ASSIGN_OR_RETURN(int r, Atom(t, depth));
      t->nodes.push_back({DimTerm::kMul, 0, Symbol(), l, r});
      l = static_cast<int>(t->nodes.size()) - 1;
    }
  }
  StatusOr<int> Atom(DimTree* t, int depth) {
    if (depth > kMaxDimDepth) return Bad("nested too deeply");
    if (static_cast<int>(t->nodes.size()) >= kMaxDimTerms)
      return Bad("more than " + std::to_string(kMaxDimTerms) + " terms");
    Space();
    if (p_ >= s_.size()) return Bad("ends early");
    char c = s_[p_];
    if (c == '(') {
      ++p_;
      PLIR_ASSIGN_OR_RETURN(int e, Sum(t, depth + 1));
      Space();
      if (p_ >= s_.size() || s_[p_] != ')') return Bad("missing ')'");
      ++p_;
      return e;
    }
    if (c >= '0' && c <= '9') {
      int64_t v = 0;
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') {
        auto m = CheckedMul(v, 10);
        auto a = m ? CheckedAdd(*m, s_[p_] - '0') : std::nullopt;
        if (!a) return Bad("integer out of range");
        v = *a;
        ++p_;
      }
      t->nodes.push_back({DimTerm::kConst, v, Symbol(), -1, -1});
      return static_cast<int>(t->nodes.size()) - 1;
    }
    if (IsIdentStart(c)) {
      size_t b = p_;
      while (p_ < s_.size() && IsIdentChar(s_[p_])) ++p_;
      t->nodes.push_back({DimTerm::kName, 0, Symbol(s_.substr(b, p_ - b)), -1, -1});
      return static_cast<int>(t->nodes.size()) - 1;
    }
    return Bad("unexpected '" + std::string(1, c) + "'");
  }
  std::string_view s_;
  size_t p_ = 0;
};

// The tree of `d` (a constant, a name or an expression).
DimTree TreeOf(const Dim& d) {
  if (d.is_const()) return DimTree{{{DimTerm::kConst, d.value, Symbol(), -1, -1}}, 0};
  if (!DimIsExpr(d)) return DimTree{{{DimTerm::kName, 0, d.sym, -1, -1}}, 0};
  auto t = DimTextParser(d.sym.str()).Parse();
  if (t.ok()) return *t;
  return DimTree{{{DimTerm::kName, 0, d.sym, -1, -1}}, 0};  // unreachable: made canonical
}

int Prec(DimTerm::Kind k) {
  return k == DimTerm::kMul ? 2 : (k == DimTerm::kAdd || k == DimTerm::kSub) ? 1 : 3;
}

// Builds the Dim of `op(a, b)` from operand Dims: folds constants, else
// prints the canonical text (an operand in parentheses where its precedence
// is lower, or equal on the right: the tree survives a re-parse).
Dim Combine(DimTerm::Kind op, const Dim& a, const Dim& b) {
  if (a.is_const() && b.is_const()) {
    std::optional<int64_t> r = op == DimTerm::kAdd   ? CheckedAdd(a.value, b.value)
                               : op == DimTerm::kMul ? CheckedMul(a.value, b.value)
                                                     : std::optional<int64_t>(a.value - b.value);
    if (r && *r >= 0) return Dim::Const(*r);
  }
  auto prec_of = [](const Dim& d) {
    if (!DimIsExpr(d)) return 3;
    DimTree t = TreeOf(d);
    return Prec(t.nodes[t.root].kind);
  };
  auto text = [](const Dim& d) { return d.is_const() ? std::to_string(d.value) : d.sym.str(); };
  int p = Prec(op);
  std::string l = text(a), r = text(b);
  if (prec_of(a) < p) l = "(" + l + ")";
  if (prec_of(b) <= p) r = "(" + r + ")";
  const char* sign = op == DimTerm::kAdd ? " + " : op == DimTerm::kSub ? " - " : " * ";
  return Dim::Sym(Symbol(l + sign + r));
}

Dim Build(const DimTree& t, int i, const std::function<std::optional<Dim>(Symbol)>* f) {
  const DimTerm& n = t.nodes[i];
  switch (n.kind) {
    case DimTerm::kConst:
      return Dim::Const(n.value);
    case DimTerm::kName: {
      if (f)
        if (std::optional<Dim> d = (*f)(n.name)) return *d;
      return Dim::Sym(n.name);
    }
    default:
      return Combine(n.kind, Build(t, n.a, f), Build(t, n.b, f));
  }
}

}  // namespace

bool DimIsExpr(const Dim& d) { return !d.is_const() && d.sym.str().find(' ') != std::string::npos; }

bool DimTooLarge(const Dim& d) {
  if (!DimIsExpr(d)) return false;
  // Each operator is printed with two spaces: counting them bounds the terms.
  const std::string& s = d.sym.str();
  return static_cast<int>(std::count(s.begin(), s.end(), ' ')) / 2 * 2 + 1 > kMaxDimTerms;
}

void DimNames(const Dim& d, std::vector<Symbol>* out) {
  if (d.is_const()) return;
  auto add = [&](Symbol s) {
    for (Symbol x : *out)
      if (x == s) return;
    out->push_back(s);
  };
  if (!DimIsExpr(d)) return add(d.sym);
  DimTree t = TreeOf(d);
  // Names in order of appearance: an in-order walk (the tree is small).
  std::vector<int> stack{t.root};
  while (!stack.empty()) {
    const DimTerm& n = t.nodes[stack.back()];
    stack.pop_back();
    if (n.kind == DimTerm::kName) add(n.name);
    if (n.b >= 0) stack.push_back(n.b);
    if (n.a >= 0) stack.push_back(n.a);
  }
}

std::optional<int64_t> EvalDim(const Dim& d,
                               const std::function<std::optional<int64_t>(Symbol)>& value) {
  if (d.is_const()) return d.value;
  if (!DimIsExpr(d)) return value(d.sym);
  DimTree t = TreeOf(d);
  std::vector<std::optional<int64_t>> v(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {  // operands precede their operator
    const DimTerm& n = t.nodes[i];
    switch (n.kind) {
      case DimTerm::kConst:
        v[i] = n.value;
        break;
      case DimTerm::kName:
        v[i] = value(n.name);
        break;
      default:
        if (!v[n.a] || !v[n.b]) break;
        if (n.kind == DimTerm::kAdd)
          v[i] = CheckedAdd(*v[n.a], *v[n.b]);
        else if (n.kind == DimTerm::kMul)
          v[i] = CheckedMul(*v[n.a], *v[n.b]);
        else
          v[i] = CheckedAdd(*v[n.a], -*v[n.b]);
    }
  }
  return v[t.root];
}

Dim SubstituteDim(const Dim& d, const std::function<std::optional<Dim>(Symbol)>& f) {
  if (d.is_const()) return d;
  if (!DimIsExpr(d)) {
    std::optional<Dim> r = f(d.sym);
    return r ? *r : d;
  }
  DimTree t = TreeOf(d);
  Dim r = Build(t, t.root, &f);
  return DimTooLarge(r) ? d : r;  // a substitution that would grow too large is not made
}

Dim DimAdd(const Dim& a, const Dim& b) { return Combine(DimTerm::kAdd, a, b); }
namespace {
// `d` as a linear combination of monomials (a product of names, keyed by
// the names joined with '*'; "" for the constant); nullopt if it is not
// one or a coefficient overflows.
using Linear = std::map<std::string, int64_t>;
std::optional<Linear> LinearOf(const DimTree& t, int i) {
  const DimTerm& n = t.nodes[i];
  switch (n.kind) {
    case DimTerm::kConst:
      return Linear{{"", n.value}};
    case DimTerm::kName:
      return Linear{{n.name.str(), 1}};
    default:
      break;
  }
  auto a = LinearOf(t, n.a), b = LinearOf(t, n.b);
  if (!a || !b) return std::nullopt;
  if (n.kind == DimTerm::kMul) {
    auto is_const = [](const Linear& l) { return l.size() == 1 && l.begin()->first.empty(); };
    if (is_const(*a) || is_const(*b)) {  // scaling by a constant
      int64_t k = is_const(*a) ? a->begin()->second : b->begin()->second;
      Linear out = is_const(*a) ? *b : *a;
      for (auto& [key, c] : out) {
        auto r = CheckedMul(c, k);
        if (!r) return std::nullopt;
        c = *r;
      }
      return out;
    }
    if (a->size() != 1 || b->size() != 1) return std::nullopt;
    auto [ka, ca] = *a->begin();
    auto [kb, cb] = *b->begin();
    auto c = CheckedMul(ca, cb);
    if (!c) return std::nullopt;
    std::string key = ka.empty() ? kb : kb.empty() ? ka : (ka < kb ? ka + "*" + kb : kb + "*" + ka);
    return Linear{{key, *c}};
  }
  for (auto [k, c] : *b) {
    auto r = CheckedAdd((*a)[k], n.kind == DimTerm::kAdd ? c : -c);
    if (!r || c == INT64_MIN) return std::nullopt;
    (*a)[k] = *r;
  }
  return a;
}
}  // namespace

// `a - b` folds to a constant when the two differ by one ((r + 1) * 8 - r * 8
// is 8), as TVM's arithmetic simplifier would.
Dim DimSub(const Dim& a, const Dim& b) {
  if (DimIsExpr(a) || DimIsExpr(b)) {
    DimTree ta = TreeOf(a), tb = TreeOf(b);
    auto la = LinearOf(ta, ta.root), lb = LinearOf(tb, tb.root);
    if (la && lb) {
      bool constant = true;
      int64_t diff = (*la)[""] - (*lb)[""];
      std::set<std::string> keys;
      for (auto& [k, c] : *la) keys.insert(k);
      for (auto& [k, c] : *lb) keys.insert(k);
      for (const std::string& k : keys)
        if (!k.empty() && (*la)[k] != (*lb)[k]) constant = false;
      if (constant && diff >= 0 && std::abs((*la)[""]) < (int64_t{1} << 62) &&
          std::abs((*lb)[""]) < (int64_t{1} << 62))
        return Dim::Const(diff);
    }
  }
  return Combine(DimTerm::kSub, a, b);
}
Dim DimMul(const Dim& a, const Dim& b) { return Combine(DimTerm::kMul, a, b); }

StatusOr<Dim> LoadDimText(std::string_view text) {
  bool name = !text.empty() && IsIdentStart(text[0]);
  for (char c : text) name = name && IsIdentChar(c);
  if (name) return Dim::Sym(Symbol(text));
  return ParseDimText(text);  // an expression; digits are a constant; anything else an error
}

StatusOr<Dim> ParseDimText(std::string_view text) {
  PLIR_ASSIGN_OR_RETURN(DimTree t, DimTextParser(text).Parse());
  return Build(t, t.root, nullptr);
}

}  // namespace plir
