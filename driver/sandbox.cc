#include "driver/sandbox.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "driver/file_util.h"

namespace plir {
namespace {

// Landlock's user API (linux/landlock.h), spelled out here: the build
// machine's headers may predate the ABI versions used at run time.
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kFsExecute = 1ull << 0;
constexpr uint64_t kFsWriteFile = 1ull << 1;
constexpr uint64_t kFsReadFile = 1ull << 2;
constexpr uint64_t kFsReadDir = 1ull << 3;
constexpr uint64_t kFsRemoveDir = 1ull << 4;
constexpr uint64_t kFsRemoveFile = 1ull << 5;
constexpr uint64_t kFsMakeDir = 1ull << 7;
constexpr uint64_t kFsMakeReg = 1ull << 8;
constexpr uint64_t kFsAbi1 = (1ull << 13) - 1;            // EXECUTE .. MAKE_SYM
constexpr uint64_t kFsRefer = 1ull << 13;                 // ABI 2
constexpr uint64_t kFsTruncate = 1ull << 14;              // ABI 3
constexpr uint64_t kFsIoctlDev = 1ull << 15;              // ABI 5
constexpr uint64_t kNetBindTcp = 1ull << 0;               // ABI 4
constexpr uint64_t kNetConnectTcp = 1ull << 1;            // ABI 4
constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;              // ABI 6

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

uint64_t HandledFs(int abi) {
  uint64_t fs = kFsAbi1;
  if (abi >= 2) fs |= kFsRefer;
  if (abi >= 3) fs |= kFsTruncate;
  if (abi >= 5) fs |= kFsIoctlDev;
  return fs;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Landlock: reads below policy.read, writes below policy.write, nothing
// else; TCP and scopes where the ABI has them.
Status ApplyLandlock(const SandboxPolicy& policy, int abi) {
  RulesetAttr attr{};
  attr.handled_access_fs = HandledFs(abi);
  if (abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  size_t attr_size = abi >= 6 ? sizeof attr : abi >= 4 ? 16 : 8;
  int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0));
  if (ruleset < 0) return Internal(Errno("landlock_create_ruleset"));
  const uint64_t read_dir = kFsReadFile | kFsReadDir;
  const uint64_t write_dir = read_dir | kFsWriteFile | kFsMakeReg | kFsMakeDir | kFsRemoveFile |
                             kFsRemoveDir | (abi >= 3 ? kFsTruncate : 0);
  auto add = [&](const std::string& path, uint64_t dir_access, uint64_t file_access) -> Status {
    int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return Status::Ok();  // nothing there to read
    struct stat st;
    if (fstat(fd, &st) != 0) {
      close(fd);
      return Status::Ok();
    }
    PathBeneathAttr rule{S_ISDIR(st.st_mode) ? dir_access : file_access, fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
    int err = errno;
    close(fd);
    if (rc != 0) {
      errno = err;
      return Internal(Errno("landlock_add_rule " + path));
    }
    return Status::Ok();
  };
  // A path once: the same rule again adds nothing, and a build's plugin
  // folder names one test script and its folder for each of its ~400 links
  // (each rule is three system calls).
  std::set<std::string_view> added;
  for (const std::string& p : policy.read)
    if (!added.insert(p).second) {
      continue;
    } else if (Status s = add(p, read_dir, kFsReadFile); !s.ok()) {
      close(ruleset);
      return s;
    }
  for (const std::string& p : policy.write)
    if (Status s = add(p, write_dir, kFsReadFile | kFsWriteFile | (abi >= 3 ? kFsTruncate : 0));
        !s.ok()) {
      close(ruleset);
      return s;
    }
  // Discarding output is no escape.
  if (Status s = add("/dev/null", 0, kFsReadFile | kFsWriteFile); !s.ok()) {
    close(ruleset);
    return s;
  }
  long rc = syscall(SYS_landlock_restrict_self, ruleset, 0);
  int err = errno;
  close(ruleset);
  if (rc != 0) {
    errno = err;
    return Internal(Errno("landlock_restrict_self"));
  }
  return Status::Ok();
}

// Every capability goes: bounding set, ambient set, then the process's own.
void DropCapabilities() {
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  syscall(SYS_capset, &header, data);
}

Status ApplySeccomp(const SandboxPolicy& policy) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return Internal("seccomp_init failed");
  std::string failed;
  auto rule = [&](uint32_t action, int nr, const char* name, unsigned n = 0,
                  const scmp_arg_cmp* cmp = nullptr) {
    if (nr == __NR_SCMP_ERROR) return;  // not on this architecture
    int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
    if (rc != 0 && rc != -EEXIST && rc != -EDOM)
      failed += std::string(failed.empty() ? "" : ", ") + name;
  };
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
#define PLIR_DENY(call) rule(deny, SCMP_SYS(call), #call)
  // Reaching into other processes, and leaving this program.
  PLIR_DENY(ptrace);
  PLIR_DENY(process_vm_readv);
  PLIR_DENY(process_vm_writev);
  PLIR_DENY(process_madvise);
  PLIR_DENY(process_mrelease);
  PLIR_DENY(pidfd_open);
  PLIR_DENY(pidfd_getfd);
  PLIR_DENY(pidfd_send_signal);
  PLIR_DENY(kcmp);
  PLIR_DENY(execve);
  PLIR_DENY(execveat);
  PLIR_DENY(tkill);
  // Leaving the process group, the namespaces, the file-system view.
  PLIR_DENY(setsid);
  PLIR_DENY(setpgid);
  PLIR_DENY(unshare);
  PLIR_DENY(setns);
  PLIR_DENY(mount);
  PLIR_DENY(umount2);
  PLIR_DENY(pivot_root);
  PLIR_DENY(chroot);
  PLIR_DENY(move_mount);
  PLIR_DENY(open_tree);
  PLIR_DENY(fsopen);
  PLIR_DENY(fsconfig);
  PLIR_DENY(fsmount);
  PLIR_DENY(fspick);
  PLIR_DENY(mount_setattr);
  PLIR_DENY(name_to_handle_at);
  PLIR_DENY(open_by_handle_at);
  PLIR_DENY(fanotify_init);
  // io_uring performs its operations outside this filter.
  PLIR_DENY(io_uring_setup);
  PLIR_DENY(io_uring_enter);
  PLIR_DENY(io_uring_register);
  // The kernel and the machine.
  PLIR_DENY(bpf);
  PLIR_DENY(perf_event_open);
  PLIR_DENY(userfaultfd);
  PLIR_DENY(kexec_load);
  PLIR_DENY(kexec_file_load);
  PLIR_DENY(init_module);
  PLIR_DENY(finit_module);
  PLIR_DENY(delete_module);
  PLIR_DENY(reboot);
  PLIR_DENY(swapon);
  PLIR_DENY(swapoff);
  PLIR_DENY(iopl);
  PLIR_DENY(ioperm);
  PLIR_DENY(acct);
  PLIR_DENY(settimeofday);
  PLIR_DENY(clock_settime);
  PLIR_DENY(clock_adjtime);
  PLIR_DENY(adjtimex);
  PLIR_DENY(quotactl);
  PLIR_DENY(vhangup);
  PLIR_DENY(keyctl);
  PLIR_DENY(add_key);
  PLIR_DENY(request_key);
  // System V and POSIX IPC reach other processes of the user by number or
  // name, past the file system.
  PLIR_DENY(shmget);
  PLIR_DENY(shmat);
  PLIR_DENY(shmctl);
  PLIR_DENY(msgget);
  PLIR_DENY(msgsnd);
  PLIR_DENY(msgrcv);
  PLIR_DENY(msgctl);
  PLIR_DENY(semget);
  PLIR_DENY(semop);
  PLIR_DENY(semtimedop);
  PLIR_DENY(semctl);
  PLIR_DENY(mq_open);
  PLIR_DENY(mq_unlink);
  PLIR_DENY(mq_timedsend);
  PLIR_DENY(mq_notify);
  // Networks: sockets only as AF_UNIX streams (socketpair), never connected
  // or bound to anything.
  PLIR_DENY(connect);
  PLIR_DENY(bind);
  PLIR_DENY(listen);
  PLIR_DENY(accept);
  PLIR_DENY(accept4);
#undef PLIR_DENY
  {
    scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
    rule(deny, SCMP_SYS(socket), "socket", 1, &not_unix);
    scmp_arg_cmp dgram = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM);
    rule(deny, SCMP_SYS(socket), "socket", 1, &dgram);
  }
  // Threads come from clone; clone3 hides its flags from the filter, so it
  // is "not implemented" and the C library falls back to clone.
  rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3");
  for (uint64_t flag : {uint64_t{CLONE_NEWNS}, uint64_t{CLONE_NEWCGROUP}, uint64_t{CLONE_NEWUTS},
                        uint64_t{CLONE_NEWIPC}, uint64_t{CLONE_NEWUSER}, uint64_t{CLONE_NEWPID},
                        uint64_t{CLONE_NEWNET}}) {
    scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag);
    rule(deny, SCMP_SYS(clone), "clone", 1, &c);
  }
  // Signals: never to the supervisor, its process group, or everyone.
  std::set<uint32_t> targets = {static_cast<uint32_t>(policy.supervisor),
                                static_cast<uint32_t>(-1)};
  if (policy.supervisor_pgid > 0) targets.insert(static_cast<uint32_t>(-policy.supervisor_pgid));
  for (uint32_t t : targets) {
    scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, t);
    rule(deny, SCMP_SYS(kill), "kill", 1, &c);
    rule(deny, SCMP_SYS(tgkill), "tgkill", 1, &c);
    rule(deny, SCMP_SYS(rt_sigqueueinfo), "rt_sigqueueinfo", 1, &c);
    rule(deny, SCMP_SYS(rt_tgsigqueueinfo), "rt_tgsigqueueinfo", 1, &c);
  }
  // SIGIO and SIGURG go to a descriptor's owner: never the supervisor or its
  // group (F_SETOWN_EX and the ioctls take a pointer: never).
  for (uint32_t t : targets) {
    scmp_arg_cmp c[2] = {SCMP_A1(SCMP_CMP_EQ, F_SETOWN),
                         SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, t)};
    rule(deny, SCMP_SYS(fcntl), "fcntl", 2, c);
  }
  {
    scmp_arg_cmp ex = SCMP_A1(SCMP_CMP_EQ, F_SETOWN_EX);
    rule(deny, SCMP_SYS(fcntl), "fcntl", 1, &ex);
    for (unsigned long request : {0x8901ul /* FIOSETOWN */, 0x8902ul /* SIOCSPGRP */}) {
      scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request);
      rule(deny, SCMP_SYS(ioctl), "ioctl", 1, &c);
    }
  }
  // Limits and priorities of this process only.
  {
    scmp_arg_cmp other = SCMP_A0(SCMP_CMP_NE, 0);
    rule(deny, SCMP_SYS(prlimit64), "prlimit64", 1, &other);
    scmp_arg_cmp who = SCMP_A1(SCMP_CMP_NE, 0);
    rule(deny, SCMP_SYS(setpriority), "setpriority", 1, &who);
    rule(deny, SCMP_SYS(ioprio_set), "ioprio_set", 1, &who);
  }
  // No keystrokes pushed into the user's terminal.
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI), 0x541Cul /* TIOCLINUX */}) {
    scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request);
    rule(deny, SCMP_SYS(ioctl), "ioctl", 1, &c);
  }
  if (!failed.empty()) {
    seccomp_release(ctx);
    return Internal("seccomp rules not added: " + failed);
  }
  int rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return Internal(std::string("seccomp_load: ") + std::strerror(-rc));
  return Status::Ok();
}

}  // namespace

