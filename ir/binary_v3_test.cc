// Binary format version 3: tensor data aligned in a section of its own and
// viewed in place from the mapping, CRC-32C checksums (the structure on
// every load, the data on request), bounds-checked offsets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <unordered_map>

#include "ir/parallel.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/support/crc32c.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "testing/ir_test_util.h"

namespace plir {
namespace {

constexpr size_t kV3PreambleSize = 144;  // header, section table, tensor-data entry

std::string SaveV3(const Module& m) {
  BinarySaveOptions o;
  o.version = 3;
  return SaveBinary(m, o);
}
uint64_t U64At(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void PutU64(std::string* b, size_t at, uint64_t v) { std::memcpy(&(*b)[at], &v, 8); }
// Recomputes a version 3 file's length and both checksums after an edit.
void Reseal(std::string* b) {
  if (b->size() < 144) return;  // too short for the header fields written below
  PutU64(b, 16, b->size() - 32);
  uint64_t off = U64At(*b, 120);
  if (off > b->size() || off < 32) return;
  PutU64(b, 136, Crc32c(std::string_view(*b).substr(off)));
  PutU64(b, 24, Crc32c(std::string_view(*b).substr(32, off - 32)));
}
// Three constants, two of them sharing their bytes, one of 1000 bytes.
Module Weights() {
  auto bytes = [](size_t n, char c) { return std::string(n, c); };
  auto a = CopyTensorBytes(bytes(1000, 'a'));
  auto type = [](int64_t n) { return TensorTypeNode::Make({Dim::Const(n)}, DataType::kUInt8); };
  Expr c1 = *ConstantNode::Make(type(1000), a);
  Expr c2 = *ConstantNode::Make(type(1000), a);
  Expr c3 = *ConstantNode::Make(type(3), CopyTensorBytes("xyz"));
  Expr t = TupleNode::Make({c1, c2, c3});
  return *Module::Make({FunctionNode::Make("f", {}, t->type(), SeqExprNode::Make({}, t))});
}
std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}
// `bytes` copied to a 64-aligned buffer, which the returned keepalive owns.
std::pair<std::string_view, std::shared_ptr<const void>> Aligned(const std::string& bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t size = (bytes.size() + 64) / 64 * 64;
  std::shared_ptr<char> p(static_cast<char*>(std::aligned_alloc(64, size)), &std::free);
  std::memcpy(p.get(), bytes.data(), bytes.size());
  return {std::string_view(p.get(), bytes.size()), p};
}
const ConstantNode* ConstantField(const Module& m, size_t i) {
  auto* f = static_cast<const FunctionNode*>(m.items()[0].get());
  auto* t = static_cast<const TupleNode*>(f->body()->result().get());
  return static_cast<const ConstantNode*>(t->fields()[i].get());
}

TEST(Crc32cTest, PublishedVectorsAndBothImplementationsAgree) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32cPortable("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);  // RFC 3720 B.4
  std::mt19937_64 rng(7);
  std::string s(4099, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  for (size_t start : {0, 1, 3, 8}) {
    for (size_t n : {0, 1, 7, 31, 64, 1000, 4000}) {
      std::string_view v = std::string_view(s).substr(start, n);
      EXPECT_EQ(Crc32c(v), Crc32cPortable(v)) << start << " " << n;
      EXPECT_EQ(Crc32c(v.substr(n / 2), Crc32c(v.substr(0, n / 2))), Crc32c(v));
    }
  }
}

TEST(BinaryV3Test, RoundTripsSpecExamplesAndWeights) {
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir")) {
    Module m = testing::ParseOrFail(testing::ReadTestFile(f));
    std::string b = SaveV3(m);
    auto r = LoadBinary(b);
    ASSERT_TRUE(r.ok()) << f << ": " << r.status().message();
    EXPECT_TRUE(StructuralEqual(*r, m, /*map_free_vars=*/true)) << f;
    EXPECT_EQ(SaveV3(*r), b) << f;  // deterministic
  }
  Module w = Weights();
  auto r = LoadBinary(SaveV3(w));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(StructuralEqual(*r, w));
}

// The writer writes a binding of a call on written operands at once, and
// any other binding through its walk: both kinds, mixed, load back as the
// same module, each variable one node shared by its binding and its uses.
TEST(BinaryV3Test, CallBindingsOnWrittenOperandsAndTheRestLoadBackShared) {
  Module m = testing::ParseOrFail(R"(
def @f(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %0 = add(%a, %b);
  %1 = multiply(%0, %0);
  %2 = add(%1, const<Tensor[(2), float32]>[1, 2]);
  %3 = subtract(%2, %a);
  %4 = (%3, %1);
  %5 = %4.0;
  %6 = @g(%5);
  %7 = multiply(%6, %3);
  %7
}
def @g(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %y = add(%x, %x);
  %y
}
)");
  std::string b = SaveV3(m);
  auto r = LoadBinary(b);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(Verify(*r).ok()) << Verify(*r).message();
  EXPECT_TRUE(StructuralEqual(*r, m, /*map_free_vars=*/true));
  EXPECT_EQ(SaveV3(*r), b);
  // Each binding's variable is the very node the next binding's call uses.
  auto* f = As<FunctionNode>(r->Lookup("f"));
  ASSERT_NE(f, nullptr);
  const auto& bindings = f->body()->blocks()[0]->bindings();
  ASSERT_EQ(bindings.size(), 8u);
  for (size_t i = 0; i + 1 < bindings.size(); ++i) {
    auto* next = As<VarBindingNode>(bindings[i + 1]);
    auto* call = next ? As<CallNode>(next->value()) : nullptr;
    if (!call) continue;  // the tuple and its field
    bool used = false;
    for (const Expr& a : call->args())
      used |= a.get() == As<VarBindingNode>(bindings[i])->var().get();
    EXPECT_TRUE(used) << "binding " << i + 1;
  }
  // The loader counts each reference once: a variable's count is its
  // binding's and its uses' (calls' operands, the tuple's fields, the field
  // access, the function's result), nothing more (a leak) or less.
  std::unordered_map<const Node*, uint32_t> uses;
  for (const Binding& bn : bindings) {
    const Expr& v = As<VarBindingNode>(bn)->value();
    if (auto* c = As<CallNode>(v))
      for (const Expr& a : c->args()) ++uses[a.get()];
    if (auto* t = As<TupleNode>(v))
      for (const Expr& e : t->fields()) ++uses[e.get()];
    if (auto* g = As<TupleGetItemNode>(v)) ++uses[g->tuple().get()];
  }
  ++uses[f->body()->result().get()];
  for (const Binding& bn : bindings) {
    const VarNode* v = As<VarBindingNode>(bn)->var().get();
    EXPECT_EQ(v->use_count(), 1 + uses[v]) << v->name_hint();
  }
}

TEST(BinaryV3Test, Layout) {
  std::string b = SaveV3(Weights());
  EXPECT_EQ(b[8], 3);
  uint64_t count = U64At(b, 112), off = U64At(b, 120), size = U64At(b, 128);
  EXPECT_EQ(count, 2u);  // the shared bytes are stored once
  EXPECT_EQ(off % 64, 0u);
  EXPECT_EQ(off + size, b.size());
  EXPECT_EQ(size, 1024u + 3);  // 1000 bytes, padding to 64, 3 bytes
  EXPECT_EQ(b.substr(off, 1000), std::string(1000, 'a'));
  EXPECT_EQ(b.substr(off + 1024, 3), "xyz");
  EXPECT_EQ(U64At(b, 136), Crc32c(std::string_view(b).substr(off)));
  EXPECT_EQ(U64At(b, 24), Crc32c(std::string_view(b).substr(32, off - 32)));
  // No tensors: no padding either.
  Module m = testing::ParseOrFail("def @f(%x: Tensor[(2,), float32]) { %x }");
  std::string e = SaveV3(m);
  EXPECT_EQ(U64At(e, 128), 0u);
  EXPECT_EQ(U64At(e, 120), e.size());
  // Version 2 on request.
  BinarySaveOptions v2;
  v2.version = 2;
  EXPECT_EQ(SaveBinary(m, v2)[8], 2);
}

TEST(BinaryV3Test, ConstantsBorrowWithAKeepaliveAndCopyWithout) {
  std::string b = SaveV3(Weights());
  auto [view, keep] = Aligned(b);
  BinaryLoadOptions o;
  o.keepalive = keep;
  auto r = LoadBinary(view, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  uint64_t off = U64At(b, 120);
  for (size_t i = 0; i < 3; ++i) {
    const TensorBytes& d = ConstantField(*r, i)->data();
    EXPECT_TRUE(d.borrowed()) << i;
    EXPECT_EQ(d.data(), view.data() + off + (i == 2 ? 1024 : 0)) << i;
  }
  long uses = keep.use_count();
  EXPECT_GE(uses, 4);  // each constant holds the buffer
  r = Module();
  EXPECT_EQ(keep.use_count(), 2);  // `keep` and `o`
  // Without a keepalive: copies.
  auto c = LoadBinary(view);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(ConstantField(*c, 0)->data().borrowed());
  // Memory not aligned as the file is: copies too.
  std::string shifted = " " + b;
  auto s = LoadBinary(std::string_view(shifted).substr(1), o);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(ConstantField(*s, 0)->data().borrowed());
}

TEST(BinaryV3Test, FilesLoadInPlaceAndOutliveTheirModuleFile) {
  Module w = Weights();
  std::string b = SaveV3(w);
  std::string path = TempPath("w.plirb");
  std::ofstream(path, std::ios::binary) << b;
  Module loaded;
  {
    auto f = ModuleFile::Open(path);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->mapped());
    auto r = LoadModule(*f, path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const TensorBytes& d = ConstantField(*r, 0)->data();
    EXPECT_TRUE(d.borrowed());
    EXPECT_EQ(d.data(), f->contents().data() + U64At(b, 120));
    f->Close();  // the constants keep the mapping
    loaded = *r;
  }
  EXPECT_EQ(ConstantField(loaded, 0)->data().view(), std::string(1000, 'a'));
  EXPECT_EQ(ConstantField(loaded, 2)->data().view(), "xyz");
  EXPECT_TRUE(StructuralEqual(loaded, w));
  auto again = LoadModuleFile(path);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(ConstantField(*again, 1)->data().borrowed());
}

TEST(BinaryV3Test, StructureChecksumAlwaysDataChecksumOnRequest) {
  std::string b = SaveV3(Weights());
  uint64_t off = U64At(b, 120);
  std::string data_flip = b;
  data_flip[off + 5] ^= 1;
  EXPECT_TRUE(LoadBinary(data_flip).ok());  // lazy: the data is not read
  BinaryLoadOptions verify;
  verify.verify_tensor_data = true;
  auto r = LoadBinary(data_flip, verify);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tensor data checksum mismatch (bytes " +
                                      std::to_string(off) + " to "),
            std::string::npos)
      << r.status().message();
  EXPECT_FALSE(VerifyBinaryTensorData(data_flip).ok());
  EXPECT_TRUE(VerifyBinaryTensorData(b).ok());
  EXPECT_TRUE(LoadBinary(b, verify).ok());
  std::string structure_flip = b;
  structure_flip[kV3PreambleSize + 2] ^= 1;
  r = LoadBinary(structure_flip);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("checksum mismatch (bytes 32 to " + std::to_string(off)),
            std::string::npos)
      << r.status().message();
}

// A file whose structure is large enough (4 MiB) for the loader to check
// its checksum on a helper thread while it reads the records: one 5 MiB
// string, so that the records stay few.
std::string LargeStructure() {
  Expr s = StringImmNode::Make(std::string(5 << 20, 's'));
  Expr t = TupleNode::Make({s, StringImmNode::Make("tail")});
  return SaveV3(*Module::Make({FunctionNode::Make("f", {}, t->type(), SeqExprNode::Make({}, t))}));
}

// Checked beside the records or before them (one thread), the checksum is
// the error for a flipped bit, ahead of anything the records then hold.
TEST(BinaryV3Test, ALargeStructuresChecksumIsTheErrorWhereverItIsChecked) {
  const std::string b = LargeStructure();
  const uint64_t off = U64At(b, 120);
  const std::string mismatch = "checksum mismatch (bytes 32 to " + std::to_string(off) + ")";
  // The string table: records that read as before, with another string.
  std::string in_string = b;
  in_string[b.size() / 2] ^= 1;
  // The records: the node section (after the strings, types and attribute
  // sets: the section table's sizes) starts with a record's kind.
  std::string in_records = b;
  const size_t nodes = kV3PreambleSize + U64At(b, 40) + U64At(b, 56) + U64At(b, 72);
  ASSERT_LT(nodes, off);
  in_records[nodes] = static_cast<char>(0x7f);  // no such kind
  std::string resealed = in_records;
  Reseal(&resealed);
  const int before = DefaultThreads();
  for (int threads : {2, 1}) {
    SCOPED_TRACE(threads);
    SetDefaultThreads(threads);
    auto ok = LoadBinary(b);
    ASSERT_TRUE(ok.ok()) << ok.status().message();
    EXPECT_EQ(SaveV3(*ok), b);
    for (const std::string* flipped : {&in_string, &in_records}) {
      auto r = LoadBinary(*flipped);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().message(), "corrupt binary module: " + mismatch);
    }
    // The field's high 32 bits are part of it (a CRC-32C has none).
    std::string high = b;
    high[28] = 1;
    auto h = LoadBinary(high);
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.status().message(), "corrupt binary module: " + mismatch);
    // With its checksum right, the same record is its own error.
    auto r = LoadBinary(resealed);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("node 0"), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find("checksum"), std::string::npos) << r.status().message();
    // So from a file (mapped, without a copy).
    const std::string path = TempPath("large_flipped.plirb");
    std::ofstream(path, std::ios::binary) << in_records;
    auto f = LoadModuleFile(path);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find(mismatch), std::string::npos) << f.status().message();
  }
  SetDefaultThreads(before);
}

