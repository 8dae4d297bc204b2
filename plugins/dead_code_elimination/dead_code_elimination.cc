// DeadCodeElimination: removes bindings whose variable is never used and
// whose value has no side effect, and module items that no entry function
// reaches (TVM Relax's DeadCodeElimination).
//
// Side effects: calls of impure ops (call_packed, vm.*), calls of module
// functions that (transitively) contain one, and calls of function values
// whose Callable type is impure (ir/analysis/purity.h). Unused bindings go
// first, through the SDK's UnusedBindingRemover (TVM's RemoveAllUnused:
// every body, nested bodies and local functions included, scanned
// backwards with its live variables), so that calls they held no longer
// keep items alive. Then the items: entry functions are those named by
// option `entry_functions` plus every item with a `global_symbol` attribute
// (TVM's externally visible functions); if there are none, `main`; if there
// is no `main` either, no item is removed. What the entries reach through
// references (ir/analysis/call_graph.h) stays.
//
// Cost: one walk of every value per body, the items on the pipeline's
// threads; the impure functions are computed on the first call of a module
// function found (one walk of every function, closed over the call graph);
// the call graph, one walk of the cleaned module, only when there are
// entries.
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/analysis/call_graph.h"
#include "ir/analysis/unused_bindings.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

StatusOr<Module> Run(const Module& m, const PassCallContext& ctx) {
  std::vector<std::string> entries = ctx.options.GetStringList("entry_functions");
  for (const std::string& e : entries)
    if (!m.Contains(e)) return InvalidArgument("entry function @" + e + " is not in the module");
  {
    std::unordered_set<std::string> named(entries.begin(), entries.end());
    for (const Item& it : m.items())
      if (it->attrs().Get("global_symbol") && named.insert(it->name()).second)
        entries.push_back(it->name());
  }
  if (entries.empty() && m.LookupFunction("main")) entries.push_back("main");

  // The items are cleaned on the pipeline's threads (--threads).
  std::vector<Item> cleaned = UnusedBindingRemover::RemoveFromEach(m, ctx.context.num_threads);
  bool changed = false;
  for (size_t i = 0; i < m.size() && !changed; ++i)
    changed = cleaned[i].get() != m.items()[i].get();
  Module out = m;
  if (changed) {
    PLIR_ASSIGN_OR_RETURN(out, Module::Make(std::move(cleaned)));  // the names of `m`
  }
  if (entries.empty()) return out;

  CallGraph graph = CallGraph::Build(out);
  std::vector<size_t> roots;
  for (const std::string& e : entries) roots.push_back(*graph.IndexOf(e));
  std::vector<bool> reached = graph.Reachable(roots);
  std::vector<Item> items;
  for (size_t i = 0; i < out.size(); ++i)
    if (reached[i]) items.push_back(out.items()[i]);
  if (items.size() == out.size()) return out;
  return Module::Make(std::move(items));
}

Status Register(PluginHost& host) {
  PassDef def;
  def.info.name = "DeadCodeElimination";
  def.info.description =
      "removes unused side-effect-free bindings and functions no entry function reaches";
  def.info.options = {
      {"entry_functions", OptionType::kStringList, AttrValue::List({}),
       "entry functions, in addition to those with global_symbol (or main when none has one)"}};
  def.module_fn = Run;
  return host.RegisterPass(std::move(def));
}

}  // namespace

PLIR_PLUGIN("dead_code_elimination", "1.0", Register)