StatusOr<SandboxMode> ParseSandboxMode(std::string_view text) {
  if (text == "auto") return SandboxMode::kAuto;
  if (text == "require") return SandboxMode::kRequire;
  if (text == "off") return SandboxMode::kOff;
  return InvalidArgument("--sandbox must be require, auto or off, not '" + std::string(text) + "'");
}

SandboxSupport ProbeSandbox() {
  SandboxSupport s;
  // Tests play a kernel without Landlock (it only ever takes confinement
  // away, which --sandbox=off does anyway).
  const char* probe = std::getenv("PLIR_SANDBOX_PROBE");
  const bool pretend_none = probe && std::string_view(probe) == "no-landlock";
  long abi =
      pretend_none ? -1 : syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (pretend_none) errno = ENOSYS;
  if (abi > 0) {
    s.landlock_abi = static_cast<int>(abi);
  } else {
    s.landlock_reason = errno == ENOSYS       ? "the kernel was built without it"
                        : errno == EOPNOTSUPP ? "it is disabled (the lsm= boot parameter)"
                                              : std::strerror(errno);
  }
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0) {
    s.seccomp = true;
  } else {
    s.seccomp_reason = std::strerror(errno);
  }
  return s;
}

std::string SandboxShortfall(SandboxMode mode, const SandboxSupport& support,
                             std::string_view tool) {
  if (mode == SandboxMode::kOff) return "";
  std::string missing;
  if (support.landlock_abi == 0) missing = "Landlock (" + support.landlock_reason + ")";
  if (!support.seccomp)
    missing +=
        (missing.empty() ? "" : " and ") + std::string("seccomp (") + support.seccomp_reason + ")";
  if (missing.empty()) return "";
  if (mode == SandboxMode::kRequire)
    return std::string(tool) + ": --sandbox=require: this kernel lacks " + missing +
           ", so plugins cannot be confined; use --sandbox=auto to run them with what is there";
  return "warning: this kernel lacks " + missing +
         ": plugins run with less confinement (see docs/reliability.md, \"Threat model\"); "
         "--sandbox=require makes this an error, --sandbox=off silences it";
}

