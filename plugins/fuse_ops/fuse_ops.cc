// FuseOps (after TVM Relax's pass of the same name): groups the bindings of
// each dataflow block by their op pattern kind, outlines every group of two
// or more bindings into a private function marked `Primitive = true`, and
// calls it where the group was.
//
// The pattern of a binding (TVM's OpPatternKind):
// - call_tir(@k, ...): the extern kernel's `op_pattern` attribute (opaque
//   when absent), as AnnotateTIROpPattern would have set it;
// - a call of a core or plugin op: the pattern the op declares (OpDef;
//   PLIR's addition: TVM fuses unlowered ops only by pattern); as in Relay,
//   a broadcast op's edge from an operand of the result's shape counts as
//   elementwise;
// - element access `%t.i`: injective; anything else: opaque.
// Edges run from a binding to the bindings using its variable, each with
// the consumer's pattern. A block output (non-dataflow variable) cannot be
// fused as an intermediate.
//
// Grouping is TVM's: a post-dominator tree of the block's dataflow graph
// (least common ancestor of the consumers, combining edge patterns with
// max), then three phases over the bindings in order, each node trying to
// join its immediate post-dominator when every path between them satisfies
// the phase's condition: phase 0 fuses out-elemwise-fusable anchors (conv2d)
// with following elementwise/broadcast ops and fuses elemwise/broadcast ops
// into injective or reduction consumers; phase 1 fuses injective ops;
// phase 2 fuses injective ops into intermediate tuples. A group never
// exceeds `max_depth` bindings.
//
// Outlining (TVM's OperatorFusor): the function is named `fused_` + the
// kernel (or op) names of its bindings in order joined by `_`; parameters
// are the group's free variables and constants in order of first use (a
// tuple parameter used only through `.i` is split into one parameter per
// element used; symbolic dimensions no parameter's type binds, as a
// kernel's tir_vars may use, come last as one `Shape[(n, ...)]` parameter
// the caller passes as `shape[(n, ...)]`); it returns the group's variables used outside it (block
// outputs first, in binding order, then those other groups use, in order of
// use), one value or a tuple. Bindings are emitted group by group in a
// topological order of group dependencies that follows the original order
// where it can; a call of a tuple-returning function is followed by
// `%v = %t.i` for each output. A function structurally equal to one already
// in the module is reused; a different one with a taken name is numbered.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/analysis/free_vars.h"
#include "ir/op.h"
#include "ir/rewrite.h"
#include "ir/structural.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;
using P = OpPattern;

int Rank(P p) { return static_cast<int>(p); }
P Combine(P a, P b) { return Rank(a) > Rank(b) ? a : b; }

// ---------------------------------------------------------------------------
// The dataflow graph of one block: node i is binding i.

struct Edge {
  uint32_t node;
  P pattern;
};

struct Graph {
  std::vector<P> pattern;
  std::vector<bool> extern_ref;
  std::vector<std::vector<Edge>> outputs;
};

// Calls fn(const VarNode*) for the variables among the leaves of `e`,
// looking into tuples (TVM's VisitLeaf).
template <typename Fn>
void ForLeafVars(const Expr& e, Fn&& fn) {
  if (auto* t = As<TupleNode>(e)) {
    for (const Expr& f : t->fields()) ForLeafVars(f, fn);
  } else if (auto* v = As<VarNode>(e)) {
    fn(v);
  }
}

bool SameShape(const Type& a, const Type& b) {
  auto* x = As<TensorTypeNode>(a);
  auto* y = As<TensorTypeNode>(b);
  return x && y && x->has_shape() && y->has_shape() && x->shape() == y->shape();
}

