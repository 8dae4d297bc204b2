#include "driver/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "driver/file_util.h"
#include "ir/text_rules.h"

namespace plir {
namespace {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void CopyTo(char* dst, size_t cap, std::string_view s) {
  size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  if (n > 0) std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

RunState* g_state = nullptr;
const char* g_tool = "plir-opt";

void OnOutOfMemory() {
  // operator new failed (under --memory-limit, the address-space cap): say
  // so and end here; unwinding through a plugin that cannot cope is worse.
  if (g_state) g_state->out_of_memory.store(1);
  static const char kMsg[] = ": out of memory\n";
  ssize_t ignored = write(2, g_tool, strlen(g_tool));
  ignored = write(2, kMsg, sizeof kMsg - 1);
  (void)ignored;
  _exit(3);
}

void OnFault(int sig, siginfo_t* info, void* context) {
  if (g_state && info) {
    // A fault just below the stack pointer is the stack running into its
    // guard page.
    auto* uc = static_cast<ucontext_t*>(context);
    uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
#if defined(__x86_64__)
    uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    uintptr_t sp = static_cast<uintptr_t>(uc->uc_mcontext.sp);
#else
    uintptr_t sp = 0;
    (void)uc;
#endif
    if (sp != 0 && addr + (256 << 10) >= sp && addr <= sp + (64 << 10))
      g_state->stack_overflow.store(1);
  }
  // Die of the same signal, so the supervisor sees it.
  signal(sig, SIG_DFL);
  raise(sig);
}

// --- The process tree, async-signal-safe (raw system calls, no allocation).

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

bool IsNumber(const char* s) {
  if (*s == '\0') return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

long ParseNumber(const char* s, const char* end) {
  long v = 0;
  for (; s < end && *s >= '0' && *s <= '9'; ++s) v = v * 10 + (*s - '0');
  return v;
}

// Calls fn(pid) for every pid listed, space-separated, in file `fd`.
template <typename Fn>
void ForEachListedPid(int fd, Fn fn) {
  char buf[4096];
  long partial = -1;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        partial = (partial < 0 ? 0 : partial * 10) + (buf[i] - '0');
      } else if (partial >= 0) {
        fn(static_cast<pid_t>(partial));
        partial = -1;
      }
    }
  }
  if (partial >= 0) fn(static_cast<pid_t>(partial));
}

// "PID" + suffix (at most 40 digits and a short suffix) into `path`,
// without allocating: this runs in signal handlers too.
void PidPath(const char* pid, const char* suffix, char (&path)[64]) {
  size_t len = 0;
  for (const char* c = pid; *c && len < 40; ++c) path[len++] = *c;
  for (const char* c = suffix; *c && len < sizeof path - 1; ++c) path[len++] = *c;
  path[len] = '\0';
}

// Calls fn(pid) for every child of this process (of any of its threads:
// an orphan is given to whichever thread the kernel picks). Reads
// /proc/self/task/*/children, or, where the kernel lacks that file, the
// parent field of every /proc/PID/stat.
template <typename Fn>
void ForEachChild(Fn fn) {
  char buf[4096];
  int tasks = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool have_children_files = true;
  if (tasks >= 0) {
    for (;;) {
      long n = syscall(SYS_getdents64, tasks, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        off += d->d_reclen;
        if (!IsNumber(d->d_name)) continue;
        char path[64];
        PidPath(d->d_name, "/children", path);
        int f = openat(tasks, path, O_RDONLY | O_CLOEXEC);
        if (f < 0) {
          have_children_files = false;
          continue;
        }
        ForEachListedPid(f, fn);
        close(f);
      }
    }
    close(tasks);
  }
  if (tasks >= 0 && have_children_files) return;
  const pid_t self = getpid();
  int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return;
  for (;;) {
    long n = syscall(SYS_getdents64, proc, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<Dirent64*>(buf + off);
      off += d->d_reclen;
      if (!IsNumber(d->d_name)) continue;
      char path[64];
      PidPath(d->d_name, "/stat", path);
      int f = openat(proc, path, O_RDONLY | O_CLOEXEC);
      if (f < 0) continue;
      char stat[512];
      ssize_t got = read(f, stat, sizeof stat - 1);
      close(f);
      if (got <= 0) continue;
      // "PID (COMM) STATE PPID ...": COMM may hold anything, so the last ')'.
      const char* end = stat + got;
      const char* paren = nullptr;
      for (const char* c = stat; c < end; ++c)
        if (*c == ')') paren = c;
      if (!paren || paren + 4 >= end) continue;
      if (ParseNumber(paren + 4, end) == self) fn(static_cast<pid_t>(ParseNumber(stat, end)));
    }
  }
  close(proc);
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Kills and reaps, in rounds, until no child is left or `rounds` are spent.
int KillTree(pid_t child_pgid, int rounds) {
  int killed = 0;
  for (int round = 0; round < rounds; ++round) {
    if (child_pgid > 0) kill(-child_pgid, SIGKILL);
    int found = 0;
    ForEachChild([&](pid_t p) {
      if (kill(p, SIGKILL) == 0) ++found;
    });
    killed += found;
    int status;
    while (waitpid(-1, &status, WNOHANG | __WALL) > 0) {
    }
    if (found == 0) break;
    SleepMs(round < 10 ? 1 : 10);
  }
  int status;
  while (waitpid(-1, &status, WNOHANG | __WALL) > 0) {
  }
  return killed;
}

std::atomic<pid_t> g_child_to_kill{0};

// The exit watch (WatchExitPhase): the child's page, how often the handler
// is registered, and whether a plugin loaded since the last registration.
std::atomic<RunState*> g_exit_watch{nullptr};
std::atomic<int> g_exit_watch_arms{0};
std::atomic<bool> g_loaded_since_arm{false};

// Runs first among the exit handlers registered before it: says so in the
// page. The earliest-run copy marks it; the copies registered earlier find
// it marked.
void OnChildExit(int status, void* arg) {
  auto* st = static_cast<RunState*>(arg);
  if (st->exiting.load()) return;
  st->exit_status.store(status);
  st->exiting.store(1);
}

void ArmExitWatch(RunState* st) {
  if (on_exit(OnChildExit, st) == 0) g_exit_watch_arms.fetch_add(1);
}

// Before plugin code runs again (a pass, the run, the output): the handler
// is registered anew after every plugin load, and at most
// kMaxExitWatchArms times otherwise.
void RearmExitWatch(RunState* st, RunPhase p) {
  if (g_exit_watch.load() != st) return;
  if (p == RunPhase::kLoadingPlugin || p == RunPhase::kScanningPlugin) {
    g_loaded_since_arm.store(true);
    return;
  }
  if (p != RunPhase::kRunningPass && p != RunPhase::kRunning && p != RunPhase::kWritingOutput)
    return;
  if (g_loaded_since_arm.exchange(false) || g_exit_watch_arms.load() < kMaxExitWatchArms)
    ArmExitWatch(st);
}

void OnTerminatingSignal(int sig) {
  const int saved = errno;
  pid_t child = g_child_to_kill.load();
  if (child > 0) {
    kill(-child, SIGKILL);
    kill(child, SIGKILL);
    KillTree(child, 50);
  }
  RemoveTemporaryFilesNow();
  errno = saved;
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void BecomeSupervisor() {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  prctl(PR_SET_DUMPABLE, 0);
}

bool IsolateChild(pid_t supervisor, std::vector<int>* keep, int stderr_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != supervisor) return false;
  setpgid(0, 0);
  signal(SIGTTOU, SIG_IGN);
  signal(SIGTTIN, SIG_IGN);
  // The handlers the supervisor armed are its own.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    close(null_fd);
  }
  if (stderr_fd >= 0) dup2(stderr_fd, 2);
  dup2(2, 1);
  // Move the kept descriptors above every target number first, then down to
  // 3, 4, ...: no kept descriptor is overwritten on the way.
  int high = 3 + static_cast<int>(keep->size());
  for (int fd : *keep) high = std::max(high, fd + 1);
  std::vector<int> moved;
  for (int fd : *keep) moved.push_back(fcntl(fd, F_DUPFD_CLOEXEC, high));
  for (size_t i = 0; i < moved.size(); ++i) {
    int target = 3 + static_cast<int>(i);
    if (moved[i] >= 0) dup2(moved[i], target);
    (*keep)[i] = moved[i] >= 0 ? target : -1;
  }
  int first_free = 3 + static_cast<int>(keep->size());
  if (syscall(SYS_close_range, first_free, ~0U, 0) != 0)
    for (int fd = first_free; fd < 65536; ++fd) close(fd);
  return true;
}

void KillOnTerminatingSignal(pid_t pid) {
  static bool installed = false;
  if (!installed) {
    installed = true;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring
      struct sigaction sa {};
      sa.sa_handler = OnTerminatingSignal;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  }
  g_child_to_kill.store(pid);
}

int KillDescendants(pid_t child_pgid) { return KillTree(child_pgid, 1000); }

void WatchExitPhase(RunState* state) {
  g_exit_watch.store(state);
  ArmExitWatch(state);
}

void RunState::Enter(RunPhase p, std::string_view subject_text, std::string_view plugin_text) {
  CopyTo(subject, sizeof subject, subject_text);
  CopyTo(plugin, sizeof plugin, plugin_text);
  phase_start_ns.store(NowNs());
  phase.store(static_cast<int32_t>(p));
  phase_seq.fetch_add(1);
  RearmExitWatch(this, p);
}

void RunState::EnterKernel(std::string_view what) {
  CopyTo(kernel, sizeof kernel, what);
  kernel_depth.fetch_add(1);
}

void RunState::LeaveKernel() { kernel_depth.fetch_sub(1); }

bool RunState::SetPrefixes(const std::vector<std::string>& yaml_prefixes) {
  size_t used = 0;
  num_prefixes = 0;
  prefix_offset[0] = 0;
  for (const std::string& y : yaml_prefixes) {
    if (num_prefixes >= kMaxPrefixes || used + y.size() > kPrefixBytes) return false;
    std::memcpy(prefixes + used, y.data(), y.size());
    used += y.size();
    prefix_offset[++num_prefixes] = static_cast<uint32_t>(used);
  }
  return true;
}

namespace {

template <size_t N>
std::string Bounded(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

}  // namespace

std::string RunState::SubjectText() const { return Bounded(subject); }
std::string RunState::PluginText() const { return Bounded(plugin); }
std::string RunState::FailureText() const { return Bounded(failure); }
std::string RunState::KernelText() const {
  return kernel_depth.load() > 0 ? Bounded(kernel) : std::string();
}
std::string RunState::PluginsText() const { return Bounded(plugins); }

RunPhase RunState::Phase() const {
  int32_t p = phase.load();
  if (p < static_cast<int32_t>(RunPhase::kStartup) || p > static_cast<int32_t>(RunPhase::kRunning))
    return RunPhase::kStartup;
  return static_cast<RunPhase>(p);
}

std::string RunState::Prefix(int i) const {
  // Read once: the numbers may change under us while the child lives.
  const int32_t n = num_prefixes;
  if (n < 0 || n > kMaxPrefixes || i < 0 || i >= n) return "";
  uint32_t begin = prefix_offset[i], end = prefix_offset[i + 1];
  if (begin > end || end > kPrefixBytes) return "";
  return std::string(prefixes + begin, end - begin);
}

bool RunState::HasPrefixForTopStep() const { return !Prefix(top_step.load()).empty(); }

double RunState::PassTimeoutSeconds() const {
  double s = static_cast<double>(pass_timeout_ns.load()) / 1e9;
  return s > 0 && s <= 1e6 ? s : 0;
}

int64_t RunState::MemoryLimitMb() const {
  int64_t mb = memory_limit_mb.load();
  return mb >= 16 && mb <= (int64_t{1} << 40) ? mb : 0;
}

RunState* NewRunState(bool shared) {
  if (!shared) {
    // Lives until exit (reachable: leak checkers stay quiet).
    static RunState* local = new RunState;
    return local;
  }
  void* p =
      mmap(nullptr, sizeof(RunState), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return new (p) RunState;  // not RunState(): see RunState::prefixes
}

void InstallCrashHandlers(RunState* state, const char* tool) {
  g_state = state;
  g_tool = tool;
  std::set_new_handler(OnOutOfMemory);
  // The handler runs on its own stack: the thread's own may be exhausted.
  static char* alt = new char[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = 1 << 16;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = OnFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
}

bool ApplyMemoryLimit(int64_t mb) {
  if (mb <= 0) return true;
  rlimit rl{};
  rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(mb) << 20;
  return setrlimit(RLIMIT_AS, &rl) == 0;
}

namespace {

// Copies one read's worth from the relay to standard error; false at the
// end of the pipe (or on an error).
bool RelayOnce(int fd) {
  char buf[1 << 16];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  std::string text = Printable(std::string_view(buf, static_cast<size_t>(n)));
  for (size_t off = 0; off < text.size();) {
    ssize_t w = write(2, text.data() + off, text.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;  // our own standard error is gone: drop the text
    off += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

void DrainRelay(int relay_fd) {
  if (relay_fd < 0) return;
  int flags = fcntl(relay_fd, F_GETFL);
  if (flags >= 0) fcntl(relay_fd, F_SETFL, flags & ~O_NONBLOCK);
  while (RelayOnce(relay_fd)) {
  }
  close(relay_fd);
}

int64_t MonotonicNowNs() { return NowNs(); }

ChildOutcome Supervise(pid_t pid, const RunState& state, int relay_fd,
                       const SuperviseLimits& limits) {
  ChildOutcome out;
  if (relay_fd >= 0) {
    int flags = fcntl(relay_fd, F_GETFL);
    if (flags >= 0) fcntl(relay_fd, F_SETFL, flags | O_NONBLOCK);
  }
  int status = 0;
#ifdef SYS_pidfd_open
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  int pidfd = -1;
#endif
  int64_t exit_seen_ns = 0;  // when the page first said "exiting" or "finished"
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG | WUNTRACED);
    if (r == pid && WIFSTOPPED(status)) {
      // Nothing will continue it (the supervisor waits; the user's SIGCONT
      // goes to the supervisor's group, not to the child's).
      out.stopped_by = WSTOPSIG(status);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    const int64_t now = NowNs();
    auto end_child = [&] {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    };
    if (limits.deadline_ns > 0 && now >= limits.deadline_ns) {
      end_child();
      char buf[64];
      std::snprintf(buf, sizeof buf, "--timeout %g s", limits.run_timeout_s);
      out.limit = buf;
      break;
    }
    // The exit phase is bounded: exit handlers and static destructors of a
    // plugin that never return, or a child that lingers after its result.
    const bool exiting = state.exiting.load() != 0;
    int64_t exit_left_ns = -1;
    if (limits.exit_grace_ns > 0 && (exiting || state.finished.load() != 0)) {
      if (exit_seen_ns == 0) exit_seen_ns = now;
      exit_left_ns = limits.exit_grace_ns - (now - exit_seen_ns);
      if (exit_left_ns <= 0) {
        end_child();
        out.exit_hung = true;
        out.exit_after_result = !exiting;
        out.exit_status = state.exit_status.load();
        out.exit_grace_s = limits.exit_grace_ns / 1e9;
        break;
      }
    }
    const int64_t pass_limit_ns = state.pass_timeout_ns.load();
    RunPhase ph = state.Phase();
    const bool loading = ph == RunPhase::kLoadingPlugin || ph == RunPhase::kScanningPlugin;
    // The load limit is the supervisor's, unless --pass-timeout is tighter.
    const bool load_limited = loading && limits.load_timeout_ns > 0 &&
                              (pass_limit_ns <= 0 || limits.load_timeout_ns < pass_limit_ns);
    const int64_t limit_ns = load_limited ? limits.load_timeout_ns : pass_limit_ns;
    bool timed = limit_ns > 0 && (ph == RunPhase::kRunningPass || loading);
    int64_t elapsed = now - state.phase_start_ns.load();
    if (timed && elapsed > limit_ns) {
      end_child();
      if (load_limited) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "--load-timeout %g s", limits.load_timeout_ns / 1e9);
        out.limit = buf;
      } else {
        out.timed_out = true;
      }
      break;
    }
    // Wake when the child ends (the pidfd), or in time to check the limits.
    int wait_ms = 100;
    if (timed) {
      int64_t left_ms = (limit_ns - elapsed) / 1000000 + 1;
      if (left_ms < wait_ms) wait_ms = static_cast<int>(std::max<int64_t>(left_ms, 1));
    }
    if (limits.deadline_ns > 0) {
      int64_t left_ms = (limits.deadline_ns - now) / 1000000 + 1;
      if (left_ms < wait_ms) wait_ms = static_cast<int>(std::max<int64_t>(left_ms, 1));
    }
    if (exit_left_ns > 0) {
      int64_t left_ms = exit_left_ns / 1000000 + 1;
      if (left_ms < wait_ms) wait_ms = static_cast<int>(std::max<int64_t>(left_ms, 1));
    }
    pollfd pfds[2] = {{pidfd, POLLIN, 0}, {relay_fd, POLLIN, 0}};
    if (pidfd < 0 && relay_fd < 0) {
      usleep(static_cast<useconds_t>(wait_ms < 5 ? wait_ms : 5) * 1000);
    } else {
      if (pidfd < 0 && wait_ms > 5) wait_ms = 5;
      poll(pfds, 2, wait_ms);
      if (relay_fd >= 0 && (pfds[1].revents & (POLLIN | POLLHUP))) {
        if (!RelayOnce(relay_fd)) relay_fd = -1;
      }
    }
  }
  if (pidfd >= 0) close(pidfd);
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  }
  return out;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (desc) s += std::string(" (") + desc + ")";
  return s;
}

std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // A whole valid UTF-8 sequence is kept; a byte that starts none (a
    // stray continuation byte, a truncated or overlong sequence, a
    // surrogate) is escaped like a control byte.
    const size_t n = c < 0x80 ? 1 : Utf8SequenceLength(s.substr(i));
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || n == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

bool DiedWhileScanning(const RunState& state, std::string* path) {
  if (state.Phase() != RunPhase::kScanningPlugin) return false;
  *path = state.SubjectText();
  return !path->empty();
}

std::string DescribeAbnormalEnd(const RunState& st, const ChildOutcome& o, std::string_view tool) {
  if (o.exited && st.finished.load()) return "";
  std::string what;
  RunPhase ph = st.Phase();
  std::string subject = Printable(st.SubjectText());
  switch (ph) {
    case RunPhase::kLoadingPlugin:
    case RunPhase::kScanningPlugin:
      what = "while loading plugin " + subject;
      break;
    case RunPhase::kRunningPass:
      what = "in pass " + subject + " of plugin " + Printable(st.PluginText());
      // A plugin's kernel that the pass ran (FoldConstant evaluating a
      // plugin's op) is what failed, not the pass.
      if (std::string k = st.KernelText(); !k.empty())
        what = "in the kernel of " + Printable(k) + ", run by pass " + subject + " of plugin " +
               Printable(st.PluginText());
      break;
    case RunPhase::kLoadingInput:
      what = "while loading the input";
      break;
    case RunPhase::kWritingOutput:
      what = "while writing the output";
      break;
    case RunPhase::kRunning:
      // plir-run: a plugin's kernel, if one runs; else the run, with the
      // plugins loaded (a thread a plugin started may be what failed).
      if (std::string k = st.KernelText(); !k.empty()) {
        what = "in the kernel of " + Printable(k);
      } else {
        what = "while running " + subject;
        std::string loaded = Printable(st.PluginText());
        if (!loaded.empty()) what += " (plugins loaded: " + loaded + ")";
      }
      break;
    default:
      what = "while starting";
  }
  std::string why;
  char grace[32];
  std::snprintf(grace, sizeof grace, "%g", o.exit_grace_s);
  if (o.exit_hung && o.exit_after_result) {
    why = std::string("the process did not exit within ") + grace +
          " s after it handed over its result (and was killed)";
  } else if (o.exit_hung) {
    why = "the process called exit(" + std::to_string(o.exit_status) +
          ") and did not finish exiting within " + grace +
          " s (a plugin's static destructor or exit handler that never returns?)";
  } else if (o.stopped_by != 0) {
    why = "stopped by " + SignalName(o.stopped_by) + " (and then killed)";
  } else if (!o.limit.empty()) {
    why = "time limit exceeded (" + o.limit + ")";
  } else if (o.timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", st.PassTimeoutSeconds());
    why = std::string("time limit exceeded (--pass-timeout ") + buf + " s)";
  } else if (st.out_of_memory.load()) {
    int64_t mb = st.MemoryLimitMb();
    why = "out of memory" +
          (mb > 0 ? " (--memory-limit " + std::to_string(mb) + " MB)" : std::string());
  } else if (o.signal != 0) {
    why = "killed by " + SignalName(o.signal);
    if (st.stack_overflow.load()) why += ": stack overflow";
    if (o.signal == SIGKILL) why += "; out of memory (the kernel's OOM killer)?";
  } else if (o.exited) {
    why = "the process exited with status " + std::to_string(o.exit_code) +
          " (exit() called from plugin code?)";
  } else {
    why = "the process ended abnormally";
  }
  return std::string(tool) + ": " + why + " " + what;
}

}  // namespace plir
