#include "interpreter/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace plir {
namespace {

std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A file with header `json` (as is) and `data_bytes` bytes of data.
std::string File(const std::string& json, size_t data_bytes, uint64_t len_override = 0) {
  uint64_t n = len_override ? len_override : json.size();
  std::string s(8, '\0');
  std::memcpy(&s[0], &n, 8);
  return s + json + std::string(data_bytes, '\x01');
}

Tensor Iota(DataType dt, std::vector<int64_t> shape) {
  return MakeTensor(dt, std::move(shape), [](int64_t i) { return static_cast<double>(i); });
}

TEST(SafetensorsTest, WritesAndReadsBack) {
  std::string path = TmpPath("rt.safetensors");
  Tensor a = Iota(DataType::kFloat32, {2, 3});
  Tensor b = Iota(DataType::kInt64, {4});
  Tensor c = Iota(DataType::kBFloat16, {3});
  Tensor d = Iota(DataType::kUInt8, {0, 5});  // empty
  ASSERT_TRUE(WriteSafetensors(path, {{"w.a", a}, {"b\"quoted\"", b}, {"c", c}, {"d", d}}).ok());
  std::string bytes = Slurp(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);  // data 8-byte aligned
  EXPECT_EQ(bytes.substr(8, 8), "{\"w.a\":{");
  auto r = SafetensorsReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& e = (*r)->entries();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].name, "w.a");
  EXPECT_EQ(e[1].name, "b\"quoted\"");
  EXPECT_EQ(e[1].dtype, DataType::kInt64);
  EXPECT_EQ(e[1].shape, (std::vector<int64_t>{4}));
  for (size_t i = 0; i < 4; ++i) {
    auto t = (*r)->Read(i);
    ASSERT_TRUE(t.ok());
    const Tensor& want = i == 0 ? a : i == 1 ? b : i == 2 ? c : d;
    EXPECT_EQ(t->dtype, want.dtype);
    EXPECT_EQ(t->shape, want.shape);
    EXPECT_EQ(*t->data, *want.data);
  }
  EXPECT_FALSE((*r)->Read(4).ok());
}

// ReadMapped views large, aligned tensors in the file's mapping; small ones
// and ones whose offset breaks the dtype's alignment are copies, as Read's.
TEST(SafetensorsTest, ReadMappedViewsLargeAlignedTensorsInPlace) {
  std::string path = TmpPath("mapped.safetensors");
  const int64_t big = SafetensorsReader::kMapBytes / 4 + 1000;  // floats, not a page multiple
  Tensor odd = Iota(DataType::kUInt8, {3});                     // shifts what follows by 3
  Tensor a = Iota(DataType::kFloat32, {big});
  Tensor small = Iota(DataType::kFloat32, {7});
  Tensor b = Iota(DataType::kUInt8, {static_cast<int64_t>(SafetensorsReader::kMapBytes) + 5});
  ASSERT_TRUE(
      WriteSafetensors(path, {{"a", a}, {"small", small}, {"odd", odd}, {"c", a}, {"b", b}}).ok());
  std::string before = Slurp(path);
  auto r = SafetensorsReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (size_t i = 0; i < (*r)->entries().size(); ++i) {
    const SafetensorsEntry& e = (*r)->entries()[i];
    auto copy = (*r)->Read(i);
    auto mapped = (*r)->ReadMapped(i);
    ASSERT_TRUE(copy.ok() && mapped.ok()) << e.name;
    EXPECT_EQ(*mapped->data, *copy->data) << e.name;
    EXPECT_EQ(mapped->shape, copy->shape);
    EXPECT_EQ(mapped->dtype, copy->dtype);
    EXPECT_FALSE(copy->data->borrowed());
    const uint64_t offset = (*r)->header().data_start + e.begin;
    const bool aligned = offset % DataTypeSize(e.dtype) == 0;
    EXPECT_EQ(mapped->data->borrowed(), e.size() >= SafetensorsReader::kMapBytes && aligned)
        << e.name << " at " << offset;
    if (mapped->data->borrowed()) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped->data->data()) % DataTypeSize(e.dtype), 0u);
    }
  }
  // "a" comes first (aligned) and "b" is bytes: both mapped; "c", floats
  // 3 bytes off after "odd", is a copy.
  EXPECT_TRUE((*r)->ReadMapped(0)->data->borrowed());
  EXPECT_FALSE((*r)->ReadMapped(3)->data->borrowed());
  EXPECT_TRUE((*r)->ReadMapped(4)->data->borrowed());
  EXPECT_FALSE((*r)->ReadMapped(5).ok());
  // The mapping outlives the reader, and the file is not changed.
  auto keep = (*r)->ReadMapped(0);
  r->reset();
  EXPECT_EQ(*keep->data, *a.data);
  EXPECT_EQ(Slurp(path), before);
}