Status EnterSandbox(const SandboxPolicy& policy, SandboxMode mode, const SandboxSupport& support) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Internal(Errno("PR_SET_NO_NEW_PRIVS"));
  if (mode == SandboxMode::kOff) return Status::Ok();
  if (mode == SandboxMode::kRequire && (support.landlock_abi == 0 || !support.seccomp))
    return FailedPrecondition(SandboxShortfall(mode, support));
  DropCapabilities();
  if (support.landlock_abi > 0)
    if (Status s = ApplyLandlock(policy, support.landlock_abi); !s.ok())
      return s.WithPrefix("the plugin sandbox");
  if (support.seccomp)
    if (Status s = ApplySeccomp(policy); !s.ok()) return s.WithPrefix("the plugin sandbox");
  return Status::Ok();
}

void AddReadPath(const std::string& path, SandboxPolicy* policy) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  policy->read.push_back(path);
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) return;
  if (real.string() != path) policy->read.push_back(real.string());
  if (!fs::is_directory(real, ec)) return;
  size_t budget = 10000;
  // A link's target resolved as fs::canonical would, from the canonical
  // form of its directory, found once per directory: a build's plugin
  // folder links hundreds of test files into a few source folders, and
  // fs::canonical of each link read every component of its long path again
  // (6,700 readlink calls, 20 ms of each plir-opt start in bazel-bin).
  // Each link is read relative to its open directory (readlinkat): by its
  // full path, the kernel walked every component of bazel-bin's long path
  // again, 522 times (5% of the samples of a plir-opt start, `perf
  // record`). Each distinct target gets one lstat, which tells whether it
  // exists and is a file, unless it is a link again (400 of the links
  // point at testing/golden_test.sh).
  std::map<fs::path, fs::path> canonical_dirs;
  std::map<fs::path, fs::file_status> target_status;
  auto resolve = [&](int dir_fd, const fs::path& link, fs::file_status* st,
                     std::error_code& ec2) -> fs::path {
    char buf[PATH_MAX];
    const ssize_t len = readlinkat(dir_fd, link.filename().c_str(), buf, sizeof buf);
    if (len < 0 || static_cast<size_t>(len) >= sizeof buf) {
      ec2 = std::make_error_code(std::errc::invalid_argument);
      return {};
    }
    fs::path to(std::string(buf, static_cast<size_t>(len)));
    if (to.is_relative()) to = link.parent_path() / to;
    const fs::path name = to.filename();
    fs::path target;
    if (name.empty() || name == "." || name == "..") {
      target = fs::canonical(to, ec2);
    } else {
      auto [it, fresh] = canonical_dirs.try_emplace(to.parent_path());
      if (fresh) it->second = fs::canonical(to.parent_path(), ec2);
      if (ec2 || it->second.empty()) {
        // The directory does not resolve (this link's, or an earlier one's
        // into it): no target, and no empty path for the policy.
        if (!ec2) ec2 = std::make_error_code(std::errc::no_such_file_or_directory);
        return {};
      }
      target = it->second / name;
      auto [known, first] = target_status.try_emplace(target);
      if (first) known->second = fs::symlink_status(target, ec2);
      if (ec2 || !fs::exists(known->second)) {
        if (!ec2) ec2 = std::make_error_code(std::errc::no_such_file_or_directory);
        return {};
      }
      *st = known->second;
      if (!fs::is_symlink(*st)) return target;
      // A link to a link: the rest of the chain the slow way.
      target = fs::canonical(target, ec2);
    }
    if (!ec2) *st = fs::status(target, ec2);
    return target;
  };
  auto follow = [&](int dir_fd, const fs::directory_entry& e) {
    std::error_code ec2;
    if (dir_fd < 0 || !e.is_symlink(ec2)) return;
    fs::file_status st;
    fs::path target = resolve(dir_fd, e.path(), &st, ec2);
    if (ec2) return;
    policy->read.push_back(target.string());
    if (fs::is_regular_file(st)) policy->read.push_back(target.parent_path().string());
  };
  auto open_dir = [](const fs::path& dir) {
    return open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  };
  const int top_fd = open_dir(real);
  for (fs::directory_iterator it(real, ec), end; !ec && it != end && budget > 0;
       it.increment(ec), --budget) {
    follow(top_fd, *it);
    std::error_code ec2;
    // Not a link first: the entry's cached type answers both without a
    // stat (is_directory of a link would follow it).
    if (!it->is_symlink(ec2) && it->is_directory(ec2)) {
      const int sub_fd = open_dir(it->path());
      for (fs::directory_iterator sub(it->path(), ec2), send; !ec2 && sub != send && budget > 0;
           sub.increment(ec2), --budget)
        follow(sub_fd, *sub);
      if (sub_fd >= 0) close(sub_fd);
    }
  }
  if (top_fd >= 0) close(top_fd);
}

