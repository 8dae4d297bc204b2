// JSON and binary round trips: structural equality, variable identity and
// sharing preserved, versioned headers, clean errors; binary version 1 files
// still load; the checksum is the published FNV-1a-64; files load mapped.
#include "ir/serialize/serialize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "ir/op.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/page_releaser.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "testing/ir_test_util.h"
#include "testing/random_module.h"

namespace plir {
namespace {

using Saver = std::string (*)(const Module&);
using Loader = StatusOr<Module> (*)(std::string_view);

// Version 2, still written on request (version 3: ir/binary_v3_test.cc).
std::string SaveV2(const Module& m) {
  BinarySaveOptions o;
  o.version = 2;
  return SaveBinary(m, o);
}

class SerializeTest : public ::testing::TestWithParam<std::pair<Saver, Loader>> {
 protected:
  Module RoundTrip(const Module& m) {
    auto r = GetParam().second(GetParam().first(m));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : Module();
  }
};

TEST_P(SerializeTest, SpecExamplesRoundTrip) {
  for (const auto& f : testing::ListTestFiles("examples/spec", ".plir")) {
    Module m = testing::ParseOrFail(testing::ReadTestFile(f));
    Module back = RoundTrip(m);
    auto mm = FindFirstMismatch(m, back);
    EXPECT_FALSE(mm) << f << ": " << mm->ToString();
    EXPECT_TRUE(PrintModule(m) == PrintModule(back)) << f;
    EXPECT_TRUE(Verify(back).ok());
  }
}

// The ops added for TVM's tests (match_cast binds symbolic dimensions).
TEST_P(SerializeTest, MatchCastRoundTrips) {
  Module m = testing::ParseOrFail(R"(
def @f(%x: Tensor[ndim=2, float32]) -> Tensor[(m, n), float32] {
  dataflow {
    %y = match_cast(%x, sinfo_args=[Tensor[(m, n), float32]]);
    %z = nn.relu(%y);
    output %z;
  }
  %z
})");
  Module back = RoundTrip(m);
  auto mm = FindFirstMismatch(m, back);
  EXPECT_FALSE(mm) << mm->ToString();
  EXPECT_EQ(PrintModule(m), PrintModule(back));
  EXPECT_TRUE(Verify(back).ok()) << Verify(back).message();
}

// Function-typed values: Callable parameters (pure and impure), local
// functions capturing enclosing variables, calls of variables.
TEST_P(SerializeTest, CallablesAndLocalFunctionsRoundTrip) {
  Module m = testing::ParseOrFail(R"(
def @f(%x: Tensor[(2,), float32], %cb: Callable[(Prim[int64], Object), (), pure=false], %g: Callable[(), Object]) -> Tensor[(2,), float32] {
  dataflow {
    %inner = fn(%y: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %a = add(%y, %x);
      %a
    };
    %z = %inner(%x);
    output %inner, %z;
  }
  %u = %cb(0, %z);
  %o = %g();
  %z
})");
  Module back = RoundTrip(m);
  auto mm = FindFirstMismatch(m, back);
  EXPECT_FALSE(mm) << mm->ToString();
  EXPECT_EQ(StructuralHash(m), StructuralHash(back));
  EXPECT_EQ(PrintModule(m), PrintModule(back));
  EXPECT_TRUE(Verify(back).ok()) << Verify(back).message();
  // Purity survives: the impure Callable stays impure.
  EXPECT_NE(PrintModule(back).find("pure=false"), std::string::npos);
}

// Shape values (`shape[(...)]`, Relax's ShapeExpr) and the shape ops:
// text -> module -> JSON/binary -> module is equal, and prints the same.
TEST_P(SerializeTest, ShapeValuesRoundTrip) {
  Module m = testing::ParseOrFail(R"(
def @f(%x: Tensor[(n, 4), float32], %s: Shape[(n,)]) -> (Shape[(n, 4)], Tensor[ndim=2, float32], Shape[()]) {
  dataflow {
    %a = shape_of(%x);
    %t = shape_to_tensor(shape[(n, 4)]);
    %b = tensor_to_shape(%t);
    %y = reshape(%x, shape[(4, n)]);
    %z = reshape(%y, %b);
    %e = shape[()];
    %gv = (%a, %z, %e);
    output %gv;
  }
  %gv
})");
  Module back = RoundTrip(m);
  auto mm = FindFirstMismatch(m, back);
  EXPECT_FALSE(mm) << mm->ToString();
  EXPECT_EQ(PrintModule(m), PrintModule(back));
  EXPECT_TRUE(Verify(back).ok()) << Verify(back).message();
  // A different value is a mismatch.
  Module other = testing::ParseOrFail(R"(
def @f(%x: Tensor[(n, 4), float32], %s: Shape[(n,)]) -> (Shape[(n, 4)], Tensor[ndim=2, float32], Shape[()]) {
  dataflow {
    %a = shape_of(%x);
    %t = shape_to_tensor(shape[(n, 5)]);
    %b = tensor_to_shape(%t);
    %y = reshape(%x, shape[(4, n)]);
    %z = reshape(%y, %b);
    %e = shape[()];
    %gv = (%a, %z, %e);
    output %gv;
  }
  %gv
})");
  EXPECT_TRUE(FindFirstMismatch(m, other));
}

// Dimension expressions, Prim types with a value and symbolic values
// (`prim[...]`) survive every format.
TEST_P(SerializeTest, SymbolicValuesRoundTrip) {
  Module m = testing::ParseOrFail(R"(
def @f(%r: Prim[int64, value=r], %x: Tensor[(16, n), float32], %p: Prim[int64, value=4]) {
  %a: Tensor[((r + 1) * 8 - r, n), float32] = call_packed("g", %x, sinfo_args=[Tensor[((r + 1) * 8 - r, n), float32]]);
  %b = strided_slice(%x, (1,), (prim[r * 8],), (prim[r * 8 + n],), assume_inbound=true);
  %c = concat((%x, %x), axis=1);
  %s = shape[(n * 2, r + 1)];
  (%a, %b, %c, %s, prim[n - 1])
})");
  Module back = RoundTrip(m);
  auto mm = FindFirstMismatch(m, back);
  EXPECT_FALSE(mm) << mm->ToString();
  EXPECT_EQ(PrintModule(m), PrintModule(back));
  EXPECT_TRUE(Verify(back).ok()) << Verify(back).message();
  Module other = testing::ParseOrFail(R"(
def @f(%r: Prim[int64, value=r], %x: Tensor[(16, n), float32], %p: Prim[int64, value=4]) {
  %a: Tensor[((r + 1) * 8 - r, n), float32] = call_packed("g", %x, sinfo_args=[Tensor[((r + 1) * 8 - r, n), float32]]);
  %b = strided_slice(%x, (1,), (prim[r * 8],), (prim[r * 8 + n],), assume_inbound=true);
  %c = concat((%x, %x), axis=1);
  %s = shape[(n * 2, r + 1)];
  (%a, %b, %c, %s, prim[n - 2])
})");
  EXPECT_TRUE(FindFirstMismatch(m, other));
}

TEST_P(SerializeTest, RandomModulesRoundTrip) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    testing::RandomModuleOptions o;
    o.seed = seed;
    o.num_bindings = 400;
    o.local_functions = seed > 6;  // with closures and calls of them
    Module m = testing::GenerateRandomModule(o);
    if (o.local_functions) {
      std::string text = PrintModule(m);
      EXPECT_NE(text.find("= fn("), std::string::npos)
          << "seed " << seed << " made no local function";
      EXPECT_NE(text.find("Callable["), std::string::npos);
    }
    Module back = RoundTrip(m);
    auto mm = FindFirstMismatch(m, back);
    EXPECT_FALSE(mm) << "seed " << seed << ": " << mm->ToString();
    EXPECT_EQ(StructuralHash(m), StructuralHash(back));
    EXPECT_TRUE(PrintModule(m) == PrintModule(back)) << "printed forms differ, seed " << seed;
  }
}

