// plir-diff A B: compares two module files structurally (free variables
// mapped). Exit status 0 iff they are equal; 1 with a unified diff and the
// first mismatch path otherwise; 2 on an input error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "driver/file_util.h"
#include "ir/serialize/module_file.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "kernels/op_kernels.h"
#include "passes/unified_diff.h"

namespace {

int Run(int argc, char** argv) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("plir-diff: chdir");
  }
  CLI::App app{"plir-diff: structural comparison of two PLIR modules"};
  std::string a, b;
  app.add_option("a", a, "first module")->required();
  app.add_option("b", b, "second module")->required();
  uint64_t max_input_bytes = plir::ModuleFile::kDefaultMaxBytes;
  app.add_option("--max-input-bytes", max_input_bytes,
                 "refuse a module file larger than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  plir::ModuleFile::SetMaxBytes(max_input_bytes);
  auto ma = plir::LoadModuleFile(a);
  if (!ma.ok()) {
    std::cerr << ma.status().message() << "\n";
    return 2;
  }
  auto mb = plir::LoadModuleFile(b);
  if (!mb.ok()) {
    std::cerr << mb.status().message() << "\n";
    return 2;
  }
  auto m = plir::FindFirstMismatch(*ma, *mb, /*map_free_vars=*/true);
  if (!m) return 0;
  std::cout << "first mismatch: " << m->path << ": " << m->lhs << " vs " << m->rhs << "\n"
            << plir::UnifiedDiff(plir::PrintModule(*ma), plir::PrintModule(*mb), a, b);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  plir::GuardStandardFds();
  plir::TakeOverBlasThreads();  // OpenBLAS's idle workers off the cores (plir_opt.cc)
  // Nothing escapes main(): an input error is exit 2 with a message. Equal
  // modules exit 0, different ones 1 (their diff on standard output, which
  // must be written as well).
  try {
    int rc = Run(argc, argv);
    return rc == 2 ? rc : plir::FinishStdout("plir-diff", rc, 2, rc);
  } catch (const std::exception& e) {
    std::cerr << "plir-diff: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "plir-diff: internal error\n";
  }
  return 2;
}
