// A plugin whose static constructor crashes: dlopen itself kills the
// process. plir-opt must name the file and go on (--list-passes) or refuse.
#include "passes/plugin.h"

namespace {

int* volatile g_null = nullptr;

// A real segfault, also under UBSan (which would report the null store and
// exit instead).
__attribute__((noinline, no_sanitize("undefined"))) void WriteNull(int v) { *g_null = v; }

struct CrashOnLoad {
  CrashOnLoad() { WriteNull(3); }
};
CrashOnLoad crash_on_load;

plir::Status Register(plir::PluginHost&) { return plir::Status::Ok(); }

}  // namespace

PLIR_PLUGIN("test_ctor_crash", "1", Register)
