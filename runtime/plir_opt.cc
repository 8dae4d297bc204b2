// plir-opt: reads a module, verifies it, and prints it.
//
//   plir-opt FILE            parse, verify, print to stdout
//   plir-opt - < FILE        read standard input
//   plir-opt FILE -o OUT     write OUT atomically instead
//
// Exit status: 0 on success, 1 on an input error (message on stderr),
// 2 on a usage error. On any error nothing is written.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/file_util.h"

namespace plir {
namespace {

int Run(const std::string& input, const std::string& output) {
  StatusOr<std::string> text = ReadFileToString(input);
  if (!text.ok()) {
    std::cerr << "plir-opt: " << text.status().message() << "\n";
    return 1;
  }
  ParseOptions options;
  options.filename = input == "-" ? "<stdin>" : input;
  StatusOr<Module> module = ParseModule(*text, options);
  if (!module.ok()) {
    std::cerr << module.status().message() << "\n";
    return 1;
  }
  if (Status s = Verify(*module); !s.ok()) {
    std::cerr << options.filename << ": " << s.message() << "\n";
    return 1;
  }
  std::string printed = PrintModule(*module);
  if (output.empty() || output == "-") {
    std::fwrite(printed.data(), 1, printed.size(), stdout);
    if (std::fflush(stdout) != 0) {
      std::cerr << "plir-opt: error writing to standard output\n";
      return 1;
    }
    return 0;
  }
  if (Status s = WriteFileAtomically(output, printed); !s.ok()) {
    std::cerr << "plir-opt: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  // Under `bazel run`, resolve relative paths against the user's directory.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("plir-opt: chdir to BUILD_WORKING_DIRECTORY");
  }
  CLI::App app{"plir-opt: parse, verify and print PLIR modules"};
  std::string input;
  std::string output;
  app.add_option("input", input, "input module (.plir), or - for standard input")->required();
  app.add_option("-o,--output", output, "write the result to this file (atomically)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return plir::Run(input, output);
}
