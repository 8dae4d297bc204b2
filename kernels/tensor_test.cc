// The SDK's reference kernels: exact integer arithmetic with checked
// overflow, kernels carried by ops, and the extern kernel registry.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

#include "ir/op.h"
#include "kernels/extern_kernels.h"
#include "kernels/op_kernels.h"

namespace plir {
namespace {

template <typename T>
Tensor Of(DataType dt, std::vector<T> v, std::vector<int64_t> shape = {}) {
  Tensor t;
  t.dtype = dt;
  t.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(v.size())} : shape;
  auto buf = std::make_shared<WritableTensorBytes>(std::string(v.size() * sizeof(T), '\0'));
  std::memcpy(buf->mutable_data(), v.data(), buf->size());
  t.data = buf;
  return t;
}

template <typename T>
T At(const Tensor& t, int64_t i) {
  T v;
  std::memcpy(&v, t.data->data() + i * sizeof(T), sizeof(T));
  return v;
}

// A tensor of `shape` whose bytes are random.
Tensor RandomBytes(DataType dt, std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor a;
  a.dtype = dt;
  a.shape = std::move(shape);
  std::string bytes(static_cast<size_t>(a.NumElements()) * DataTypeSize(dt), '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  a.data = std::make_shared<const TensorBytes>(std::move(bytes));
  return a;
}

StatusOr<Tensor> Permute(const Tensor& a, const std::vector<int64_t>& axes) {
  std::vector<AttrValue> ax;
  for (int64_t x : axes) ax.push_back(AttrValue::Int(x));
  return EvalOp("permute_dims", {a}, Attrs().With(Symbol("axes"), AttrValue::List(ax)));
}

TEST(TensorKernelTest, Int64ArithmeticIsExactAbove2To53) {
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable as a double
  Tensor a = Of<int64_t>(DataType::kInt64, {big, big, -big});
  Tensor b = Of<int64_t>(DataType::kInt64, {1, 2, 3});
  auto sum = EvalOp("add", {a, b}, Attrs());
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(At<int64_t>(*sum, 0), big + 1);
  EXPECT_EQ(At<int64_t>(*sum, 1), big + 2);
  EXPECT_EQ(At<int64_t>(*sum, 2), -big + 3);
  auto prod = EvalOp("multiply", {a, b}, Attrs());
  ASSERT_TRUE(prod.ok());
  EXPECT_EQ(At<int64_t>(*prod, 2), -3 * big);
  auto diff = EvalOp("subtract", {a, b}, Attrs());
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(At<int64_t>(*diff, 1), big - 2);
  EXPECT_EQ(sum->GetInt(1), big + 2);
}

TEST(TensorKernelTest, IntegerOverflowIsAnError) {
  const int64_t max64 = std::numeric_limits<int64_t>::max();
  auto r = EvalOp(
      "add", {Of<int64_t>(DataType::kInt64, {max64}), Of<int64_t>(DataType::kInt64, {1})}, Attrs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("add: int64 overflow at element 0"), std::string::npos)
      << r.status().message();
  r = EvalOp("multiply",
             {Of<int64_t>(DataType::kInt64, {max64 / 2 + 1}), Of<int64_t>(DataType::kInt64, {2})},
             Attrs());
  EXPECT_FALSE(r.ok());
  r = EvalOp("multiply",
             {Of<int32_t>(DataType::kInt32, {65536}), Of<int32_t>(DataType::kInt32, {32768})},
             Attrs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("int32 overflow"), std::string::npos);
  r = EvalOp("subtract", {Of<uint8_t>(DataType::kUInt8, {1}), Of<uint8_t>(DataType::kUInt8, {2})},
             Attrs());
  EXPECT_FALSE(r.ok());
  // INT32_MIN / -1 does not fit either.
  r = EvalOp("divide",
             {Of<int32_t>(DataType::kInt32, {std::numeric_limits<int32_t>::min()}),
              Of<int32_t>(DataType::kInt32, {-1})},
             Attrs());
  EXPECT_FALSE(r.ok());
  // In range: fine.
  r = EvalOp("multiply",
             {Of<int32_t>(DataType::kInt32, {46340}), Of<int32_t>(DataType::kInt32, {46340})},
             Attrs());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(At<int32_t>(*r, 0), 46340 * 46340);
}

TEST(TensorKernelTest, IntegerDivisionTruncatesAndRejectsZero) {
  auto r = EvalOp("divide",
                  {Of<int32_t>(DataType::kInt32, {-7, 7}), Of<int32_t>(DataType::kInt32, {2, -2})},
                  Attrs());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(At<int32_t>(*r, 0), -3);
  EXPECT_EQ(At<int32_t>(*r, 1), -3);
  r = EvalOp("divide", {Of<int32_t>(DataType::kInt32, {1}), Of<int32_t>(DataType::kInt32, {0})},
             Attrs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos);
}

TEST(TensorKernelTest, IntegerMatmulIsExactAndChecked) {
  const int64_t big = int64_t{1} << 40;
  // [big, 1] x [[big], [3]] = big^2 + 3 would overflow; use big * 1000 + 3.
  auto r = EvalOp("matmul",
                  {Of<int64_t>(DataType::kInt64, {big, 1}, {1, 2}),
                   Of<int64_t>(DataType::kInt64, {1000, 3}, {2, 1})},
                  Attrs());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(At<int64_t>(*r, 0), big * 1000 + 3);
  r = EvalOp("matmul",
             {Of<int64_t>(DataType::kInt64, {big, 1}, {1, 2}),
              Of<int64_t>(DataType::kInt64, {big, 3}, {2, 1})},
             Attrs());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("matmul: int64 overflow"), std::string::npos);
}

TEST(TensorKernelTest, PermuteCopiesBytesExactly) {
  const int64_t big = (int64_t{1} << 62) + 7;
  Tensor a = Of<int64_t>(DataType::kInt64, {big, 1, 2, 3, 4, big + 1}, {2, 3});
  auto r = EvalOp("permute_dims", {a}, Attrs());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(At<int64_t>(*r, 0), big);
  EXPECT_EQ(At<int64_t>(*r, 1), 3);
  EXPECT_EQ(At<int64_t>(*r, 5), big + 1);
}

// permute_dims against the definition, out[i] = in[the permuted index], on
// random shapes (empty and 0-d included) and permutations, for elements of
// 1, 2, 4 and 8 bytes: the copy is byte-exact.
TEST(TensorKernelTest, PermuteMatchesTheDefinition) {
  std::mt19937 rng(7);
  const DataType dtypes[] = {DataType::kInt8, DataType::kFloat16, DataType::kFloat32,
                             DataType::kInt64};
  for (int iter = 0; iter < 200; ++iter) {
    DataType dt = dtypes[iter % 4];
    size_t nd = rng() % 5;
    std::vector<int64_t> shape(nd);
    for (int64_t& d : shape) d = rng() % 5 + (iter % 17 == 0 ? 0 : 1);
    std::vector<int64_t> axes(nd);
    for (size_t i = 0; i < nd; ++i) axes[i] = static_cast<int64_t>(i);
    std::shuffle(axes.begin(), axes.end(), rng);
    Tensor a = RandomBytes(dt, shape, rng);
    size_t size = DataTypeSize(dt);
    auto r = Permute(a, axes);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->NumBytes(), a.NumBytes());
    std::vector<int64_t> in_strides(nd, 1);
    for (size_t k = nd; k-- > 1;) in_strides[k - 1] = in_strides[k] * shape[k];
    for (int64_t i = 0; i < r->NumElements(); ++i) {
      int64_t rest = i, src = 0;
      for (size_t k = nd; k-- > 0;) {
        int64_t c = rest % r->shape[k];
        rest /= r->shape[k];
        src += c * in_strides[axes[k]];
      }
      ASSERT_EQ(std::memcmp(r->data->data() + i * size, a.data->data() + src * size, size), 0)
          << "case " << iter << " element " << i;
    }
  }
}

