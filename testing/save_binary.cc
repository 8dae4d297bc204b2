// Test tool: save_binary IN OUT [VERSION] loads a module in any format and
// writes it as binary (version 2, 3 or 4; default 3) without verifying it,
// as SaveBinary allows: how the tests get an ill-formed binary input (a
// variable bound in two functions) that plir-opt, which verifies what it
// writes, never produces. Exits 1 with a message on a load or write error.
#include <cstdio>
#include <string>

#include "driver/file_util.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: save_binary IN OUT [VERSION]\n");
    return 2;
  }
  const std::string version = argc == 4 ? argv[3] : "3";
  if (version != "2" && version != "3" && version != "4") {
    std::fprintf(stderr, "save_binary: VERSION must be 2, 3 or 4, not '%s'\n", version.c_str());
    return 2;
  }
  auto m = plir::LoadModuleFile(argv[1]);
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.status().message().c_str());
    return 1;
  }
  plir::BinarySaveOptions o;
  o.version = version[0] - '0';
  plir::Status s = plir::WriteFileAtomically(argv[2], plir::SaveBinary(*m, o));
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