Graph BuildGraph(std::span<const Binding> bindings, const Module& m) {
  Graph g;
  size_t n = bindings.size();
  g.pattern.resize(n, P::kOpaque);
  g.extern_ref.resize(n, false);
  g.outputs.resize(n);
  std::unordered_map<const VarNode*, uint32_t> index;
  for (size_t i = 0; i < n; ++i) {
    const Binding& b = bindings[i];
    g.extern_ref[i] = !b->var()->is_dataflow();
    auto edge = [&](const VarNode* v, P p) {
      auto it = index.find(v);
      if (it != index.end()) g.outputs[it->second].push_back({static_cast<uint32_t>(i), p});
    };
    const Expr& value = b->value();
    CallTirMatch tir;
    if (MatchCallTir(value, &tir)) {
      Item k = m.Lookup(tir.kernel->name());
      P p = k && k->kind() == NodeKind::kExternFunc ? KernelPattern(*k) : P::kOpaque;
      g.pattern[i] = p;
      for (const Expr& a : tir.args) ForLeafVars(a, [&](const VarNode* v) { edge(v, p); });
    } else if (auto* c = As<CallNode>(value)) {
      auto* op = As<OpNode>(c->callee());
      P p = op ? op->pattern() : P::kOpaque;
      g.pattern[i] = p;
      for (const Expr& a : c->args()) {
        // As Relay does: a broadcast op is elementwise along an operand of
        // the result's own shape.
        P ep = p;
        if (p == P::kBroadcast && SameShape(a->type(), c->type())) ep = P::kElemWise;
        ForLeafVars(a, [&](const VarNode* v) { edge(v, ep); });
      }
    } else if (auto* t = As<TupleGetItemNode>(value)) {
      g.pattern[i] = P::kInjective;
      ForLeafVars(t->tuple(), [&](const VarNode* v) { edge(v, P::kInjective); });
    } else {
      for (const VarNode* v : CollectVarUses(value.get())) edge(v, P::kOpaque);
    }
    index[b->var().get()] = static_cast<uint32_t>(i);
  }
  return g;
}

// ---------------------------------------------------------------------------
// Post-dominator tree (on a DAG whose edges go forward: one backward sweep).

struct DomNode {
  int parent = -1;  // -1: the root (no post-dominator)
  int depth = 1;
  P pattern = P::kOpaque;  // combined pattern of the paths to the parent
};

std::vector<DomNode> PostDominators(const Graph& g) {
  size_t n = g.pattern.size();
  std::vector<DomNode> t(n);
  auto lca = [&](int a, int b, P* p) {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      if (t[a].depth < t[b].depth) {
        *p = Combine(*p, t[b].pattern);
        b = t[b].parent;
      } else if (t[b].depth < t[a].depth) {
        *p = Combine(*p, t[a].pattern);
        a = t[a].parent;
      } else {
        *p = Combine(*p, t[a].pattern);
        *p = Combine(*p, t[b].pattern);
        a = t[a].parent;
        b = t[b].parent;
      }
    }
    return a;
  };
  for (size_t i = n; i-- > 0;) {
    DomNode& d = t[i];
    if (g.extern_ref[i] || g.outputs[i].empty()) {
      d.parent = -1;
      d.depth = 1;
      d.pattern = P::kOpaque;
      continue;
    }
    P p = P::kElemWise;
    const auto& outs = g.outputs[i];
    int parent = static_cast<int>(outs[0].node);
    p = Combine(p, outs[0].pattern);
    for (size_t k = 1; k < outs.size(); ++k) {
      parent = lca(parent, static_cast<int>(outs[k].node), &p);
      p = Combine(p, outs[k].pattern);
    }
    d.parent = parent;
    d.depth = parent >= 0 ? t[parent].depth + 1 : 1;
    d.pattern = p;
  }
  return t;
}

// ---------------------------------------------------------------------------
// Partitioning (union-find over groups).

