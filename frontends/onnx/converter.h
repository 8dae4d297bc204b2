// The ONNX op converters: one per ONNX op, versioned by opset (as TVM's
// onnx_frontend.py has `_impl_v1`, `_impl_v13`: the entry with the largest
// `since` not above the model's opset is used). A converter reads the node
// through ConvertContext and returns the node's outputs as PLIR expressions.
//
// Adding one is a few lines in the family's file (convert_<family>.cc):
//
//   t.Add("Relu", 1, {"nn.relu"}, [](ConvertContext& c) -> StatusOr<Outputs> {
//     PLIR_ASSIGN_OR_RETURN(Expr x, c.Input(0));
//     return c.One("nn.relu", {x});
//   });
//
// The list of PLIR ops a converter needs is checked against the op registry
// before anything is converted: a converter whose ops are not registered
// makes its ONNX op unsupported (so converters for op families another
// branch adds light up when those ops arrive).
#ifndef PLIR_FRONTENDS_ONNX_CONVERTER_H_
#define PLIR_FRONTENDS_ONNX_CONVERTER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontends/onnx/onnx_proto.h"
#include "ir/builder.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/status.h"
#include "kernels/op_kernels.h"
#include "kernels/tensor.h"

namespace plir::onnx_import {

using Outputs = std::vector<Expr>;

class Importer;

class ConvertContext {
 public:
  ConvertContext(Importer* imp, const onnx::NodeProto& node, int opset)
      : imp_(imp), node_(node), opset_(opset) {}

  const onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  // "node 'name' (OpType)": how errors name the node.
  std::string Where() const;
  Status Error(const std::string& msg) const;

