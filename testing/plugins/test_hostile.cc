// A plugin that means harm: one attack per mode, chosen by the environment
// variable PLIR_HOSTILE_MODE when its pass `Hostile` runs, or the kernel of
// its op `test.hostile` (one tensor in, the same out: what plir-run
// executes), or, for the modes marked "at load", when the plugin
// registers. PLIR_HOSTILE_TARGET
// names the file or socket an attack aims at, PLIR_HOSTILE_PORT a TCP port
// on 127.0.0.1. Each attempt reports on stderr, one line:
//
//   hostile MODE: succeeded (...)      the attack worked
//   hostile MODE: blocked (ERRNO)      the system refused it
//
// cli/sandbox_test.sh runs every mode and checks that the attempt is
// blocked or the run fails cleanly, the user's files intact, no process
// left. Never installed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "driver/supervisor.h"
#include "kernels/tensor.h"
#include "passes/plugin.h"

namespace {

using namespace plir;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Mode() { return Env("PLIR_HOSTILE_MODE"); }

void Report(const std::string& mode, bool ok, const std::string& detail = "") {
  std::string line =
      "hostile " + mode + ": " + (ok ? "succeeded" : "blocked") + " (" +
      (ok ? detail : std::string(std::strerror(errno)) + (detail.empty() ? "" : ", " + detail)) +
      ")\n";
  ssize_t ignored = write(2, line.data(), line.size());
  (void)ignored;
}

// The page the supervisor shares with the child: the one MAP_SHARED
// anonymous mapping of RunState's size.
RunState* FindSharedPage() {
  std::ifstream maps("/proc/self/maps");
  size_t want = (sizeof(RunState) + 4095) / 4096 * 4096;
  for (std::string line; std::getline(maps, line);) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
    if (std::string(perms) == "rw-s" && hi - lo == want &&
        line.find("/dev/zero") != std::string::npos)
      return reinterpret_cast<RunState*>(lo);
  }
  return nullptr;
}

// The descriptor of the anonymous file the child's result goes to.
int FindResultFd() {
  for (int fd = 3; fd < 1024; ++fd) {
    char link[64], target[256];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::strstr(target, "plir-result")) return fd;
  }
  return -1;
}

void WriteFile(const std::string& mode, const std::string& path, const char* text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return Report(mode, false, path);
  bool ok = write(fd, text, std::strlen(text)) > 0;
  close(fd);
  Report(mode, ok, "wrote " + path);
}

// Writes `text` into every descriptor from 0 to 1023 that takes it.
int ScribbleOnEveryFd(const char* text) {
  int hits = 0;
  for (int fd = 0; fd < 1024; ++fd) {
    if (fd == 2) continue;
    if (pwrite(fd, text, std::strlen(text), 0) > 0 || write(fd, text, std::strlen(text)) > 0)
      ++hits;
  }
  return hits;
}

// A static object, constructed when the plugin loads (so its destructor is
// registered with __cxa_atexit then), whose destructor never returns once
// the mode exit-hang asked for it: exit() from the pass then never ends.
std::atomic<bool> g_spin_at_exit{false};
struct SpinAtExit {
  ~SpinAtExit() {
    while (g_spin_at_exit.load()) {  // an atomic load each time: never optimized out
    }
  }
} g_spin_at_exit_object;

[[noreturn]] void Segfault() {
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
  _exit(139);
}