// Batched transposes (the last two axes swapped) take 32 x 32 tiles:
// shapes across several tiles and partial ones, 4- and 8-byte elements.
TEST(TensorKernelTest, PermuteTransposeTiles) {
  std::mt19937 rng(11);
  const std::vector<std::vector<int64_t>> shapes = {{70, 45},    {32, 64},       {1, 97},
                                                    {3, 33, 65}, {2, 1, 40, 31}, {5, 2, 1000}};
  for (DataType dt : {DataType::kFloat32, DataType::kInt64})
    for (const auto& shape : shapes) {
      size_t nd = shape.size();
      Tensor a = RandomBytes(dt, shape, rng);
      size_t size = DataTypeSize(dt);
      std::vector<int64_t> axes(nd);  // the last two swapped
      for (size_t i = 0; i < nd; ++i) axes[i] = static_cast<int64_t>(i);
      std::swap(axes[nd - 2], axes[nd - 1]);
      auto r = Permute(a, axes);
      ASSERT_TRUE(r.ok()) << r.status().message();
      int64_t rows = shape[nd - 2], cols = shape[nd - 1];
      ASSERT_EQ(r->shape[nd - 2], cols);
      ASSERT_EQ(r->shape[nd - 1], rows);
      for (int64_t i = 0; i < r->NumElements(); ++i) {
        int64_t b = i / (rows * cols), c = (i / rows) % cols, j = i % rows;
        int64_t src = b * rows * cols + j * cols + c;
        ASSERT_EQ(std::memcmp(r->data->data() + i * size, a.data->data() + src * size, size), 0)
            << "shape " << shape.size() << "-D element " << i;
      }
    }
}

