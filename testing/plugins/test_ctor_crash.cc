// A plugin whose static constructor crashes: dlopen itself kills the
// process. plir-opt must name the file and go on (--list-passes) or refuse.
#include "passes/plugin.h"

namespace {

int* volatile g_null = nullptr;

struct CrashOnLoad {
  CrashOnLoad() { *g_null = 3; }
};
CrashOnLoad crash_on_load;

plir::Status Register(plir::PluginHost&) { return plir::Status::Ok(); }

}  // namespace

PLIR_PLUGIN("test_ctor_crash", "1", Register)