TEST_P(SerializeTest, SharingAndVariableIdentityArePreserved) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t);
  Expr shared = *MakeOpCall("add", {x, x});  // one node used twice
  Var a = VarNode::Make("a", t);
  Expr pair = TupleNode::Make({shared, shared});
  Function f = FunctionNode::Make(
      "f", {x}, nullptr,
      SeqExprNode::Make({BindingBlockNode::Make({VarBindingNode::Make(a, shared)}, false)}, pair));
  Module back = RoundTrip(*Module::Make({f}));
  Function g = back.LookupFunction("f");
  ASSERT_TRUE(g);
  auto* tuple = As<TupleNode>(g->body()->result());
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->fields()[0].get(), tuple->fields()[1].get());  // shared again
  EXPECT_EQ(g->body()->blocks()[0]->bindings()[0]->value().get(), tuple->fields()[0].get());
  auto* call = As<CallNode>(tuple->fields()[0]);
  EXPECT_EQ(call->args()[0].get(), g->params()[0].get());  // the same variable
  EXPECT_EQ(call->args()[1].get(), g->params()[0].get());
}

// Binary version 1 files are written by the retained version 1 writer.
// Structured attributes: lists of strings, nested lists, nested maps (keys
// that need quoting, types inside), on functions and on calls.
constexpr char kStructuredAttrs[] = R"(
def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] attrs {config = {layers = [{name = "a", sizes = [1, 2]}, {name = "b", sizes = []}], "odd key" = true, types = {in = Tensor[(2,), float32]}}, names = ["x", "y z", ""], nested = [[1, 2], [], [[3.5]]]} {
  %y = test.structured(%x, opts={mode = "fast", empty = {}}, tags=["a", "b"]);
  %y
}
)";

// An op whose schema takes a map and a list of strings.
void RegisterStructuredOp() {
  static bool done = [] {
    OpDef d;
    d.name = "test.structured";
    d.min_args = d.max_args = 1;
    d.attrs = {{"opts", AttrKind::kMap, true, std::nullopt},
               {"tags", AttrKind::kStringList, false, std::nullopt}};
    d.infer = [](ExprSpan args, const Attrs&, TypeSpan) -> StatusOr<Type> {
      return args[0]->type();
    };
    d.origin = "serialize_test";
    return OpRegistry::Global().Register(std::move(d)).ok();
  }();
  ASSERT_TRUE(done);
}

