// Unit tests of the ONNX importer: the name rule, the signature contract
// (real inputs, then one parameter per initializer, num_input), the listing
// of every unsupported op, malformed and rejected models, the weights file,
// --weights-as-constants, --constant-input and import-time folding.
#include "frontends/onnx/importer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "frontends/onnx/onnx_proto.h"
#include "interpreter/safetensors.h"
#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"

namespace plir::onnx_import {
namespace {

void AddInput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
              int32_t type = onnx::TensorProto::FLOAT, bool output = false) {
  onnx::ValueInfoProto* vi = output ? g->add_output() : g->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::TensorProto* AddInit(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                           std::vector<float> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return t;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name = "") {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

onnx::ModelProto NewModel(int opset = 13, int ir = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

const FunctionNode& Main(const ImportResult& r) { return *r.module.LookupFunction("main"); }

TEST(ImporterTest, NameRule) {
  EXPECT_EQ(SanitizeName("0"), "v0");
  EXPECT_EQ(SanitizeName("onnx::Conv_497"), "onnx__Conv_497");
  EXPECT_EQ(SanitizeName("conv1.weight"), "conv1_weight");
  EXPECT_EQ(SanitizeName(""), "v");
  EXPECT_EQ(SanitizeName("x"), "x");
  EXPECT_EQ(SanitizeName("a/b:0"), "a_b_0");
}

// input "0" and initializers "conv1.weight", "conv1_weight" (a collision),
// "onnx::Add_3" also listed among the inputs (as IR 3 models list every initializer): a weight.
onnx::ModelProto SignatureModel() {
  onnx::ModelProto m = NewModel(13, 8);
  auto* g = m.mutable_graph();
  AddInput(g, "0", {2});
  AddInput(g, "onnx::Add_3", {2});
  AddInit(g, "conv1.weight", {2}, {1, 2});
  AddInit(g, "conv1_weight", {2}, {3, 4});
  AddInit(g, "onnx::Add_3", {2}, {5, 6});
  AddNode(g, "Add", {"0", "conv1.weight"}, {"a"});
  AddNode(g, "Add", {"a", "conv1_weight"}, {"b"});
  AddNode(g, "Add", {"b", "onnx::Add_3"}, {"out.0"});
  AddInput(g, "out.0", {2}, onnx::TensorProto::FLOAT, true);
  return m;
}

TEST(ImporterTest, SignatureInputsThenInitializers) {
  onnx::ModelProto m = SignatureModel();
  auto r = ImportModel(m, "sig.onnx", {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const FunctionNode& f = Main(*r);
  ASSERT_EQ(f.params().size(), 4u);
  EXPECT_EQ(f.params()[0]->name_hint(), "v0");
  EXPECT_EQ(f.params()[1]->name_hint(), "conv1_weight");
  EXPECT_EQ(f.params()[2]->name_hint(), "conv1_weight_1");
  EXPECT_EQ(f.params()[3]->name_hint(), "onnx__Add_3");
  EXPECT_EQ(r->num_input, 1);
  ASSERT_TRUE(f.attrs().Get("num_input"));
  EXPECT_EQ(f.attrs().Get("num_input")->as_int(), 1);
  EXPECT_EQ(r->input_names, std::vector<std::string>{"0"});
  const AttrValue* names = f.attrs().Get("onnx_names");
  ASSERT_TRUE(names);
  ASSERT_TRUE(names->Find("conv1_weight_1"));
  EXPECT_EQ(names->Find("conv1_weight_1")->as_string(), "conv1_weight");
  EXPECT_EQ(names->Find("conv1_weight")->as_string(), "conv1.weight");
  EXPECT_EQ(names->Find("v0")->as_string(), "0");
  ASSERT_EQ(r->weights.size(), 3u);
  EXPECT_EQ(r->weights[0].first, "conv1_weight");
  EXPECT_EQ(r->weights[2].first, "onnx__Add_3");
  EXPECT_EQ(r->output_names, std::vector<std::string>{"out.0"});
}

// The imported module prints, parses back and loads from binary and JSON
// as the same module (the names are valid PLIR names).
TEST(ImporterTest, RoundTripsThroughEveryFormat) {
  onnx::ModelProto m = SignatureModel();
  auto r = ImportModel(m, "sig.onnx", {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto text = ParseModule(PrintModule(r->module));
  ASSERT_TRUE(text.ok()) << text.status().message() << "\n" << PrintModule(r->module);
  EXPECT_TRUE(StructuralEqual(*text, r->module));
  auto bin = LoadBinary(SaveBinary(r->module));
  ASSERT_TRUE(bin.ok()) << bin.status().message();
  EXPECT_TRUE(StructuralEqual(*bin, r->module));
  auto json = LoadJson(SaveJson(r->module));
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_TRUE(StructuralEqual(*json, r->module));
}

TEST(ImporterTest, WeightsFileHoldsParametersInOrder) {
  onnx::ModelProto m = SignatureModel();
  auto r = ImportModel(m, "sig.onnx", {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string path = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
                     "/w.safetensors";
  ASSERT_TRUE(WriteWeights(*r, path).ok());
  auto reader = SafetensorsReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  const auto& e = (*reader)->entries();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].name, "conv1_weight");
  EXPECT_EQ(e[1].name, "conv1_weight_1");
  EXPECT_EQ(e[2].name, "onnx__Add_3");
  auto t = (*reader)->Read(1);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dtype, DataType::kFloat32);
  EXPECT_EQ(t->shape, std::vector<int64_t>{2});
  EXPECT_EQ(t->GetDouble(0), 3);
  EXPECT_EQ(t->GetDouble(1), 4);
}

TEST(ImporterTest, WeightsAsConstants) {
  onnx::ModelProto m = SignatureModel();
  ImportOptions o;
  o.weights_as_constants = true;
  auto r = ImportModel(m, "sig.onnx", o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Main(*r).params().size(), 1u);
  EXPECT_EQ(r->num_input, 1);
  EXPECT_TRUE(r->weights.empty());
}

TEST(ImporterTest, ListsEveryUnsupportedOpBeforeConverting) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2});
  AddNode(g, "Relu", {"x"}, {"a"}, "ok");
  AddNode(g, "NoSuchOpA", {"a"}, {"b"}, "first_a");
  AddNode(g, "NoSuchOpB", {"b"}, {"c"}, "first_b");
  AddNode(g, "NoSuchOpA", {"c"}, {"d"}, "second_a");
  AddInput(g, "d", {2}, onnx::TensorProto::FLOAT, true);
  ImportOptions o;
  o.check_model = false;  // the checker rejects unknown ops by itself
  auto r = ImportModel(m, "u.onnx", o);
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("u.onnx: 2 unsupported ops"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NoSuchOpA: 2 nodes, first 'first_a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NoSuchOpB: 1 node, first 'first_b'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Relu"), std::string::npos) << msg;
}

TEST(ImporterTest, MalformedProtobufNamesTheFile) {
  auto r = ImportModelBytes("\x0a\xff\xff\xff garbage", "bad.onnx", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("bad.onnx: ", 0), 0u) << r.status().message();
  auto missing = ImportModelFile("/nonexistent/model.onnx", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(ImporterTest, CheckerFailureNamesTheFileAndNode) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2});
  AddNode(g, "Relu", {"x", "x", "x"}, {"y"}, "too_many_inputs");
  AddInput(g, "y", {2}, onnx::TensorProto::FLOAT, true);
  auto r = ImportModel(m, "c.onnx", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("c.onnx: ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("too_many_inputs"), std::string::npos)
      << r.status().message();
}

TEST(ImporterTest, UnknownOpsetIsRejected) {
  onnx::ModelProto m = NewModel(99);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2});
  AddNode(g, "Relu", {"x"}, {"y"});
  AddInput(g, "y", {2}, onnx::TensorProto::FLOAT, true);
  ImportOptions o;
  o.check_model = false;
  auto r = ImportModel(m, "o.onnx", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("o.onnx: opset 99 is not supported"), std::string::npos)
      << r.status().message();
}

onnx::ModelProto ReshapeModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2, 3});
  AddInput(g, "shape", {1}, onnx::TensorProto::INT64);
  AddNode(g, "Reshape", {"x", "shape"}, {"y"}, "the_reshape");
  AddInput(g, "y", {6}, onnx::TensorProto::FLOAT, true);
  return m;
}

TEST(ImporterTest, NonStaticShapeNamesNodeAndInputAndSuggestsConstantInput) {
  onnx::ModelProto m = ReshapeModel();
  std::vector<std::string> needs;
  ImportOptions o;
  o.needs_constant = &needs;
  auto r = ImportModel(m, "r.onnx", o);
  ASSERT_FALSE(r.ok());
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("'the_reshape'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'shape'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--constant-input shape="), std::string::npos) << msg;
  EXPECT_EQ(needs, std::vector<std::string>{"shape"});
}

