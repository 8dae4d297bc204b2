// Pass properties: what a pass requires of its input (`requires_properties`)
// and what it establishes (`provides_properties`). One check, used by every
// place that builds a pipeline: plir-opt, the YAML loader and the golden
// runner, so that a pass refused by one is refused by all.
#ifndef PLIR_PASSES_PROPERTIES_H_
#define PLIR_PASSES_PROPERTIES_H_

#include <vector>

#include "ir/status.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"

namespace plir {

// Checks that every pass's required properties are provided by an earlier
// pass; the error names the pass's position.
Status CheckProperties(const std::vector<PipelineStep>& steps, const PassRegistry& registry);

}  // namespace plir

#endif  // PLIR_PASSES_PROPERTIES_H_