// A file in which a SeqExpr lists two adjacent ordinary blocks (PLIR never
// writes one: SeqExprNode::Make merges them, dropping both), and a later
// record names one of them again. Found by `tools/fuzz.sh binary`: the
// reader's table still named the dropped block, and the later reference
// read freed memory (AddressSanitizer: heap-use-after-free).
TEST(BinaryV3Test, ABlockThatASeqExprDropsMayBeNamedAgain) {
  std::string text = R"(
def @f(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  %a = add(%x, %x);
  dataflow {
)";
  // A dataflow block of 77 bindings: its record is kind 17, flag 1, count
  // 77, a pattern found once below.
  for (int i = 0; i < 77; ++i) text += "    %d" + std::to_string(i) + " = multiply(%a, %a);\n";
  text += "    output %d76;\n  }\n  %d76\n}\n";
  Module parsed = testing::ParseOrFail(text);
  auto* f = As<FunctionNode>(parsed.Lookup("f"));
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->body()->blocks().size(), 2u);
  const Block ordinary = f->body()->blocks()[0];
  // @g's body holds the same ordinary block (a variable bound in two items:
  // ill-formed, but the loader does not verify).
  SeqExpr g_body =
      SeqExprNode::Make({ordinary}, As<VarBindingNode>(ordinary->bindings()[0])->var());
  Module m =
      *Module::Make({parsed.items()[0], FunctionNode::Make("g", f->params(), nullptr, g_body)});
  std::string b = SaveV3(m);
  const std::string dataflow_block("\x11\x01\x4d", 3);
  const size_t at = b.find(dataflow_block, kV3PreambleSize);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(b.find(dataflow_block, at + 1), std::string::npos);
  b[at + 1] = 0;  // an ordinary block now, after the other one
  Reseal(&b);
  auto r = LoadBinary(b);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // @f's two blocks became one; @g's block is the ordinary one, whole.
  auto* lf = As<FunctionNode>(r->Lookup("f"));
  auto* lg = As<FunctionNode>(r->Lookup("g"));
  ASSERT_TRUE(lf && lg);
  ASSERT_EQ(lf->body()->blocks().size(), 1u);
  EXPECT_EQ(lf->body()->blocks()[0]->bindings().size(), 78u);
  ASSERT_EQ(lg->body()->blocks().size(), 1u);
  EXPECT_EQ(lg->body()->blocks()[0]->bindings().size(), 1u);
  EXPECT_EQ(lg->body()->blocks()[0]->bindings()[0]->var()->name_hint(), "a");
}