class Partitioner {
 public:
  Partitioner(const Graph& g, size_t max_depth) : g_(g), max_depth_(max_depth) {
    size_t n = g.pattern.size();
    groups_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      groups_[i].pattern = g.pattern[i];
      groups_[i].anchor = g.pattern[i] == P::kOutEWiseFusable;
    }
  }

  // The root group of each node.
  std::vector<int> Run() {
    std::vector<DomNode> dom = PostDominators(g_);
    for (int phase = 0; phase < 3; ++phase) RunPhase(dom, phase);
    std::vector<int> root(groups_.size());
    for (size_t i = 0; i < groups_.size(); ++i) root[i] = Find(static_cast<int>(i));
    return root;
  }
  int NumNodes(int root) const { return groups_[root].num_nodes; }

 private:
  struct Group {
    int parent = -1;
    P pattern = P::kOpaque;
    bool anchor = false;
    int num_nodes = 1;
  };

  int Find(int i) {
    int r = i;
    while (groups_[r].parent >= 0) r = groups_[r].parent;
    while (groups_[i].parent >= 0) {
      int next = groups_[i].parent;
      groups_[i].parent = r;
      i = next;
    }
    return r;
  }

  void Merge(int child, int parent) {
    child = Find(child);
    parent = Find(parent);
    if (child == parent) return;
    groups_[parent].num_nodes += groups_[child].num_nodes;
    groups_[child].parent = parent;
    if (groups_[child].anchor) {
      groups_[parent].anchor = true;
      groups_[parent].pattern = Combine(groups_[child].pattern, groups_[parent].pattern);
    }
  }

  template <typename Cond>
  bool CheckPath(int src, int sink, Cond&& cond) {
    NewVisit();
    for (const Edge& e : g_.outputs[src])
      if (!CheckPathRec(e.node, sink, cond)) return false;
    return true;
  }
  template <typename Cond>
  bool CheckPathRec(int src, int sink, Cond& cond) {
    // Iterative DFS: every node reached from `src` up to `sink` must satisfy cond.
    std::vector<int> stack{src};
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (Visited(n)) continue;
      if (!cond(groups_[Find(n)].pattern, n == sink)) return false;
      if (n == sink) continue;
      for (const Edge& e : g_.outputs[n]) stack.push_back(static_cast<int>(e.node));
    }
    return true;
  }

  void CommitFuse(int src, int sink) {
    int target = sink;
    NewVisit();
    std::vector<int> stack{src};
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (n == sink || Visited(n)) continue;
      Merge(n, target);
      for (const Edge& e : g_.outputs[n]) stack.push_back(static_cast<int>(e.node));
    }
  }

  size_t CountWithNewChild(int child, int dom_parent) {
    NewVisit();
    size_t sum = groups_[Find(dom_parent)].num_nodes;
    std::vector<int> stack{child};
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (n == dom_parent || Visited(n)) continue;
      sum += groups_[n].num_nodes;
      for (const Edge& e : g_.outputs[n]) stack.push_back(static_cast<int>(e.node));
    }
    return sum;
  }

  void RunPhase(const std::vector<DomNode>& dom, int phase) {
    for (size_t i = 0; i < groups_.size(); ++i) {
      int nid = static_cast<int>(i);
      P own = groups_[nid].pattern;
      if (own == P::kOpaque) continue;
      int parent = dom[nid].parent;
      if (parent < 0) continue;
      if (CountWithNewChild(nid, parent) > max_depth_) continue;
      P parent_pattern = groups_[parent].pattern;
      if (phase == 2) {
        if (Rank(own) > Rank(P::kInjective)) continue;
        P root_pattern = groups_[Find(parent)].pattern;
        if (root_pattern == P::kTuple) continue;
        if (parent_pattern == P::kTuple && Rank(root_pattern) <= Rank(P::kInjective)) {
          if (CheckPath(nid, parent, [](P k, bool) { return Rank(k) <= Rank(P::kInjective); }))
            CommitFuse(nid, parent);
        }
        continue;
      }
      if (Find(nid) == Find(parent)) continue;
      if (parent_pattern == P::kTuple) continue;
      if (own == P::kOutEWiseFusable) {
        if (phase != 0) continue;
        if (dom[nid].pattern == P::kElemWise &&
            CheckPath(nid, parent, [](P k, bool) { return Rank(k) <= Rank(P::kBroadcast); }))
          CommitFuse(nid, parent);
      } else if (Rank(own) <= Rank(P::kBroadcast)) {
        P dp = dom[nid].pattern;
        if (Rank(dp) <= Rank(P::kInjective) || dp == P::kCommReduce) {
          auto cond = [](P k, bool is_sink) {
            if (!is_sink) return Rank(k) <= Rank(P::kInjective);
            return Rank(k) <= Rank(P::kBroadcast) || k == P::kCommReduce || k == P::kInjective ||
                   k == P::kOutEWiseFusable;
          };
          if (CheckPath(nid, parent, cond)) CommitFuse(nid, parent);
        }
      } else if (own == P::kInjective || own == P::kTuple) {
        if (phase != 1) continue;
        if (CheckPath(nid, parent, [](P k, bool) { return Rank(k) <= Rank(P::kInjective); }))
          CommitFuse(nid, parent);
      }
    }
  }

  const Graph& g_;
  size_t max_depth_;
  std::vector<Group> groups_;
  // Visit marks by epoch: a new walk costs O(1), not O(nodes).
  void NewVisit() {
    if (visit_mark_.size() != groups_.size()) visit_mark_.assign(groups_.size(), 0);
    ++epoch_;
  }
  // Marks `n` visited; returns whether it already was.
  bool Visited(int n) {
    if (visit_mark_[n] == epoch_) return true;
    visit_mark_[n] = epoch_;
    return false;
  }
  std::vector<uint64_t> visit_mark_;
  uint64_t epoch_ = 0;
};

