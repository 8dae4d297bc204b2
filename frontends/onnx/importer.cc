#include "frontends/onnx/importer.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "frontends/onnx/converter.h"
#include "frontends/onnx/onnx_proto.h"
#include "frontends/onnx/tensor_proto.h"
#include "interpreter/safetensors.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "onnx/checker.h"
#include "onnx/version_converter/convert.h"

namespace plir::onnx_import {

std::string SanitizeName(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 1);
  for (char c : s) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), 'v');
  return out;
}

namespace {

std::string NodeLabel(const onnx::NodeProto& n, int index) {
  std::string s = n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'";
  if (n.name().empty() && n.output_size() > 0) s += " (output '" + n.output(0) + "')";
  return s;
}

int DefaultOpset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return static_cast<int>(o.version());
  return -1;
}

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// The one other domain with converters: the training optimizers.
constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

int DomainOpset(const onnx::ModelProto& m, const std::string& domain) {
  for (const auto& o : m.opset_import())
    if (o.domain() == domain) return static_cast<int>(o.version());
  return -1;
}

// The converter of node `n` and the opset it converts at: default-domain
// ops by op type at the default opset, ai.onnx.preview.training ops as
// "ai.onnx.preview.training.<Op>" at that domain's opset. Null (and `why`)
// when there is none.
const Converter* FindConverter(const onnx::ModelProto& m, const onnx::NodeProto& n, int* opset,
                               std::string* why) {
  if (IsDefaultDomain(n.domain())) {
    *opset = DefaultOpset(m);
    if (*opset < 0) {
      *why = "the model imports no opset of the default ONNX domain";
      return nullptr;
    }
    return Converters().Find(n.op_type(), *opset, why);
  }
  if (n.domain() != kTrainingDomain) {
    *why = "domain " + n.domain() + " is not supported";
    return nullptr;
  }
  *opset = DomainOpset(m, n.domain());
  if (*opset < 0) {
    *why = "the model imports no opset of domain " + n.domain();
    return nullptr;
  }
  return Converters().Find(n.domain() + "." + n.op_type(), *opset, why);
}

}  // namespace

// ---------------------------------------------------------------------------
// The importer proper.

class Importer {
 public:
  Importer(onnx::ModelProto& model, std::string file, const ImportOptions& opt)
      : model_(model), file_(std::move(file)), opt_(opt) {}

  StatusOr<ImportResult> Run();

  struct Value {
    Expr expr;
    std::string graph_input;  // the graph input it is (a parameter), if any
  };
  const Value* Find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  BlockBuilder& bb() { return bb_; }
  const std::string& file() const { return file_; }
  void NeedConstant(const std::string& input) {
    if (opt_.needs_constant && std::find(opt_.needs_constant->begin(), opt_.needs_constant->end(),
                                         input) == opt_.needs_constant->end())
      opt_.needs_constant->push_back(input);
  }
  std::string current_hint;
  // Converts a subgraph's nodes in the current scope (its names are unique
  // in the model) and returns its outputs.
  StatusOr<Outputs> ConvertSubgraph(const onnx::GraphProto& g);

 private:
  Status ConvertNodes(const onnx::GraphProto& g);
  int opset_ = 0;
  int depth_ = 0;
  std::string UniqueName(const std::string& onnx_name);
  StatusOr<Type> TypeOf(const onnx::ValueInfoProto& vi);

  onnx::ModelProto& model_;
  std::string file_;
  const ImportOptions& opt_;
  std::unordered_map<std::string, Value> values_;
  std::set<std::string> used_names_;
  BlockBuilder bb_;
};