TEST_P(SerializeTest, StructuredAttributesRoundTrip) {
  RegisterStructuredOp();
  Module m = testing::ParseOrFail(kStructuredAttrs);
  Module back = RoundTrip(m);
  auto mm = FindFirstMismatch(m, back);
  EXPECT_FALSE(mm) << mm->ToString();
  EXPECT_EQ(StructuralHash(m), StructuralHash(back));
  EXPECT_EQ(PrintModule(m), PrintModule(back));
  const AttrValue* config = back.LookupFunction("main")->attrs().Get("config");
  ASSERT_TRUE(config);
  ASSERT_EQ(config->kind(), AttrValue::Kind::kMap);
  const AttrValue* layers = config->Find("layers");
  ASSERT_TRUE(layers && layers->kind() == AttrValue::Kind::kList);
  EXPECT_EQ(layers->as_list()[1].Find("name")->as_string(), "b");
  EXPECT_TRUE(config->Find("odd key")->as_bool());
  EXPECT_EQ(config->Find("types")->Find("in")->kind(), AttrValue::Kind::kType);
  std::vector<std::string> names;
  EXPECT_TRUE(back.LookupFunction("main")->attrs().Get("names")->GetStringList(&names));
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y z", ""}));
  // A changed leaf deep inside is a structural difference.
  std::string text = kStructuredAttrs;
  text.replace(text.find("sizes = []"), 10, "sizes = [0]");
  Module other = testing::ParseOrFail(text);
  EXPECT_TRUE(FindFirstMismatch(m, other));
  EXPECT_NE(StructuralHash(m), StructuralHash(other));
  // The op's schema checks the kinds: a list where the map belongs fails.
  std::string wrong = kStructuredAttrs;
  wrong.replace(wrong.find("opts={mode"), 10, "opts=[1], x={mode");
  EXPECT_FALSE(ParseModule(wrong).ok());
  std::string wrong_tags = kStructuredAttrs;
  wrong_tags.replace(wrong_tags.find("tags=[\"a\""), 9, "tags=[1");
  auto r = ParseModule(wrong_tags);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("must be list of strings"), std::string::npos)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(Formats, SerializeTest,
                         ::testing::Values(std::pair<Saver, Loader>{&SaveJson, &LoadJson},
                                           std::pair<Saver, Loader>{&SaveBinary, &LoadBinary},
                                           std::pair<Saver, Loader>{&SaveV2, &LoadBinary},
                                           std::pair<Saver, Loader>{&internal::SaveBinaryV1,
                                                                    &LoadBinary}));

// Published FNV-1a 64-bit test vectors (the FNV reference test suite).
// An ill-formed module whose variable is bound in two functions: the binary
// writer keeps variables per item for speed, and must notice the sharing.
TEST_P(SerializeTest, AVariableSharedByTwoFunctionsStaysOneVariable) {
  Type t = TensorTypeNode::Make({Dim::Const(2)}, DataType::kFloat32);
  Var x = VarNode::Make("x", t);
  Var y = VarNode::Make("y", t);
  Var a = VarNode::Make("a", t);
  auto body = [&](const Var& p) {
    return SeqExprNode::Make(
        {BindingBlockNode::Make({VarBindingNode::Make(a, *MakeOpCall("add", {p, p}))}, false)}, a);
  };
  Module m = *Module::Make({FunctionNode::Make("f", {x}, nullptr, body(x)),
                            FunctionNode::Make("g", {y}, nullptr, body(y))});
  Module back = RoundTrip(m);
  auto bound = [](const Module& mod, const char* name) {
    return mod.LookupFunction(name)->body()->blocks()[0]->bindings()[0]->var().get();
  };
  EXPECT_EQ(bound(back, "f"), bound(back, "g"));
  EXPECT_NE(bound(back, "f"), bound(m, "f"));
}

