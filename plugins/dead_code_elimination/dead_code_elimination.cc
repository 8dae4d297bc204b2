// DeadCodeElimination: removes bindings whose variable is never used and
// whose value has no side effect, and module items that no entry function
// reaches.
//
// Side effects: calls of impure ops (call_packed, vm.*) and calls of module
// functions that (transitively) contain one. Bindings are scanned backwards
// through each body with the set of live variables (uses of the result and
// of every kept binding); nested if branches are bodies of their own and are
// cleaned first (post-order). Entry functions: option `entry_functions`, or
// by default the functions with a `global_symbol` attribute, or `main`. If
// none exists, no item is removed.
#include <unordered_map>
#include <unordered_set>

#include "ir/op.h"
#include "ir/visitor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

// Collects the variables used and the globals referenced under a node.
class UseCollector : public IRVisitor {
 public:
  UseCollector(std::unordered_set<const VarNode*>* vars, std::unordered_set<std::string>* globals)
      : vars_(vars), globals_(globals) {
    visit_types_ = false;
  }
  bool impure = false;
  const std::unordered_set<std::string>* impure_functions = nullptr;

 protected:
  bool Enter(const Node* n, bool is_def) override {
    if (auto* v = As<VarNode>(n); v && !is_def && vars_) vars_->insert(v);
    if (auto* g = As<GlobalVarNode>(n); g && globals_) globals_->insert(g->name());
    if (auto* c = As<CallNode>(n)) {
      if (auto* op = As<OpNode>(c->callee()); op && !op->pure()) impure = true;
      if (auto* g = As<GlobalVarNode>(c->callee());
          g && impure_functions && impure_functions->count(g->name()))
        impure = true;
    }
    return true;
  }

 private:
  std::unordered_set<const VarNode*>* vars_;
  std::unordered_set<std::string>* globals_;
};

class DeadBindingRemover : public ExprMutator {
 public:
  explicit DeadBindingRemover(const std::unordered_set<std::string>& impure) : impure_(impure) {}

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    auto* seq = As<SeqExprNode>(n);
    if (!seq) return n;
    std::unordered_set<const VarNode*> live;
    UseCollector result_uses(&live, nullptr);
    result_uses.Walk(seq->result());
    std::vector<std::vector<Binding>> kept(seq->blocks().size());
    bool changed = false;
    for (size_t bi = seq->blocks().size(); bi-- > 0;) {
      const auto& bindings = seq->blocks()[bi]->bindings();
      for (size_t j = bindings.size(); j-- > 0;) {
        const Binding& b = bindings[j];
        UseCollector probe(nullptr, nullptr);
        probe.impure_functions = &impure_;
        probe.Walk(b->value());
        if (!live.count(b->var().get()) && !probe.impure) {
          changed = true;
          continue;
        }
        UseCollector uses(&live, nullptr);
        uses.Walk(b->value());
        kept[bi].push_back(b);
      }
    }
    if (!changed) return n;
    std::vector<Block> blocks;
    for (size_t bi = 0; bi < kept.size(); ++bi) {
      if (kept[bi].empty()) continue;
      std::reverse(kept[bi].begin(), kept[bi].end());
      blocks.push_back(BindingBlockNode::Make(std::move(kept[bi]), seq->blocks()[bi]->is_dataflow()));
    }
    return SeqExprNode::Make(std::move(blocks), seq->result());
  }

 private:
  const std::unordered_set<std::string>& impure_;
};

// Functions whose bodies (transitively) have side effects.
std::unordered_set<std::string> ImpureFunctions(const Module& m) {
  std::unordered_set<std::string> impure;
  bool grew = true;
  while (grew) {
    grew = false;
    for (const Item& it : m.items()) {
      if (it->kind() != NodeKind::kFunction || impure.count(it->name())) continue;
      UseCollector c(nullptr, nullptr);
      c.impure_functions = &impure;
      c.Walk(it.get());
      if (c.impure) {
        impure.insert(it->name());
        grew = true;
      }
    }
  }
  return impure;
}

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  std::vector<std::string> entries = ctx.options.GetStringList("entry_functions");
  if (entries.empty()) {
    for (const Item& it : m.items())
      if (it->kind() == NodeKind::kFunction && it->attrs().Get("global_symbol"))
        entries.push_back(it->name());
    if (entries.empty() && m.LookupFunction("main")) entries.push_back("main");
  }
  for (const std::string& e : entries)
    if (!m.Contains(e)) return InvalidArgument("entry function @" + e + " is not in the module");

  // Dead bindings first, so that calls they held no longer keep items alive.
  std::unordered_set<std::string> impure = ImpureFunctions(m);
  DeadBindingRemover remover(impure);
  Module out = remover.MutateModule(m);
  if (entries.empty()) return out;

  std::unordered_set<std::string> reached(entries.begin(), entries.end());
  std::vector<std::string> work(entries.begin(), entries.end());
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    std::unordered_set<std::string> globals;
    UseCollector c(nullptr, &globals);
    c.Walk(out.Lookup(name).get());
    for (const std::string& g : globals)
      if (out.Contains(g) && reached.insert(g).second) work.push_back(g);
  }
  std::vector<Item> items;
  for (const Item& it : out.items())
    if (reached.count(it->name())) items.push_back(it);
  if (items.size() == out.size()) return out;
  return Module::Make(std::move(items));
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "DeadCodeElimination";
  def.info.description =
      "removes unused side-effect-free bindings and functions no entry function reaches";
  def.info.options = {{"entry_functions", OptionType::kStringList, AttrValue::List({}),
                       "entry functions (default: those with global_symbol, or main)"}};
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("dead_code_elimination", "1.0", Register)
