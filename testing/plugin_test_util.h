// googletest helpers for plugin unit tests, in tree or out of tree
// (`@plir//testing:plugin_test_util`, public).
//
//   cc_test(
//       name = "my_pass_test",
//       srcs = ["my_pass_test.cc"],
//       data = [":libplir_my_pass.so"],
//       linkopts = ["-rdynamic", "-ldl"],  # the plugin binds to this binary's IR core
//       deps = ["@plir//testing:plugin_test_util", "@system//:gtest_main"],
//   )
//
//   TEST(MyPass, Folds) {
//     plir::testing::LoadPluginOrFail("plugins/my_pass/libplir_my_pass.so");
//     plir::Module in = plir::testing::ParseOrFail("def @main(...) ...");
//     plir::Module out = plir::testing::RunPassesOrFail(in, {"MyPass"});
//     EXPECT_TRUE(plir::testing::ModulesEqual(out, "def @main(...) ..."));
//   }
#ifndef PLIR_TESTING_PLUGIN_TEST_UTIL_H_
#define PLIR_TESTING_PLUGIN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"

namespace plir::testing {

// Parses `text` or fails the current test (and returns an empty module).
Module ParseOrFail(const std::string& text);

// Loads a plugin .so (a runfiles-relative or absolute path) into the
// process's pass registry, once per path; fails the test on error.
void LoadPluginOrFail(const std::string& so_path);

// Runs the named passes (registered: core or loaded plugins) in order on
// `m`, as plir-opt does with --verify-each --check-input-unchanged. Returns
// the pass's error as a status.
StatusOr<Module> RunPasses(const Module& m, const std::vector<std::string>& passes);
// The same, failing the test on error (and returning `m`).
Module RunPassesOrFail(const Module& m, const std::vector<std::string>& passes);

// Structural equality with free variables mapped (as the golden tests and
// plir-diff compare); on failure, the first mismatch path and a unified
// diff of the printed modules.
::testing::AssertionResult ModulesEqual(const Module& actual, const Module& expected);
::testing::AssertionResult ModulesEqual(const Module& actual, const std::string& expected_text);

}  // namespace plir::testing

#endif  // PLIR_TESTING_PLUGIN_TEST_UTIL_H_
