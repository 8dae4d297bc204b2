// Loads pass plugins (.so files) at run time.
//
// A plugin is found by name along a search path (`dead_code_elimination` ->
// DIR/libplir_dead_code_elimination.so or DIR/dead_code_elimination/
// libplir_dead_code_elimination.so), or loaded by explicit path. Before
// calling any C++ code of the plugin, the loader checks the entry symbol,
// the API version and the build fingerprint. Registration is staged and then
// committed as a whole. Every error names the file.
#ifndef PLIR_DRIVER_PLUGIN_LOADER_H_
#define PLIR_DRIVER_PLUGIN_LOADER_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/op.h"
#include "passes/plugin_abi.h"
#include "passes/registry.h"

namespace plir {

struct LoadedPlugin {
  std::string name;
  std::string version;
  std::string path;  // canonical path of the .so
  std::vector<std::string> passes;
  std::vector<std::string> ops;
};

// Error kinds the loader distinguishes (StatusCode alone is too coarse).
enum class PluginError {
  kNone,
  kCannotOpen,
  kMissingEntry,
  kApiVersion,
  kFingerprint,
  kRegistration,
  kDuplicateName,
  kNotFound,
  kInsecure,
  kPinMismatch,
  kNotBundled,  // refused: the loader trusts only the bundled plugins
};

// A failed load: its kind, and the error (which names the file). kind is
// kNone iff there is no error.
struct PluginLoadError {
  PluginError kind = PluginError::kNone;
  Status status;
};

// What a load returns: the plugin, or the error with its kind.
class PluginLoadResult : public StatusOr<LoadedPlugin> {
 public:
  PluginLoadResult(LoadedPlugin p) : StatusOr(std::move(p)) {}  // NOLINT: implicit
  PluginLoadResult(PluginLoadError e)                           // NOLINT: implicit
      : StatusOr(std::move(e.status)), error_(e.kind) {}
  // The kind of the error: kNone iff ok().
  PluginError error() const { return error_; }

 private:
  PluginError error_ = PluginError::kNone;
};

class PluginLoader {
 public:
  explicit PluginLoader(PassRegistry& passes = PassRegistry::Global(),
                        OpRegistry& ops = OpRegistry::Global())
      : passes_(passes), ops_(ops) {}

  // Adds a directory to the end of the search path.
  void AddSearchDir(const std::string& dir) { search_dirs_.push_back(dir); }
  // Adds a directory of the plugins shipped with PLIR (searched last). A
  // plugin elsewhere on the path with the same file name shadows the
  // bundled one: the loader warns, naming both.
  void AddBundledDir(const std::string& dir);
  // Names a directory of bundled plugins without searching it (yet): before
  // a plugin from anywhere else registers anything, every bundled plugin is
  // loaded, so that no pass or op name a bundled plugin owns can be taken
  // (the later registration fails, naming both files).
  void DeclareBundledDir(const std::string& dir);

  // Refuses, before it is opened, every plugin file that is not one of the
  // bundled plugins (a libplir_*.so in a bundled directory or one level
  // below it, compared by canonical path). plir-opt's child runs so when it
  // writes the output itself: only PLIR's own code may run in such a child.
  void set_bundled_only(bool only) { bundled_only_ = only; }
  bool bundled_only() const { return bundled_only_; }

