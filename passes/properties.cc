#include "passes/properties.h"

#include <set>

namespace plir {

Status CheckProperties(const std::vector<PipelineStep>& steps, const PassRegistry& registry) {
  std::set<std::string> provided;
  // Iterative walk in pipeline order (repeat groups are entered in place).
  std::vector<std::pair<const std::vector<PipelineStep>*, size_t>> stack{{&steps, 0}};
  while (!stack.empty()) {
    auto& [list, i] = stack.back();
    if (i == list->size()) {
      stack.pop_back();
      continue;
    }
    const PipelineStep& s = (*list)[i++];
    if (s.kind == PipelineStep::Kind::kRepeat) {
      stack.emplace_back(&s.steps, 0);
      continue;
    }
    if (s.kind != PipelineStep::Kind::kPass) continue;
    auto def = registry.Lookup(s.pass);
    if (!def) continue;
    for (const std::string& req : def->info.requires_properties) {
      if (provided.count(req)) continue;
      std::string providers;
      for (const std::string& n : registry.Names())
        for (const std::string& p : registry.Lookup(n)->info.provides_properties)
          if (p == req) providers += (providers.empty() ? "" : ", ") + n;
      return FailedPrecondition(s.loc.ToString() + ": pass " + s.pass + " requires property '" +
                                req + "', which no earlier pass provides" +
                                (providers.empty() ? "" : " (provided by: " + providers + ")"));
    }
    for (const std::string& p : def->info.provides_properties) provided.insert(p);
  }
  return Status::Ok();
}

}  // namespace plir
