// Every in-tree pass on random modules that hold local functions (closures
// over the values in scope) and calls of them: each run succeeds, its output
// verifies, and its input is left untouched (instruments of the pass
// manager). Plugins are loaded from their built .so files.
#include <gtest/gtest.h>

#include "driver/plugin_loader.h"
#include "ir/structural.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "testing/random_module.h"

namespace plir {
namespace {

const char* kPlugins[] = {"canonicalize_bindings",
                          "common_subexpression_elimination",
                          "dead_code_elimination",
                          "fold_constant",
                          "fuse_ops",
                          "lazy_transform_params",
                          "lift_transform_params",
                          "normalize",
                          "to_basic_block_normal_form"};

TEST(LocalFunctionsTest, EveryPassKeepsModulesWithLocalFunctionsWellFormed) {
  PluginLoader loader;
  for (const char* p : kPlugins) {
    auto r = loader.LoadPath(std::string("plugins/") + p + "/libplir_" + p + ".so");
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  std::vector<std::string> passes = PassRegistry::Global().Names();
  ASSERT_GE(passes.size(), 11u);
  int modules_with_fns = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    testing::RandomModuleOptions o;
    o.seed = 1000 + seed;
    o.num_bindings = 150;
    o.bindings_per_function = 60;
    o.local_functions = true;
    Module m = testing::GenerateRandomModule(o);
    ASSERT_TRUE(Verify(m).ok()) << Verify(m).message();
    if (PrintModule(m).find("= fn(") != std::string::npos) ++modules_with_fns;
    for (const std::string& name : passes) {
      SCOPED_TRACE("seed " + std::to_string(o.seed) + ", pass " + name);
      auto step = MakePassStep(PassRegistry::Global(), name);
      ASSERT_TRUE(step.ok()) << step.status().message();
      PassContext ctx;
      ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
      ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
      auto out = PassManager().Run({*step}, m, ctx);
      ASSERT_TRUE(out.ok()) << out.status().message();
      EXPECT_TRUE(Verify(*out).ok()) << Verify(*out).message();
    }
  }
  EXPECT_GE(modules_with_fns, 10);
}

}  // namespace
}  // namespace plir
