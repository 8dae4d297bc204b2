#include "testing/plugin_test_util.h"

#include <memory>
#include <mutex>
#include <set>

#include "driver/plugin_loader.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"
#include "passes/unified_diff.h"

namespace plir::testing {

Module ParseOrFail(const std::string& text) {
  StatusOr<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : Module();
}

void LoadPluginOrFail(const std::string& so_path) {
  static std::mutex mu;
  static std::set<std::string> loaded;
  static PluginLoader* loader = new PluginLoader();  // plugins stay loaded for the process
  std::lock_guard<std::mutex> lock(mu);
  if (loaded.count(so_path)) return;
  auto r = loader->LoadPath(so_path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  loaded.insert(so_path);
}

StatusOr<Module> RunPasses(const Module& m, const std::vector<std::string>& passes) {
  std::vector<PipelineStep> steps;
  for (const std::string& p : passes) {
    PLIR_ASSIGN_OR_RETURN(PipelineStep s, MakePassStep(PassRegistry::Global(), p));
    steps.push_back(std::move(s));
  }
  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
  ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  return PassManager().Run(steps, m, ctx);
}

Module RunPassesOrFail(const Module& m, const std::vector<std::string>& passes) {
  StatusOr<Module> r = RunPasses(m, passes);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : m;
}

::testing::AssertionResult ModulesEqual(const Module& actual, const Module& expected) {
  auto mm = FindFirstMismatch(expected, actual, /*map_free_vars=*/true);
  if (!mm) return ::testing::AssertionSuccess();
  PrintOptions p;
  p.version_header = false;
  return ::testing::AssertionFailure()
         << "modules differ\nfirst mismatch: " << mm->path << ": expected " << mm->lhs << ", got "
         << mm->rhs << "\n"
         << UnifiedDiff(PrintModule(expected, p), PrintModule(actual, p), "expected", "actual");
}

::testing::AssertionResult ModulesEqual(const Module& actual, const std::string& expected_text) {
  StatusOr<Module> want = ParseModule(expected_text);
  if (!want.ok())
    return ::testing::AssertionFailure()
           << "cannot parse the expected module: " << want.status().message();
  return ModulesEqual(actual, *want);
}

}  // namespace plir::testing