TEST(TensorKernelTest, FloatKernelsStillRoundOnce) {
  auto r = EvalOp(
      "add", {Of<float>(DataType::kFloat32, {0.5f, 1.25f}), Of<float>(DataType::kFloat32, {0.25f})},
      Attrs());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(At<float>(*r, 0), 0.75f);
  EXPECT_EQ(At<float>(*r, 1), 1.5f);
}

// Shape values are 1-D int64 tensors in kernels; take, expand_dims and
// concat copy bytes.
TEST(TensorKernelTest, ShapeTakeExpandConcat) {
  Tensor x = Of<int32_t>(DataType::kInt32, {0, 1, 2, 3, 4, 5}, {2, 3});
  auto s = EvalOp("shape_of", {x}, Attrs());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dtype, DataType::kInt64);
  EXPECT_EQ(s->GetInt(0), 2);
  EXPECT_EQ(s->GetInt(1), 3);
  auto r = EvalOp("reshape", {x, Of<int64_t>(DataType::kInt64, {3, 2})}, Attrs());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_FALSE(EvalOp("reshape", {x, Of<int64_t>(DataType::kInt64, {4, 2})}, Attrs()).ok());
  Attrs axis1 = *Attrs::Make({{Symbol("axis"), AttrValue::Int(1)}});
  auto t = EvalOp("take", {x, Of<int64_t>(DataType::kInt64, {2, -3})}, axis1);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((std::vector<int32_t>{At<int32_t>(*t, 0), At<int32_t>(*t, 1), At<int32_t>(*t, 2),
                                  At<int32_t>(*t, 3)}),
            (std::vector<int32_t>{2, 0, 5, 3}));
  EXPECT_FALSE(EvalOp("take", {x, Of<int64_t>(DataType::kInt64, {3})}, axis1).ok());
  auto flat = EvalOp("take", {x, Of<int64_t>(DataType::kInt64, {4})}, Attrs());
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(At<int32_t>(*flat, 0), 4);
  Attrs axes =
      *Attrs::Make({{Symbol("axis"), AttrValue::List({AttrValue::Int(0), AttrValue::Int(-1)})}});
  auto e = EvalOp("expand_dims", {x}, axes);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->shape, (std::vector<int64_t>{1, 2, 3, 1}));
  auto c = EvalOp("concat", {x, Of<int32_t>(DataType::kInt32, {6, 7}, {2, 1})}, axis1);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->shape, (std::vector<int64_t>{2, 4}));
  std::vector<int32_t> got;
  for (int i = 0; i < 8; ++i) got.push_back(At<int32_t>(*c, i));
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 6, 3, 4, 5, 7}));
  EXPECT_FALSE(EvalOp("concat", {x, Of<int32_t>(DataType::kInt32, {6, 7})}, axis1).ok());
}

