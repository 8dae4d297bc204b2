// PassRegistry: the one table of passes by name.
//
// Registering a name twice is an error naming both origins. Plugins receive
// a pointer to the host's registry; since they bind to the host's single copy
// of the core, PassRegistry::Global() is the same object in every plugin.
#ifndef PLIR_PASSES_REGISTRY_H_
#define PLIR_PASSES_REGISTRY_H_

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/support/registry.h"
#include "passes/pass.h"

namespace plir {

class PassRegistry {
 public:
  static PassRegistry& Global();

  // Fails (InvalidArgument) on a malformed def, (AlreadyExists) on a taken
  // name: "pass X from B is already registered by A".
  Status Register(PassDef def);
  // The checks Register makes before the name lookup.
  static Status Validate(const PassDef& def);
  // Returns the pass named `name`, or null.
  std::shared_ptr<const PassDef> Lookup(const std::string& name) const;
  // Names of all passes, sorted.
  std::vector<std::string> Names() const;
  // Up to three registered names closest to `name` ("did you mean").
  std::vector<std::string> Suggest(const std::string& name) const;

  PassRegistry() = default;  // tests may use private registries

 private:
  Registry<std::shared_ptr<const PassDef>> passes_;
};

}  // namespace plir

#endif  // PLIR_PASSES_REGISTRY_H_
