// Runs the golden cases of one case file against their expected file.
//
//   golden_runner --plugin libplir_NAME.so [--plugin OTHER.so]...
//                 --case tests/CASE.plir --expected tests/CASE.expected.plir
//   (one command line)
//
// For each case: the pipeline runs (plugins loaded from their .so, as
// plir-opt does) under the verify and input-unchanged instruments; the
// output must be structurally equal to the expected module (free variables
// mapped), with a unified diff and the first mismatch path otherwise; the
// output must round-trip through text; and the expected file must be
// exactly what update_goldens would write. One case's failure does not stop
// the others. Exit status 0 iff every case passes.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "driver/file_util.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "passes/unified_diff.h"
#include "testing/golden.h"

namespace plir::testing {
namespace {

// The Bazel package of a case file (its directory above `tests/`), for hints
// that work in any workspace: every plugin package has an update_goldens
// target (plir_pass_plugin makes it), in-tree or out of tree.
std::string PackageOf(const std::string& case_file, const std::string& plugin_name) {
  std::filesystem::path dir = std::filesystem::path(case_file).parent_path();
  if (dir.filename() == "tests") dir = dir.parent_path();
  std::string p = dir.generic_string();
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  if (p.empty() || p[0] == '/' || p.rfind("..", 0) == 0) return "plugins/" + plugin_name;
  return p;
}

int Main(const std::vector<std::string>& plugins, const std::string& case_file,
         const std::string& expected_file) {
  PluginLoader loader;
  std::vector<std::string> own_passes;
  std::string plugin_name;
  for (size_t i = 0; i < plugins.size(); ++i) {
    auto r = loader.LoadPath(plugins[i]);
    if (!r.ok()) {
      std::cerr << "golden: " << r.status().message() << "\n";
      return 1;
    }
    if (i == 0) {
      own_passes = r->passes;
      plugin_name = r->name;
    }
  }
  auto case_text = ReadFileToString(case_file);
  if (!case_text.ok()) {
    std::cerr << "golden: " << case_text.status().message() << "\n";
    return 1;
  }
  auto expected_text = ReadFileToString(expected_file);
  if (!expected_text.ok()) {
    std::cerr << "golden: " << expected_file << " is missing; generate it with\n"
              << "  bazel run //" << PackageOf(case_file, plugin_name) << ":update_goldens\n";
    return 1;
  }
  std::vector<GoldenCase> cases = SplitCases(*case_text);
  std::vector<std::string> expected = SplitExpected(*expected_text);
  if (expected.size() != cases.size()) {
    std::cerr << "golden: " << case_file << " has " << cases.size() << " case(s) but "
              << expected_file << " has " << expected.size() << "; regenerate it\n";
    return 1;
  }
  int failures = 0;
  std::vector<std::string> rendered;
  for (size_t i = 0; i < cases.size(); ++i) {
    const GoldenCase& c = cases[i];
    std::string where = case_file + ":" + std::to_string(c.first_line) + " (case " +
                        std::to_string(i + 1) + " of " + std::to_string(cases.size()) + ")";
    auto fail = [&](const std::string& msg) {
      ++failures;
      std::cout << "[ FAIL ] " << where << "\n" << msg << "\n";
    };
    StatusOr<CaseResult> r = RunCase(c, case_file, own_passes, loader);
    if (!r.ok()) {
      rendered.push_back("");
      fail(r.status().message());
      continue;
    }
    rendered.push_back(r->rendered);
    if (!c.expect_parse_error.empty()) {
      if (!r->is_parse_error)
        fail("expected a parse error containing \"" + c.expect_parse_error +
             "\", but the input parsed");
      else if (r->error.find(c.expect_parse_error) == std::string::npos)
        fail("expected a parse error containing \"" + c.expect_parse_error +
             "\", got: " + r->error);
      else
        std::cout << "[  OK  ] " << where << " (does not parse, as expected)\n";
      continue;
    }
    if (!c.expect_error.empty()) {
      if (!r->is_error)
        fail("expected an error containing \"" + c.expect_error + "\", but the pipeline succeeded");
      else if (r->error.find(c.expect_error) == std::string::npos)
        fail("expected an error containing \"" + c.expect_error + "\", got: " + r->error);
      else
        std::cout << "[  OK  ] " << where << " (fails as expected)\n";
      continue;
    }
    if (r->is_error) {
      fail("the pipeline failed: " + r->error);
      continue;
    }
    ParseOptions po;
    po.filename = expected_file;
    StatusOr<Module> want = ParseModule(expected[i], po);
    if (!want.ok()) {
      fail("cannot parse the expected module: " + want.status().message());
      continue;
    }
    if (auto m = FindFirstMismatch(*want, r->output, /*map_free_vars=*/true)) {
      PrintOptions p;
      p.version_header = false;
      fail("output differs from " + expected_file + "\nfirst mismatch: " + m->path + ": expected " +
           m->lhs + ", got " + m->rhs + "\n" +
           UnifiedDiff(PrintModule(*want, p), PrintModule(r->output, p), "expected", "actual"));
      continue;
    }
    StatusOr<Module> again = ParseModule(PrintModule(r->output));
    if (!again.ok() || !StructuralEqual(*again, r->output)) {
      fail("the output does not round-trip through text");
      continue;
    }
    std::cout << "[  OK  ] " << where << "\n";
  }
  if (failures == 0) {
    std::string regenerated = RenderExpected(rendered, plugin_name);
    if (regenerated != *expected_text) {
      ++failures;
      std::cout << "[ FAIL ] " << expected_file
                << " is not what update_goldens generates (hand-edited or stale; regenerate with"
                << " `bazel run //" << PackageOf(case_file, plugin_name) << ":update_goldens`):\n"
                << UnifiedDiff(*expected_text, regenerated, "checked in", "generated");
    }
  }
  std::cout << (cases.size() - std::min<size_t>(failures, cases.size())) << " passed, " << failures
            << " failed\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace plir::testing

int main(int argc, char** argv) {
  CLI::App app{"golden_runner: run a plugin's golden cases"};
  std::vector<std::string> plugins;
  std::string case_file, expected_file;
  app.add_option("--plugin", plugins, "plugin .so (the first is the one under test)")->required();
  app.add_option("--case", case_file, "case file")->required();
  app.add_option("--expected", expected_file, "expected file")->required();
  CLI11_PARSE(app, argc, argv);
  return plir::testing::Main(plugins, case_file, expected_file);
}