TEST(TensorKernelTest, EveryKernelNamesACoreOp) {
  for (const char* name : {"add", "subtract", "multiply", "divide", "nn.relu", "nn.softmax",
                           "matmul", "reshape", "permute_dims", "nn.conv2d"}) {
    EXPECT_TRUE(OpKernelTable::Global().Lookup(name)) << name;
    EXPECT_TRUE(FindOpKernel(*OpRegistry::Global().Lookup(name))) << name;
    // The definition carries no kernel: the IR core links no computation.
    EXPECT_FALSE(OpRegistry::Global().Lookup(name)->def().eval) << name;
  }
  EXPECT_FALSE(OpKernelTable::Global().Lookup("call_tir"));
  EXPECT_TRUE(OpKernelTable::Global().Lookup("matmul")->work);
  // Registering twice is refused; a kernel without eval too.
  EXPECT_EQ(OpKernelTable::Global()
                .Register("add", OpKernel{OpKernelTable::Global().Lookup("add")->eval, nullptr})
                .code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(OpKernelTable::Global().Register("x", OpKernel{}).code(), StatusCode::kInvalidArgument);
  auto r = EvalOp("call_tir", {}, Attrs());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  r = EvalOp("no.such.op", {}, Attrs());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  // Malformed tensors are refused, not read out of bounds.
  Tensor bad = Of<float>(DataType::kFloat32, {1.0f}, {4});
  EXPECT_FALSE(EvalOp("nn.relu", {bad}, Attrs()).ok());
  EXPECT_FALSE(EvalOp("add", {bad}, Attrs()).ok());
}

TEST(TensorKernelTest, ExternKernelRegistry) {
  auto builtin = KernelRegistry::Global().Lookup("transform_layout_IOHW_to_OIHW");
  ASSERT_TRUE(builtin);
  Tensor w = MakeTensor(DataType::kFloat32, {2, 3, 1, 1},
                        [](int64_t i) { return static_cast<double>(i); });
  auto r = builtin->fn({w}, Type());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape, (std::vector<int64_t>{3, 2, 1, 1}));
  EXPECT_EQ(r->GetDouble(1), 3);  // out[0][1] = in[1][0]
  EXPECT_FALSE(builtin->fn({w, w}, Type()).ok());

  KernelRegistry reg;
  ExternKernelDef d;
  d.name = "k";
  d.origin = "A";
  d.fn = [](const std::vector<Tensor>& in, const Type&) -> StatusOr<Tensor> { return in.at(0); };
  ASSERT_TRUE(reg.Register(d).ok());
  d.origin = "B";
  Status s = reg.Register(d);
  ASSERT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("from B is already registered by A"), std::string::npos)
      << s.message();
  d.name = "nofn";
  d.fn = nullptr;
  EXPECT_EQ(reg.Register(d).code(), StatusCode::kInvalidArgument);
  // A kernel with only a tuple result (several outputs) is a kernel.
  d.name = "tuple_only";
  d.tuple_fn = [](const std::vector<Tensor>& in, const Type&) -> StatusOr<std::vector<Tensor>> {
    return in;
  };
  EXPECT_TRUE(reg.Register(d).ok());
  EXPECT_EQ(reg.Names(), (std::vector<std::string>{"k", "tuple_only"}));
}