// The parsed text's pages go back in long runs: what 1,000 items report,
// in any order and from two threads, is released in few calls that cover
// every reported byte once, none before its run is long (or the end).
TEST(TextPageReleaserTest, ReleasesEveryReportedRangeOnceInLongRuns) {
  using internal::TextPageReleaser;
  constexpr size_t kItem = 50000, kHeader = 200, kItems = 1000;
  for (int order = 0; order < 3; ++order) {
    std::mutex mu;
    std::vector<std::pair<size_t, size_t>> released;
    bool at_end = false;
    size_t short_before_end = 0;
    TextPageReleaser releaser([&](size_t b, size_t e) {
      std::lock_guard<std::mutex> lock(mu);
      released.emplace_back(b, e);
      if (!at_end && e - b < TextPageReleaser::kRun) ++short_before_end;
    });
    std::vector<size_t> items(kItems);
    for (size_t i = 0; i < kItems; ++i) items[i] = i;
    if (order == 1) std::reverse(items.begin(), items.end());
    if (order == 2)  // roughly in order: swaps within windows of 8
      for (size_t i = 0; i + 8 <= kItems; i += 8)
        std::reverse(items.begin() + i, items.begin() + i + 8);
    auto report = [&](size_t first) {
      for (size_t k = first; k < kItems; k += 2) {
        size_t b = items[k] * (kItem + kHeader) + kHeader;
        releaser.Done(b, b + kItem);
      }
    };
    std::thread other(report, 1);
    report(0);
    other.join();
    at_end = true;
    releaser.ReleaseAll();
    EXPECT_EQ(short_before_end, 0u) << order;
    EXPECT_LE(released.size(), kItems * (kItem + kHeader) / TextPageReleaser::kRun + 4) << order;
    std::sort(released.begin(), released.end());
    for (size_t i = 1; i < released.size(); ++i)
      EXPECT_LE(released[i - 1].second, released[i].first) << order;  // disjoint
    for (size_t i = 0; i < kItems; ++i) {  // every item's bytes in one released run
      size_t b = i * (kItem + kHeader) + kHeader;
      auto it = std::upper_bound(released.begin(), released.end(), std::make_pair(b, SIZE_MAX));
      ASSERT_NE(it, released.begin()) << order << " item " << i;
      --it;
      EXPECT_TRUE(it->first <= b && b + kItem <= it->second) << order << " item " << i;
    }
  }
}

TEST(ChecksumTest, Fnv1a64MatchesPublishedVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);  // the offset basis
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
  // One step by hand: (basis ^ byte) * prime mod 2^64.
  EXPECT_EQ(Fnv1a64(std::string_view("\0", 1)), 0xcbf29ce484222325ull * 0x100000001b3ull);
}