void AddSystemReadPaths(SandboxPolicy* policy) {
  for (const char* p : {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
                        // The dynamic linker's configuration and cache, time zone, locale,
                        // Python's site configuration (Debian's sitecustomize).
                        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                        "/etc/localtime", "/etc/locale.alias", "/etc/python3", "/etc/python3.11",
                        // The process's own view, and the machine's CPUs.
                        "/proc", "/sys/devices/system/cpu", "/sys/fs/cgroup", "/dev/null",
                        "/dev/zero", "/dev/urandom", "/dev/random"})
    policy->read.push_back(p);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    // Real directories (a build or an installation), not link farms: no
    // links to follow.
    std::filesystem::path dir = std::filesystem::path(exe).parent_path();
    policy->read.push_back(dir.string());
    for (const char* rel : {"../plugins", "../lib", "../python"}) {
      std::error_code ec;
      auto p = std::filesystem::weakly_canonical(dir / rel, ec);
      if (!ec && std::filesystem::exists(p, ec)) policy->read.push_back(p.string());
    }
  }
  if (const char* lib = std::getenv("LD_LIBRARY_PATH")) {
    std::string all = lib;
    for (size_t start = 0; start <= all.size();) {
      size_t colon = all.find(':', start);
      std::string d =
          all.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!d.empty()) policy->read.push_back(d);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
}