TEST(ImporterTest, ConstantInputBindsTheShape) {
  onnx::ModelProto m = ReshapeModel();
  ImportOptions o;
  o.constant_inputs["shape"] = MakeTensor(DataType::kInt64, {1}, [](int64_t) { return 6; });
  auto r = ImportModel(m, "r.onnx", o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Main(*r).params().size(), 1u);
  EXPECT_EQ(r->num_input, 1);
  EXPECT_NE(PrintModule(r->module).find("reshape(%x, shape=[6])"), std::string::npos)
      << PrintModule(r->module);
}

// Clip with both bounds 0-d is one clip op (one pass over the data); with
// one bound, maximum or minimum alone.
TEST(ImporterTest, ClipWithScalarBoundsIsOneOp) {
  for (bool both : {true, false}) {
    onnx::ModelProto m = NewModel();
    onnx::GraphProto* g = m.mutable_graph();
    AddInput(g, "x", {2, 3});
    AddInit(g, "lo", {}, {0});
    AddInit(g, "hi", {}, {6});
    AddNode(g, "Clip", {"x", "lo", both ? "hi" : ""}, {"y"});
    AddInput(g, "y", {2, 3}, onnx::TensorProto::FLOAT, /*output=*/true);
    auto r = ImportModel(m, "clip.onnx", ImportOptions());
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::string text = PrintModule(r->module);
    EXPECT_EQ(text.find("clip(") != std::string::npos, both) << text;
    EXPECT_EQ(text.find("maximum(") != std::string::npos, !both) << text;
    EXPECT_EQ(text.find("minimum("), std::string::npos) << text;
  }
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape on a static input folds
// to one reshape with a constant shape.
TEST(ImporterTest, StaticShapeChainsFold) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2, 3, 4});
  onnx::TensorProto* idx = g->add_initializer();
  idx->set_name("zero");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_int64_data(0);
  onnx::TensorProto* minus1 = g->add_initializer();
  minus1->set_name("minus1");
  minus1->set_data_type(onnx::TensorProto::INT64);
  minus1->add_dims(1);
  minus1->add_int64_data(-1);
  AddNode(g, "Shape", {"x"}, {"s"});
  AddNode(g, "Gather", {"s", "zero"}, {"n"});
  onnx::TensorProto* axes = g->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  AddNode(g, "Unsqueeze", {"n", "axes"}, {"n1"});
  auto* cat = AddNode(g, "Concat", {"n1", "minus1"}, {"shape"});
  auto* a = cat->add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(0);
  AddNode(g, "Reshape", {"x", "shape"}, {"y"});
  AddInput(g, "y", {2, 12}, onnx::TensorProto::FLOAT, true);
  ImportOptions o;
  o.weights_as_constants = true;  // the index constants fold too
  auto r = ImportModel(m, "f.onnx", o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string text = PrintModule(r->module);
  EXPECT_NE(text.find("reshape(%x, shape=[2, -1])"), std::string::npos) << text;
  EXPECT_EQ(text.find("take("), std::string::npos) << text;
  EXPECT_EQ(text.find("concat("), std::string::npos) << text;
}