uint64_t U64At(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
uint32_t U32At(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
// Recomputes a version 2 file's length and checksum after an edit.
void Reseal(std::string* b) {
  uint64_t len = b->size() - 32, sum = Fnv1a64(std::string_view(*b).substr(32));
  std::memcpy(&(*b)[16], &len, 8);
  std::memcpy(&(*b)[24], &sum, 8);
}

TEST(BinaryFormatTest, Version2Layout) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  std::string b = SaveV2(m);
  EXPECT_EQ(U32At(b, 8), 2u);   // version
  EXPECT_EQ(U32At(b, 12), 0u);  // flags
  EXPECT_EQ(U64At(b, 16), b.size() - 32);
  EXPECT_EQ(U64At(b, 24), Fnv1a64(std::string_view(b).substr(32)));
  // Section table: (count, bytes) for strings, types, attribute sets, nodes, items.
  uint64_t total = 112;
  for (int s = 0; s < 5; ++s) total += U64At(b, 32 + 16 * s + 8);
  EXPECT_EQ(total, b.size());
  EXPECT_EQ(U64At(b, 32 + 16 * 4), 1u);  // one item
  EXPECT_EQ(U64At(b, 32 + 16 * 2), 1u);  // one attribute set (the conv2d's)
  // Three distinct types: the two parameters' and the result's.
  EXPECT_EQ(U64At(b, 32 + 16 * 1), 3u);
  // The string table: end offsets, then the blob.
  uint64_t n_strings = U64At(b, 32);
  std::string blob = b.substr(112 + 4 * n_strings, U64At(b, 40) - 4 * n_strings);
  EXPECT_EQ(U32At(b, 112 + 4 * (n_strings - 1)), blob.size());
  EXPECT_NE(blob.find("nn.conv2d"), std::string::npos);
  EXPECT_NE(blob.find("kernel_size"), std::string::npos);
}

TEST(BinaryFormatTest, EqualTypesAndAttributeSetsAreStoredOnce) {
  // Each variable gets its own, structurally equal type node; each call
  // its own, equal attribute set.
  auto t = [] {
    return TensorTypeNode::Make({Dim::Sym(Symbol("n")), Dim::Const(4)}, DataType::kFloat32);
  };
  auto attrs = [] { return *Attrs::Make({{Symbol("axis"), AttrValue::Int(-1)}}); };
  Var x = VarNode::Make("x", t());
  std::vector<Binding> bindings;
  Expr cur = x;
  for (int i = 0; i < 50; ++i) {
    Var v = VarNode::Make("v", t());
    bindings.push_back(VarBindingNode::Make(v, *MakeOpCall("nn.softmax", {cur}, attrs())));
    cur = v;
  }
  Function f = FunctionNode::Make(
      "f", {x}, t(), SeqExprNode::Make({BindingBlockNode::Make(bindings, false)}, cur));
  Module m = *Module::Make({f});
  std::string b = SaveBinary(m);
  EXPECT_EQ(U64At(b, 32 + 16 * 1), 1u);  // one type
  EXPECT_EQ(U64At(b, 32 + 16 * 2), 1u);  // one attribute set
  auto back = LoadBinary(b);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(StructuralEqual(m, *back));
  Function g = back->LookupFunction("f");
  const auto& bs = g->body()->blocks()[0]->bindings();
  EXPECT_EQ(bs[0]->var()->type().get(), bs[49]->var()->type().get());  // shared after loading
  auto* c0 = As<CallNode>(bs[0]->value());
  auto* c1 = As<CallNode>(bs[49]->value());
  EXPECT_EQ(&c0->attrs().entries(), &c1->attrs().entries());
}

TEST(BinaryFormatTest, TruncatedVersion2FilesAreErrors) {
  std::string b =
      SaveV2(testing::ParseOrFail(testing::ReadTestFile("examples/spec/blocks_and_if.plir")));
  for (size_t n = 0; n < b.size(); ++n) {
    std::string cut = b.substr(0, n);
    auto r = LoadBinary(cut);
    ASSERT_FALSE(r.ok()) << n;
    if (n >= 8 && n < 112) {
      EXPECT_NE(r.status().message().find("truncated header"), std::string::npos) << n;
    }
    if (n >= 112) {
      EXPECT_NE(r.status().message().find("payload bytes"), std::string::npos) << n;
      Reseal(&cut);  // a consistent header: the section table disagrees
      r = LoadBinary(cut);
      ASSERT_FALSE(r.ok()) << n;
      EXPECT_NE(r.status().message().find("exceeds the file"), std::string::npos)
          << n << ": " << r.status().message();
    }
  }
}

TEST(BinaryFormatTest, CorruptVersion2FilesGiveClearErrors) {
  std::string b =
      SaveV2(testing::ParseOrFail(testing::ReadTestFile("examples/spec/blocks_and_if.plir")));
  // An op renamed in the string table.
  std::string renamed = b;
  size_t at = renamed.find("multiply");
  ASSERT_NE(at, std::string::npos);
  renamed[at + 7] = 'x';
  Reseal(&renamed);
  auto r = LoadBinary(renamed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("(Op): unknown op 'multiplx'"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("corrupt binary module: node "), std::string::npos)
      << r.status().message();
  // Unknown flags.
  std::string flagged = b;
  flagged[12] = 1;
  EXPECT_NE(LoadBinary(flagged).status().message().find("flags 1 are not supported"),
            std::string::npos);
  // Bytes after the last section.
  std::string longer = b + "x";
  Reseal(&longer);
  EXPECT_NE(LoadBinary(longer).status().message().find("1 bytes after the last section"),
            std::string::npos);
  // The node section's last byte given to the item section.
  std::string shifted = b;
  uint64_t nodes = U64At(b, 32 + 16 * 3 + 8) - 1, items = U64At(b, 32 + 16 * 4 + 8) + 1;
  std::memcpy(&shifted[32 + 16 * 3 + 8], &nodes, 8);
  std::memcpy(&shifted[32 + 16 * 4 + 8], &items, 8);
  Reseal(&shifted);
  r = LoadBinary(shifted);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("runs past the end of the node section"), std::string::npos)
      << r.status().message();
  // A newer version is refused by name.
  std::string newer = b;
  newer[8] = 5;
  EXPECT_NE(LoadBinary(newer).status().message().find(
                "binary module format version 5; this PLIR reads versions 1 to 4"),
            std::string::npos);
}

// Files share types, so a few bytes can describe a tuple type whose tree
// (as printed or compared) is exponential; every loader refuses it.
TEST(SerializeLimitsTest, ExponentialTypesAreRefused) {
  Type t = TensorTypeNode::Make({}, DataType::kFloat32);
  for (int i = 0; i < 40; ++i) t = TupleTypeNode::Make({t, t});  // 2^41 - 1 nodes as a tree
  Var x = VarNode::Make("x", t);
  Module m = *Module::Make({FunctionNode::Make("f", {x}, t, SeqExprNode::Make({}, x))});
  for (auto [save, load] : {std::pair<Saver, Loader>{&SaveBinary, &LoadBinary},
                            std::pair<Saver, Loader>{&internal::SaveBinaryV1, &LoadBinary},
                            std::pair<Saver, Loader>{&SaveJson, &LoadJson}}) {
    std::string bytes = save(m);
    EXPECT_LT(bytes.size(), 2000u);  // saving is linear in the DAG
    auto r = load(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(
        r.status().message().find("tuple type too large: its tree has more than 16777216 nodes"),
        std::string::npos)
        << r.status().message();
  }
}

TEST(SerializeLimitsTest, ConstantsNeedTensorTypes) {
  // Checked before ConstantNode::Make, whose message would print the type.
  auto r = LoadJson(R"({"format":"plir","version":1,
      "nodes":[{"k":"ObjectType"},{"k":"Constant","c":[0],"hex":""}],"items":[]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "invalid JSON module: node 1: a constant's type must be a TensorType, not ObjectType");
}

// A version 1 file as PLIR wrote it before version 2 (plir-opt at commit
// e3e3a75, `plir-opt fixture.plir -o fixture.plirb`), with its module.
constexpr char kVersion1Text[] =
    R"(extern @kernel(%w: Tensor[(n, 4), float32]) -> Tensor[(4, n), float32]

def @main(%x: Tensor[(n, 4), float32], %flag: Tensor[(), bool], %s: Shape[(n, 4)]) -> (Tensor[(4, n), float32], Object, Prim[float64]) attrs {global_symbol = "main", scale = 0.5, fast = true, layout = Tensor[ndim=2, float32]} {
  %k: Tensor[(2,), int8] = const<Tensor[(2,), int8]>[-1, 2];
  dataflow {
    %t = call_tir(@kernel, (%x,), sinfo_args=[Tensor[(4, n), float32]]);
    %p: Object = call_packed("get_item", 1, sinfo_args=[Object]);
    %u = (%t, %p);
    %v = %u.0;
    output %v, %p;
  }
  %r = if (%flag) {
    %w = add(%v, %v);
    %w
  } else {
    %v
  };
  (%r, %p, 1.5)
}
)";
constexpr char kVersion1Hex[] =
    "89504c49520d0a1a0100000000000000c10100000000000080ad0ff0bc2c7abd15016e0177066b65726e656c017804"
    "66"
    "6c61670173016b01740863616c6c5f74697201700b63616c6c5f7061636b6564086765745f6974656d017501760172"
    "03"
    "616464046d61696e04666173740d676c6f62616c5f73796d626f6c066c61796f7574057363616c653800000c040102"
    "00"
    "010800050101010000000c0401020800000113020201020000000c0401020001080005010103000000010001000501"
    "01"
    "040004000004010200010800050101050000000c04010208000001020003000d010303020100000202010104000501"
    "01"
    "06000c010202ff02100202011101010000000c0401020800000105010107010700080600020801120d050302010505"
    "02"
    "01001002050105010f090007000a0b000b0a00050200000000000000000d0503020113130201001002050101020d15"
    "05"
    "01010c0108020e08100202010501110d0009020412001002020111040e080401010501150e00050116010007000f0d"
    "04"
    "0107071802000010020301110101000f0201050f010b0e042902011d10020901110101000a000d00000000000000f8"
    "3f"
    "08030c1a010f04230e030100000c040000120632302e2a020110041102011203101304361401000000000000e03f02"
    "03"
    "37";

std::string Version1Fixture() {
  std::string hex = kVersion1Hex, out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

TEST(BinaryFormatTest, Version1FilesFromEarlierPlirLoad) {
  std::string v1 = Version1Fixture();
  ASSERT_EQ(v1.size(), 481u);
  EXPECT_EQ(U32At(v1, 8), 1u);
  // Version 1 checksums were computed with a mistyped FNV offset basis.
  EXPECT_NE(U64At(v1, 24), Fnv1a64(std::string_view(v1).substr(32)));
  Module expected = testing::ParseOrFail(kVersion1Text);
  auto m = LoadBinary(v1);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto mm = FindFirstMismatch(expected, *m);
  EXPECT_FALSE(mm) << mm->ToString();
  EXPECT_EQ(PrintModule(expected), PrintModule(*m));
  // The retained writer writes the same module (its bytes depend on which
  // nodes are shared in memory, e.g. interned types, so they may differ).
  auto resaved = LoadBinary(internal::SaveBinaryV1(expected));
  ASSERT_TRUE(resaved.ok()) << resaved.status().message();
  EXPECT_TRUE(StructuralEqual(expected, *resaved));
  // Saving writes version 3, which loads to the same module.
  std::string v3 = SaveBinary(*m);
  EXPECT_EQ(U32At(v3, 8), 3u);
  auto again = LoadBinary(v3);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(StructuralEqual(expected, *again));
  EXPECT_LT(v3.size(), v1.size() + 144);
}

TEST(BinaryFormatTest, Version1ChecksumIsChecked) {
  std::string v1 = Version1Fixture();
  std::string flipped = v1;
  flipped[100] ^= 0x10;
  EXPECT_NE(LoadBinary(flipped).status().message().find("checksum mismatch"), std::string::npos);
  // A version 1 file checksummed with the published basis loads as well.
  std::string standard = v1;
  uint64_t sum = Fnv1a64(std::string_view(v1).substr(32));
  std::memcpy(&standard[24], &sum, 8);
  EXPECT_TRUE(LoadBinary(standard).ok());
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

TEST(ModuleFileTest, LoadsEveryFormatFromAMapping) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/blocks_and_if.plir"));
  std::string text = PrintModule(m);
  for (const auto& [name, contents] :
       std::vector<std::pair<std::string, std::string>>{{"m.plirb", SaveBinary(m)},
                                                        {"m.json", SaveJson(m)},
                                                        {"m.plir", text},
                                                        {"v1.plirb", Version1Fixture()}}) {
    std::string path = TempPath(name);
    WriteFile(path, contents);
    auto f = ModuleFile::Open(path);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_TRUE(f->mapped()) << name;
    EXPECT_TRUE(f->contents() == contents) << name;
    auto loaded = LoadModuleFile(path);
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.status().message();
    if (name != "v1.plirb") {
      EXPECT_TRUE(StructuralEqual(*loaded, m)) << name;
    }
    // As plir-opt reads its input: the file stands in for its contents.
    StatusOr<ModuleFile> input = ModuleFile::Open(path);
    ASSERT_TRUE(input.ok());
    EXPECT_EQ(DetectFormat(*input), DetectFormat(contents)) << name;
    auto again = LoadModule(*input, path);
    ASSERT_TRUE(again.ok()) << name << ": " << again.status().message();
    input->Close();  // the module does not need the file
    EXPECT_TRUE(input->contents().empty());
    EXPECT_TRUE(StructuralEqual(*again, *loaded)) << name;
  }
}

TEST(ModuleFileTest, JsonParsesInPlaceOrFromACopy) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  std::string json = SaveJson(m);
  // Padded with spaces to end 10 bytes before a page boundary (too little
  // slack to parse in place) and 100 bytes before one (enough).
  for (size_t slack : {size_t{10}, size_t{100}, size_t{0}}) {
    std::string contents = json;
    size_t page = 4096;
    contents.append((page - (json.size() + slack) % page) % page, ' ');
    std::string path = TempPath("slack.json");
    WriteFile(path, contents);
    auto f = ModuleFile::Open(path);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->padding(), slack);
    auto loaded = LoadModuleFile(path);
    ASSERT_TRUE(loaded.ok()) << slack << ": " << loaded.status().message();
    EXPECT_TRUE(StructuralEqual(*loaded, m));
  }
}