Status Importer::ConvertNodes(const onnx::GraphProto& g) {
  if (++depth_ > 32) return ResourceExhausted(file_ + ": subgraphs nest more than 32 deep");
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    int opset = opset_;
    std::string why;
    const Converter* conv = FindConverter(model_, n, &opset, &why);
    ConvertContext c(this, n, opset);
    if (!conv)
      return Unimplemented(file_ + ": " + c.Where() + ": " + (why.empty() ? "no converter" : why));
    for (int k = 0; k < n.input_size(); ++k)
      if (!n.input(k).empty() && !values_.count(n.input(k)))
        return InvalidArgument(file_ + ": " + c.Where() + ": input '" + n.input(k) +
                               "' is not defined before the node");
    current_hint = n.output_size() > 0 ? SanitizeName(n.output(0)) : "lv";
    StatusOr<Outputs> outs = conv->fn(c);
    if (!outs.ok()) {
      const std::string& m = outs.status().message();
      if (m.rfind(file_ + ":", 0) == 0) return outs.status();
      return Status(outs.status().code(), file_ + ": " + c.Where() + ": " + m);
    }
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      if (k >= static_cast<int>(outs->size()) || !(*outs)[k])
        return Unimplemented(file_ + ": " + c.Where() + ": output " + std::to_string(k) + " ('" +
                             n.output(k) + "') is not supported");
      values_[n.output(k)] = Value{(*outs)[k], ""};
    }
  }
  --depth_;
  return Status::Ok();
}

StatusOr<Outputs> Importer::ConvertSubgraph(const onnx::GraphProto& g) {
  PLIR_RETURN_IF_ERROR(ConvertNodes(g));
  Outputs outs;
  for (const auto& vi : g.output()) {
    const Value* v = Find(vi.name());
    if (!v)
      return InvalidArgument(file_ + ": subgraph output '" + vi.name() + "' is never computed");
    outs.push_back(v->expr);
  }
  return outs;
}

std::string Importer::UniqueName(const std::string& onnx_name) {
  std::string base = SanitizeName(onnx_name), name = base;
  for (int i = 1; !used_names_.insert(name).second; ++i) name = base + "_" + std::to_string(i);
  return name;
}

StatusOr<Type> Importer::TypeOf(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type())
    return Unimplemented(file_ + ": graph input '" + vi.name() +
                         "' is not a tensor (sequences, maps and optionals are not supported)");
  const auto& tt = vi.type().tensor_type();
  DataType dt = DataTypeFromOnnx(tt.elem_type());
  if (dt == DataType::kUnknown)
    return Unimplemented(file_ + ": graph input '" + vi.name() + "' has element type " +
                         OnnxTypeName(tt.elem_type()) + ", which PLIR does not support");
  if (!tt.has_shape()) return TensorTypeNode::MakeRank(-1, dt);
  std::vector<Dim> dims;
  int unknown = 0;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0)
      dims.push_back(Dim::Const(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty())
      dims.push_back(Dim::Sym(Symbol(SanitizeName(d.dim_param()))));
    else
      dims.push_back(
          Dim::Sym(Symbol(SanitizeName(vi.name()) + "_dim" + std::to_string(unknown++))));
  }
  return TensorTypeNode::Make(std::move(dims), dt);
}