  // Inputs. An absent optional input (missing or named "") has no value.
  int num_inputs() const { return node_.input_size(); }
  bool HasInput(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  StatusOr<Expr> Input(int i) const;
  // The input's tensor type (null if it is not a tensor).
  const TensorTypeNode* InputType(int i) const;
  DataType InputDtype(int i) const;
  // The input's static shape, or an error naming the node and input.
  StatusOr<std::vector<int64_t>> InputShape(int i) const;
  int InputRank(int i) const;  // -1 if unknown
  // The input's value when it is known at import (a constant, a folded
  // shape chain, a weight with --weights-as-constants, a --constant-input).
  std::optional<Tensor> StaticInput(int i) const;
  // The same, or an error naming the node and the input that suggests
  // --constant-input when the value comes from a graph input.
  StatusOr<Tensor> RequireStatic(int i, const std::string& what) const;
  StatusOr<std::vector<int64_t>> RequireInts(int i, const std::string& what) const;

  // Attributes.
  const onnx::AttributeProto* Attr(const std::string& name) const;
  bool HasAttr(const std::string& name) const { return Attr(name) != nullptr; }
  int64_t AttrInt(const std::string& name, int64_t def) const;
  float AttrFloat(const std::string& name, float def) const;
  std::string AttrString(const std::string& name, const std::string& def) const;
  std::vector<int64_t> AttrInts(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> AttrFloats(const std::string& name) const;
  StatusOr<Tensor> AttrTensor(const std::string& name) const;
  // Converts the graph attribute `name` (If's branches) in the current
  // scope and returns its outputs.
  StatusOr<Outputs> Subgraph(const std::string& name) const;

  // Guards for values read from the model: every entry positive (strides,
  // kernel sizes, block sizes), and a constant the converter builds at
  // import (tables, matrices, index lists) no larger than kMaxImportElements.
  Status Positive(const std::vector<int64_t>& v, const std::string& what) const;
  Status Limit(const std::vector<int64_t>& dims, const std::string& what) const;
  static constexpr int64_t kMaxImportElements = int64_t{1} << 22;

  // Emitting. Call builds an op call; when every operand is known it is
  // evaluated at import with the op's kernel (static shape chains fold) and
  // a constant is returned instead of a binding.
  StatusOr<Expr> Call(const std::string& op, std::vector<Expr> args, Attrs attrs = Attrs(),
                      std::vector<Type> sinfo = {});
  StatusOr<Outputs> One(const std::string& op, std::vector<Expr> args, Attrs attrs = Attrs()) {
    PLIR_ASSIGN_OR_RETURN(Expr e, Call(op, std::move(args), std::move(attrs)));
    return Outputs{e};
  }
  StatusOr<Expr> Const(const Tensor& t) const;
  // A scalar constant of `dt`.
  StatusOr<Expr> Scalar(double v, DataType dt) const;
  // A 1-D int64 constant.
  StatusOr<Expr> Int64s(const std::vector<int64_t>& v) const;
  // A tuple of int64 literals (strided_slice's operands).
  static Expr IntTuple(const std::vector<int64_t>& v);
  // `x` cast to `dt` (itself when it already is).
  StatusOr<Expr> Cast(Expr x, DataType dt);

 private:
  Importer* imp_;
  const onnx::NodeProto& node_;
  int opset_;
};

// Attribute helpers.
AttrValue IntList(const std::vector<int64_t>& v);
Attrs MakeAttrs(std::vector<Attrs::Entry> entries);

using ConverterFn = std::function<StatusOr<Outputs>(ConvertContext&)>;

struct Converter {
  std::string op;                  // ONNX op type (default domain), or "domain.op"
  int since = 1;                   // first opset this version applies to
  std::vector<std::string> needs;  // PLIR ops it emits
  ConverterFn fn;
};

class ConverterTable {
 public:
  void Add(std::string op, int since, std::vector<std::string> needs, ConverterFn fn);
  // The converter for `op` at `opset`, or null. `why` says why not.
  const Converter* Find(const std::string& op, int opset, std::string* why = nullptr) const;
  // Every ONNX op with a converter, sorted.
  std::vector<std::string> Ops() const;
  // The opsets a op's converters start at.
  std::vector<int> Versions(const std::string& op) const;

 private:
  std::map<std::string, std::vector<Converter>> by_op_;
};

// The table with every family registered (built once).
const ConverterTable& Converters();

// One registration function per family file.
void RegisterElementwiseConverters(ConverterTable& t);  // convert_elementwise.cc
void RegisterShapeConverters(ConverterTable& t);  // convert_shape.cc: data movement, shape chains
void RegisterNnConverters(
    ConverterTable& t);  // convert_nn.cc: conv, pooling, normalization, softmax
void RegisterMathConverters(ConverterTable& t);   // convert_math.cc: matmul, gemm, reductions
void RegisterImageConverters(ConverterTable& t);  // convert_image.cc: resize, upsample
void RegisterLossConverters(ConverterTable& t);   // convert_loss.cc: NLL, softmax cross entropy
void RegisterRnnConverters(ConverterTable& t);    // convert_rnn.cc: RNN, GRU, LSTM (unrolled)
// convert_training.cc: ai.onnx.preview.training's Adagrad, Momentum, Adam (keyed by
// "ai.onnx.preview.training.<Op>", at that domain's opset).
void RegisterTrainingConverters(ConverterTable& t);

// Helpers shared by the family files.
// The first of `candidates` that op `op`'s attribute schema declares (ops
// added by other families name attributes their own way: axis or axes), or
// the first candidate when the op or none of them is found.
std::string OpAttrName(const std::string& op, const std::vector<std::string>& candidates);
// Sum (or mean) of a statically shaped `x` over the axes where `red` is
// true: the PLIR reduction op when registered, else a matmul with ones
// (convert_math.cc).
StatusOr<Expr> ReduceSumOf(ConvertContext& c, Expr x, const std::vector<bool>& red, bool keepdims,
                           bool mean);
// Normalizes a possibly negative axis against `rank`.
StatusOr<int64_t> NormAxis(const ConvertContext& c, int64_t axis, int64_t rank);

}  // namespace plir::onnx_import

#endif  // PLIR_FRONTENDS_ONNX_CONVERTER_H_
