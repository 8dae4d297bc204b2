#include "driver/pass_resolver.h"

namespace plir {

StatusOr<std::string> ResolvePassName(const std::string& name, PluginLoader& loader,
                                      const PassRegistry& registry, const ResolveOptions& options,
                                      std::string* warning) {
  if (registry.Lookup(name)) return name;
  // Not registered yet: try the plugin of the conventional name.
  std::string snake = PluginNameForPass(name);
  if (loader.Find(snake)) {
    auto r = loader.LoadByName(snake);
    if (!r.ok()) return r.status();
    if (registry.Lookup(name)) return name;
  }
  if (options.load_all_plugins) {
    Status s = loader.LoadAll();
    // Reported even when the name was found: a refused plugin (one that took
    // a bundled plugin's pass name, say) is the user's to know about.
    if (!s.ok() && warning) *warning = s.message();
    if (registry.Lookup(name)) return name;
  }
  std::string msg = "unknown pass '" + name + "'";
  auto close = registry.Suggest(name);
  if (!close.empty()) {
    msg += "; did you mean";
    for (size_t i = 0; i < close.size(); ++i) msg += (i ? ", '" : " '") + close[i] + "'";
    msg += "?";
  } else {
    msg += " (is its plugin listed under 'plugins', or on the plugin path?)";
  }
  return NotFound(msg);
}

}  // namespace plir
