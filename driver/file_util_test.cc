#include "driver/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace plir {
namespace {

std::string TmpDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d ? d : "/tmp";
}

TEST(FileUtilTest, WritesAtomicallyAndLeavesNoTemporaries) {
  std::string dir = TmpDir() + "/atomic";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/out.plir";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "second");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

// An output larger than a few writeback steps, in pieces that end
// mid-page, arrives whole; a pipe, where writeback cannot start, is no error.
TEST(FileUtilTest, WritebackAheadKeepsEveryByte) {
  std::string path = TmpDir() + "/writeback.plir";
  StatusOr<AtomicOutput> out = AtomicOutput::Create(path);
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::string want;
  for (int i = 0; want.size() < 3 * WritebackAhead::kStepBytes + 12345; ++i) {
    std::string piece(1000003 + i, static_cast<char>('a' + i % 26));
    want += piece;
    ASSERT_TRUE(out->Write(piece).ok());
  }
  ASSERT_TRUE(out->Commit().ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(*text == want) << text->size() << " bytes, want " << want.size();

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  WritebackAhead on_pipe(fds[1]);
  on_pipe.Wrote(2 * WritebackAhead::kStepBytes);  // fails quietly, and stops trying
  on_pipe.Wrote(2 * WritebackAhead::kStepBytes);
  close(fds[0]);
  close(fds[1]);
}

TEST(FileUtilTest, FailureLeavesTargetUntouched) {
  std::string path = TmpDir() + "/no/such/dir/out.plir";
  Status s = WriteFileAtomically(path, "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(FileUtilTest, DevicesAreWrittenInPlaceNotReplaced) {
  struct stat before;
  ASSERT_EQ(stat("/dev/null", &before), 0);
  ASSERT_TRUE(WriteFileAtomically("/dev/null", "discarded").ok());
  struct stat after;
  ASSERT_EQ(stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));  // still the device
  EXPECT_EQ(before.st_ino, after.st_ino);
}

TEST(FileUtilTest, AnExistingOutputKeepsItsMode) {
  std::string path = TmpDir() + "/mode.plir";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(*ReadFileToString(path), "second");
}

TEST(FileUtilTest, WritingThroughASymlinkReplacesItsTarget) {
  std::string dir = TmpDir() + "/links";
  std::filesystem::create_directories(dir);
  std::string target = dir + "/target.plir", link = dir + "/link.plir";
  ASSERT_TRUE(WriteFileAtomically(target, "old").ok());
  std::filesystem::remove(link);
  std::filesystem::create_symlink("target.plir", link);  // relative, as users make them
  ASSERT_TRUE(WriteFileAtomically(link, "new").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(*ReadFileToString(target), "new");
  EXPECT_EQ(*ReadFileToString(link), "new");
}

TEST(FileUtilTest, MissingInputIsAnError) {
  auto r = ReadFileToString(TmpDir() + "/missing.plir");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot open"), std::string::npos);
}

TEST(FileUtilTest, AnOutputHasNoNameUntilItIsCommitted) {
  std::string dir = TmpDir() + "/anonymous";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/out.plir";
  StatusOr<AtomicOutput> out = AtomicOutput::Create(path);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE(out->Write("data").ok());
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  if (entries != 0) GTEST_SKIP() << "this file system has no O_TMPFILE";
  ASSERT_TRUE(out->Commit().ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "data");
  entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FileUtilTest, RootReplacingAnotherUsersFileKeepsItsOwner) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to chown the file first)";
  std::string path = TmpDir() + "/owned.plir";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// A SIGKILL between Commit()'s link and rename leaves TARGET.tmp.PID.X; the
// next commit to the same target removes it when that process is gone, and
// leaves a live process's file and other targets' files alone.
TEST(FileUtilTest, TheNextCommitRemovesADeadProcesssTemporaryFile) {
  std::string dir = TmpDir() + "/stale";
  std::filesystem::create_directories(dir);
  pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(dead, &status, 0), dead);
  const std::string stale = dir + "/out.plir.tmp." + std::to_string(dead) + ".aB3xYz";
  const std::string live = dir + "/out.plir.tmp.1.aB3xYz";  // init is alive
  const std::string other = dir + "/other.plir.tmp." + std::to_string(dead) + ".aB3xYz";
  const std::string odd = dir + "/out.plir.tmp.notapid";
  for (const std::string& p : {stale, live, other, odd})
    ASSERT_TRUE(WriteFileAtomically(p, "x").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/out.plir", "data").ok());
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(std::filesystem::exists(odd));
  auto text = ReadFileToString(dir + "/out.plir");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "data");
}

}  // namespace
}  // namespace plir