StatusOr<ImportResult> Importer::Run() {
  ImportResult result;
  // The opset.
  // A model of training optimizers alone may import only their domain.
  int opset = DefaultOpset(model_);
  if (opset < 0 && DomainOpset(model_, kTrainingDomain) < 0)
    return InvalidArgument(file_ + ": the model imports no opset of the default ONNX domain");
  if (opset >= 0 && (opset < 1 || opset > kMaxOpset))
    return InvalidArgument(
        file_ + ": opset " + std::to_string(opset) +
        " is not supported (PLIR imports opsets 7 to " + std::to_string(kMaxOpset) +
        ", and older ones through onnx's version converter or the converters that cover them)");
  result.opset = opset;
  onnx::GraphProto& g = *model_.mutable_graph();

  // Every unsupported op, before anything is converted.
  {
    struct Missing {
      int count = 0;
      std::string first, why;
    };
    std::map<std::string, Missing> missing;
    // Subgraphs (If's branches, Loop's body) too.
    std::function<void(const onnx::GraphProto&, int)> walk = [&](const onnx::GraphProto& graph,
                                                                 int depth) {
      if (depth > 32) return;
      for (int i = 0; i < graph.node_size(); ++i) {
        const auto& n = graph.node(i);
        for (const auto& a : n.attribute()) {
          if (a.has_g()) walk(a.g(), depth + 1);
          for (const auto& sg : a.graphs()) walk(sg, depth + 1);
        }
        std::string why;
        std::string key =
            IsDefaultDomain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
        int node_opset = 0;
        if (FindConverter(model_, n, &node_opset, &why)) continue;
        Missing& m = missing[key];
        if (m.count++ == 0) {
          m.first = NodeLabel(n, i);
          m.why = why;
        }
      }
    };
    walk(g, 0);
    if (!missing.empty()) {
      std::string msg = file_ + ": " + std::to_string(missing.size()) + " unsupported op" +
                        (missing.size() == 1 ? "" : "s") + " (opset " + std::to_string(opset) +
                        "):";
      for (const auto& [op, m] : missing)
        msg += "\n  " + op + ": " + std::to_string(m.count) + " node" + (m.count == 1 ? "" : "s") +
               ", first " + m.first + (m.why.empty() ? "" : " (" + m.why + ")");
      return Unimplemented(msg);
    }
  }

  // Parameters: real inputs, then initializers.
  std::set<std::string> init_names;
  for (const auto& t : g.initializer()) init_names.insert(t.name());
  std::vector<Var> params;
  std::vector<AttrValue::MapEntry> onnx_names;
  for (const auto& vi : g.input()) {
    if (init_names.count(vi.name())) continue;  // a weight listed among the inputs (IR < 4)
    if (values_.count(vi.name()))
      return InvalidArgument(file_ + ": graph input '" + vi.name() + "' is listed twice");
    auto bound = opt_.constant_inputs.find(vi.name());
    if (bound != opt_.constant_inputs.end()) {
      PLIR_ASSIGN_OR_RETURN(auto c, bound->second.ToConstant());
      values_[vi.name()] = Value{c, ""};
      continue;
    }
    PLIR_ASSIGN_OR_RETURN(Type t, TypeOf(vi));
    std::string name = UniqueName(vi.name());
    Var v = VarNode::Make(name, t);
    params.push_back(v);
    values_[vi.name()] = Value{v, vi.name()};
    result.input_names.push_back(vi.name());
    result.param_names.push_back({name, vi.name()});
    onnx_names.push_back({name, AttrValue::String(vi.name())});
  }
  for (const auto& [name, t] : opt_.constant_inputs)
    if (!values_.count(name) || !As<ConstantNode>(values_[name].expr))
      return InvalidArgument(file_ + ": --constant-input " + name +
                             ": the graph has no input of that name");
  result.num_input = static_cast<int64_t>(params.size());
  for (int i = 0; i < g.initializer_size(); ++i) {
    onnx::TensorProto& tp = *g.mutable_initializer(i);
    if (values_.count(tp.name()))
      return InvalidArgument(file_ + ": initializer '" + tp.name() + "' is defined twice");
    PLIR_ASSIGN_OR_RETURN(
        Tensor t, TensorFromProto(tp, opt_.base_dir, file_ + ": initializer '" + tp.name() + "'"));
    if (opt_.weights_as_constants) {
      PLIR_ASSIGN_OR_RETURN(auto c, t.ToConstant());
      values_[tp.name()] = Value{c, ""};
      continue;
    }
    std::vector<Dim> dims;
    for (int64_t d : t.shape) dims.push_back(Dim::Const(d));
    std::string name = UniqueName(tp.name());
    Var v = VarNode::Make(name, TensorTypeNode::Make(dims, t.dtype));
    params.push_back(v);
    values_[tp.name()] = Value{v, ""};
    result.param_names.push_back({name, tp.name()});
    onnx_names.push_back({name, AttrValue::String(tp.name())});
    result.weights.push_back({name, std::move(t)});
  }

  // The nodes, in order (ONNX graphs are topologically sorted).
  bb_.BeginDataflowBlock();
  opset_ = opset;
  PLIR_RETURN_IF_ERROR(ConvertNodes(g));

  // The result.
  std::vector<Expr> outs;
  std::vector<AttrValue> out_names;
  for (const auto& vi : g.output()) {
    const Value* v = Find(vi.name());
    if (!v) return InvalidArgument(file_ + ": graph output '" + vi.name() + "' is never computed");
    outs.push_back(v->expr);
    result.output_names.push_back(vi.name());
    out_names.push_back(AttrValue::String(vi.name()));
  }
  if (outs.empty()) return InvalidArgument(file_ + ": the graph has no outputs");
  Expr ret = outs.size() == 1 ? outs[0] : Expr(TupleNode::Make(outs));
  Var out = bb_.EmitOutput(ret, "output");
  SeqExpr body = bb_.Finalize(out);
  PLIR_ASSIGN_OR_RETURN(AttrValue names_map, AttrValue::Map(std::move(onnx_names)));
  std::vector<Attrs::Entry> entries = {{Symbol("global_symbol"), AttrValue::String("main")},
                                       {Symbol("num_input"), AttrValue::Int(result.num_input)},
                                       {Symbol("onnx_names"), names_map},
                                       {Symbol("onnx_outputs"), AttrValue::List(out_names)}};
  if (opset >= 0) entries.push_back({Symbol("onnx_opset"), AttrValue::Int(opset)});
  PLIR_ASSIGN_OR_RETURN(Attrs fattrs, Attrs::Make(std::move(entries)));
  Function f = FunctionNode::Make("main", params, nullptr, body, fattrs);
  PLIR_ASSIGN_OR_RETURN(Module m, Module::Make({f}));
  Status v = Verify(m);
  if (!v.ok()) return Internal(file_ + ": the imported module does not verify: " + v.message());
  result.module = m;
  return result;
}