// ---------------------------------------------------------------------------
// Outlining the groups of one block.

std::string KernelName(const Expr& value) {
  CallTirMatch tir;
  if (MatchCallTir(value, &tir)) return tir.kernel->name();
  if (auto* c = As<CallNode>(value)) {
    if (auto* op = As<OpNode>(c->callee())) {
      std::string s = op->name();
      std::replace(s.begin(), s.end(), '.', '_');
      return s;
    }
    if (auto* g = As<GlobalVarNode>(c->callee())) {
      const std::string& s = g->name();
      return s.rfind("fused_", 0) == 0 ? s.substr(6) : s;
    }
  }
  return "";
}

class ModuleFuser {
 public:
  ModuleFuser(const Module& m, size_t max_depth) : module_(m), max_depth_(max_depth) {
    for (const Item& it : m.items()) taken_.insert(it->name());
  }

  StatusOr<Module> Run() {
    Module out = module_;
    for (const Item& item : module_.items()) {
      auto* f = As<FunctionNode>(item);
      if (!f) continue;
      const AttrValue* prim = f->attrs().Get("Primitive");
      if (prim &&
          (prim->kind() == AttrValue::Kind::kBool || prim->kind() == AttrValue::Kind::kInt) &&
          prim->as_int() != 0)
        continue;
      std::vector<Block> blocks = f->body()->blocks();
      bool changed = false;
      for (Block& b : blocks) {
        if (!b->is_dataflow()) continue;
        PLIR_ASSIGN_OR_RETURN(Block nb, FuseBlock(b));
        if (nb.get() != b.get()) changed = true;
        b = nb;
      }
      if (!changed) continue;
      SeqExpr body = SeqExprNode::Make(std::move(blocks), f->body()->result());
      out =
          out.WithItem(FunctionNode::Make(f->name(), f->params(), f->ret_type(), body, f->attrs()));
    }
    for (const Function& fn : added_) out = out.WithItem(fn);
    return out;
  }