TEST(SafetensorsTest, BytesDoNotDependOnArrivalOrder) {
  std::string p1 = TmpPath("o1.safetensors"), p2 = TmpPath("o2.safetensors");
  Tensor x = Iota(DataType::kFloat32, {5}), y = Iota(DataType::kFloat16, {2, 2});
  auto w1 = SafetensorsWriter::Create(p1);
  ASSERT_TRUE(w1.ok());
  ASSERT_TRUE((*w1)->Add(0, "0", x).ok());
  ASSERT_TRUE((*w1)->Add(1, "1", y).ok());
  ASSERT_TRUE((*w1)->Finish().ok());
  auto w2 = SafetensorsWriter::Create(p2);
  ASSERT_TRUE(w2.ok());
  ASSERT_TRUE((*w2)->Add(1, "1", y).ok());
  ASSERT_TRUE((*w2)->Add(0, "0", x).ok());
  EXPECT_FALSE((*w2)->Add(0, "again", x).ok());  // duplicate index
  EXPECT_FALSE((*w2)->Add(5, "1", x).ok());      // duplicate name
  ASSERT_TRUE((*w2)->Finish().ok());
  EXPECT_EQ(Slurp(p1), Slurp(p2));
}

// plir-run's sandboxed child spools in memory and hands the bytes over:
// the same bytes as the file, and no file made anywhere.
TEST(SafetensorsTest, InMemoryWriterHandsOverTheFileBytes) {
  std::string p = TmpPath("file.safetensors");
  Tensor x = Iota(DataType::kFloat32, {5}), y = Iota(DataType::kInt64, {3, 2});
  auto w1 = SafetensorsWriter::Create(p);
  ASSERT_TRUE(w1.ok());
  ASSERT_TRUE((*w1)->Add(0, "x", x).ok());
  ASSERT_TRUE((*w1)->Add(1, "y", y).ok());
  ASSERT_TRUE((*w1)->Finish().ok());
  std::string never = TmpPath("never-made.safetensors");
  auto w2 = SafetensorsWriter::CreateInMemory(never);
  ASSERT_TRUE(w2.ok()) << w2.status().message();
  ASSERT_TRUE((*w2)->Add(1, "y", y).ok());
  ASSERT_TRUE((*w2)->Add(0, "x", x).ok());
  EXPECT_EQ((*w2)->spooled_bytes(), x.NumBytes() + y.NumBytes());
  std::string bytes;
  ASSERT_TRUE((*w2)
                  ->FinishTo([&](std::string_view d) {
                    bytes.append(d);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(bytes, Slurp(p));
  EXPECT_TRUE(ParseSafetensors(bytes, "handed over").ok());
  EXPECT_NE(access(never.c_str(), F_OK), 0);
  EXPECT_FALSE((*w2)->FinishTo([](std::string_view) { return Status::Ok(); }).ok());
  // A failing sink fails the writer, naming the file.
  auto w3 = SafetensorsWriter::CreateInMemory("out.safetensors");
  ASSERT_TRUE(w3.ok());
  ASSERT_TRUE((*w3)->Add(0, "x", x).ok());
  Status s = (*w3)->FinishTo([](std::string_view) { return Internal("disk full"); });
  EXPECT_NE(s.message().find("out.safetensors: write failed: disk full"), std::string::npos)
      << s.message();
}

TEST(SafetensorsTest, UnfinishedWriterLeavesNoFile) {
  std::string p = TmpPath("never.safetensors");
  unlink(p.c_str());
  {
    auto w = SafetensorsWriter::Create(p);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add(0, "0", Iota(DataType::kFloat32, {3})).ok());
  }
  EXPECT_NE(access(p.c_str(), F_OK), 0);
}

TEST(SafetensorsTest, ParsesMetadataAndOrdersByOffset) {
  std::string json =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
      R"("a":{"dtype":"I32","shape":[],"data_offsets":[0,4]}})";
  auto h = ParseSafetensors(File(json, 8), "m.safetensors");
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->entries.size(), 2u);
  EXPECT_EQ(h->entries[0].name, "a");  // file order: by data offset
  EXPECT_EQ(h->Find("b"), 1);
  ASSERT_EQ(h->metadata.size(), 1u);
  EXPECT_EQ(h->metadata[0].second, "pt");
}

struct Bad {
  std::string bytes;
  std::string error;
};

TEST(SafetensorsTest, RejectsMalformedFilesWithClearErrors) {
  const std::string ok_entry = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::vector<Bad> cases = {
      {std::string("\x05\x00\x00", 3), "m.safetensors: truncated: 3 bytes"},
      {File(ok_entry, 8, 4096), "header length 4096 runs past the end of the file"},
      {File(ok_entry, 8, uint64_t{1} << 40), "is absurd"},
      {File("[1, 2]", 0), "the header is not a JSON object"},
      {File("{\"a\": ", 0), "not valid JSON"},
      {File("{}  x", 0), "m.safetensors:"},
      {File(R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", 2),
       "tensor 'a': unknown or unsupported dtype 'F8_E4M3'"},
      {File(
           R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
           2),
       "tensor 'a' appears twice"},
      {File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4),
       "tensor 'a': data_offsets [0, 8] run past the end of the data (4 bytes)"},
      {File(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8),
       "tensor 'b': data_offsets [4, 8] overlap tensor 'a' [0, 8]"},
      {File(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
       "bytes 0 to 4 of the data belong to no tensor"},
      {File(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
       "tensor 'a': float32 of this shape needs 12 bytes, but data_offsets span 8"},
      {File(ok_entry, 12), "the data section has 4 bytes after the last tensor"},
      {File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), "run backwards"},
      {File(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
       "tensor 'a': 'shape' holds"},
      {File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8), "must be [begin, end]"},
      {File(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "tensor 'a': no 'data_offsets'"},
      {File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8),
       "unknown field 'x'"},
      {File(R"({"a":[1]})", 0), "tensor 'a': the entry is not a JSON object"},
      {File(R"({"__metadata__":{"k":1}})", 0), "__metadata__: the value of 'k' is not a string"},
      {File(
           R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})",
           8),
       "shape is too large"},
  };
  for (const Bad& b : cases) {
    auto h = ParseSafetensors(b.bytes, "m.safetensors");
    ASSERT_FALSE(h.ok()) << b.error;
    EXPECT_NE(h.status().message().find(b.error), std::string::npos)
        << "want: " << b.error << "\ngot:  " << h.status().message();
  }
}

TEST(SafetensorsTest, ReaderRejectsTheSameFilesFromDisk) {
  std::string p = TmpPath("bad.safetensors");
  std::ofstream(p, std::ios::binary)
      << File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4);
  auto r = SafetensorsReader::Open(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(p + ": tensor 'a': data_offsets"), std::string::npos)
      << r.status().message();
  std::ofstream(p, std::ios::binary | std::ios::trunc) << "abc";
  r = SafetensorsReader::Open(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos);
  EXPECT_EQ(SafetensorsReader::Open(TmpPath("missing.safetensors")).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace plir
