// The embedded Python interpreter behind a pipeline's `python:` key.
//
// The driver loads this plugin like any other, then calls
// plir_python_passes_load(FILE) for each file the pipeline names. The first
// call starts Python (isolated: no environment variables, no user site, no
// signal handlers, so the supervisor keeps its own), puts the plir package
// next to this plugin's build tree on sys.path, and runs the file as a
// module. Its @plir.function_pass / @plir.module_pass decorators register
// the passes in the host's registry: plir's extension binds to the symbols
// the host exports, so there is one registry. Errors are values: a Python
// exception (SyntaxError, an exception at import, SystemExit) becomes the
// message "FILE:LINE: Type: message"; nothing is thrown out of here.
#include <Python.h>
#include <dlfcn.h>

#include <cstring>
#include <string>

#include "passes/plugin.h"

namespace {

plir::Status Register(plir::PluginHost&) { return plir::Status::Ok(); }

std::string Dirname(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

// The directory of this plugin's file.
std::string SelfDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Dirname), &info) == 0 || !info.dli_fname) return ".";
  return Dirname(info.dli_fname);
}

// Imports plir (from `package_dir` first) and runs PATH with its loader
// (plir/_passes.py: _load_pass_file); returns "" or the error.
const char kLoader[] = R"PY(
def _plir_load_passes(path, package_dir):
    import sys
    if package_dir not in sys.path:
        sys.path.insert(0, package_dir)
    try:
        from plir._passes import _load_pass_file
    except BaseException as e:
        return "%s: cannot import the plir package (looked in %s first): %s: %s" % (
            path, package_dir, type(e).__name__, e)
    return _load_pass_file(path)
)PY";

PyObject* loader_fn = nullptr;  // _plir_load_passes, once Python runs

std::string Start() {
  if (loader_fn) return "";
  // Extension modules (numpy's, plir's) take the C API from the global
  // scope; this plugin was opened RTLD_LOCAL, so promote libpython.
  if (!dlopen("libpython3.11.so.1.0", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) &&
      !dlopen("libpython3.11.so.1.0", RTLD_NOW | RTLD_GLOBAL))
    return std::string("cannot load libpython3.11: ") + dlerror();
  bool started_here = !Py_IsInitialized();
  PyGILState_STATE outer{};
  if (started_here) {
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    PyStatus st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st))
      return std::string("cannot start Python: ") + (st.err_msg ? st.err_msg : "unknown error");
  } else {
    outer = PyGILState_Ensure();
  }
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* r = PyRun_String(kLoader, Py_file_input, globals, globals);
  std::string error;
  if (!r) {
    PyErr_Print();
    error = "cannot set up the Python loader";
  } else {
    Py_DECREF(r);
    loader_fn = PyDict_GetItemString(globals, "_plir_load_passes");
    Py_XINCREF(loader_fn);
  }
  Py_DECREF(globals);
  // Release the GIL: pass threads take it when they call a Python pass.
  if (started_here)
    PyEval_SaveThread();
  else
    PyGILState_Release(outer);
  return error;
}

std::string Load(const char* file) {
  std::string error = Start();
  if (!error.empty()) return error;
  PyGILState_STATE g = PyGILState_Ensure();
  std::string package_dir = SelfDir() + "/../../python";
  PyObject* r = PyObject_CallFunction(loader_fn, "ss", file, package_dir.c_str());
  if (!r) {
    PyErr_Clear();
    error = std::string(file) + ": the Python loader failed";
  } else {
    const char* s = PyUnicode_AsUTF8(r);
    error = s ? s : "";
    Py_DECREF(r);
  }
  PyGILState_Release(g);
  return error;
}

}  // namespace

PLIR_PLUGIN("python_passes", "0.1", Register)

// Runs `file` (an absolute path) in the embedded interpreter. Returns 0, or
// 1 with the error in `error` (NUL-terminated, truncated to error_size).
extern "C" __attribute__((visibility("default"))) int plir_python_passes_load(const char* file,
                                                                              char* error,
                                                                              size_t error_size) {
  std::string message;
  try {
    message = Load(file);
  } catch (...) {
    message = std::string(file) + ": unexpected C++ exception while loading";
  }
  if (message.empty()) return 0;
  if (error_size > 0) {
    std::strncpy(error, message.c_str(), error_size - 1);
    error[error_size - 1] = '\0';
  }
  return 1;
}
