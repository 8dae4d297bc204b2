// The plugin child's sandbox: what code in a plugin can reach.
//
// The supervised child (driver/supervisor.h) enters it before any plugin
// code runs, and it holds for the child and everything it starts:
//
// - no new privileges (PR_SET_NO_NEW_PRIVS) and no capabilities (all
//   dropped, also for root: no CAP_SYS_RESOURCE to lift a limit, no
//   CAP_DAC_OVERRIDE, no CAP_SYS_ADMIN);
// - Landlock: the file system is read-only, and readable only below the
//   paths the policy names (the input, plugins and their directories, the
//   pipeline files and what they refer to, system libraries, /proc...); no
//   file is created, written, truncated, renamed or removed anywhere except
//   below the policy's write directories; on Landlock ABI >= 4 no TCP bind
//   or connect; on ABI >= 6 no signal to, and no abstract Unix socket of, a
//   process outside the sandbox;
// - a seccomp filter (libseccomp) as a second layer: no ptrace,
//   process_vm_readv/writev, pidfd_*, execve, io_uring, namespaces, mounts,
//   module or kexec loading; no socket other than AF_UNIX streams, no
//   connect or bind; no signal to the supervisor, its process group or
//   every process (-1); no setsid/setpgid (the child's process group holds
//   every process it starts, so the supervisor kills them at once); no
//   prlimit or setpriority of another process; no TIOCSTI.
//
// On a kernel without Landlock the rest applies and kAuto warns once;
// kRequire refuses to run plugins there. kOff (debugging) applies nothing
// but PR_SET_NO_NEW_PRIVS.
#ifndef PLIR_DRIVER_SANDBOX_H_
#define PLIR_DRIVER_SANDBOX_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "ir/status.h"

namespace plir {

enum class SandboxMode { kAuto, kRequire, kOff };

// "auto", "require", "off".
StatusOr<SandboxMode> ParseSandboxMode(std::string_view text);

struct SandboxPolicy {
  // Files, and directories with everything below them, the child may read.
  // Paths that do not exist are skipped.
  std::vector<std::string> read;
  // Directories below which the child may create, write and remove files
  // (--dump-ir-dir). They must exist.
  std::vector<std::string> write;
  // The supervisor, whose pid and process group no signal may reach.
  pid_t supervisor = 0;
  pid_t supervisor_pgid = 0;
};

// What this kernel offers, as the parent sees it before forking.
// PLIR_SANDBOX_PROBE=no-landlock in the environment plays a kernel without
// Landlock (for tests of the warning and of --sandbox=require).
struct SandboxSupport {
  int landlock_abi = 0;         // 0: no Landlock
  std::string landlock_reason;  // why not, when 0
  bool seccomp = false;
  std::string seccomp_reason;
};
SandboxSupport ProbeSandbox();

// The warning kAuto prints once when Landlock is missing, or the error of
// kRequire there ("TOOL: --sandbox=require: ..."); empty when the kernel
// has what `mode` needs.
std::string SandboxShortfall(SandboxMode mode, const SandboxSupport& support,
                             std::string_view tool = "plir-opt");

// In the child, single-threaded, before any plugin code: enters the sandbox
// above. Fails (the child must then not run plugins) when a layer that
// `support` says is available does not apply, or, with kRequire, when
// Landlock is missing.
Status EnterSandbox(const SandboxPolicy& policy, SandboxMode mode, const SandboxSupport& support);

// Adds the paths every run reads: the system's libraries and data (/usr,
// /lib*, the dynamic linker's cache, time zone, locale and Python
// configuration under /etc), /proc, the CPU topology under /sys, a few
// devices (/dev/null, /dev/zero, /dev/urandom), LD_LIBRARY_PATH, and the
// running executable's own tree (its directory, and ../plugins, ../lib and
// ../python next to it: the bundled plugins, and the plir Python package
// that the python_passes plugin imports).
void AddSystemReadPaths(SandboxPolicy* policy);

// Adds `path` to `policy.read` as the kernel resolves it: the path, its
// canonical form, and, for a directory, the targets of the symbolic links
// in it and in its subdirectories one level down (where the plugin loader
// looks; a Bazel runfiles tree is such links), each with the directory it
// lies in (a plugin's $ORIGIN). At most 10,000 entries are looked at.
void AddReadPath(const std::string& path, SandboxPolicy* policy);

// A policy for a child of this process (the supervisor, and its process
// group), with AddSystemReadPaths.
SandboxPolicy NewSandboxPolicy();

// AddReadPath of a plugin file, and of the directory it lies in (its
// canonical one: what the plugin's $ORIGIN run path names).
void AddPluginReadPath(const std::string& path, SandboxPolicy* policy);

// Adds to `policy.read` the YAML file `file`, and every path a scalar in it
// names that exists (relative to the file's directory, or absolute; added
// with AddReadPath):
// plugin files and directories, plugin_path entries, included files, which
// are scanned in turn (to a depth of 32, at most 1,000 files and 100,000
// nodes in all). What is not YAML, or not readable, adds the file alone.
void AddYamlReferencedPaths(const std::string& file, SandboxPolicy* policy);

}  // namespace plir

#endif  // PLIR_DRIVER_SANDBOX_H_
