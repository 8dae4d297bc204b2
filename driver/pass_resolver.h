// The one pass-name resolver of the driver: the YAML pipeline, plir-opt's
// --passes and --print-after all look pass names up here, so a name loads the
// same plugin and an unknown one gets the same "did you mean" everywhere.
#ifndef PLIR_DRIVER_PASS_RESOLVER_H_
#define PLIR_DRIVER_PASS_RESOLVER_H_

#include <string>

#include "driver/plugin_loader.h"
#include "ir/status.h"
#include "passes/registry.h"

namespace plir {

struct ResolveOptions {
  // When the conventional plugin (the snake_case name) does not register
  // the pass, load every plugin on the search path (plir-opt --passes).
  bool load_all_plugins = false;
};

// Returns `name` once a pass of that name is registered: already, after
// loading the plugin of its conventional name, or (with load_all_plugins)
// after loading every plugin on the path. Fails (NotFound) with "unknown
// pass 'NAME'; did you mean 'A', 'B'?" (or a hint to list its plugin), and
// with the plugin loader's error when the conventional plugin fails to load.
// `warning` receives why other plugins on the path did not load, if any.
StatusOr<std::string> ResolvePassName(const std::string& name, PluginLoader& loader,
                                      const PassRegistry& registry,
                                      const ResolveOptions& options = {},
                                      std::string* warning = nullptr);

}  // namespace plir

#endif  // PLIR_DRIVER_PASS_RESOLVER_H_
