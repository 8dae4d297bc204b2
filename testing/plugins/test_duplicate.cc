// Registers a pass name that test_good already registers.
#include "passes/plugin.h"

namespace {
plir::Status Register(plir::PluginHost& host) {
  plir::PassDef d;
  d.info.name = "TestReluToSoftmax";
  d.info.description = "a second pass with a taken name";
  d.module_fn = [](const plir::Module& m,
                   const plir::PassCallContext&) -> plir::StatusOr<plir::Module> { return m; };
  return host.RegisterPass(std::move(d));
}
}  // namespace

PLIR_PLUGIN("test_duplicate", "1", Register)