// ---------------------------------------------------------------------------
// ConvertContext.

std::string ConvertContext::Where() const {
  std::string s = "node ";
  s += node_.name().empty()
           ? "(unnamed, output '" + (node_.output_size() ? node_.output(0) : std::string()) + "')"
           : "'" + node_.name() + "'";
  return s + " (" + node_.op_type() + ")";
}

Status ConvertContext::Error(const std::string& msg) const {
  return InvalidArgument(imp_->file() + ": " + Where() + ": " + msg);
}

StatusOr<Expr> ConvertContext::Input(int i) const {
  if (!HasInput(i)) return Error("input " + std::to_string(i) + " is missing");
  const Importer::Value* v = imp_->Find(node_.input(i));
  if (!v) return Error("input '" + node_.input(i) + "' is not defined");
  return v->expr;
}

const TensorTypeNode* ConvertContext::InputType(int i) const {
  if (!HasInput(i)) return nullptr;
  const Importer::Value* v = imp_->Find(node_.input(i));
  return v ? As<TensorTypeNode>(v->expr->type()) : nullptr;
}

DataType ConvertContext::InputDtype(int i) const {
  const TensorTypeNode* t = InputType(i);
  return t ? t->dtype() : DataType::kUnknown;
}

int ConvertContext::InputRank(int i) const {
  const TensorTypeNode* t = InputType(i);
  return t ? t->ndim() : -1;
}

StatusOr<std::vector<int64_t>> ConvertContext::InputShape(int i) const {
  const TensorTypeNode* t = InputType(i);
  if (!t || !t->IsStatic()) {
    const Importer::Value* v = HasInput(i) ? imp_->Find(node_.input(i)) : nullptr;
    return Error("input " + std::to_string(i) + " ('" +
                 (HasInput(i) ? node_.input(i) : std::string()) +
                 "') needs a static shape, but its type is " +
                 (v ? TypeToString(v->expr->type()) : "unknown"));
  }
  std::vector<int64_t> s;
  for (const Dim& d : t->shape()) s.push_back(d.value);
  return s;
}

