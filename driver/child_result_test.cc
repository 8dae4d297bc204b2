#include "driver/child_result.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "ir/op.h"
#include "ir/serialize/serialize.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"

namespace plir {
namespace {

constexpr uint64_t kMax = uint64_t{1} << 30;

int NewFile() {
  StatusOr<int> fd = CreateResultFile();
  EXPECT_TRUE(fd.ok());
  return *fd;
}

// Writes raw bytes, as a hostile child may.
int FileWith(const std::string& bytes) {
  int fd = NewFile();
  EXPECT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  return fd;
}

std::string Header(uint32_t kind, uint64_t names, uint64_t payload) {
  std::string h = std::string("PLIRRES\x01", 8);
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(kind >> (8 * i)));
  h.append(4, '\0');
  for (uint64_t v : {names, payload})
    for (int i = 0; i < 8; ++i) h.push_back(static_cast<char>(v >> (8 * i)));
  return h;
}

std::string ReadError(int fd) {
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  close(fd);
  return r.ok() ? "" : r.status().message();
}

const char kModule[] = R"(#[version = "1"]
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %a = add(%x, %x);
  %a
}
)";

TEST(ChildResultTest, AModuleRoundTripsAndIsVerifiedInTheReader) {
  StatusOr<Module> m = ParseModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  int fd = NewFile();
  ASSERT_TRUE(WriteChildResult(fd, ChildResultKind::kModule, {}, SaveBinary(*m)).ok());
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->payload().empty());
  StatusOr<Module> back = LoadResultModule(*r);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(PrintModule(*back), PrintModule(*m));
  // No constant views the file: the result let the mapping go before the
  // verify.
  EXPECT_FALSE(r->mapping());
  EXPECT_TRUE(r->payload().empty());
  // Sealed: nobody writes it any more.
  EXPECT_EQ(pwrite(fd, "x", 1, 0), -1);
  close(fd);
}

// A module large enough for version 4's shards (one per 4,096 top-level
// bindings): functions that call one another across the shards' borders,
// and a constant.
std::string LargeModuleText() {
  std::string t = "#[version = \"1\"]\n";
  for (int f = 0; f < 4; ++f) {
    t += "def @f" + std::to_string(f) + "(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {\n";
    t += f == 0 ? "  %v0 = multiply(%x, const<Tensor[(), float32]>[0.5]);\n"
                : "  %v0 = @f" + std::to_string(f - 1) + "(%x);\n";
    for (int i = 1; i < 3000; ++i)
      t += "  %v" + std::to_string(i) + " = add(%v" + std::to_string(i - 1) + ", %x);\n";
    t += "  %v2999\n}\n";
  }
  return t;
}

// The child's module result is the binary format's newest version: a large
// module comes as version 4's shards, which the reader loads and verifies
// as one module.
TEST(ChildResultTest, ALargeModuleRoundTripsInShards) {
  StatusOr<Module> m = ParseModule(LargeModuleText());
  ASSERT_TRUE(m.ok()) << m.status().message();
  int fd = NewFile();
  ASSERT_TRUE(WriteModuleResult(fd, {}, *m).ok());
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kind(), ChildResultKind::kModule);
  EXPECT_EQ(r->payload(), SaveBinary(*m));
  // The version field (a u32 after the 8-byte magic) says 4: sharded.
  uint32_t version = 0;
  std::memcpy(&version, r->payload().data() + 8, 4);
  EXPECT_EQ(version, 4u);
  StatusOr<Module> back = LoadResultModule(*r);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(PrintModule(*back), PrintModule(*m));
  close(fd);
  // The sharded payload's own checks stand behind the reader: a shard cut
  // short is refused as a load failure, never a crash.
  std::string cut(r->payload().substr(0, r->payload().size() / 2));
  int bad = NewFile();
  ASSERT_TRUE(WriteChildResult(bad, ChildResultKind::kModule, {}, cut).ok());
  StatusOr<ChildResult> rb = ReadChildResult(bad, kMax);
  ASSERT_TRUE(rb.ok()) << rb.status().message();
  StatusOr<Module> refused = LoadResultModule(*rb);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("does not load"), std::string::npos)
      << refused.status().message();
  close(bad);
}