 private:
  // Returns the name of a function equal to `fn` (named `name`), adding it
  // (numbered if the name is taken) when there is none.
  std::string AddFunction(const Function& fn, const std::string& name) {
    // Candidates by a name-free structural hash, confirmed by equality.
    if (!indexed_) {
      for (const Item& it : module_.items()) {
        auto* e = As<FunctionNode>(it);
        if (e && e->attrs().Get("Primitive"))
          by_hash_.emplace(NameFreeHash(*e), Downcast<FunctionNode>(it));
      }
      indexed_ = true;
    }
    uint64_t h = NameFreeHash(*fn);
    auto range = by_hash_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      const Function& a = it->second;
      Function probe =
          FunctionNode::Make(a->name(), fn->params(), fn->ret_type(), fn->body(), fn->attrs());
      if (StructuralEqual(Item(probe), Item(a), true)) return a->name();
    }
    std::string unique = name;
    for (int k = 1; taken_.count(unique); ++k) unique = name + std::to_string(k);
    taken_.insert(unique);
    Function added =
        FunctionNode::Make(unique, fn->params(), fn->ret_type(), fn->body(), fn->attrs());
    added_.push_back(added);
    by_hash_.emplace(h, added);
    return unique;
  }
  static uint64_t NameFreeHash(const FunctionNode& f) {
    return StructuralHash(
        Item(FunctionNode::Make("", f.params(), f.ret_type(), f.body(), f.attrs())));
  }

  StatusOr<Block> FuseBlock(const Block& block) {
    auto bindings = block->bindings();
    size_t n = bindings.size();
    if (n < 2) return block;
    Graph g = BuildGraph(bindings, module_);
    Partitioner part(g, max_depth_);
    std::vector<int> root = part.Run();
    std::unordered_map<const VarNode*, size_t> index_of;  // binding variable -> position
    for (size_t i = 0; i < n; ++i) index_of[bindings[i]->var().get()] = i;
    bool any = false;
    for (size_t i = 0; i < n; ++i) any = any || part.NumNodes(root[i]) > 1;
    if (!any) return block;

    // Members of each fused group, in binding order; group order = first member.
    std::map<int, std::vector<size_t>> members;
    for (size_t i = 0; i < n; ++i)
      if (part.NumNodes(root[i]) > 1) members[root[i]].push_back(i);

    // Outputs: block outputs first (binding order), then what other groups use.
    std::map<int, std::vector<const VarNode*>> outputs;
    auto add_output = [&](int grp, const VarNode* v) {
      auto& o = outputs[grp];
      if (std::find(o.begin(), o.end(), v) == o.end()) o.push_back(v);
    };
    for (auto& [grp, idx] : members)
      for (size_t i : idx)
        if (!bindings[i]->var()->is_dataflow()) add_output(grp, bindings[i]->var().get());
    std::unordered_map<int, std::vector<int>> deps;  // group -> groups it uses (singletons: -1-i)
    auto key = [&](size_t i) {
      return part.NumNodes(root[i]) > 1 ? root[i] : -1 - static_cast<int>(i);
    };
    for (size_t i = 0; i < n; ++i) {
      int cur = key(i);
      for (const VarNode* v : PostOrderUses(bindings[i]->value())) {
        auto it = index_of.find(v);
        if (it == index_of.end()) continue;
        int producer = key(it->second);
        if (producer == cur) continue;
        deps[cur].push_back(producer);
        if (producer >= 0) add_output(producer, v);
      }
    }

    // Build each group's function.
    struct Fused {
      Outlined o;
      std::string name;
      bool dead = false;
    };
    std::map<int, Fused> fused;
    for (auto& [grp, idx] : members) {
      std::vector<const VarBindingNode*> bs;
      std::string name = "fused";
      for (size_t i : idx) {
        bs.push_back(bindings[i].get());
        std::string k = KernelName(bindings[i]->value());
        if (!k.empty()) name += "_" + k;
      }
      Fused& fu = fused[grp];
      if (outputs[grp].empty()) {  // nothing uses the group: dead code (run DCE first)
        fu.dead = true;
        continue;
      }
      OutlineOptions opts;
      opts.name = name;
      opts.attrs = *Attrs::Make({{Symbol("Primitive"), AttrValue::Bool(true)}});
      opts.outputs = outputs[grp];
      PLIR_ASSIGN_OR_RETURN(fu.o, OutlineFunction(bs, opts));
      fu.o = SplitTupleParams(std::move(fu.o));
      fu.o = AddSymbolicParam(std::move(fu.o));
      fu.name = AddFunction(fu.o.function, name);
    }

    // Emit, group by group, in a topological order of the dependencies.
    std::vector<int> order;
    {
      std::unordered_set<int> done;
      for (size_t i = 0; i < n; ++i) {
        int start = key(i);
        if (done.count(start)) continue;
        // Iterative post-order DFS.
        std::vector<std::pair<int, size_t>> stack{{start, 0}};
        done.insert(start);
        while (!stack.empty()) {
          auto& [grp, next] = stack.back();
          const auto& d = deps[grp];
          if (next < d.size()) {
            int dep = d[next++];
            if (!done.count(dep)) {
              done.insert(dep);
              stack.push_back({dep, 0});
            }
            continue;
          }
          order.push_back(grp);
          stack.pop_back();
        }
      }
    }
    std::vector<Binding> out;
    for (int grp : order) {
      if (grp < 0) {
        out.push_back(bindings[static_cast<size_t>(-1 - grp)]);
        continue;
      }
      Fused& fu = fused[grp];
      if (fu.dead) continue;
      const VarBindingNode* last = bindings[members[grp].back()].get();
      Type ret = fu.o.function->body()->type();
      std::vector<Expr> args = fu.o.args;
      for (Expr& a : args) {  // `%t.i` for a split tuple parameter: bind it first
        if (IsAtomic(a)) continue;
        Var v = VarNode::Make("lv", a->type(), true);
        out.push_back(VarBindingNode::Make(v, a));
        a = v;
      }
      Expr call = MakeGlobalCall(GlobalVarNode::Make(fu.name), std::move(args), ret);
      if (fu.o.outputs.size() == 1) {
        out.push_back(VarBindingNode::Make(Var(fu.o.outputs[0]), call));
        continue;
      }
      Var t = VarNode::Make(last->var()->hint(), ret, last->var()->is_dataflow());
      out.push_back(VarBindingNode::Make(t, call));
      for (size_t k = 0; k < fu.o.outputs.size(); ++k) {
        const VarNode* v = fu.o.outputs[k];
        out.push_back(VarBindingNode::Make(
            Var(v), TupleGetItemNode::MakeUnchecked(t, static_cast<int64_t>(k), v->type())));
      }
    }
    return BindingBlockNode::Make(std::move(out), true);
  }

  // The variables `e` uses, in post order (TVM's PostOrderVisit).
  static std::vector<const VarNode*> PostOrderUses(const Expr& e) {
    return CollectVarUses(e.get());
  }

  // Appends the names of the symbolic dimensions `t` mentions (in order,
  // each once); `defs_only`: only dimensions that are a bare name.
  static void TypeSyms(const Type& t, std::vector<Symbol>* out, bool defs_only) {
    for (Symbol s : TypeDimNames(t, defs_only ? DimNameKind::kBindable : DimNameKind::kAll))
      if (std::find(out->begin(), out->end(), s) == out->end()) out->push_back(s);
  }

  // Symbolic dimensions the fused function uses that its parameters' types
  // do not bind (a kernel's tir_vars `shape[(n,)]` on no tensor of shape n)
  // become one last parameter `%s: Shape[(n, ...)]`, the caller passing
  // `shape[(n, ...)]`, as TVM's FuseOps does.
  static Outlined AddSymbolicParam(Outlined o) {
    const Function& f = o.function;
    std::vector<Symbol> bound, used;
    for (const Var& p : f->params()) TypeSyms(p->type(), &bound, true);
    for (const Block& b : f->body()->blocks())
      for (const Binding& x : b->bindings()) {
        TypeSyms(x->var()->type(), &used, false);
        if (auto* c = As<CallNode>(x->value())) {
          for (const Type& t : c->sinfo_args()) TypeSyms(t, &used, false);
          for (const Expr& a : c->args()) TypeSyms(a->type(), &used, false);
        }
      }
    std::vector<Dim> missing;
    for (Symbol s : used)
      if (std::find(bound.begin(), bound.end(), s) == bound.end()) missing.push_back(Dim::Sym(s));
    if (missing.empty()) return o;
    Expr shape = ShapeExprNode::Make(missing);
    std::vector<Var> params = f->params();
    params.push_back(VarNode::Make("s", shape->type()));
    o.function =
        FunctionNode::Make(f->name(), std::move(params), f->ret_type(), f->body(), f->attrs());
    o.args.push_back(shape);
    return o;
  }

  // A tuple parameter the function only reads through `.i` becomes one
  // parameter per element read (the caller passes `%t.i`).
  static Outlined SplitTupleParams(Outlined o) {
    const Function& f = o.function;
    const auto& params = f->params();
    bool any_tuple = false;
    for (const Var& p : params) any_tuple = any_tuple || As<TupleTypeNode>(p->type());
    if (!any_tuple) return o;
    const Block& block = f->body()->blocks()[0];
    std::vector<Var> new_params;
    std::vector<Expr> new_args;
    std::unordered_map<const VarNode*, Expr> remap;
    std::unordered_set<const VarBindingNode*> dropped;
    for (size_t pi = 0; pi < params.size(); ++pi) {
      const Var& p = params[pi];
      auto* tt = As<TupleTypeNode>(p->type());
      bool partial = tt != nullptr;
      std::vector<int64_t> indices;
      std::vector<const VarBindingNode*> gets;
      if (partial) {
        for (const Binding& b : block->bindings()) {
          auto* tg = As<TupleGetItemNode>(b->value());
          if (tg && tg->tuple().get() == p.get()) {
            if (std::find(indices.begin(), indices.end(), tg->index()) == indices.end())
              indices.push_back(tg->index());
            gets.push_back(b.get());
            continue;
          }
          for (const VarNode* v : CollectVarUses(b->value().get()))
            if (v == p.get()) partial = false;
        }
        for (const VarNode* v : CollectVarUses(f->body()->result().get()))
          if (v == p.get()) partial = false;
      }
      if (!partial || indices.empty()) {
        new_params.push_back(p);
        new_args.push_back(o.args[pi]);
        continue;
      }
      std::unordered_map<int64_t, Var> item_param;
      for (int64_t i : indices) {
        Var ip = VarNode::Make(p->name_hint() + "_" + std::to_string(i), tt->fields()[i]);
        item_param[i] = ip;
        new_params.push_back(ip);
        new_args.push_back(*TupleGetItemNode::Make(o.args[pi], i));
      }
      for (const VarBindingNode* b : gets) {
        remap[b->var().get()] = item_param[As<TupleGetItemNode>(b->value())->index()];
        dropped.insert(b);
      }
    }
    if (dropped.empty()) return o;
    std::vector<Binding> body;
    for (const Binding& b : block->bindings())
      if (!dropped.count(b.get())) body.push_back(b);
    SeqExpr seq =
        SeqExprNode::Make({BindingBlockNode::Make(std::move(body), true)}, f->body()->result());
    Function nf = FunctionNode::Make(f->name(), new_params, nullptr, seq, f->attrs());
    o.function = ReplaceAllUses(nf, remap);
    o.args = std::move(new_args);
    return o;
  }

  const Module& module_;
  size_t max_depth_;
  std::unordered_set<std::string> taken_;
  std::vector<Function> added_;
  std::unordered_multimap<uint64_t, Function> by_hash_;  // Primitive functions, existing and added
  bool indexed_ = false;
};

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "FuseOps";
  def.info.description =
      "groups dataflow bindings by op pattern (TVM's fusion rules) and outlines each group into a "
      "Primitive function";
  def.info.kind = PassKind::kModule;
  def.info.options = {
      {"max_depth", OptionType::kInt, AttrValue::Int(256), "most bindings in one fused group",
       /*min=*/1, /*max=*/65536},
  };
  def.module_fn = [](const Module& m, const PassCallContext& ctx) -> StatusOr<Module> {
    int64_t depth = ctx.options.GetInt("max_depth");
    if (depth < 1) return InvalidArgument("FuseOps: max_depth must be at least 1");
    return ModuleFuser(m, static_cast<size_t>(depth)).Run();
  };
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("fuse_ops", "1.0", Register)
