// Claims a plugin API version this PLIR does not support.
#include "passes/plugin_abi.h"

static int NeverCalled(void*, char*, size_t) { __builtin_trap(); }

extern "C" __attribute__((visibility("default"))) const PlirPluginInfo* plir_plugin_entry(void) {
  static const PlirPluginInfo info = {999u, PLIR_BUILD_FINGERPRINT, "test_bad_version", "1",
                                      &NeverCalled};
  return &info;
}
