// Registers one pass, then fails: nothing it registered may stay.
#include "passes/plugin.h"

namespace {
plir::Status Register(plir::PluginHost& host) {
  plir::PassDef d;
  d.info.name = "TestNeverCommitted";
  d.info.description = "must not stay registered";
  d.module_fn = [](const plir::Module& m,
                   const plir::PassCallContext&) -> plir::StatusOr<plir::Module> { return m; };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(d)));
  return plir::FailedPrecondition("the GPU backend this plugin needs is not configured");
}
}  // namespace

PLIR_PLUGIN("test_register_fails", "1", Register)
