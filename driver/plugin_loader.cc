#include "driver/plugin_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "driver/file_util.h"
#include "passes/plugin.h"

namespace plir {
namespace {

std::string Canonical(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  return path;
}

bool SameFingerprint(const PlirBuildFingerprint& a, const PlirBuildFingerprint& b) {
  return std::string(a.compiler ? a.compiler : "") == std::string(b.compiler ? b.compiler : "") &&
         a.stdlib_version == b.stdlib_version && a.stdlib_cxx11_abi == b.stdlib_cxx11_abi &&
         a.ir_layout_hash == b.ir_layout_hash;
}

const PlirBuildFingerprint kHostFingerprint = PLIR_BOUNDARY_FINGERPRINT;

// Plugins already committed to a registry, process-wide: a second loader (or
// a second pipeline) asking for the same file gets the first load back
// instead of a duplicate-name error.
struct LoadedTable {
  std::mutex mu;
  std::map<std::pair<const PassRegistry*, std::string>, LoadedPlugin> by_path;
};
LoadedTable& Loaded() {
  static auto* table = new LoadedTable();
  return *table;
}

}  // namespace

std::string PluginNameForPass(const std::string& pass) {
  std::string out;
  for (size_t i = 0; i < pass.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(pass[i]);
    if (std::isupper(c)) {
      if (i > 0) out.push_back('_');
      out.push_back(static_cast<char>(std::tolower(c)));
    } else {
      out.push_back(pass[i]);
    }
  }
  return out;
}

PluginLoadError Fail(PluginError kind, Status s) { return {kind, std::move(s)}; }

std::string DescribeFingerprint(const PlirBuildFingerprint& f) {
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(f.ir_layout_hash));
  return std::string(f.compiler ? f.compiler : "?") + ", libstdc++ " +
         std::to_string(f.stdlib_version) + ", cxx11 abi " + std::to_string(f.stdlib_cxx11_abi) +
         ", IR layout " + hash;
}

std::optional<std::string> PluginLoader::Find(const std::string& name) const {
  std::string file = "libplir_" + name + ".so";
  for (const std::string& dir : search_dirs_) {
    for (const std::string& candidate : {dir + "/" + file, dir + "/" + name + "/" + file}) {
      if (access(candidate.c_str(), R_OK) == 0) return candidate;
    }
  }
  return std::nullopt;
}

void PluginLoader::AddBundledDir(const std::string& dir) {
  DeclareBundledDir(dir);
  search_dirs_.push_back(dir);
}

void PluginLoader::DeclareBundledDir(const std::string& dir) {
  if (bundled_dirs_.insert(Canonical(dir)).second) {
    bundled_loaded_ = false;
    bundled_files_.reset();
  }
}

void PluginLoader::PinPath(const std::string& path, const std::string& sha256) {
  path_pins_[Canonical(path)] = sha256;
}

bool PluginLoader::IsBundled(const std::string& canonical) const {
  std::filesystem::path dir = std::filesystem::path(canonical).parent_path();
  return bundled_dirs_.count(dir.string()) || bundled_dirs_.count(dir.parent_path().string());
}