TEST(ModuleFileTest, ErrorsNameTheFile) {
  auto missing = LoadModuleFile(TempPath("does-not-exist.plirb"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("does-not-exist.plirb: cannot open file"),
            std::string::npos);
  std::string path = TempPath("bad.plirb");
  std::string b = Version1Fixture();
  b[100] ^= 1;
  WriteFile(path, b);
  auto bad = LoadModuleFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), path + ": corrupt binary module: checksum mismatch");
  // Empty files are not mapped; they are an empty text module.
  WriteFile(path, "");
  auto f = ModuleFile::Open(path);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->mapped());
  EXPECT_TRUE(LoadModuleFile(path).ok());
  // Non-regular files are read.
  auto proc = ModuleFile::Open("/proc/self/status");
  ASSERT_TRUE(proc.ok());
  EXPECT_FALSE(proc->mapped());
  EXPECT_NE(proc->contents().find("Name:"), std::string_view::npos);
}

TEST(BinaryFormatTest, HeaderIsChecked) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  std::string b = SaveBinary(m);
  EXPECT_EQ(b.compare(0, 8, std::string(kBinaryMagic, 8)), 0);
  std::string bad_magic = b;
  bad_magic[1] = 'X';
  EXPECT_NE(LoadBinary(bad_magic).status().message().find("bad magic"), std::string::npos);
  std::string bad_version = b;
  bad_version[8] = 9;
  EXPECT_NE(LoadBinary(bad_version)
                .status()
                .message()
                .find("format version 9; this PLIR reads versions 1 to 4"),
            std::string::npos);
  std::string flipped = b;
  flipped[b.size() - 3] ^= 0x40;
  EXPECT_NE(LoadBinary(flipped).status().message().find("checksum mismatch"), std::string::npos);
  EXPECT_NE(LoadBinary(b.substr(0, b.size() - 1)).status().message().find("payload bytes"),
            std::string::npos);
  EXPECT_FALSE(LoadBinary("").ok());
}

