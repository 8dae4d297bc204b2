// libFuzzer target for the JSON loader: any bytes give a module or a clean
// error; a loaded module saves back to JSON that loads to an equal module.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ir/serialize/serialize.h"
#include "ir/structural.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = plir::LoadJson(text);
  if (!m.ok()) return 0;
  auto again = plir::LoadJson(plir::SaveJson(*m));
  if (!again.ok() || !plir::StructuralEqual(*m, *again, /*map_free_vars=*/true)) {
    std::fprintf(stderr, "JSON round trip failed\n");
    std::abort();
  }
  return 0;
}
