// Writes docs/ops.md: every op of the registry (the core ops, and with
// --plugin those a plugin registers), with signature, attributes, pattern
// kind and purity (RenderOpDocs in ir/op.h).
//
//   bazel run //tools:gen_ops_doc                 # rewrite docs/ops.md
//   gen_ops_doc --check docs/ops.md               # exit 1 if it is stale
//   gen_ops_doc --stdout [--plugin lib.so]...     # print it
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "driver/file_util.h"
#include "driver/plugin_loader.h"
#include "ir/op.h"

int main(int argc, char** argv) {
  std::string check;
  bool to_stdout = false;
  plir::PluginLoader loader;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check" && i + 1 < argc) {
      check = argv[++i];
    } else if (a == "--stdout") {
      to_stdout = true;
    } else if (a == "--plugin" && i + 1 < argc) {
      auto r = loader.LoadPath(argv[++i]);
      if (!r.ok()) {
        std::cerr << "gen_ops_doc: " << r.status().message() << "\n";
        return 2;
      }
    } else {
      std::cerr << "usage: gen_ops_doc [--check FILE | --stdout] [--plugin LIB.so]...\n";
      return 2;
    }
  }
  std::string doc = plir::RenderOpDocs(plir::OpRegistry::Global(), plir::OpDocFormat::kMarkdown);
  if (to_stdout) {
    std::cout << doc;
    return 0;
  }
  if (!check.empty()) {
    auto have = plir::ReadFileToString(check);
    if (!have.ok()) {
      std::cerr << "gen_ops_doc: " << have.status().message() << "\n";
      return 2;
    }
    if (*have != doc) {
      std::cerr << "gen_ops_doc: " << check
                << " is stale; regenerate it with `bazel run //tools:gen_ops_doc`\n";
      return 1;
    }
    std::cout << check << " is up to date\n";
    return 0;
  }
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (!ws) {
    std::cerr << "gen_ops_doc: run it with `bazel run //tools:gen_ops_doc` (or pass --stdout)\n";
    return 2;
  }
  std::filesystem::path out = std::filesystem::path(ws) / "docs" / "ops.md";
  if (plir::Status s = plir::WriteFileAtomically(out.string(), doc); !s.ok()) {
    std::cerr << "gen_ops_doc: " << s.message() << "\n";
    return 1;
  }
  std::cout << "wrote docs/ops.md\n";
  return 0;
}
