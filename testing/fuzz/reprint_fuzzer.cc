// libFuzzer target: print(load(x)) must parse. The first byte picks the
// loader (even: binary, odd: JSON) for the rest of the input; a module that
// loads and verifies prints as text that the parser reads back to an equal
// module. This is the contract that the printer never writes text the
// parser cannot read (names, nesting, escapes).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto m = data[0] % 2 == 0 ? plir::LoadBinary(bytes) : plir::LoadJson(bytes);
  if (!m.ok() || !plir::Verify(*m).ok()) return 0;
  std::string text = plir::PrintModule(*m);
  auto parsed = plir::ParseModule(text);
  if (!parsed.ok()) {
    std::fprintf(stderr, "printed text does not parse: %s\n%s\n", parsed.status().message().c_str(),
                 text.c_str());
    std::abort();
  }
  if (!plir::StructuralEqual(*m, *parsed, /*map_free_vars=*/true)) {
    std::fprintf(stderr, "printed text parses to a different module:\n%s\n", text.c_str());
    std::abort();
  }
  return 0;
}