TEST(ChildResultTest, TextRoundTrips) {
  int fd = NewFile();
  ASSERT_TRUE(WriteChildResult(fd, ChildResultKind::kText, {}, "Pass  [plugin p]\n").ok());
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind(), ChildResultKind::kText);
  EXPECT_EQ(r->payload(), "Pass  [plugin p]\n");
  close(fd);
}

TEST(ChildResultTest, WhatAHostileChildLeavesIsRefused) {
  EXPECT_NE(ReadError(NewFile()).find("without handing over a result"), std::string::npos);
  EXPECT_NE(ReadError(FileWith("not a module\n")).find("truncated"), std::string::npos);
  EXPECT_NE(ReadError(FileWith(std::string(64, 'x'))).find("no valid header"), std::string::npos);
  EXPECT_NE(ReadError(FileWith(Header(7, 0, 0))).find("unknown kind 7"), std::string::npos);
  // Kind 4 was a table of shards of its own; version 4 of the binary format
  // replaced it.
  EXPECT_NE(ReadError(FileWith(Header(4, 0, 0))).find("unknown kind 4"), std::string::npos);
  // Sizes that do not add up, or wrap around.
  EXPECT_NE(ReadError(FileWith(Header(1, 0, 5) + "abc")).find("inconsistent sizes"),
            std::string::npos);
  EXPECT_NE(ReadError(FileWith(Header(1, ~uint64_t{0} - 2, 4) + "abc")).find("inconsistent"),
            std::string::npos);
  // The op-name table: terminated, no empty or odd names.
  EXPECT_NE(ReadError(FileWith(Header(1, 3, 0) + "abc")).find("not terminated"), std::string::npos);
  EXPECT_NE(ReadError(FileWith(Header(1, 2, 0) + std::string("\0\0", 2))).find("empty"),
            std::string::npos);
  EXPECT_NE(ReadError(FileWith(Header(1, 4, 0) + std::string("a\nb\0", 4))).find("byte"),
            std::string::npos);
  // Bigger than the cap.
  int fd = FileWith(Header(2, 0, 8) + "12345678");
  StatusOr<ChildResult> r = ReadChildResult(fd, 16);
  close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("larger than the limit"), std::string::npos);
}

TEST(ChildResultTest, AFileStillMappedWritablyCannotBeSealed) {
  int fd = FileWith(Header(2, 0, 1) + "x");
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::string e = ReadError(dup(fd));
  EXPECT_NE(e.find("cannot be sealed"), std::string::npos) << e;
  munmap(p, 4096);
  close(fd);
}

TEST(ChildResultTest, ABinaryThatDoesNotLoadOrVerifyIsRefused) {
  int fd = NewFile();
  ASSERT_TRUE(WriteChildResult(fd, ChildResultKind::kModule, {}, "\x89PLIR\r\n\x1a junk").ok());
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  ASSERT_TRUE(r.ok());
  StatusOr<Module> m = LoadResultModule(*r);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("does not load"), std::string::npos);
  close(fd);
}