void Attack(const std::string& mode) {
  const std::string target = Env("PLIR_HOSTILE_TARGET");
  const pid_t parent = getppid();
  if (mode == "write-file") {
    WriteFile(mode, target, "PWNED\n");
  } else if (mode == "delete-file") {
    Report(mode, unlink(target.c_str()) == 0, "deleted " + target);
  } else if (mode == "make-dir") {
    Report(mode, mkdir(target.c_str(), 0755) == 0, "made " + target);
  } else if (mode == "read-file") {
    // Reading is the first step of smuggling a secret into the result.
    int fd = open(target.c_str(), O_RDONLY);
    char buf[64];
    Report(mode, fd >= 0 && read(fd, buf, sizeof buf) >= 0, "read " + target);
    if (fd >= 0) close(fd);
  } else if (mode == "tcp-connect") {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return Report(mode, false, "socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::atoi(Env("PLIR_HOSTILE_PORT").c_str())));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
              send(s, "exfiltrated", 11, 0) == 11;
    Report(mode, ok, "sent to 127.0.0.1");
    close(s);
  } else if (mode == "udp-send") {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) return Report(mode, false, "socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(9);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Report(mode, sendto(s, "x", 1, 0, reinterpret_cast<sockaddr*>(&a), sizeof a) == 1, "sent");
    close(s);
  } else if (mode == "unix-connect") {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) return Report(mode, false, "socket");
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", target.c_str());
    Report(mode, connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0, "connected");
    close(s);
  } else if (mode == "read-parent-mem" || mode == "write-parent-mem") {
    std::string path = "/proc/" + std::to_string(parent) + "/mem";
    bool write_it = mode == "write-parent-mem";
    int fd = open(path.c_str(), write_it ? O_RDWR : O_RDONLY);
    if (fd < 0) return Report(mode, false, path);
    // Some mapped address of the parent: the first line of its maps.
    std::ifstream maps("/proc/" + std::to_string(parent) + "/maps");
    unsigned long lo = 0;
    std::string line;
    if (std::getline(maps, line)) std::sscanf(line.c_str(), "%lx", &lo);
    char buf[16] = {};
    ssize_t n = write_it ? pread(fd, buf, sizeof buf, static_cast<off_t>(lo))
                         : pread(fd, buf, sizeof buf, static_cast<off_t>(lo));
    if (write_it && n > 0) n = pwrite(fd, buf, sizeof buf, static_cast<off_t>(lo));
    Report(mode, n > 0, std::to_string(n) + " bytes");
    close(fd);
  } else if (mode == "ptrace-parent") {
    Report(mode, ptrace(PTRACE_SEIZE, parent, nullptr, nullptr) == 0, "attached");
  } else if (mode == "vm-read-parent") {
    char buf[16];
    iovec local{buf, sizeof buf}, remote{reinterpret_cast<void*>(0x400000), sizeof buf};
    Report(mode, syscall(SYS_process_vm_readv, parent, &local, 1, &remote, 1, 0) > 0, "read");
  } else if (mode == "kill-parent") {
    Report(mode, kill(parent, SIGKILL) == 0, "SIGKILL sent");
  } else if (mode == "stop-parent") {
    Report(mode, kill(parent, SIGSTOP) == 0, "SIGSTOP sent");
  } else if (mode == "tkill-parent") {
    Report(mode, syscall(SYS_tkill, parent, SIGKILL) == 0, "SIGKILL sent");
  } else if (mode == "kill-parent-group") {
    Report(mode, kill(-getpgid(parent), SIGTERM) == 0, "SIGTERM sent to the parent's group");
  } else if (mode == "stop-self") {
    raise(SIGSTOP);
    Report(mode, true, "continued");
  } else if (mode == "exec") {
    char* argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"),
                    const_cast<char*>("true"), nullptr};
    execv("/bin/sh", argv);
    Report(mode, false, "execv");
  } else if (mode == "tiocsti") {
    char c = 'x';
    Report(mode, ioctl(2, TIOCSTI, &c) == 0, "pushed a byte into the terminal");
  } else if (mode == "raise-rlimit") {
    rlimit rl{RLIM_INFINITY, RLIM_INFINITY};
    Report(mode, setrlimit(RLIMIT_AS, &rl) == 0, "RLIMIT_AS lifted");
  } else if (mode == "lower-parent-rlimit") {
    rlimit rl{0, 0};
    Report(mode, prlimit(parent, RLIMIT_FSIZE, &rl, nullptr) == 0, "parent's RLIMIT_FSIZE 0");
  } else if (mode == "setsid") {
    Report(mode, setsid() >= 0, "new session");
  } else if (mode == "stdout") {
    // What any debug printf does.
    const char kText[] = "GARBAGE FROM PLUGIN\n";
    Report(mode, write(1, kText, sizeof kText - 1) > 0, "wrote to fd 1");
  } else if (mode == "write-fds") {
    int hits = ScribbleOnEveryFd("// INJECTED BY PLUGIN\n@@@\n");
    errno = EBADF;
    Report(mode, hits > 0, std::to_string(hits) + " descriptors");
  } else if (mode == "grandchild-write") {
    // A grandchild that writes into every descriptor, and the target by
    // name, after plir-opt should have finished.
    pid_t pid = fork();
    if (pid == 0) {
      usleep(1500 * 1000);
      ScribbleOnEveryFd("CORRUPTED AFTER COMMIT\n");
      if (!target.empty()) WriteFile(mode, target, "CORRUPTED AFTER COMMIT\n");
      _exit(0);
    }
    Report(mode, pid > 0, "grandchild started");
  } else if (mode == "daemon") {
    // Leaves a daemon that holds stdout and stderr (and $(plir-opt ...)).
    pid_t pid = fork();
    if (pid == 0) {
      bool detached = setsid() >= 0;
      if (!detached) Report(mode, false, "setsid in the grandchild");
      prctl(PR_SET_PDEATHSIG, 0);
      sleep(8);
      _exit(0);
    }
    Report(mode, pid > 0, "daemon started");
  } else if (mode == "spinner") {
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, 0);
      setsid();
      for (;;) {
      }
    }
    Report(mode, pid > 0, "spinner started");
    sleep(30);  // the test kills plir-opt meanwhile
  } else if (mode == "fake-finish") {
    // Junk into every descriptor, "finished" into the shared page, exit 0.
    ScribbleOnEveryFd("not a module\n");
    if (RunState* st = FindSharedPage()) st->finished.store(1);
    _exit(0);
  } else if (mode == "corrupt-result") {
    // After the child has written its result, overwrite a part of it.
    std::thread([] {
      RunState* st = FindSharedPage();
      int fd = FindResultFd();
      for (int i = 0; i < 4000 && st; ++i) {
        if (st->phase.load() == static_cast<int32_t>(RunPhase::kWritingOutput)) break;
        usleep(1000);
      }
      usleep(50 * 1000);
      static const char kJunk[64] = "JUNK JUNK JUNK JUNK JUNK JUNK JUNK";
      if (fd >= 0) {
        ssize_t n = pwrite(fd, kJunk, sizeof kJunk, 40);
        (void)n;
      }
    }).detach();
    Report(mode, FindResultFd() >= 0, "result descriptor found");
  } else if (mode == "bad-result") {
    // A result with a valid header around bytes that are no module, then
    // "finished" and exit 0: the supervisor must not commit it.
    int fd = FindResultFd();
    static const char kJunk[] = "\x89PLIR\r\n\x1a this is no module at all";
    char header[32] = {'P', 'L', 'I', 'R', 'R', 'E', 'S', '\x01', 1};
    uint64_t payload = sizeof kJunk - 1;
    std::memcpy(header + 24, &payload, sizeof payload);
    bool ok = fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, header, sizeof header, 0) == 32 &&
              pwrite(fd, kJunk, payload, 32) == static_cast<ssize_t>(payload);
    Report(mode, ok, "result replaced");
    if (RunState* st = FindSharedPage()) st->finished.store(1);
    _exit(0);
  } else if (mode == "forge-plugins") {
    RunState* st = FindSharedPage();
    if (st) std::snprintf(st->plugins, sizeof st->plugins, "/dev/zero\tevil\t1\n");
    Report(mode, st != nullptr, "page found");
    Segfault();
  } else if (mode == "forge-prefixes") {
    RunState* st = FindSharedPage();
    if (st) {
      st->num_prefixes = 1 << 30;
      for (uint32_t& o : st->prefix_offset) o = 0xfff00000u;
    }
    Report(mode, st != nullptr, "page found");
    Segfault();
  } else if (mode == "forge-unterminated") {
    // Every text field full, without a terminating NUL, with escapes.
    RunState* st = FindSharedPage();
    if (st) {
      for (char* f : {st->subject, st->plugin, st->failure, st->plugins}) std::memset(f, 'A', 8);
      std::memset(st->subject, '\x1b', sizeof st->subject);
      std::memset(st->plugin, 'B', sizeof st->plugin);
      std::memset(st->failure, 'C', sizeof st->failure);
      std::memset(st->plugins, 'D', sizeof st->plugins);
      std::memset(st->prefixes, 'E', sizeof st->prefixes);
      st->phase.store(12345);
    }
    Report(mode, st != nullptr, "page found");
    Segfault();
  } else if (mode == "forge-blame") {
    RunState* st = FindSharedPage();
    if (st) {
      std::snprintf(st->subject, sizeof st->subject, "DeadCodeElimination");
      std::snprintf(st->plugin, sizeof st->plugin, "dead_code_elimination 1.0 (/elsewhere)");
    }
    Report(mode, st != nullptr, "page found");
    Segfault();
  } else if (mode == "evade-timeout") {
    // Keeps the page's phase clock fresh, so that --pass-timeout never
    // fires, and loops.
    RunState* st = FindSharedPage();
    Report(mode, st != nullptr, "page found");
    std::thread([st] {
      for (;;) {
        if (st) {
          timespec ts;
          clock_gettime(CLOCK_MONOTONIC, &ts);
          st->phase_start_ns.store(static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec);
        }
        usleep(10 * 1000);
      }
    }).detach();
    for (;;) asm volatile("" ::: "memory");  // spins; the asm keeps the loop
  } else if (mode == "segfault") {
    Segfault();
  } else if (mode == "exit-hang") {
    // exit(3), and a static destructor that spins: without a time limit,
    // only the supervisor's bound on the exit phase ends it.
    g_spin_at_exit.store(true);
    Report(mode, true, "calling exit(3)");
    std::exit(3);
  } else if (!mode.empty()) {
    errno = EINVAL;
    Report(mode, false, "unknown mode");
  }
}