onnx::TensorProto* AddInt64s(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return t;
}

// Shape -> Equal -> Where -> Reshape (torch's pattern before Expand and
// Reshape) folds at import whether or not PLIR has equal and where.
onnx::ModelProto WhereModel(std::vector<int64_t> probe, std::vector<int64_t> pick) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2, 3});
  AddInt64s(g, "probe", probe);
  AddInt64s(g, "pick", pick);
  AddNode(g, "Shape", {"x"}, {"s"});  // [2, 3]
  AddNode(g, "Equal", {"s", "probe"}, {"eq"});
  AddNode(g, "Where", {"eq", "pick", "s"}, {"shape"});  // pick where equal, else the shape
  AddNode(g, "Reshape", {"x", "shape"}, {"y"});
  AddInput(g, "y", {3, 2}, onnx::TensorProto::FLOAT, true);
  return m;
}

TEST(ImporterTest, EqualAndWhereOnShapesFold) {
  ImportOptions o;
  o.weights_as_constants = true;
  onnx::ModelProto m = WhereModel({2, 3}, {3, 2});  // both equal: [3, 2]
  auto r = ImportModel(m, "w.onnx", o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string text = PrintModule(r->module);
  EXPECT_NE(text.find("reshape(%x, shape=[3, 2])"), std::string::npos) << text;
  EXPECT_EQ(text.find("where"), std::string::npos) << text;
  EXPECT_EQ(text.find("equal"), std::string::npos) << text;
  // [2, 7]: only the first is equal, so [3, 3], which 6 elements do not fill.
  onnx::ModelProto bad = WhereModel({2, 7}, {3, 2});
  auto e = ImportModel(bad, "w.onnx", o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("Reshape"), std::string::npos) << e.status().message();
}

}  // namespace
}  // namespace plir::onnx_import
