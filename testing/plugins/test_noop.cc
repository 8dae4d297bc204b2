// A minimal well-behaved plugin: one pass that returns its input. Used to
// measure plir-opt's start-up with ten plugins (bench/ir_bench.cc).
#include "passes/plugin.h"

namespace {
plir::Status Register(plir::PluginHost& host) {
  plir::PassDef d;
  d.info.name = "TestNoop";
  d.info.description = "returns its input (test plugin)";
  d.module_fn = [](const plir::Module& m,
                   const plir::PassCallContext&) -> plir::StatusOr<plir::Module> { return m; };
  return host.RegisterPass(std::move(d));
}
}  // namespace

PLIR_PLUGIN("test_noop", "1", Register)