SandboxPolicy NewSandboxPolicy() {
  SandboxPolicy p;
  p.supervisor = getpid();
  p.supervisor_pgid = getpgid(0);
  AddSystemReadPaths(&p);
  return p;
}

void AddPluginReadPath(const std::string& path, SandboxPolicy* policy) {
  if (path.empty()) return;
  AddReadPath(path, policy);
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  if (!ec) AddReadPath(real.parent_path().string(), policy);
}

namespace {

struct YamlScan {
  SandboxPolicy* policy;
  std::set<std::string> files;  // canonical, scanned
  size_t nodes = 0;
};

void ScanYamlFile(const std::filesystem::path& file, int depth, YamlScan* scan);

void ScanYamlNode(const YAML::Node& node, const std::filesystem::path& dir, int depth,
                  YamlScan* scan) {
  // Iterative: the nesting is the file's.
  std::vector<YAML::Node> stack = {node};
  while (!stack.empty() && scan->nodes < 100000) {
    YAML::Node n = stack.back();
    stack.pop_back();
    ++scan->nodes;
    if (n.IsScalar()) {
      const std::string& text = n.Scalar();
      if (text.empty() || text.size() > 4096 || text.find('\0') != std::string::npos) continue;
      std::filesystem::path p(text);
      if (p.is_relative()) p = dir / p;
      std::error_code ec;
      auto st = std::filesystem::status(p, ec);
      if (ec || !std::filesystem::exists(st)) continue;
      AddReadPath(p.lexically_normal().string(), scan->policy);
      std::string ext = p.extension().string();
      if (std::filesystem::is_regular_file(st) && (ext == ".yaml" || ext == ".yml"))
        ScanYamlFile(p, depth + 1, scan);
    } else if (n.IsSequence() || n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (n.IsMap()) {
          stack.push_back(it->first);
          stack.push_back(it->second);
        } else {
          stack.push_back(*it);
        }
      }
    }
  }
}

void ScanYamlFile(const std::filesystem::path& file, int depth, YamlScan* scan) {
  if (depth > 32 || scan->files.size() >= 1000) return;
  std::error_code ec;
  std::string canonical = std::filesystem::weakly_canonical(file, ec).string();
  if (ec || !scan->files.insert(canonical).second) return;
  scan->policy->read.push_back(file.string());
  StatusOr<std::string> text = ReadFileToString(file.string());
  if (!text.ok()) return;
  try {
    ScanYamlNode(YAML::Load(*text), file.parent_path(), depth, scan);
  } catch (const std::exception&) {
    // Not YAML: the pipeline loader reports it, with a position.
  }
}

}  // namespace

void AddYamlReferencedPaths(const std::string& file, SandboxPolicy* policy) {
  YamlScan scan{policy, {}, 0};
  ScanYamlFile(std::filesystem::path(file), 0, &scan);
}

}  // namespace plir