TEST(BinaryFormatTest, ConstantsAreRawBytes) {
  Module m = testing::ParseOrFail("def @f() { const<Tensor[(4,), uint8]>x\"deadbeef\" }");
  std::string b = SaveBinary(m);
  EXPECT_NE(b.find("\xde\xad\xbe\xef"), std::string::npos);
}

// A stored dimension's text: a name, or an expression read in canonical
// form; what the text format cannot spell is an error.
TEST(JsonFormatTest, DimensionTextsAreNamesOrExpressions) {
  Module m = testing::ParseOrFail("def @f(%x: Tensor[(n, m + 1), float32]) {\n  %x\n}\n");
  std::string json = SaveJson(m);
  ASSERT_NE(json.find("\"m + 1\""), std::string::npos) << json;
  auto with = [&](const std::string& dim) {
    std::string j = json;
    j.replace(j.find("\"m + 1\""), 7, dim);
    return LoadJson(j);
  };
  auto a = with("\"m+1\"");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(FindFirstMismatch(m, *a));
  auto b = with("\"(m) +1\"");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_FALSE(FindFirstMismatch(m, *b));
  EXPECT_FALSE(with("\"a.b\"").ok());
  EXPECT_FALSE(with("\"m + \"").ok());
  auto c = with("\"7\"");  // digits: the constant
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NE(PrintModule(*c).find("Tensor[(n, 7), float32]"), std::string::npos) << PrintModule(*c);
}

TEST(JsonFormatTest, VersionAndErrors) {
  EXPECT_NE(LoadJson("{\"format\":\"plir\",\"version\":2,\"nodes\":[],\"items\":[]}")
                .status()
                .message()
                .find("unsupported"),
            std::string::npos);
  EXPECT_NE(LoadJson("{").status().message().find("invalid JSON"), std::string::npos);
  EXPECT_NE(LoadJson("{\"format\":\"plir\",\"version\":1,\"nodes\":[{\"k\":\"Var\",\"c\":[5],\"n\":"
                     "\"x\"}],\"items\":[]}")
                .status()
                .message()
                .find("node 0: child id out of range"),
            std::string::npos);
  EXPECT_NE(LoadJson("{\"format\":\"plir\",\"version\":1,\"nodes\":[{\"k\":\"ObjectType\"},{\"k\":"
                     "\"Call\",\"c\":[0,0,0],\"nargs\":1,\"nsinfo\":0}],\"items\":[]}")
                .status()
                .message()
                .find("does not fit here"),
            std::string::npos);
}

