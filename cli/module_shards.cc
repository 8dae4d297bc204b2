#include "cli/module_shards.h"

#include <map>
#include <set>
#include <string>

#include "ir/op.h"
#include "ir/visitor.h"

namespace plir {
namespace {

// Counts an item's nodes and collects the module items it references.
class ItemScan : public IRVisitor {
 public:
  ItemScan() { visit_types_ = false; }
  size_t nodes = 0;
  std::set<std::string> globals;

 protected:
  bool Enter(const Node* n, bool) override {
    ++nodes;
    if (n->kind() == NodeKind::kGlobalVar)
      globals.insert(static_cast<const GlobalVarNode*>(n)->name());
    return true;
  }
};

bool IsShardExtern(const Item& item) {
  const AttrValue* v = item->attrs().Get(kShardExternAttr);
  return v && v->kind() == AttrValue::Kind::kBool && v->as_bool();
}

}  // namespace

StatusOr<std::vector<Module>> SplitByFunction(const Module& m, size_t n) {
  if (n == 0) return InvalidArgument("the number of shards must be at least 1");
  std::vector<Item> items = m.items();
  std::vector<size_t> weight(items.size());
  std::vector<std::set<std::string>> refs(items.size());
  size_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (IsShardExtern(items[i]))
      return InvalidArgument("@" + items[i]->name() + " is already a shard's stub (" +
                             kShardExternAttr + "): split the merged module instead");
    ItemScan scan;
    scan.Walk(items[i]);
    weight[i] = scan.nodes;
    refs[i] = std::move(scan.globals);
    total += weight[i];
  }
  // Shard k ends at the first item whose running total reaches
  // total * (k + 1) / n: contiguous runs of about equal size.
  std::vector<size_t> end(n, items.size());
  {
    size_t k = 0, sum = 0;
    for (size_t i = 0; i < items.size() && k < n; ++i) {
      sum += weight[i];
      while (k < n && sum * n >= total * (k + 1)) end[k++] = i + 1;
    }
  }
  std::vector<Module> shards;
  size_t begin = 0;
  for (size_t k = 0; k < n; ++k) {
    std::vector<Item> own(items.begin() + static_cast<long>(begin),
                          items.begin() + static_cast<long>(end[k]));
    std::set<std::string> owned, needed;
    for (size_t i = begin; i < end[k]; ++i) {
      owned.insert(items[i]->name());
      needed.insert(refs[i].begin(), refs[i].end());
    }
    for (const std::string& name : needed) {
      if (owned.count(name)) continue;
      Item callee = m.Lookup(name);
      if (!callee) continue;  // not a module item; the verifier would have said so
      std::vector<Var> params;
      std::vector<Expr> args;
      for (const Var& p : callee->params()) {
        params.push_back(VarNode::Make(p->name_hint(), p->type()));
        args.push_back(params.back());
      }
      Attrs mark = callee->attrs().With(Symbol(kShardExternAttr), AttrValue::Bool(true));
      if (callee->kind() == NodeKind::kExternFunc) {
        own.push_back(ExternFuncNode::Make(name, std::move(params), callee->ret_type(), mark));
      } else {
        // A def that calls itself: the signature, without the body. (An
        // extern cannot stand in for it: externs are called through
        // call_tir only, and a direct call of one does not verify.)
        Expr self = MakeGlobalCall(GlobalVarNode::Make(name), std::move(args), callee->ret_type());
        own.push_back(FunctionNode::Make(name, std::move(params), callee->ret_type(),
                                         SeqExprNode::Make({}, self), mark));
      }
    }
    PLIR_ASSIGN_OR_RETURN(Module shard, Module::Make(std::move(own)));
    shards.push_back(std::move(shard));
    begin = end[k];
  }
  return shards;
}

StatusOr<Module> MergeShards(const std::vector<Module>& shards) {
  std::vector<Item> merged;
  std::map<std::string, size_t> owner;
  std::vector<std::pair<std::string, size_t>> references;
  for (size_t k = 0; k < shards.size(); ++k) {
    for (const Item& item : shards[k].items()) {
      if (IsShardExtern(item)) {
        references.emplace_back(item->name(), k);
        continue;
      }
      auto [it, inserted] = owner.emplace(item->name(), k);
      if (!inserted)
        return InvalidArgument("@" + item->name() + " is in shard " + std::to_string(it->second) +
                               " and in shard " + std::to_string(k));
      merged.push_back(item);
    }
  }
  for (const auto& [name, k] : references)
    if (!owner.count(name))
      return InvalidArgument("shard " + std::to_string(k) + " calls @" + name +
                             ", which no shard defines");
  return Module::Make(std::move(merged));
}

}  // namespace plir