std::optional<Tensor> ConvertContext::StaticInput(int i) const {
  if (!HasInput(i)) return std::nullopt;
  const Importer::Value* v = imp_->Find(node_.input(i));
  if (!v) return std::nullopt;
  if (const auto* c = As<ConstantNode>(v->expr)) return Tensor::FromConstant(*c);
  return std::nullopt;
}

StatusOr<Tensor> ConvertContext::RequireStatic(int i, const std::string& what) const {
  if (auto t = StaticInput(i)) return *t;
  std::string name = HasInput(i) ? node_.input(i) : "";
  const Importer::Value* v = imp_->Find(name);
  std::string msg = "input " + std::to_string(i) + " ('" + name + "', " + what +
                    ") must be known at import, but it is computed at run time";
  if (v && !v->graph_input.empty()) {
    imp_->NeedConstant(v->graph_input);
    msg += "; it is the graph input '" + v->graph_input + "': bind it with --constant-input " +
           v->graph_input + "=FILE.pb";
  } else {
    msg += " (bind the graph inputs it is computed from with --constant-input NAME=FILE.pb)";
  }
  return Status(StatusCode::kFailedPrecondition, imp_->file() + ": " + Where() + ": " + msg);
}

StatusOr<std::vector<int64_t>> ConvertContext::RequireInts(int i, const std::string& what) const {
  PLIR_ASSIGN_OR_RETURN(Tensor t, RequireStatic(i, what));
  if (!IsInt(t.dtype))
    return Error("input " + std::to_string(i) + " (" + what + ") must be integers");
  std::vector<int64_t> out;
  for (int64_t k = 0; k < t.NumElements(); ++k) out.push_back(t.GetInt(k));
  return out;
}

Status ConvertContext::Positive(const std::vector<int64_t>& v, const std::string& what) const {
  for (int64_t x : v)
    if (x <= 0) return Error(what + " must be positive, got " + std::to_string(x));
  return Status::Ok();
}

Status ConvertContext::Limit(const std::vector<int64_t>& dims, const std::string& what) const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return Error(what + ": negative size " + std::to_string(d));
    if (d != 0 && n > kMaxImportElements / d)
      return ResourceExhausted(imp_->file() + ": " + Where() + ": " + what +
                               " would be too large to build at import");
    n *= d;
  }
  if (n > kMaxImportElements)
    return ResourceExhausted(imp_->file() + ": " + Where() + ": " + what +
                             " would be too large to build at import");
  return Status::Ok();
}

const onnx::AttributeProto* ConvertContext::Attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t ConvertContext::AttrInt(const std::string& name, int64_t def) const {
  const auto* a = Attr(name);
  return a ? a->i() : def;
}
float ConvertContext::AttrFloat(const std::string& name, float def) const {
  const auto* a = Attr(name);
  return a ? a->f() : def;
}
std::string ConvertContext::AttrString(const std::string& name, const std::string& def) const {
  const auto* a = Attr(name);
  return a ? a->s() : def;
}
std::vector<int64_t> ConvertContext::AttrInts(const std::string& name,
                                              std::vector<int64_t> def) const {
  const auto* a = Attr(name);
  if (!a) return def;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}
std::vector<float> ConvertContext::AttrFloats(const std::string& name) const {
  const auto* a = Attr(name);
  if (!a) return {};
  return std::vector<float>(a->floats().begin(), a->floats().end());
}
StatusOr<Outputs> ConvertContext::Subgraph(const std::string& name) const {
  const auto* a = Attr(name);
  if (!a || !a->has_g()) return Error("attribute '" + name + "' is not a graph");
  return imp_->ConvertSubgraph(a->g());
}

