#include "driver/sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace plir {
namespace {

std::string TmpDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d ? d : "/tmp";
}

// Runs `body` in a forked child after EnterSandbox; returns the child's
// exit status (the body's return value), or -1 if the sandbox failed.
template <typename Body>
int InSandbox(const SandboxPolicy& policy, SandboxMode mode, Body body) {
  SandboxSupport support = ProbeSandbox();
  pid_t pid = fork();
  if (pid == 0) {
    if (!EnterSandbox(policy, mode, support).ok()) _exit(100);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return -2;
  return WEXITSTATUS(status) == 100 ? -1 : WEXITSTATUS(status);
}

SandboxPolicy PolicyReading(const std::string& dir) {
  SandboxPolicy p;
  AddSystemReadPaths(&p);
  AddReadPath(dir, &p);
  p.supervisor = getpid();
  p.supervisor_pgid = getpgid(0);
  return p;
}

TEST(SandboxTest, ModesParse) {
  EXPECT_EQ(*ParseSandboxMode("auto"), SandboxMode::kAuto);
  EXPECT_EQ(*ParseSandboxMode("require"), SandboxMode::kRequire);
  EXPECT_EQ(*ParseSandboxMode("off"), SandboxMode::kOff);
  EXPECT_FALSE(ParseSandboxMode("on").ok());
}

TEST(SandboxTest, ReadsOnlyWhatThePolicyNamesAndWritesNothing) {
  if (ProbeSandbox().landlock_abi == 0) GTEST_SKIP() << "this kernel has no Landlock";
  std::string allowed = TmpDir() + "/sandbox_allowed";
  std::string other = TmpDir() + "/sandbox_other";
  std::filesystem::create_directories(allowed);
  std::filesystem::create_directories(other);
  std::ofstream(allowed + "/a.txt") << "a";
  std::ofstream(other + "/b.txt") << "b";
  int rc = InSandbox(PolicyReading(allowed), SandboxMode::kAuto, [&] {
    if (open((allowed + "/a.txt").c_str(), O_RDONLY) < 0) return 1;   // allowed
    if (open((other + "/b.txt").c_str(), O_RDONLY) >= 0) return 2;    // not named
    if (open((allowed + "/a.txt").c_str(), O_WRONLY) >= 0) return 3;  // no writes
    if (open((allowed + "/new").c_str(), O_CREAT | O_WRONLY, 0644) >= 0) return 4;
    if (unlink((allowed + "/a.txt").c_str()) == 0) return 5;
    if (open("/dev/null", O_WRONLY) < 0) return 6;  // discarding is fine
    return 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(std::filesystem::exists(allowed + "/a.txt"));
  EXPECT_FALSE(std::filesystem::exists(allowed + "/new"));
}

TEST(SandboxTest, WriteDirectoriesTakeNewFiles) {
  if (ProbeSandbox().landlock_abi == 0) GTEST_SKIP() << "this kernel has no Landlock";
  std::string dump = TmpDir() + "/sandbox_dump";
  std::filesystem::create_directories(dump);
  SandboxPolicy p = PolicyReading(TmpDir() + "/nothing");
  p.write.push_back(dump);
  int rc = InSandbox(p, SandboxMode::kAuto, [&] {
    int fd = open((dump + "/0001.plir").c_str(), O_CREAT | O_WRONLY, 0644);
    return fd >= 0 && write(fd, "x", 1) == 1 ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(std::filesystem::exists(dump + "/0001.plir"));
}

TEST(SandboxTest, NoNetworkNoSignalsToTheSupervisorNoExec) {
  if (!ProbeSandbox().seccomp) GTEST_SKIP() << "this kernel has no seccomp";
  // The supervisor here is this test process; a signal it must not get
  // would end the test, so SIGUSR1 is ignored meanwhile, just in case.
  signal(SIGUSR1, SIG_IGN);
  int rc = InSandbox(PolicyReading(TmpDir()), SandboxMode::kAuto, [] {
    if (socket(AF_INET, SOCK_STREAM, 0) >= 0) return 1;
    if (socket(AF_INET6, SOCK_DGRAM, 0) >= 0) return 2;
    if (socket(AF_UNIX, SOCK_DGRAM, 0) >= 0) return 3;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return 4;  // still there
    if (kill(getppid(), SIGUSR1) == 0 || errno != EPERM) return 5;
    if (kill(-1, SIGUSR1) == 0) return 6;
    if (setsid() >= 0) return 7;
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    execv("/bin/true", argv);
    return 0;  // execv failed: blocked
  });
  signal(SIGUSR1, SIG_DFL);
  EXPECT_EQ(rc, 0);
}

TEST(SandboxTest, RequireFailsWithoutLandlockAutoWarnsOnce) {
  SandboxSupport none;
  none.landlock_reason = "the kernel was built without it";
  none.seccomp = true;
  EXPECT_NE(SandboxShortfall(SandboxMode::kRequire, none).find("--sandbox=require"),
            std::string::npos);
  EXPECT_NE(SandboxShortfall(SandboxMode::kAuto, none).find("warning: this kernel lacks Landlock"),
            std::string::npos);
  EXPECT_EQ(SandboxShortfall(SandboxMode::kOff, none), "");
  pid_t pid = fork();
  if (pid == 0) _exit(EnterSandbox(SandboxPolicy(), SandboxMode::kRequire, none).ok() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

TEST(SandboxTest, OffConfinesNothing) {
  std::string file = TmpDir() + "/sandbox_off.txt";
  int rc = InSandbox(SandboxPolicy(), SandboxMode::kOff, [&] {
    int fd = open(file.c_str(), O_CREAT | O_WRONLY, 0644);
    return fd >= 0 ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
}

// A folder's links (two levels down, as a build's plugin folder links test
// files) add their resolved targets and the targets' directories; a link to
// a link is followed to its end; dangling links add nothing, not even an
// empty path, also when two of them point into the same missing directory.
TEST(SandboxTest, AReadFolderAddsWhatItsLinksResolveTo) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(TmpDir()) / "sandbox_links";
  fs::remove_all(root);
  fs::create_directories(root / "folder" / "sub");
  fs::create_directories(root / "data");
  std::ofstream(root / "data" / "a.txt") << "a";
  std::ofstream(root / "data" / "b.txt") << "b";
  fs::create_symlink(root / "data" / "a.txt", root / "folder" / "a");
  fs::create_symlink("../../data/b.txt", root / "folder" / "sub" / "b");  // relative
  // To a link outside the folder, which leads to c.txt.
  fs::create_directories(root / "elsewhere");
  std::ofstream(root / "data" / "c.txt") << "c";
  fs::create_symlink(root / "data" / "c.txt", root / "elsewhere" / "to_c");
  fs::create_symlink(root / "elsewhere" / "to_c", root / "folder" / "sub" / "via");
  fs::create_symlink(root / "missing" / "x", root / "folder" / "x");
  fs::create_symlink(root / "missing" / "y", root / "folder" / "y");
  SandboxPolicy p;
  AddReadPath((root / "folder").string(), &p);
  const std::string data = fs::canonical(root / "data").string();
  auto has = [&](const std::string& path) {
    return std::find(p.read.begin(), p.read.end(), path) != p.read.end();
  };
  EXPECT_TRUE(has(data + "/a.txt"));
  EXPECT_TRUE(has(data + "/b.txt"));
  EXPECT_TRUE(has(data + "/c.txt"));
  EXPECT_TRUE(has(data));
  for (const std::string& r : p.read) {
    EXPECT_FALSE(r.empty());
    EXPECT_EQ(r.find("missing"), std::string::npos) << r;
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace plir
