#include "passes/registry.h"

#include <algorithm>
#include <mutex>

#include "ir/op.h"

namespace plir {

PassRegistry& PassRegistry::Global() {
  static PassRegistry* registry = new PassRegistry();
  return *registry;
}

Status PassRegistry::Register(PassDef def) {
  PLIR_RETURN_IF_ERROR(Validate(def));
  const PassInfo& info = def.info;
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = passes_.find(info.name);
  if (it != passes_.end())
    return AlreadyExists("pass " + info.name + " from " + info.origin +
                         " is already registered by " + it->second->info.origin);
  std::string name = info.name;
  passes_.emplace(std::move(name), std::make_shared<const PassDef>(std::move(def)));
  return Status::Ok();
}

Status PassRegistry::Validate(const PassDef& def) {
  const PassInfo& info = def.info;
  if (info.name.empty()) return InvalidArgument("a pass from " + info.origin + " has no name");
  if (info.kind == PassKind::kModule && !def.module_fn)
    return InvalidArgument("module pass " + info.name + " has no run function");
  if (info.kind == PassKind::kFunction && !def.function_fn)
    return InvalidArgument("function pass " + info.name + " has no run function");
  for (const OptionSpec& o : info.options) {
    auto check = info.ResolveOptions({{o.name, o.default_value}});
    if (!check.ok())
      return InvalidArgument("pass " + info.name + ": the default of option '" + o.name +
                             "' does not match its type " + OptionTypeName(o.type));
  }
  return Status::Ok();
}

std::shared_ptr<const PassDef> PassRegistry::Lookup(const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = passes_.find(name);
  return it == passes_.end() ? nullptr : it->second;
}

std::vector<std::string> PassRegistry::Names() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [n, d] : passes_) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> PassRegistry::Suggest(const std::string& name) const {
  return ClosestNames(name, Names(), 3);
}

}  // namespace plir
