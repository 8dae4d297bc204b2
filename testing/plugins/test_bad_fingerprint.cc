// Reports a build fingerprint whose IR layout hash differs from the host's,
// as a plugin built against other headers would.
#include "passes/plugin.h"

static int NeverCalled(void*, char*, size_t) { __builtin_trap(); }

extern "C" __attribute__((visibility("default"))) const PlirPluginInfo* plir_plugin_entry(void) {
  static const PlirPluginInfo info = {PLIR_PLUGIN_API_VERSION,
                                      {PLIR_COMPILER_ID, PLIR_STDLIB_VERSION, PLIR_STDLIB_CXX11_ABI,
                                       plir::PlirBoundaryLayoutHash() ^ 1u},
                                      "test_bad_fingerprint",
                                      "1",
                                      &NeverCalled};
  return &info;
}