TEST(JsonFormatTest, MalformedJsonIsAnErrorEvenWhereIgnored) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  std::string json = SaveJson(m);
  ASSERT_TRUE(LoadJson(json).ok());
  // "" if `text` is refused as invalid JSON, else what happened.
  auto invalid = [](const std::string& text) -> std::string {
    auto r = LoadJson(text);
    if (r.ok()) return "loaded";
    return r.status().message().find("invalid JSON") == 0 ? "" : r.status().message();
  };
  EXPECT_EQ(invalid(json + "x"), "");                       // after the module
  EXPECT_EQ(invalid(json.substr(0, json.size() - 3)), "");  // unclosed
  std::string k = "{\"k\":\"Op\"";
  size_t at = json.find(k);
  ASSERT_NE(at, std::string::npos);
  for (const char* bad :
       {",\"zzz\":[1,}", ",\"zzz\":{\"a\" 1}", ",\"zzz\":tru", ",\"zzz\":\"\\q\"", ",\"zzz\":01"}) {
    std::string text = json;
    text.insert(at + k.size(), bad);  // an unknown key with a malformed value
    EXPECT_EQ(invalid(text), "") << bad;
  }
}

TEST(FormatDetectionTest, ByMagicOrBrace) {
  Module m = testing::ParseOrFail(testing::ReadTestFile("examples/spec/conv2d.plir"));
  EXPECT_EQ(DetectFormat(SaveBinary(m)), ModuleFormat::kBinary);
  EXPECT_EQ(DetectFormat(SaveJson(m)), ModuleFormat::kJson);
  EXPECT_EQ(DetectFormat(PrintModule(m)), ModuleFormat::kText);
  for (const std::string& s : {SaveBinary(m), SaveJson(m), PrintModule(m)}) {
    auto r = LoadModule(s, "x");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(StructuralEqual(*r, m));
  }
}

TEST(StructuredAttrsTest, DepthIsBoundedInEveryFormat) {
  // The parser refuses values nested deeper than kMaxAttrDepth.
  std::string deep(AttrValue::kMaxAttrDepth + 1, '[');
  deep += std::string(AttrValue::kMaxAttrDepth + 1, ']');
  auto r = ParseModule("def @f() -> Object attrs {a = " + deep +
                       "} {\n  %x = call_packed(\"g\", sinfo_args=[Object]);\n  %x\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nested deeper than 32 levels"), std::string::npos)
      << r.status().message();
  // At the limit it is accepted and round-trips through every format.
  std::string ok(AttrValue::kMaxAttrDepth, '[');
  ok += std::string(AttrValue::kMaxAttrDepth, ']');
  Module m =
      testing::ParseOrFail("def @f() -> Object attrs {a = " + ok +
                           "} {\n  %x = call_packed(\"g\", sinfo_args=[Object]);\n  %x\n}\n");
  for (auto [save, load] : {std::pair<Saver, Loader>{&SaveJson, &LoadJson},
                            std::pair<Saver, Loader>{&SaveBinary, &LoadBinary},
                            std::pair<Saver, Loader>{&internal::SaveBinaryV1, &LoadBinary}}) {
    auto back = load(save(m));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->LookupFunction("f")->attrs().Get("a")->Depth(), AttrValue::kMaxAttrDepth);
  }
  // A JSON file nesting deeper is an error, not a crash.
  std::string json = SaveJson(m);
  size_t at = json.find("{\"list\":[");
  ASSERT_NE(at, std::string::npos);
  json.insert(at, "{\"list\":[");
  size_t end = json.find("]}", json.rfind("{\"list\":[]}"));
  json.insert(end + 2, "]}");
  auto bad = LoadJson(json);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nested too deep"), std::string::npos)
      << bad.status().message();
}

TEST(StructuredAttrsTest, MapErrorsAndTextSpelling) {
  auto dup = ParseModule(
      "def @f() -> Object attrs {m = {a = 1, a = 2}} {\n  %x = call_packed(\"g\", "
      "sinfo_args=[Object]);\n  %x\n}\n");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("map key 'a' given twice"), std::string::npos);
  EXPECT_NE(dup.status().message().find("1:"), std::string::npos);  // a position
  auto m = AttrValue::Map(
      {{"b", AttrValue::Int(1)}, {"a", AttrValue::String("x")}, {"true", AttrValue::Bool(false)}});
  ASSERT_TRUE(m.ok());
  std::string s;
  m->AppendTo(&s);
  EXPECT_EQ(s, "{a = \"x\", b = 1, \"true\" = false}");  // sorted; a keyword key is quoted
  EXPECT_FALSE(AttrValue::Map({{"k", AttrValue::Int(1)}, {"k", AttrValue::Int(2)}}).ok());
  EXPECT_EQ(m->Find("zz"), nullptr);
  EXPECT_EQ(AttrValue::Int(3).Find("a"), nullptr);
}

}  // namespace
}  // namespace plir