TEST(ChildResultTest, PluginOpsGetStandInsInTheReader) {
  // A forked child registers an op the reader (this process) never sees,
  // and hands over a module that calls it.
  int fd = NewFile();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    OpDef d;
    d.name = "child_only.scale";
    d.min_args = d.max_args = 1;
    d.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
      return args[0]->type();
    };
    d.origin = "a test plugin";
    if (!OpRegistry::Global().Register(std::move(d)).ok()) _exit(2);
    StatusOr<Module> m = ParseModule(R"(#[version = "1"]
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %a = child_only.scale(%x);
  %b = add(%a, %a);
  %b
}
)");
    if (!m.ok()) _exit(3);
    // "add" is a core op: named too, it gets no stand-in and keeps its checks.
    Status s =
        WriteChildResult(fd, ChildResultKind::kModule, {"child_only.scale", "add"}, SaveBinary(*m));
    _exit(s.ok() ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_FALSE(OpRegistry::Global().Lookup("child_only.scale"));
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  ASSERT_TRUE(r.ok()) << r.status().message();
  StatusOr<Module> back = LoadResultModule(*r);
  ASSERT_TRUE(back.ok()) << back.status().message();
  Op standin = OpRegistry::Global().Lookup("child_only.scale");
  ASSERT_TRUE(standin);
  EXPECT_NE(standin->def().origin.find("stand-in"), std::string::npos);
  EXPECT_EQ(OpRegistry::Global().Lookup("add")->def().origin, "core");
  EXPECT_NE(PrintModule(*back).find("child_only.scale(%x)"), std::string::npos);
  close(fd);
}

// A module's payload starts at a multiple of 64 in the file, so version 3
// constants view the sealed mapping instead of being copied, and keep it
// after the result is gone.
TEST(ChildResultTest, ModuleConstantsViewTheMapping) {
  auto m = ParseModule("def @f() {\n  const<Tensor[(4,), uint8]>x\"deadbeef\"\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  BinarySaveOptions v3;
  v3.version = 3;
  for (std::vector<std::string> names : {std::vector<std::string>{}, {"a.b"}, {"abc", "d"}}) {
    int fd = NewFile();
    ASSERT_TRUE(WriteChildResult(fd, ChildResultKind::kModule, names, SaveBinary(*m, v3)).ok());
    Module back;
    const char* payload = nullptr;
    {
      StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->op_names(), names);
      payload = r->payload().data();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(payload) % 64, 0u);
      StatusOr<Module> loaded = LoadResultModule(*r);
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      EXPECT_TRUE(r->mapping());  // the constant views it: kept
      back = *loaded;
    }
    auto* f = static_cast<const FunctionNode*>(back.items()[0].get());
    auto* c = static_cast<const ConstantNode*>(f->body()->result().get());
    EXPECT_TRUE(c->data().borrowed());
    EXPECT_EQ(c->data().view(), "\xde\xad\xbe\xef");
    close(fd);
  }
  // Padding that does not end at a multiple of 64 is an empty name.
  EXPECT_NE(ReadError(FileWith(Header(1, 4, 0) + std::string("a\0\0\0", 4))).find("empty"),
            std::string::npos);
}

TEST(ChildResultTest, BytesWrittenInPiecesRoundTrip) {
  int fd = NewFile();
  StatusOr<ChildResultWriter> w = ChildResultWriter::Start(fd, ChildResultKind::kBytes);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(w->Append("abc").ok());
  ASSERT_TRUE(w->Append(std::string("\0def", 4)).ok());
  // No header before Finish(): a child that dies here hands over nothing.
  EXPECT_NE(ReadError(dup(fd)).find("no valid header"), std::string::npos);
  close(fd);
  fd = NewFile();
  w = ChildResultWriter::Start(fd, ChildResultKind::kBytes);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->Append("abc").ok());
  ASSERT_TRUE(w->Append(std::string("\0def", 4)).ok());
  ASSERT_TRUE(w->Finish().ok());
  StatusOr<ChildResult> r = ReadChildResult(fd, kMax);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kind(), ChildResultKind::kBytes);
  EXPECT_EQ(r->payload(), std::string_view("abc\0def", 7));
  EXPECT_TRUE(r->op_names().empty());
  close(fd);
}

TEST(ChildResultTest, TheLimitNamesItsFlag) {
  int fd = NewFile();
  ASSERT_TRUE(WriteChildResult(fd, ChildResultKind::kBytes, {}, std::string(100, 'x')).ok());
  StatusOr<ChildResult> r = ReadChildResult(fd, 64, "--max-output-bytes");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("limit of 64 bytes (--max-output-bytes)"), std::string::npos);
  close(fd);
}

}  // namespace
}  // namespace plir
