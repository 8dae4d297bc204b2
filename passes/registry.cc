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
  std::string name = info.name, origin = info.origin;
  auto taken = passes_.Insert(name, std::make_shared<const PassDef>(std::move(def)));
  if (taken)
    return AlreadyExists("pass " + name + " from " + origin + " is already registered by " +
                         taken->info.origin);
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
    if ((o.min || o.max) && o.type != OptionType::kInt && o.type != OptionType::kIntList)
      return InvalidArgument("pass " + info.name + ": option '" + o.name +
                             "' has bounds but is not int or int list");
    if (o.min && o.max && *o.min > *o.max)
      return InvalidArgument("pass " + info.name + ": option '" + o.name +
                             "' has a minimum above its maximum");
    auto check = info.ResolveOptions({{o.name, o.default_value}});
    if (!check.ok())
      return InvalidArgument("pass " + info.name + ": the default of option '" + o.name +
                             "' is invalid: " + check.status().message());
  }
  return Status::Ok();
}

std::shared_ptr<const PassDef> PassRegistry::Lookup(const std::string& name) const {
  return passes_.Lookup(name);
}

std::vector<std::string> PassRegistry::Names() const { return passes_.Names(); }

std::vector<std::string> PassRegistry::Suggest(const std::string& name) const {
  return passes_.Suggest(name, 3);
}

}  // namespace plir