TEST(TensorKernelTest, MakeIntTensorChecksRange) {
  auto ok = MakeIntTensor(DataType::kInt16, {2}, [](int64_t i) { return i ? -32768 : 32767; });
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(At<int16_t>(*ok, 1), -32768);
  EXPECT_FALSE(MakeIntTensor(DataType::kInt16, {1}, [](int64_t) { return 32768; }).ok());
  EXPECT_FALSE(MakeIntTensor(DataType::kFloat32, {1}, [](int64_t) { return 1; }).ok());
}

// A buffer for overwrite has exactly the size asked for (libstdc++ 12 hands
// resize_and_overwrite's callback the capacity), and an installed allocator
// is told which kind is wanted.
TEST(TensorTest, BuffersForOverwrite) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{24}, size_t{1} << 20}) {
    EXPECT_EQ(AllocateTensorBufferForOverwrite(n)->size(), n);
    std::shared_ptr<WritableTensorBytes> z = AllocateTensorBuffer(n);
    EXPECT_EQ(z->size(), n);
    EXPECT_EQ(z->view().find_first_not_of('\0'), std::string::npos);
  }
  std::vector<bool> asked;
  TensorAllocator alloc = [&](size_t bytes, bool zero) {
    asked.push_back(zero);
    return std::make_shared<WritableTensorBytes>(std::string(bytes, '\0'));
  };
  const TensorAllocator* prev = SetThreadTensorAllocator(&alloc);
  AllocateTensorBuffer(8);
  AllocateTensorBufferForOverwrite(8);
  SetThreadTensorAllocator(prev);
  EXPECT_EQ(asked, (std::vector<bool>{true, false}));
}

// The VmFlags of the mapping that holds `p`, from /proc/self/smaps ("" if
// none is found).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    // A mapping's header line ("lo-hi perms ..."); no field line parses so.
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      inside = at >= lo && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// With huge pages on (plir-run's setting, under its fixed mmap threshold),
// large tensor buffers, zeroed or not, are advised for transparent huge
// pages before their first touch (kernels/internal/uninitialized.h); small
// ones, which malloc serves from its heap, are left alone, and so is every
// buffer with the setting off (the default). The advice shows as the "hg"
// flag of the mapping (proc(5)), whatever the kernel's THP setting.
TEST(TensorTest, LargeBuffersAreAdvisedForHugePages) {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // as plir-run: large blocks are mappings
  {
    std::shared_ptr<WritableTensorBytes> off = AllocateTensorBufferForOverwrite(size_t{6} << 20);
    EXPECT_EQ(VmFlagsOf(off->data()).find(" hg"), std::string::npos);
  }
  SetHugePageTensorBuffers(true);
  for (bool zero : {false, true}) {
    const size_t n = size_t{6} << 20;
    std::shared_ptr<WritableTensorBytes> big =
        zero ? AllocateTensorBuffer(n) : AllocateTensorBufferForOverwrite(n);
    ASSERT_EQ(big->size(), n);
    const std::string flags = VmFlagsOf(big->data());
    ASSERT_FALSE(flags.empty()) << "no mapping holds the buffer";
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
    EXPECT_NE(VmFlagsOf(big->data() + n - 1).find(" hg"), std::string::npos);
    if (zero) EXPECT_EQ(big->view().find_first_not_of('\0'), std::string::npos);
  }
  std::shared_ptr<WritableTensorBytes> small = AllocateTensorBufferForOverwrite(4096);
  EXPECT_EQ(VmFlagsOf(small->data()).find(" hg"), std::string::npos);
  SetHugePageTensorBuffers(false);
}

}  // namespace
}  // namespace plir