// At load, in the static constructor: a daemon that outlives the run, or a
// constructor that never returns.
__attribute__((constructor)) void AtLoad() {
  if (Mode() == "hang-at-load")
    for (;;) pause();
  if (Mode() == "daemon-at-load") {
    pid_t pid = fork();
    if (pid == 0) {
      setsid();
      prctl(PR_SET_PDEATHSIG, 0);
      sleep(6);
      _exit(0);
    }
    Report("daemon-at-load", pid > 0, "daemon started");
  }
}

Status Register(PluginHost& host) {
  PassDef d;
  d.info.name = "Hostile";
  d.info.description = "attacks its host (PLIR_HOSTILE_MODE)";
  d.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> {
    Attack(Mode());
    return m;
  };
  PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(d)));
  OpDef op;
  op.name = "test.hostile";
  op.description = "attacks its host when its kernel runs (PLIR_HOSTILE_MODE)";
  op.min_args = op.max_args = 1;
  op.pure = false;
  op.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
    return args[0]->type();
  };
  op.eval = [](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    Attack(Mode());
    return args[0];
  };
  PLIR_RETURN_IF_ERROR(host.RegisterOp(std::move(op)));
  // At load: take the name of a bundled pass.
  if (Mode() == "impostor") {
    PassDef fake;
    fake.info.name = "FoldConstant";
    fake.info.description = "not the real one";
    fake.module_fn = [](const Module& m, const PassCallContext&) -> StatusOr<Module> { return m; };
    PLIR_RETURN_IF_ERROR(host.RegisterPass(std::move(fake)));
  }
  return Status::Ok();
}

}  // namespace

PLIR_PLUGIN("test_hostile", "6.6.6", Register)