StatusOr<Tensor> ConvertContext::AttrTensor(const std::string& name) const {
  const auto* a = Attr(name);
  if (!a || !a->has_t()) return Error("attribute '" + name + "' is not a tensor");
  onnx::TensorProto copy = a->t();
  return TensorFromProto(copy, "", imp_->file() + ": " + Where() + ": attribute '" + name + "'");
}

namespace {

// The operands of a call as kernels take them (what the interpreter
// passes): tensors, a tuple of tensors flattened, ints as 1-D int64.
bool FlattenStatic(const Expr& e, std::vector<Tensor>* out) {
  if (const auto* c = As<ConstantNode>(e)) {
    out->push_back(Tensor::FromConstant(*c));
    return true;
  }
  if (const auto* t = As<TupleNode>(e)) {
    bool ints = !t->fields().empty();
    for (const Expr& f : t->fields())
      ints = ints && As<PrimValueNode>(f) && IsInt(As<PrimValueNode>(f)->dtype());
    if (ints) {
      std::vector<int64_t> v;
      for (const Expr& f : t->fields()) v.push_back(As<PrimValueNode>(f)->int_value());
      out->push_back(MakeTensor(DataType::kInt64, {static_cast<int64_t>(v.size())},
                                [&](int64_t i) { return static_cast<double>(v[i]); }));
      return true;
    }
    for (const Expr& f : t->fields())
      if (!As<ConstantNode>(f)) return false;
    for (const Expr& f : t->fields()) out->push_back(Tensor::FromConstant(*As<ConstantNode>(f)));
    return true;
  }
  return false;
}

constexpr int64_t kFoldBytes = int64_t{64} << 20;
constexpr int64_t kFoldWork = int64_t{1} << 28;

}  // namespace

StatusOr<Expr> ConvertContext::Call(const std::string& op, std::vector<Expr> args, Attrs attrs,
                                    std::vector<Type> sinfo) {
  StatusOr<Expr> call = MakeOpCall(op, args, attrs, sinfo);
  if (!call.ok()) return Error(call.status().message());
  std::vector<Tensor> in;
  bool all = true;
  for (const Expr& a : args) all = all && FlattenStatic(a, &in);
  const auto* tt = As<TensorTypeNode>((*call)->type());
  if (all && tt && tt->IsStatic() && tt->NumElements() * DataTypeSize(tt->dtype()) <= kFoldBytes &&
      EstimateWork(op, in, tt->NumElements()) <= kFoldWork) {
    StatusOr<Tensor> r = EvalOp(op, in, attrs);
    if (r.ok()) {
      auto c = r->ToConstant();
      if (c.ok()) return Expr(*c);
    }
  }
  return Expr(imp_->bb().Emit(*call, imp_->current_hint));
}

StatusOr<Expr> ConvertContext::Const(const Tensor& t) const {
  PLIR_ASSIGN_OR_RETURN(auto c, t.ToConstant());
  return Expr(c);
}

StatusOr<Expr> ConvertContext::Scalar(double v, DataType dt) const {
  if (IsInt(dt) || dt == DataType::kBool) {
    PLIR_ASSIGN_OR_RETURN(Tensor t,
                          MakeIntTensor(dt, {}, [&](int64_t) { return static_cast<int64_t>(v); }));
    return Const(t);
  }
  return Const(MakeTensor(dt, {}, [&](int64_t) { return v; }));
}

StatusOr<Expr> ConvertContext::Int64s(const std::vector<int64_t>& v) const {
  PLIR_ASSIGN_OR_RETURN(Tensor t, MakeIntTensor(DataType::kInt64, {static_cast<int64_t>(v.size())},
                                                [&](int64_t i) { return v[i]; }));
  return Const(t);
}

Expr ConvertContext::IntTuple(const std::vector<int64_t>& v) {
  std::vector<Expr> f;
  for (int64_t x : v) f.push_back(PrimValueNode::Int(x));
  return TupleNode::Make(f);
}

