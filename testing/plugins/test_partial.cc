// Registers a valid op and a valid pass, then a pass with no run function:
// the loader must refuse the plugin and commit none of the three.
#include "ir/op.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

Status Register(PluginHost& host) {
  OpDef op;
  op.name = "test_partial.op";
  op.min_args = op.max_args = 1;
  op.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    return args[0]->type();
  };
  PLIR_RETURN_IF_ERROR(host.RegisterOp(std::move(op)));
  PassDef good;
  good.info.name = "TestPartialGood";
  good.info.description = "a valid pass";
  good.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> { return m; };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(good)));
  PassDef bad;
  bad.info.name = "TestPartialBad";
  bad.info.description = "has no run function";
  return host.RegisterPass(std::move(bad));
}

}  // namespace

PLIR_PLUGIN("test_partial", "1", Register)