TEST(BinaryV3Test, OffsetsAreBoundsChecked) {
  std::string b = SaveV3(Weights());
  uint64_t off = U64At(b, 120);
  // The data entry: offset and size inconsistent with the file.
  for (auto [at, v] : std::vector<std::pair<size_t, uint64_t>>{
           {120, b.size() + 64}, {120, 0}, {120, off - 64}, {128, 1}, {128, ~0ull}, {112, ~0ull}}) {
    std::string e = b;
    PutU64(&e, at, v);
    Reseal(&e);
    auto r = LoadBinary(e);
    ASSERT_FALSE(r.ok()) << at << " " << v;
    EXPECT_NE(r.status().message().find("corrupt binary module"), std::string::npos);
  }
  // A constant pointing past the data: its record's offset varint edited.
  // The last constant's record ends with offset 1024 (varint 0x80 0x08)
  // and size 3.
  std::string e = b;
  size_t at = e.rfind(std::string("\x80\x08\x03", 3), off);
  ASSERT_NE(at, std::string::npos);
  e[at + 1] = 0x09;  // offset 1152: past the 1027 bytes
  Reseal(&e);
  auto r = LoadBinary(e);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("run past the tensor data (1027 bytes from byte " +
                                      std::to_string(off) + ")"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("(at byte "), std::string::npos);
  // The first constant's record ends with offset 0 and size 1000 (varint
  // 0xe8 0x07): offset 1 is inside the data but not aligned.
  e = b;
  at = e.find(std::string("\x00\xe8\x07", 3), 144);
  ASSERT_NE(at, std::string::npos);
  e[at] = 1;
  Reseal(&e);
  r = LoadBinary(e);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a multiple of 64"), std::string::npos)
      << r.status().message();
}