StatusOr<Expr> ConvertContext::Cast(Expr x, DataType dt) {
  const auto* t = As<TensorTypeNode>(x->type());
  if (t && t->dtype() == dt) return x;
  return Call("astype", {x},
              MakeAttrs({{Symbol("dtype"), AttrValue::String(std::string(DataTypeName(dt)))}}));
}

AttrValue IntList(const std::vector<int64_t>& v) {
  std::vector<AttrValue> items;
  for (int64_t x : v) items.push_back(AttrValue::Int(x));
  return AttrValue::List(items);
}

Attrs MakeAttrs(std::vector<Attrs::Entry> entries) {
  auto a = Attrs::Make(std::move(entries));
  return a.ok() ? *a : Attrs();
}

std::string OpAttrName(const std::string& op, const std::vector<std::string>& candidates) {
  Op o = OpRegistry::Global().Lookup(op);
  if (o)
    for (const std::string& n : candidates)
      if (o->FindAttr(n)) return n;
  return candidates.empty() ? "" : candidates[0];
}

StatusOr<int64_t> NormAxis(const ConvertContext& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return c.Error("axis " + std::to_string(axis) + " is out of range for rank " +
                   std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// ---------------------------------------------------------------------------
// The converter table.

void ConverterTable::Add(std::string op, int since, std::vector<std::string> needs,
                         ConverterFn fn) {
  auto& v = by_op_[op];
  v.push_back(Converter{op, since, std::move(needs), std::move(fn)});
  std::sort(v.begin(), v.end(),
            [](const Converter& a, const Converter& b) { return a.since < b.since; });
}

const Converter* ConverterTable::Find(const std::string& op, int opset, std::string* why) const {
  auto it = by_op_.find(op);
  if (it == by_op_.end()) {
    if (why) *why = "";
    return nullptr;
  }
  const Converter* best = nullptr;
  for (const Converter& c : it->second)
    if (c.since <= opset) best = &c;
  if (!best) {
    if (why) *why = "no converter for opset " + std::to_string(opset);
    return nullptr;
  }
  for (const std::string& n : best->needs)
    if (!OpRegistry::Global().Lookup(n)) {
      if (why) *why = "PLIR has no op " + n;
      return nullptr;
    }
  return best;
}

std::vector<std::string> ConverterTable::Ops() const {
  std::vector<std::string> out;
  for (const auto& [op, v] : by_op_) out.push_back(op);
  return out;
}

std::vector<int> ConverterTable::Versions(const std::string& op) const {
  std::vector<int> out;
  auto it = by_op_.find(op);
  if (it != by_op_.end())
    for (const Converter& c : it->second) out.push_back(c.since);
  return out;
}

const ConverterTable& Converters() {
  static const ConverterTable* table = [] {
    auto* t = new ConverterTable;
    RegisterElementwiseConverters(*t);
    RegisterShapeConverters(*t);
    RegisterNnConverters(*t);
    RegisterMathConverters(*t);
    RegisterImageConverters(*t);
    RegisterLossConverters(*t);
    RegisterRnnConverters(*t);
    RegisterTrainingConverters(*t);
    return t;
  }();
  return *table;
}

std::vector<std::pair<std::string, std::string>> UnsupportedOps(const onnx::ModelProto& model) {
  std::map<std::string, std::string> out;
  for (const auto& n : model.graph().node()) {
    std::string why;
    std::string key = IsDefaultDomain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
    int node_opset = 0;
    if (!FindConverter(model, n, &node_opset, &why))
      out[key] = why.empty() ? "no converter" : why;
    else
      out[key] = "";
  }
  return {out.begin(), out.end()};
}

// ---------------------------------------------------------------------------
// Entry points.

// onnx's version converter crashes (segfaults) on some malformed models
// that onnx::checker accepts (found by the importer's fuzzer), so it runs
// in a forked child that sends the converted model back through a pipe:
// a crash, an abort or a sanitizer's report ends the child, not the
// importer, and becomes an error naming the file. Returns the converted
// model, nullopt when the converter rejects the model (it throws), or the
// error. The child only parses, converts and serializes protobufs; the
// importer runs no threads of its own, so forking here is safe for it.
namespace {

StatusOr<std::optional<onnx::ModelProto>> ConvertVersionIsolated(const onnx::ModelProto& model,
                                                                 const std::string& file) {
  constexpr int kRejected = 3;         // the child's exit code: the converter threw
  constexpr unsigned kTimeLimit = 60;  // seconds (SIGALRM ends a looping converter)
  int fds[2];
  if (pipe(fds) != 0) return Internal(file + ": pipe: " + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Internal(file + ": fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(kTimeLimit);
    std::string bytes;
    try {
      onnx::ModelProto out = onnx::version_conversion::ConvertVersion(model, kMinOpset);
      if (!out.SerializeToString(&bytes)) _exit(kRejected);
    } catch (...) {
      _exit(kRejected);
    }
    for (size_t at = 0; at < bytes.size();) {
      ssize_t n = write(fds[1], bytes.data() + at, bytes.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(1);
      at += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return Internal(file + ": waitpid: " + std::strerror(errno));
  if (WIFEXITED(st) && WEXITSTATUS(st) == kRejected) return std::optional<onnx::ModelProto>();
  std::string how = WIFSIGNALED(st) ? std::string("signal ") + std::to_string(WTERMSIG(st))
                                    : "exit " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
    how = "no result after " + std::to_string(kTimeLimit) + " s";
  onnx::ModelProto out;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !out.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return InvalidArgument(file + ": onnx's version converter (opset " +
                           std::to_string(DefaultOpset(model)) + " to " +
                           std::to_string(kMinOpset) + ") failed on this model (" + how + ")");
  return std::optional<onnx::ModelProto>(std::move(out));
}

}  // namespace

StatusOr<ImportResult> ImportModel(onnx::ModelProto& model, const std::string& file,
                                   const ImportOptions& options) {
  if (options.check_model) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception& e) {
      return InvalidArgument(file + ": the model fails onnx::checker: " + e.what());
    }
  }
  // Opsets below 7 go through onnx's version converter to opset 7 first.
  int opset = DefaultOpset(model);
  if (opset >= 1 && opset < kMinOpset) {
    // When it cannot (its adapters reject some legacy broadcasts), the model
    // is imported at its own opset by the converters that cover it.
    StatusOr<std::optional<onnx::ModelProto>> converted = ConvertVersionIsolated(model, file);
    if (!converted.ok()) return converted.status();
    if (*converted) model = std::move(**converted);
  }
  try {
    Importer imp(model, file, options);
    return imp.Run();
  } catch (const std::exception& e) {
    return Internal(file + ": import failed: " + e.what());
  }
}

StatusOr<ImportResult> ImportModelBytes(std::string_view bytes, const std::string& file,
                                        const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return InvalidArgument(file + ": not an ONNX model (malformed protobuf)");
  return ImportModel(model, file, options);
}

StatusOr<ImportResult> ImportModelFile(const std::string& path, ImportOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in))
    return InvalidArgument(path + ": not an ONNX model (malformed protobuf)");
  if (options.base_dir.empty()) {
    size_t slash = path.find_last_of('/');
    options.base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  }
  return ImportModel(model, path, options);
}

Status WriteWeights(const ImportResult& result, const std::string& path) {
  PLIR_ASSIGN_OR_RETURN(auto w, SafetensorsWriter::Create(path));
  for (size_t i = 0; i < result.weights.size(); ++i)
    PLIR_RETURN_IF_ERROR(
        w->Add(static_cast<int64_t>(i), result.weights[i].first, result.weights[i].second));
  return w->Finish();
}

}  // namespace plir::onnx_import