  // Trust (OpenSSH's StrictModes): a plugin file, and every directory
  // above it, must be owned by root or by this user and not writable by
  // group or others; a directory writable by others is allowed if it is
  // sticky (/tmp: nobody else can replace what is in it). Anything else is
  // refused unless this is set.
  void set_allow_insecure(bool allow) { allow_insecure_ = allow; }
  // Appended to a "cannot open" error that says "Permission denied" (the
  // plugin sandbox refused a file).
  void set_permission_hint(std::string hint) { permission_hint_ = std::move(hint); }
  // Requires the plugin named `name` (file libplir_NAME.so) to have this
  // SHA-256 (hex); checked before the file is opened with dlopen.
  void Pin(const std::string& name, const std::string& sha256) { pins_[name] = sha256; }
  // Requires the file at `path` (compared by canonical path) to have this
  // SHA-256; checked before dlopen (plir-opt --reproduce pins the bundle's
  // plugins so).
  void PinPath(const std::string& path, const std::string& sha256);
  // Never loads this file (by canonical path) when scanning the search path.
  void Skip(const std::string& path);
  // Called before a plugin file is opened (its constructors run then);
  // `scanning` is true when LoadAll found it.
  void SetLoadObserver(std::function<void(const std::string& path, bool scanning)> fn) {
    observer_ = std::move(fn);
  }
  // Called with a description ("op NAME of plugin NAME VERSION (PATH)")
  // before a kernel that a plugin loaded from now on defined runs (an op's
  // eval or work function, an extern's kernel), and with nullptr after it:
  // plir-opt records it so that a crash or a limit inside FoldConstant is
  // blamed on the plugin that defined the op.
  void SetKernelHook(std::function<void(const std::string* what)> fn) {
    kernel_hook_ = std::move(fn);
  }
  // Warnings (shadowed plugins, skipped files) since the last call.
  std::vector<std::string> TakeWarnings() { return std::move(warnings_); }
  const std::vector<std::string>& search_dirs() const { return search_dirs_; }

  // Loads the plugin at `path`. Loading the same file twice is a no-op that
  // returns the first load.
  PluginLoadResult LoadPath(const std::string& path);
  // Finds `name` on the search path and loads it.
  PluginLoadResult LoadByName(const std::string& name);
  // Returns the file that LoadByName would load, if any.
  std::optional<std::string> Find(const std::string& name) const;
  // Loads every plugin found in the search directories. A file that fails
  // does not stop the others; the result lists every failure (one per line).
  Status LoadAll();

  const std::vector<LoadedPlugin>& loaded() const { return loaded_; }

 private:
  PassRegistry& passes_;
  OpRegistry& ops_;
  PluginLoadError CheckTrust(const std::string& path, const std::string& canonical);
  bool IsBundled(const std::string& canonical) const;
  // The bundled directories' plugin files, as found (sorted).
  std::vector<std::string> BundledFiles() const;
  // Whether `canonical` is one of them, compared by canonical path (the set
  // is built once per set of bundled directories).
  bool IsBundledFile(const std::string& canonical);
  void LoadBundledPlugins();
  bool bundled_only_ = false;
  std::optional<std::set<std::string>> bundled_files_;  // canonical; reset by DeclareBundledDir
  std::map<std::string, std::string> path_pins_;        // canonical path -> sha256
  bool bundled_loaded_ = false;
  std::vector<std::string> search_dirs_;
  std::set<std::string> bundled_dirs_;
  std::set<std::string> skipped_;
  std::map<std::string, std::string> pins_;
  bool allow_insecure_ = false;
  std::string permission_hint_;
  bool scanning_ = false;
  std::function<void(const std::string&, bool)> observer_;
  std::function<void(const std::string*)> kernel_hook_;
  std::vector<std::string> warnings_;
  std::vector<LoadedPlugin> loaded_;
};

// The directories holding the in-tree plugins, relative to the running
// executable: EXE_DIR/../plugins (bazel-bin and runfiles layout) and
// EXE_DIR/../lib/plir/plugins (an installed copy). EXE_DIR is argv[0]'s
// directory as written when plugins are beside it, else the executable's
// real directory (/proc/self/exe).
std::vector<std::string> DefaultPluginDirs();

// The conventional plugin name of a pass: DeadCodeElimination ->
// dead_code_elimination (found as libplir_dead_code_elimination.so).
std::string PluginNameForPass(const std::string& pass);

// The host's own fingerprint, as a plugin built with this tree would report it.
std::string DescribeFingerprint(const PlirBuildFingerprint& f);

}  // namespace plir

#endif  // PLIR_DRIVER_PLUGIN_LOADER_H_