std::vector<std::string> PluginLoader::BundledFiles() const {
  std::vector<std::string> files;
  for (const std::string& dir : bundled_dirs_) {
    std::error_code ec;
    auto take = [&](const std::filesystem::path& p) {
      std::string f = p.filename().string();
      if (f.rfind("libplir_", 0) == 0 && f.size() > 11 && f.compare(f.size() - 3, 3, ".so") == 0)
        files.push_back(p.string());
    };
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      take(entry.path());
      std::error_code ec2;
      if (entry.is_directory(ec2))
        for (const auto& sub : std::filesystem::directory_iterator(entry.path(), ec2))
          take(sub.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool PluginLoader::IsBundledFile(const std::string& canonical) {
  if (!bundled_files_) {
    bundled_files_.emplace();
    for (const std::string& f : BundledFiles()) bundled_files_->insert(Canonical(f));
  }
  return bundled_files_->count(canonical) > 0;
}

void PluginLoader::LoadBundledPlugins() {
  if (bundled_loaded_) return;
  bundled_loaded_ = true;
  const std::vector<std::string> files = BundledFiles();
  // A bundled plugin that does not load is the installation's problem; the
  // run goes on (it fails later if that plugin's pass is needed).
  for (const std::string& f : files) {
    // One that crashed while loading (the supervisor's retry skips it).
    if (skipped_.count(Canonical(f))) continue;
    const bool was_scanning = scanning_;
    scanning_ = true;
    PluginLoadResult r = LoadPath(f);
    scanning_ = was_scanning;
    if (!r.ok()) warnings_.push_back("bundled plugin did not load: " + r.status().message());
  }
}

void PluginLoader::Skip(const std::string& path) { skipped_.insert(Canonical(path)); }

PluginLoadError PluginLoader::CheckTrust(const std::string& path, const std::string& canonical) {
  struct stat st;
  if (stat(canonical.c_str(), &st) != 0)
    return Fail(PluginError::kCannotOpen,
                NotFound("cannot open plugin " + path + ": " + std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return Fail(PluginError::kCannotOpen,
                InvalidArgument("cannot open plugin " + path + ": not a regular file"));
  if (!allow_insecure_) {
    // The file and every directory above it, as OpenSSH's StrictModes: owned
    // by root or by us, and writable by nobody else, except a sticky
    // directory (nobody else can rename or remove what we own in it).
    const uid_t me = geteuid();
    auto refuse = [&](const std::string& what, const std::string& why) {
      return Fail(PluginError::kInsecure,
                  FailedPrecondition("refusing plugin " + path + ": " + what + " " + why +
                                     " (whoever can replace it can run code in plir-opt); "
                                     "fix the ownership or permissions, or pass "
                                     "--allow-insecure-plugins"));
    };
    if (st.st_uid != 0 && st.st_uid != me)
      return refuse("the file",
                    "is owned by uid " + std::to_string(st.st_uid) + ", neither root nor you");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
      return refuse("the file", "is writable by group or others");
    for (std::string dir = canonical.substr(0, canonical.rfind('/'));;
         dir = dir.substr(0, dir.rfind('/'))) {
      const std::string shown = dir.empty() ? "/" : dir;
      struct stat dst;
      if (stat(shown.c_str(), &dst) != 0)
        return refuse("its directory " + shown,
                      std::string("cannot be checked: ") + std::strerror(errno));
      if (dst.st_uid != 0 && dst.st_uid != me)
        return refuse("its directory " + shown,
                      "is owned by uid " + std::to_string(dst.st_uid) + ", neither root nor you");
      if ((dst.st_mode & (S_IWGRP | S_IWOTH)) && !(dst.st_mode & S_ISVTX))
        return refuse("its directory " + shown, "is writable by group or others");
      if (dir.empty()) break;
    }
  }
  if (auto pin = path_pins_.find(canonical); pin != path_pins_.end()) {
    StatusOr<std::string> sha = Sha256File(canonical);
    if (!sha.ok()) return Fail(PluginError::kCannotOpen, sha.status());
    if (*sha != pin->second)
      return Fail(PluginError::kPinMismatch,
                  FailedPrecondition("refusing plugin " + path + ": its sha256 is " + *sha +
                                     ", but it was " + pin->second +
                                     " when the reproducer was written (the plugin changed; "
                                     "--allow-changed-plugins loads it anyway)"));
  }
  // A pin names the plugin by its file name: libplir_NAME.so.
  std::string file = canonical.substr(canonical.rfind('/') + 1);
  if (file.rfind("libplir_", 0) == 0 && file.size() > 11) {
    auto pin = pins_.find(file.substr(8, file.size() - 11));
    if (pin != pins_.end()) {
      StatusOr<std::string> sha = Sha256File(canonical);
      if (!sha.ok()) return Fail(PluginError::kCannotOpen, sha.status());
      if (*sha != pin->second)
        return Fail(
            PluginError::kPinMismatch,
            FailedPrecondition("refusing plugin " + path + ": its sha256 is " + *sha +
                               ", but the pipeline pins " + pin->first + " to " + pin->second));
    }
  }
  return {};
}

PluginLoadResult PluginLoader::LoadByName(const std::string& name) {
  // A plugin of that name already loaded (perhaps by path) satisfies the request.
  for (const LoadedPlugin& p : loaded_)
    if (p.name == name) return p;
  std::optional<std::string> path = Find(name);
  if (path &&
      !bundled_dirs_.count(Canonical(std::filesystem::path(*path).parent_path().string())) &&
      !bundled_dirs_.count(
          Canonical(std::filesystem::path(*path).parent_path().parent_path().string()))) {
    // Found outside the bundled plugins: a bundled plugin of that name wins.
    for (const std::string& dir : bundled_dirs_) {
      std::string file = "libplir_" + name + ".so";
      for (const std::string& c : {dir + "/" + file, dir + "/" + name + "/" + file}) {
        if (access(c.c_str(), R_OK) == 0 && Canonical(c) != Canonical(*path)) {
          warnings_.push_back("plugin " + *path + " has the name of the bundled plugin " + c +
                              " and is not loaded (a plugin may not shadow a bundled one)");
          path = c;
          break;
        }
      }
    }
  }
  if (!path) {
    std::string dirs;
    for (const std::string& d : search_dirs_) dirs += "\n  " + d;
    if (dirs.empty()) dirs = " (the search path is empty)";
    return Fail(PluginError::kNotFound,
                NotFound("plugin '" + name + "' not found (looked for libplir_" + name +
                         ".so in:" + dirs + ")"));
  }
  return LoadPath(*path);
}

namespace {

// `fn` with the kernel hook called around it (an empty `fn` stays empty).
template <typename R, typename... Args>
std::function<R(Args...)> WithKernelHook(std::function<R(Args...)> fn, std::string what,
                                         const std::function<void(const std::string*)>& hook) {
  if (!fn) return fn;
  return [fn = std::move(fn), what = std::move(what), hook](Args... args) -> R {
    struct Leave {
      const std::function<void(const std::string*)>& hook;
      ~Leave() { hook(nullptr); }
    };
    hook(&what);
    Leave leave{hook};
    return fn(std::forward<Args>(args)...);
  };
}

}  // namespace

PluginLoadResult PluginLoader::LoadPath(const std::string& path) {
  std::string canonical = Canonical(path);
  for (const LoadedPlugin& p : loaded_)
    if (p.path == canonical) return p;
  // Compared by canonical file, not directory (IsBundled): under `bazel
  // test` the bundled directory is a runfiles tree of links, so a file's
  // canonical path is elsewhere.
  if (bundled_only_ && !IsBundledFile(canonical))
    return Fail(PluginError::kNotBundled,
                FailedPrecondition("refusing plugin " + path +
                                   ": this run trusts only PLIR's bundled plugins (its child "
                                   "writes the output); --check-result lifts that"));
  // The bundled plugins' names first: no other plugin may take them. (A
  // bundled file reached through a link, as in a runfiles tree, is loaded
  // by that: it is then loaded once, not listed twice.)
  if (!bundled_dirs_.empty() && !IsBundled(canonical)) {
    LoadBundledPlugins();
    for (const LoadedPlugin& p : loaded_)
      if (p.path == canonical) return p;
  }
  LoadedTable& table = Loaded();
  std::lock_guard<std::mutex> lock(table.mu);
  auto known = table.by_path.find({&passes_, canonical});
  if (known != table.by_path.end()) {
    loaded_.push_back(known->second);
    return known->second;
  }

  // dlopen gets an absolute path, never a bare name it would look up on
  // LD_LIBRARY_PATH.
  if (canonical.empty() || canonical[0] != '/')
    return Fail(PluginError::kCannotOpen, NotFound("cannot open plugin " + path + ": " +
                                                   (access(path.c_str(), F_OK) != 0
                                                        ? std::string(std::strerror(errno))
                                                        : std::string("cannot resolve its path"))));
  if (PluginLoadError e = CheckTrust(path, canonical); e.kind != PluginError::kNone) return e;
  if (observer_) observer_(canonical, scanning_);
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    std::string why = err ? err : "unknown error";
    if (!permission_hint_.empty() && why.find("Permission denied") != std::string::npos)
      why += " (" + permission_hint_ + ")";
    return Fail(PluginError::kCannotOpen, NotFound("cannot open plugin " + path + ": " + why));
  }
  // Staged definitions hold code of the plugin (std::function managers): they
  // must be destroyed before the library is unmapped.
  std::optional<PluginHost> host;
  auto close_with = [&](PluginError kind, Status s) {
    host.reset();
    dlclose(handle);
    return Fail(kind, std::move(s));
  };
  dlerror();
  auto entry = reinterpret_cast<PlirPluginEntryFn>(dlsym(handle, PLIR_PLUGIN_ENTRY_SYMBOL));
  if (!entry)
    return close_with(PluginError::kMissingEntry,
                      InvalidArgument(path + " is not a PLIR plugin: it does not export " +
                                      PLIR_PLUGIN_ENTRY_SYMBOL));
  const PlirPluginInfo* info = entry();
  if (!info)
    return close_with(PluginError::kMissingEntry,
                      InvalidArgument(path + ": " + PLIR_PLUGIN_ENTRY_SYMBOL + " returned null"));
  if (info->api_version != PLIR_PLUGIN_API_VERSION)
    return close_with(
        PluginError::kApiVersion,
        FailedPrecondition(path + ": plugin API version " + std::to_string(info->api_version) +
                           ", but this PLIR supports version " +
                           std::to_string(PLIR_PLUGIN_API_VERSION) +
                           "; rebuild the plugin against this PLIR"));
  if (!SameFingerprint(info->fingerprint, kHostFingerprint))
    return close_with(
        PluginError::kFingerprint,
        FailedPrecondition(path + ": build fingerprint mismatch: the plugin was built with " +
                           DescribeFingerprint(info->fingerprint) + "; this PLIR with " +
                           DescribeFingerprint(kHostFingerprint) +
                           "; rebuild the plugin with the same toolchain and headers"));
  std::string name = info->name ? info->name : "";
  std::string version = info->version ? info->version : "";
  if (name.empty() || !info->register_fn)
    return close_with(
        PluginError::kMissingEntry,
        InvalidArgument(path + ": the plugin info has no name or no register function"));

  host.emplace("plugin " + name + " (" + path + ")");
  char error[1024] = {0};
  if (info->register_fn(&*host, error, sizeof error) != 0)
    return close_with(
        PluginError::kRegistration,
        FailedPrecondition(path + ": plugin " + name + " failed to register: " + error));
  // Commit only if every definition is valid and every name free: a plugin
  // registers all of its passes, ops and extern kernels, or none.
  for (const OpDef& d : host->staged_ops())
    if (Status s = OpRegistry::Validate(d); !s.ok())
      return close_with(PluginError::kRegistration, s.WithPrefix(path + ": plugin " + name));
  for (const PassDef& d : host->staged_passes())
    if (Status s = PassRegistry::Validate(d); !s.ok())
      return close_with(PluginError::kRegistration, s.WithPrefix(path + ": plugin " + name));
  std::set<std::string> op_names;
  for (const OpDef& d : host->staged_ops())
    if (!op_names.insert(d.name).second)
      return close_with(PluginError::kDuplicateName,
                        AlreadyExists(path + ": duplicate op name " + d.name +
                                      " (registered twice by plugin " + name + ")"));
  std::set<std::string> names;
  for (const PassDef& d : host->staged_passes()) {
    if (!names.insert(d.info.name).second)
      return close_with(PluginError::kDuplicateName,
                        AlreadyExists(path + ": duplicate pass name " + d.info.name +
                                      " (registered twice by plugin " + name + ")"));
    if (auto existing = passes_.Lookup(d.info.name))
      return close_with(PluginError::kDuplicateName,
                        AlreadyExists(path + ": duplicate pass name " + d.info.name +
                                      ": already registered by " + existing->info.origin));
  }
  for (const OpDef& d : host->staged_ops())
    if (ops_.Lookup(d.name))
      return close_with(
          PluginError::kDuplicateName,
          AlreadyExists(path + ": duplicate op name " + d.name + ": already registered by " +
                        ops_.Lookup(d.name)->def().origin));
  KernelRegistry& kernels = KernelRegistry::Global();
  for (const ExternKernelDef& d : host->staged_kernels()) {
    if (d.name.empty() || (!d.fn && !d.tuple_fn))
      return close_with(PluginError::kRegistration,
                        InvalidArgument(path + ": plugin " + name +
                                        ": an extern kernel has no name or no function"));
    if (!names.insert("@" + d.name).second)
      return close_with(PluginError::kDuplicateName,
                        AlreadyExists(path + ": duplicate extern kernel @" + d.name +
                                      " (registered twice by plugin " + name + ")"));
    if (auto existing = kernels.Lookup(d.name))
      return close_with(PluginError::kDuplicateName,
                        AlreadyExists(path + ": duplicate extern kernel @" + d.name +
                                      ": already registered by " + existing->origin));
  }
  if (kernel_hook_) {
    std::string from = " of plugin " + name + " " + version + " (" + canonical + ")";
    for (OpDef& d : host->staged_ops()) {
      d.eval = WithKernelHook(std::move(d.eval), "op " + d.name + from, kernel_hook_);
      d.work = WithKernelHook(std::move(d.work), "op " + d.name + from, kernel_hook_);
    }
    for (ExternKernelDef& d : host->staged_kernels()) {
      d.fn = WithKernelHook(std::move(d.fn), "extern @" + d.name + from, kernel_hook_);
      d.tuple_fn = WithKernelHook(std::move(d.tuple_fn), "extern @" + d.name + from, kernel_hook_);
    }
  }
  LoadedPlugin loaded{name, version, canonical, {}, {}};
  for (OpDef& d : host->staged_ops()) {
    loaded.ops.push_back(d.name);
    Status s = ops_.Register(std::move(d));
    if (!s.ok()) return Fail(PluginError::kRegistration, s.WithPrefix(path + ": plugin " + name));
  }
  for (PassDef& d : host->staged_passes()) {
    loaded.passes.push_back(d.info.name);
    Status s = passes_.Register(std::move(d));
    if (!s.ok()) return Fail(PluginError::kRegistration, s.WithPrefix(path + ": plugin " + name));
  }
  for (ExternKernelDef& d : host->staged_kernels()) {
    Status s = kernels.Register(std::move(d));
    if (!s.ok()) return Fail(PluginError::kRegistration, s.WithPrefix(path + ": plugin " + name));
  }
  // The handle stays open for the life of the process: registered passes
  // point into the library's code.
  loaded_.push_back(loaded);
  table.by_path.emplace(std::make_pair(&passes_, canonical), loaded);
  return loaded;
}

Status PluginLoader::LoadAll() {
  // DIR/libplir_*.so and DIR/*/libplir_*.so (one level: the bazel-bin layout).
  auto is_plugin = [](const std::filesystem::path& p) {
    std::string f = p.filename().string();
    return f.rfind("libplir_", 0) == 0 && f.size() > 11 && f.compare(f.size() - 3, 3, ".so") == 0;
  };
  std::vector<std::string> files;
  for (const std::string& dir : search_dirs_) {
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    // A directory that is there but cannot be read (permissions, a
    // sandbox's rules) is said, not taken for an empty one.
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      warnings_.push_back("cannot read the plugin directory " + dir + ": " + ec.message());
    for (const auto& entry : it) {
      if (is_plugin(entry.path())) {
        files.push_back(entry.path().string());
      } else if (entry.is_directory(ec)) {
        for (const auto& sub : std::filesystem::directory_iterator(entry.path(), ec))
          if (is_plugin(sub.path())) files.push_back(sub.path().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  // A file on the user's path with the name of a bundled plugin shadows it.
  std::map<std::string, std::string> bundled_by_file;
  for (const std::string& f : files) {
    std::string dir = Canonical(std::filesystem::path(f).parent_path().string());
    std::string parent = Canonical(std::filesystem::path(dir).parent_path().string());
    if (bundled_dirs_.count(dir) || bundled_dirs_.count(parent))
      bundled_by_file.emplace(std::filesystem::path(f).filename().string(), f);
  }
  std::string errors;
  std::set<std::string> seen;
  for (const std::string& f : files) {
    std::string canonical = Canonical(f);
    if (!seen.insert(canonical).second) continue;
    if (skipped_.count(canonical)) continue;
    auto b = bundled_by_file.find(std::filesystem::path(f).filename().string());
    if (b != bundled_by_file.end() && Canonical(b->second) != canonical) {
      warnings_.push_back("plugin " + f + " has the file name of the bundled plugin " + b->second +
                          " and is not loaded (a plugin may not shadow a bundled one)");
      continue;
    }
    scanning_ = true;
    auto r = LoadPath(f);
    scanning_ = false;
    if (!r.ok()) errors += (errors.empty() ? "" : "\n") + r.status().message();
  }
  if (!errors.empty()) return FailedPrecondition(errors);
  return Status::Ok();
}

namespace {

// EXE_DIR/../plugins and EXE_DIR/../lib/plir/plugins, those that exist.
std::vector<std::string> PluginDirsBeside(const std::filesystem::path& exe_dir) {
  std::vector<std::string> dirs;
  for (auto rel : {"../plugins", "../lib/plir/plugins"}) {
    std::error_code ec;
    auto p = std::filesystem::weakly_canonical(exe_dir / rel, ec);
    if (!ec && std::filesystem::is_directory(p, ec)) dirs.push_back(p.string());
  }
  return dirs;
}

}  // namespace

std::vector<std::string> DefaultPluginDirs() {
  // The directory the program was started from comes first, taken as
  // written (symlinks not followed): under `bazel test` that is the
  // runfiles tree, which holds exactly the plugins the test declares, not
  // whatever else (a stale or sanitizer-built plugin) sits in bazel-bin.
  // An installed copy reached through a symlink on PATH has no plugins
  // beside its link, so the executable's real directory is next.
  std::string argv0 = program_invocation_name ? program_invocation_name : "";
  if (argv0.find('/') != std::string::npos) {
    auto dirs = PluginDirsBeside(std::filesystem::path(argv0).parent_path());
    if (!dirs.empty()) return dirs;
  }
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return PluginDirsBeside(std::filesystem::path(buf).parent_path());
}

}  // namespace plir