// Twelve empty functions: an item section of twelve one-byte node ids, the
// last section of a file without tensor data.
Module TwelveItems() {
  std::vector<Item> items;
  for (int i = 0; i < 12; ++i) {
    Expr t = TupleNode::Make({});
    items.push_back(
        FunctionNode::Make("f" + std::to_string(i), {}, t->type(), SeqExprNode::Make({}, t)));
  }
  return *Module::Make(std::move(items));
}
// `b` with item `i`'s id (one byte) written as the `len` bytes `bytes`; the
// section table, the data offset, the length and the checksums follow.
std::string WithItemVarint(const std::string& b, size_t i, const std::string& bytes) {
  uint64_t start = kV3PreambleSize;
  for (int s = 0; s < 4; ++s) start += U64At(b, 32 + 16 * s + 8);
  std::string e = b;
  e.replace(start + i, 1, bytes);
  size_t grow = bytes.size() - 1;
  PutU64(&e, 32 + 16 * 4 + 8, U64At(b, 32 + 16 * 4 + 8) + grow);
  PutU64(&e, 120, U64At(b, 120) + grow);
  Reseal(&e);
  return e;
}

TEST(BinaryV3Test, VarintsOfEveryLengthReadAlikeFarFromAndNearTheSectionEnd) {
  // Item 0 has 11 more bytes after it (the reader's unchecked path), item
  // 11 only its own (the byte-by-byte path, until it is 10 bytes long).
  std::string b = SaveV3(TwelveItems());
  uint64_t items_at = kV3PreambleSize;
  for (int s = 0; s < 4; ++s) items_at += U64At(b, 32 + 16 * s + 8);
  ASSERT_EQ(U64At(b, 32 + 16 * 4 + 8), 12u);
  for (size_t i : {size_t{0}, size_t{11}}) {
    uint8_t id = static_cast<uint8_t>(b[items_at + i]);
    ASSERT_LT(id, 0x80);
    for (size_t len = 2; len <= 10; ++len) {
      // The same id, padded with continuation bytes of zero bits.
      std::string v(1, static_cast<char>(id | 0x80));
      v.append(len - 2, '\x80');
      v.push_back('\0');
      auto r = LoadBinary(WithItemVarint(b, i, v));
      ASSERT_TRUE(r.ok()) << i << " " << len << ": " << r.status().message();
      EXPECT_EQ(SaveV3(*r), b) << i << " " << len;
    }
    // A 10th byte above 1, and an 11th byte: past 64 bits, at the same byte.
    std::string at = "(at byte " + std::to_string(items_at + i + 10) + ")";
    for (const std::string& tail : {std::string("\x02"), std::string("\x80\x00", 2)}) {
      std::string v(1, static_cast<char>(id | 0x80));
      v.append(8, '\x80');
      v += tail;
      auto r = LoadBinary(WithItemVarint(b, i, v));
      ASSERT_FALSE(r.ok()) << i;
      EXPECT_NE(r.status().message().find("item " + std::to_string(i) +
                                          ": varint overflows 64 bits " + at),
                std::string::npos)
          << r.status().message();
    }
  }
  // The last item's varint cut off by the section's end.
  std::string v = std::string(1, '\x81') + std::string(3, '\x80');
  auto r = LoadBinary(WithItemVarint(b, 11, v));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the record runs past the end of the item section"),
            std::string::npos)
      << r.status().message();
}

TEST(BinaryV3Test, EveryTruncationAndByteFlipIsACleanError) {
  std::string b = SaveV3(testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir")));
  std::string w = SaveV3(Weights());
  for (const std::string* f : {&b, &w}) {
    for (size_t n = 0; n < f->size(); ++n) {
      std::string cut = f->substr(0, n);
      EXPECT_FALSE(LoadBinary(cut).ok()) << n;
      Reseal(&cut);
      (void)LoadBinary(cut);  // no crash
    }
    std::mt19937_64 rng(3);
    for (int i = 0; i < 3000; ++i) {
      std::string e = *f;
      e[rng() % e.size()] ^= static_cast<char>(1 << (rng() % 8));
      if (rng() % 2) Reseal(&e);
      auto r = LoadBinary(e);
      if (r.ok()) {
        EXPECT_TRUE(LoadBinary(SaveV3(*r)).ok());
      }
    }
  }
}

}  // namespace
}  // namespace plir
