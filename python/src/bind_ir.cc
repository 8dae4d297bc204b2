// _plir, part 1: node wrappers, types, modules, parsing and saving,
// structural comparison, the block builder, the visitor and the mutator.
#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "ir/builder.h"
#include "ir/op.h"
#include "ir/serialize/module_file.h"
#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "python/src/bind.h"

namespace plir::py_bind {

void Throw(const std::string& kind, const Status& s) { throw PlirException{kind, s.message()}; }

namespace {

// One wrapper struct per node kind, so that each is its own Python class.
#define PLIR_WRAPPER(NAME, BASE) \
  struct NAME##H : BASE {};
PLIR_WRAPPER(TensorType, TypeH)
PLIR_WRAPPER(TupleType, TypeH)
PLIR_WRAPPER(ObjectType, TypeH)
PLIR_WRAPPER(PrimType, TypeH)
PLIR_WRAPPER(ShapeType, TypeH)
PLIR_WRAPPER(FuncType, TypeH)
PLIR_WRAPPER(Var, ExprH)
PLIR_WRAPPER(GlobalVar, ExprH)
PLIR_WRAPPER(Op, ExprH)
PLIR_WRAPPER(Tuple, ExprH)
PLIR_WRAPPER(TupleGetItem, ExprH)
PLIR_WRAPPER(PrimValue, ExprH)
PLIR_WRAPPER(StringImm, ExprH)
PLIR_WRAPPER(Constant, ExprH)
PLIR_WRAPPER(Call, ExprH)
PLIR_WRAPPER(If, ExprH)
PLIR_WRAPPER(SeqExpr, ExprH)
PLIR_WRAPPER(ShapeExpr, ExprH)
PLIR_WRAPPER(PrimExpr, ExprH)
PLIR_WRAPPER(LocalFn, ExprH)
PLIR_WRAPPER(Binding, NodeH)
PLIR_WRAPPER(BindingBlock, NodeH)
struct ItemH : NodeH {};
PLIR_WRAPPER(Function, ItemH)
PLIR_WRAPPER(ExternFunc, ItemH)
#undef PLIR_WRAPPER

template <typename T>
py::object Make(const Ref<Node>& n) {
  T h;
  h.ref = n;
  return py::cast(std::move(h));
}

template <typename N, typename H>
const N& Get(const H& h) {
  return *static_cast<const N*>(h.ref.get());
}

[[noreturn]] void TypeErr(const char* param, const char* want, py::handle got) {
  throw py::type_error(std::string("argument '") + param + "' must be " + want + ", not " +
                       std::string(py::str(py::type::of(got).attr("__name__"))));
}

py::list DimsToPy(const std::vector<Dim>& dims) {
  py::list l;
  for (const Dim& d : dims) {
    if (d.is_const())
      l.append(d.value);
    else
      l.append(DimToString(d));
  }
  return l;
}

std::vector<Dim> DimsFromPy(py::handle h, const char* param) {
  std::vector<Dim> out;
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    TypeErr(param, "a sequence of ints and strings", h);
  for (py::handle d : h) {
    if (py::isinstance<py::bool_>(d)) TypeErr(param, "a sequence of ints and strings", d);
    if (py::isinstance<py::int_>(d)) {
      out.push_back(Dim::Const(d.cast<int64_t>()));
    } else if (py::isinstance<py::str>(d)) {
      out.push_back(Unwrap(ParseDimText(d.cast<std::string>())));
    } else {
      TypeErr(param, "a sequence of ints and strings", d);
    }
  }
  return out;
}

DataType DtypeFromPy(py::handle h, const char* param) {
  if (!py::isinstance<py::str>(h)) {
    // numpy dtypes and types: by name.
    if (py::hasattr(h, "name") || py::hasattr(h, "__name__")) {
      py::object name = py::hasattr(h, "name") ? h.attr("name") : h.attr("__name__");
      if (py::isinstance<py::str>(name)) return DtypeFromPy(name, param);
    }
    TypeErr(param, "a dtype name (str)", h);
  }
  std::string s = h.cast<std::string>();
  if (s == "bool_") s = "bool";
  auto dt = ParseDataType(s);
  if (!dt)
    throw py::value_error(std::string("argument '") + param + "': unknown dtype '" + s + "'");
  return *dt;
}

std::string ItemText(const Ref<Node>& n) {
  return PrintItem(Downcast<ItemNode>(n), PrintOptions{.version_header = false});
}

// Text of any node, for __str__.
std::string NodeText(const Ref<Node>& n) {
  if (IsTypeKind(n->kind())) return TypeToString(Downcast<TypeNode>(n));
  if (IsExprKind(n->kind())) return PrintExpr(Downcast<ExprNode>(n));
  switch (n->kind()) {
    case NodeKind::kFunction:
    case NodeKind::kExternFunc:
      return ItemText(n);
    case NodeKind::kVarBinding: {
      auto& b = *As<VarBindingNode>(n);
      return "%" + b.var()->name_hint() + " = " + PrintExpr(b.value());
    }
    case NodeKind::kBindingBlock: {
      auto& b = *As<BindingBlockNode>(n);
      std::string s = b.is_dataflow() ? "dataflow {\n" : "{\n";
      for (const Binding& x : b.bindings())
        s += "  %" + x->var()->name_hint() + " = " + PrintExpr(x->value()) + ";\n";
      return s + "}";
    }
    default:
      return NodeKindName(n->kind());
  }
}

class PyVisitor : public IRVisitor {
 public:
  PyVisitor(py::function enter, py::function leave, bool visit_types)
      : enter_(std::move(enter)), leave_(std::move(leave)) {
    visit_types_ = visit_types;
  }
  std::string Path() const { return CurrentPath(); }

 protected:
  bool Enter(const Node* n, bool is_def) override {
    if (!enter_) return true;
    py::object r = enter_(Wrap(Ref<Node>(n)), is_def);
    return r.is_none() || r.cast<bool>();
  }
  void Leave(const Node* n, bool is_def) override {
    if (leave_) leave_(Wrap(Ref<Node>(n)), is_def);
  }

 private:
  py::function enter_, leave_;
};

class PyMutator : public ExprMutator {
 public:
  PyMutator(py::function rewrite, py::object var_def)
      : rewrite_(std::move(rewrite)), var_def_(std::move(var_def)) {}
  void Remap(const ExprH& from, const ExprH& to) {
    const VarNode* v = As<VarNode>(from.ref);
    if (!v) throw py::type_error("argument 'var' must be a plir.Var");
    RemapVar(v, Downcast<ExprNode>(to.ref));
  }

 protected:
  Ref<Node> Rewrite(const Ref<Node>& n) override {
    py::object r = rewrite_(Wrap(n));
    if (r.is_none()) return nullptr;
    if (!py::isinstance<NodeH>(r))
      throw py::type_error("rewrite must return a plir node or None, not " +
                           std::string(py::str(py::type::of(r).attr("__name__"))));
    return r.cast<const NodeH&>().ref;
  }
  Var RewriteVarDef(const Var& v) override {
    if (var_def_.is_none()) return v;
    py::object r = var_def_(Wrap(v));
    if (r.is_none()) return v;
    const NodeH& h = r.cast<const NodeH&>();
    if (!As<VarNode>(h.ref)) throw py::type_error("rewrite_var_def must return a plir.Var");
    return Downcast<VarNode>(h.ref);
  }

 private:
  py::function rewrite_;
  py::object var_def_;
};

void WriteFileAtomically(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw py::value_error("cannot write '" + path + "'");
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      std::remove(tmp.c_str());
      throw py::value_error("cannot write '" + path + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw py::value_error("cannot write '" + path + "'");
  }
}

std::string Serialize(const Module& m, const std::string& format) {
  if (format == "text") return PrintModule(m);
  if (format == "json") return SaveJson(m);
  if (format == "binary") return SaveBinary(m);
  throw py::value_error("argument 'format' must be 'text', 'json' or 'binary', not '" + format +
                        "'");
}

std::vector<Var> VarsFromPy(py::handle h, const char* param) {
  std::vector<Var> out;
  if (!py::isinstance<py::sequence>(h)) TypeErr(param, "a list of plir.Var", h);
  for (py::handle v : h) {
    if (!py::isinstance<VarH>(v)) TypeErr(param, "a list of plir.Var", v);
    out.push_back(Downcast<VarNode>(v.cast<const VarH&>().ref));
  }
  return out;
}

std::vector<Expr> ExprsFromPy(py::handle h, const char* param) {
  std::vector<Expr> out;
  if (!py::isinstance<py::sequence>(h) || py::isinstance<py::str>(h))
    TypeErr(param, "a list of plir expressions", h);
  for (py::handle v : h) out.push_back(ToExpr(v, param));
  return out;
}

std::vector<Type> TypesFromPy(py::handle h, const char* param) {
  std::vector<Type> out;
  if (h.is_none()) return out;
  if (!py::isinstance<py::sequence>(h)) TypeErr(param, "a list of plir types", h);
  for (py::handle v : h) out.push_back(ToType(v, param));
  return out;
}

SeqExpr ToSeq(py::handle h, const char* param) {
  Expr e = ToExpr(h, param);
  if (!As<SeqExprNode>(e)) TypeErr(param, "a plir.SeqExpr", h);
  return Downcast<SeqExprNode>(e);
}

py::list ExprList(ExprSpan s) {
  py::list l;
  for (const Expr& e : s) l.append(Wrap(e));
  return l;
}
template <typename T>
py::list RefList(const T& v) {
  py::list l;
  for (const auto& e : v) l.append(Wrap(e));
  return l;
}

}  // namespace

py::object Wrap(const Ref<Node>& n) {
  if (!n) return py::none();
  switch (n->kind()) {
    case NodeKind::kTensorType:
      return Make<TensorTypeH>(n);
    case NodeKind::kTupleType:
      return Make<TupleTypeH>(n);
    case NodeKind::kObjectType:
      return Make<ObjectTypeH>(n);
    case NodeKind::kPrimType:
      return Make<PrimTypeH>(n);
    case NodeKind::kShapeType:
      return Make<ShapeTypeH>(n);
    case NodeKind::kFuncType:
      return Make<FuncTypeH>(n);
    case NodeKind::kVar:
      return Make<VarH>(n);
    case NodeKind::kGlobalVar:
      return Make<GlobalVarH>(n);
    case NodeKind::kOp:
      return Make<OpH>(n);
    case NodeKind::kTuple:
      return Make<TupleH>(n);
    case NodeKind::kTupleGetItem:
      return Make<TupleGetItemH>(n);
    case NodeKind::kPrimValue:
      return Make<PrimValueH>(n);
    case NodeKind::kStringImm:
      return Make<StringImmH>(n);
    case NodeKind::kConstant:
      return Make<ConstantH>(n);
    case NodeKind::kCall:
      return Make<CallH>(n);
    case NodeKind::kIf:
      return Make<IfH>(n);
    case NodeKind::kSeqExpr:
      return Make<SeqExprH>(n);
    case NodeKind::kShapeExpr:
      return Make<ShapeExprH>(n);
    case NodeKind::kPrimExpr:
      return Make<PrimExprH>(n);
    case NodeKind::kLocalFn:
      return Make<LocalFnH>(n);
    case NodeKind::kVarBinding:
      return Make<BindingH>(n);
    case NodeKind::kBindingBlock:
      return Make<BindingBlockH>(n);
    case NodeKind::kFunction:
      return Make<FunctionH>(n);
    case NodeKind::kExternFunc:
      return Make<ExternFuncH>(n);
  }
  return Make<NodeH>(n);
}

Expr ToExpr(py::handle h, const char* param) {
  if (py::isinstance<NodeH>(h)) {
    const Ref<Node>& r = h.cast<const NodeH&>().ref;
    if (r && IsExprKind(r->kind())) return Downcast<ExprNode>(r);
  }
  TypeErr(param, "a plir expression", h);
}

Type ToType(py::handle h, const char* param) {
  if (py::isinstance<TypeH>(h)) return Downcast<TypeNode>(h.cast<const TypeH&>().ref);
  TypeErr(param, "a plir type", h);
}

Module ToModule(py::handle h, const char* param) {
  if (py::isinstance<ModuleH>(h)) return h.cast<const ModuleH&>().mod;
  TypeErr(param, "a plir.Module", h);
}

namespace {
AttrValue ToAttrValue(py::handle v, const char* param, int depth) {
  if (depth > AttrValue::kMaxAttrDepth)
    throw py::value_error(std::string("argument '") + param + "': attributes nest too deep");
  if (py::isinstance<py::bool_>(v)) return AttrValue::Bool(v.cast<bool>());
  if (py::isinstance<py::int_>(v)) return AttrValue::Int(v.cast<int64_t>());
  if (py::isinstance<py::float_>(v)) return AttrValue::Float(v.cast<double>());
  if (py::isinstance<py::str>(v)) return AttrValue::String(v.cast<std::string>());
  if (py::isinstance<TypeH>(v)) return AttrValue::OfType(ToType(v, param));
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::vector<AttrValue> items;
    for (py::handle x : v) items.push_back(ToAttrValue(x, param, depth + 1));
    return AttrValue::List(std::move(items));
  }
  if (py::isinstance<py::dict>(v)) {
    std::vector<AttrValue::MapEntry> entries;
    for (auto kv : v.cast<py::dict>()) {
      if (!py::isinstance<py::str>(kv.first)) TypeErr(param, "a dict with str keys", kv.first);
      entries.emplace_back(kv.first.cast<std::string>(), ToAttrValue(kv.second, param, depth + 1));
    }
    return Unwrap(AttrValue::Map(std::move(entries)));
  }
  TypeErr(param, "an attribute value (int, float, bool, str, type, list or dict)", v);
}
}  // namespace

Attrs ToAttrs(py::handle dict, const char* param) {
  if (dict.is_none()) return Attrs();
  if (!py::isinstance<py::dict>(dict)) TypeErr(param, "a dict", dict);
  std::vector<Attrs::Entry> entries;
  for (auto kv : dict.cast<py::dict>()) {
    if (!py::isinstance<py::str>(kv.first)) TypeErr(param, "a dict with str keys", kv.first);
    entries.emplace_back(Symbol(kv.first.cast<std::string>()), ToAttrValue(kv.second, param, 1));
  }
  return Unwrap(Attrs::Make(std::move(entries)));
}

py::object FromAttrValue(const AttrValue& v) {
  switch (v.kind()) {
    case AttrValue::Kind::kInt:
      return py::int_(v.as_int());
    case AttrValue::Kind::kFloat:
      return py::float_(v.as_float());
    case AttrValue::Kind::kBool:
      return py::bool_(v.as_bool());
    case AttrValue::Kind::kString:
      return py::str(v.as_string());
    case AttrValue::Kind::kType:
      return Wrap(v.as_type());
    case AttrValue::Kind::kList: {
      py::list l;
      for (const AttrValue& x : v.as_list()) l.append(FromAttrValue(x));
      return l;
    }
    case AttrValue::Kind::kMap: {
      py::dict d;
      for (const auto& [k, x] : v.as_map()) d[py::str(k)] = FromAttrValue(x);
      return d;
    }
  }
  return py::none();
}

py::dict FromAttrs(const Attrs& a) {
  py::dict d;
  for (const auto& [k, v] : a.entries()) d[py::str(k.str())] = FromAttrValue(v);
  return d;
}

void BindIR(py::module_& m) {
  py::class_<NodeH>(m, "Node", "An immutable IR node; == is identity.")
      .def_property_readonly("kind", [](const NodeH& h) { return NodeKindName(h.ref->kind()); })
      .def("same_as", [](const NodeH& a, const NodeH& b) { return a.ref == b.ref; })
      .def("__eq__",
           [](const NodeH& a, py::object b) {
             return py::isinstance<NodeH>(b) && a.ref == b.cast<const NodeH&>().ref;
           })
      .def("__ne__",
           [](const NodeH& a, py::object b) {
             return !(py::isinstance<NodeH>(b) && a.ref == b.cast<const NodeH&>().ref);
           })
      .def("__hash__", [](const NodeH& h) { return reinterpret_cast<uintptr_t>(h.ref.get()); })
      .def_property_readonly(
          "_address", [](const NodeH& h) { return reinterpret_cast<uintptr_t>(h.ref.get()); })
      .def_property_readonly("_use_count", [](const NodeH& h) { return h.ref->use_count(); })
      .def("__str__", [](const NodeH& h) { return NodeText(h.ref); })
      .def("__repr__", [](const NodeH& h) {
        std::string s = NodeText(h.ref);
        if (s.size() > 200) s = s.substr(0, 200) + "...";
        return std::string("plir.") + NodeKindName(h.ref->kind()) + "(" + s + ")";
      });

  // Types.
  py::class_<TypeH, NodeH>(m, "Type");
  py::class_<TensorTypeH, TypeH>(m, "TensorType")
      .def(py::init([](py::object shape, py::object dtype, int ndim) {
             DataType dt = dtype.is_none() ? DataType::kUnknown : DtypeFromPy(dtype, "dtype");
             TensorTypeH h;
             if (shape.is_none())
               h.ref = TensorTypeNode::MakeRank(ndim, dt);
             else
               h.ref = TensorTypeNode::Make(DimsFromPy(shape, "shape"), dt);
             return h;
           }),
           py::arg("shape") = py::none(), py::arg("dtype") = "float32", py::arg("ndim") = -1)
      .def_property_readonly("shape",
                             [](const TensorTypeH& h) -> py::object {
                               auto& t = Get<TensorTypeNode>(h);
                               if (!t.has_shape()) return py::none();
                               return DimsToPy(t.shape());
                             })
      .def_property_readonly("dtype",
                             [](const TensorTypeH& h) {
                               return std::string(DataTypeName(Get<TensorTypeNode>(h).dtype()));
                             })
      .def_property_readonly("ndim",
                             [](const TensorTypeH& h) { return Get<TensorTypeNode>(h).ndim(); });
  py::class_<TupleTypeH, TypeH>(m, "TupleType")
      .def(py::init([](py::object fields) {
             TupleTypeH h;
             h.ref = TupleTypeNode::Make(TypesFromPy(fields, "fields"));
             return h;
           }),
           py::arg("fields"))
      .def_property_readonly(
          "fields", [](const TupleTypeH& h) { return RefList(Get<TupleTypeNode>(h).fields()); });
  py::class_<ObjectTypeH, TypeH>(m, "ObjectType").def(py::init([]() {
    ObjectTypeH h;
    h.ref = ObjectTypeNode::Get();
    return h;
  }));
  py::class_<PrimTypeH, TypeH>(m, "PrimType")
      .def(py::init([](py::object dtype) {
             PrimTypeH h;
             h.ref = PrimTypeNode::Make(DtypeFromPy(dtype, "dtype"));
             return h;
           }),
           py::arg("dtype"))
      .def_property_readonly("dtype", [](const PrimTypeH& h) {
        return std::string(DataTypeName(Get<PrimTypeNode>(h).dtype()));
      });
  py::class_<ShapeTypeH, TypeH>(m, "ShapeType")
      .def(py::init([](py::object values, int ndim) {
             ShapeTypeH h;
             h.ref = values.is_none() ? ShapeTypeNode::MakeRank(ndim)
                                      : ShapeTypeNode::Make(DimsFromPy(values, "values"));
             return h;
           }),
           py::arg("values") = py::none(), py::arg("ndim") = -1)
      .def_property_readonly("values",
                             [](const ShapeTypeH& h) -> py::object {
                               auto& t = Get<ShapeTypeNode>(h);
                               if (!t.has_values()) return py::none();
                               return DimsToPy(t.values());
                             })
      .def_property_readonly("ndim",
                             [](const ShapeTypeH& h) { return Get<ShapeTypeNode>(h).ndim(); });
  py::class_<FuncTypeH, TypeH>(m, "FuncType")
      .def(py::init([](py::object params, py::object ret, bool pure) {
             FuncTypeH h;
             h.ref = FuncTypeNode::Make(TypesFromPy(params, "params"), ToType(ret, "ret"), pure);
             return h;
           }),
           py::arg("params"), py::arg("ret"), py::arg("pure") = true)
      .def_property_readonly(
          "params", [](const FuncTypeH& h) { return RefList(Get<FuncTypeNode>(h).params()); })
      .def_property_readonly("ret",
                             [](const FuncTypeH& h) { return Wrap(Get<FuncTypeNode>(h).ret()); })
      .def_property_readonly("pure",
                             [](const FuncTypeH& h) { return Get<FuncTypeNode>(h).pure(); });
  m.def(
      "parse_type", [](const std::string& text) { return Wrap(Unwrap(ParseType(text), "parse")); },
      py::arg("text"));

  // Expressions.
  py::class_<ExprH, NodeH>(m, "Expr").def_property_readonly(
      "type", [](const ExprH& h) { return Wrap(Get<ExprNode>(h).type()); });
  m.attr("Expr").attr("struct_info") = m.attr("Expr").attr("type");
  py::class_<VarH, ExprH>(m, "Var")
      .def(py::init([](const std::string& name, py::object type, bool is_dataflow) {
             VarH h;
             h.ref = VarNode::Make(std::string_view(name),
                                   type.is_none() ? ObjectTypeNode::Get() : ToType(type, "type"),
                                   is_dataflow);
             return h;
           }),
           py::arg("name_hint"), py::arg("type") = py::none(), py::arg("is_dataflow") = false)
      .def_property_readonly("name_hint", [](const VarH& h) { return Get<VarNode>(h).name_hint(); })
      .def_property_readonly("is_dataflow",
                             [](const VarH& h) { return Get<VarNode>(h).is_dataflow(); });
  py::class_<GlobalVarH, ExprH>(m, "GlobalVar")
      .def(py::init([](const std::string& name) {
             GlobalVarH h;
             h.ref = GlobalVarNode::Make(name);
             return h;
           }),
           py::arg("name"))
      .def_property_readonly("name",
                             [](const GlobalVarH& h) { return Get<GlobalVarNode>(h).name(); });
  py::class_<OpH, ExprH>(m, "Op")
      .def_static(
          "get",
          [](const std::string& name) {
            Op op = OpRegistry::Global().Lookup(name);
            if (!op) Throw("error", NotFound("unknown op '" + name + "'"));
            return Wrap(op);
          },
          py::arg("name"))
      .def_property_readonly("name", [](const OpH& h) { return Get<OpNode>(h).name(); })
      .def_property_readonly("pure", [](const OpH& h) { return Get<OpNode>(h).pure(); })
      .def_property_readonly("pattern", [](const OpH& h) {
        return std::string(OpPatternName(Get<OpNode>(h).pattern()));
      });
  py::class_<TupleH, ExprH>(m, "Tuple")
      .def(py::init([](py::object fields) {
             TupleH h;
             h.ref = TupleNode::Make(ExprsFromPy(fields, "fields"));
             return h;
           }),
           py::arg("fields"))
      .def_property_readonly("fields",
                             [](const TupleH& h) { return ExprList(Get<TupleNode>(h).fields()); })
      .def("__len__", [](const TupleH& h) { return Get<TupleNode>(h).fields().size(); });
  py::class_<TupleGetItemH, ExprH>(m, "TupleGetItem")
      .def(py::init([](py::object tuple, int64_t index) {
             TupleGetItemH h;
             h.ref = Unwrap(TupleGetItemNode::Make(ToExpr(tuple, "tuple"), index));
             return h;
           }),
           py::arg("tuple"), py::arg("index"))
      .def_property_readonly(
          "tuple", [](const TupleGetItemH& h) { return Wrap(Get<TupleGetItemNode>(h).tuple()); })
      .def_property_readonly(
          "index", [](const TupleGetItemH& h) { return Get<TupleGetItemNode>(h).index(); });
  py::class_<PrimValueH, ExprH>(m, "PrimValue")
      .def(py::init([](py::object v) {
             PrimValueH h;
             if (py::isinstance<py::bool_>(v))
               h.ref = PrimValueNode::Bool(v.cast<bool>());
             else if (py::isinstance<py::int_>(v))
               h.ref = PrimValueNode::Int(v.cast<int64_t>());
             else if (py::isinstance<py::float_>(v))
               h.ref = PrimValueNode::Float(v.cast<double>());
             else
               TypeErr("value", "an int, float or bool", v);
             return h;
           }),
           py::arg("value"))
      .def_property_readonly("value",
                             [](const PrimValueH& h) -> py::object {
                               auto& p = Get<PrimValueNode>(h);
                               if (p.dtype() == DataType::kBool)
                                 return py::bool_(p.int_value() != 0);
                               if (IsFloat(p.dtype())) return py::float_(p.float_value());
                               return py::int_(p.int_value());
                             })
      .def_property_readonly("dtype", [](const PrimValueH& h) {
        return std::string(DataTypeName(Get<PrimValueNode>(h).dtype()));
      });
  py::class_<StringImmH, ExprH>(m, "StringImm")
      .def(py::init([](const std::string& v) {
             StringImmH h;
             h.ref = StringImmNode::Make(v);
             return h;
           }),
           py::arg("value"))
      .def_property_readonly("value",
                             [](const StringImmH& h) { return Get<StringImmNode>(h).value(); });
  py::class_<ConstantH, ExprH>(m, "Constant");  // data access: bind_tools.cc
  py::class_<CallH, ExprH>(m, "Call")
      .def_property_readonly("op", [](const CallH& h) { return Wrap(Get<CallNode>(h).callee()); })
      .def_property_readonly("callee",
                             [](const CallH& h) { return Wrap(Get<CallNode>(h).callee()); })
      .def_property_readonly("args",
                             [](const CallH& h) { return ExprList(Get<CallNode>(h).args()); })
      .def_property_readonly("attrs",
                             [](const CallH& h) { return FromAttrs(Get<CallNode>(h).attrs()); })
      .def_property_readonly("sinfo_args",
                             [](const CallH& h) { return RefList(Get<CallNode>(h).sinfo_args()); });
  py::class_<IfH, ExprH>(m, "If")
      .def(py::init([](py::object cond, py::object t, py::object e) {
             IfH h;
             h.ref = Unwrap(
                 IfNode::Make(ToExpr(cond, "cond"), ToSeq(t, "then_body"), ToSeq(e, "else_body")));
             return h;
           }),
           py::arg("cond"), py::arg("then_body"), py::arg("else_body"))
      .def_property_readonly("cond", [](const IfH& h) { return Wrap(Get<IfNode>(h).cond()); })
      .def_property_readonly("then_body",
                             [](const IfH& h) { return Wrap(Get<IfNode>(h).then_body()); })
      .def_property_readonly("else_body",
                             [](const IfH& h) { return Wrap(Get<IfNode>(h).else_body()); });
  py::class_<SeqExprH, ExprH>(m, "SeqExpr")
      .def(py::init([](py::object blocks, py::object result) {
             std::vector<Block> bs;
             if (!py::isinstance<py::sequence>(blocks))
               TypeErr("blocks", "a list of plir.BindingBlock", blocks);
             for (py::handle b : blocks) {
               if (!py::isinstance<BindingBlockH>(b))
                 TypeErr("blocks", "a list of plir.BindingBlock", b);
               bs.push_back(Downcast<BindingBlockNode>(b.cast<const BindingBlockH&>().ref));
             }
             SeqExprH h;
             h.ref = SeqExprNode::Make(std::move(bs), ToExpr(result, "result"));
             return h;
           }),
           py::arg("blocks"), py::arg("result"))
      .def_property_readonly(
          "blocks", [](const SeqExprH& h) { return RefList(Get<SeqExprNode>(h).blocks()); })
      .def_property_readonly("result",
                             [](const SeqExprH& h) { return Wrap(Get<SeqExprNode>(h).result()); });
  py::class_<ShapeExprH, ExprH>(m, "ShapeExpr")
      .def(py::init([](py::object values) {
             ShapeExprH h;
             h.ref = ShapeExprNode::Make(DimsFromPy(values, "values"));
             return h;
           }),
           py::arg("values"))
      .def_property_readonly(
          "values", [](const ShapeExprH& h) { return DimsToPy(Get<ShapeExprNode>(h).values()); });
  py::class_<PrimExprH, ExprH>(m, "PrimExpr")
      .def_property_readonly(
          "value", [](const PrimExprH& h) { return DimToString(Get<PrimExprNode>(h).value()); });
  py::class_<LocalFnH, ExprH>(m, "LocalFn")
      .def_property_readonly(
          "params", [](const LocalFnH& h) { return RefList(Get<LocalFnNode>(h).params()); })
      .def_property_readonly("body",
                             [](const LocalFnH& h) { return Wrap(Get<LocalFnNode>(h).body()); })
      .def_property_readonly(
          "ret_type", [](const LocalFnH& h) { return Wrap(Get<LocalFnNode>(h).ret_type()); });

  // Structure.
  py::class_<BindingH, NodeH>(m, "Binding")
      .def(py::init([](py::object var, py::object value) {
             if (!py::isinstance<VarH>(var)) TypeErr("var", "a plir.Var", var);
             BindingH h;
             h.ref = VarBindingNode::Make(Downcast<VarNode>(var.cast<const VarH&>().ref),
                                          ToExpr(value, "value"));
             return h;
           }),
           py::arg("var"), py::arg("value"))
      .def_property_readonly("var",
                             [](const BindingH& h) { return Wrap(Get<VarBindingNode>(h).var()); })
      .def_property_readonly(
          "value", [](const BindingH& h) { return Wrap(Get<VarBindingNode>(h).value()); });
  m.attr("VarBinding") = m.attr("Binding");
  py::class_<BindingBlockH, NodeH>(m, "BindingBlock")
      .def(py::init([](py::object bindings, bool is_dataflow) {
             std::vector<Binding> bs;
             if (!py::isinstance<py::sequence>(bindings))
               TypeErr("bindings", "a list of plir.Binding", bindings);
             for (py::handle b : bindings) {
               if (!py::isinstance<BindingH>(b)) TypeErr("bindings", "a list of plir.Binding", b);
               bs.push_back(Downcast<VarBindingNode>(b.cast<const BindingH&>().ref));
             }
             BindingBlockH h;
             h.ref = BindingBlockNode::Make(std::move(bs), is_dataflow);
             return h;
           }),
           py::arg("bindings"), py::arg("is_dataflow") = false)
      .def_property_readonly(
          "bindings",
          [](const BindingBlockH& h) { return RefList(Get<BindingBlockNode>(h).bindings()); })
      .def_property_readonly("is_dataflow", [](const BindingBlockH& h) {
        return Get<BindingBlockNode>(h).is_dataflow();
      });
  py::class_<ItemH, NodeH>(m, "Item")
      .def_property_readonly("name", [](const ItemH& h) { return Get<ItemNode>(h).name(); })
      .def_property_readonly("params",
                             [](const ItemH& h) { return RefList(Get<ItemNode>(h).params()); })
      .def_property_readonly("ret_type",
                             [](const ItemH& h) { return Wrap(Get<ItemNode>(h).ret_type()); })
      .def_property_readonly("attrs",
                             [](const ItemH& h) { return FromAttrs(Get<ItemNode>(h).attrs()); });
  py::class_<FunctionH, ItemH>(m, "Function")
      .def(py::init([](const std::string& name, py::object params, py::object body,
                       py::object ret_type, py::object attrs) {
             FunctionH h;
             h.ref = FunctionNode::Make(name, VarsFromPy(params, "params"),
                                        ret_type.is_none() ? Type() : ToType(ret_type, "ret_type"),
                                        ToSeq(body, "body"), ToAttrs(attrs, "attrs"));
             return h;
           }),
           py::arg("name"), py::arg("params"), py::arg("body"), py::arg("ret_type") = py::none(),
           py::arg("attrs") = py::none())
      .def_property_readonly("body",
                             [](const FunctionH& h) { return Wrap(Get<FunctionNode>(h).body()); })
      .def(
          "with_body",
          [](const FunctionH& h, py::object body) {
            auto& f = Get<FunctionNode>(h);
            return Wrap(FunctionNode::Make(f.name(), f.params(), f.ret_type(), ToSeq(body, "body"),
                                           f.attrs()));
          },
          py::arg("body"), "A copy of this function with another body (and the same return type).")
      .def(
          "with_attrs",
          [](const FunctionH& h, py::object attrs) {
            auto& f = Get<FunctionNode>(h);
            return Wrap(FunctionNode::Make(f.name(), f.params(), f.ret_type(), f.body(),
                                           ToAttrs(attrs, "attrs")));
          },
          py::arg("attrs"));
  py::class_<ExternFuncH, ItemH>(m, "ExternFunc");

  m.def(
      "op_call",
      [](py::object op, py::object args, py::object attrs, py::object sinfo_args) {
        std::vector<Expr> a = ExprsFromPy(args, "args");
        Attrs at = ToAttrs(attrs, "attrs");
        std::vector<Type> s = TypesFromPy(sinfo_args, "sinfo_args");
        if (py::isinstance<py::str>(op))
          return Wrap(Unwrap(MakeOpCall(op.cast<std::string>(), std::move(a), at, s)));
        if (py::isinstance<OpH>(op))
          return Wrap(
              Unwrap(MakeOpCall(Downcast<OpNode>(op.cast<const OpH&>().ref), std::move(a), at, s)));
        TypeErr("op", "an op name (str) or a plir.Op", op);
      },
      py::arg("op"), py::arg("args"), py::arg("attrs") = py::none(),
      py::arg("sinfo_args") = py::none());
  m.def(
      "global_call",
      [](py::object callee, py::object args, py::object ret_type) {
        if (!py::isinstance<GlobalVarH>(callee)) TypeErr("callee", "a plir.GlobalVar", callee);
        return Wrap(MakeGlobalCall(Downcast<GlobalVarNode>(callee.cast<const GlobalVarH&>().ref),
                                   ExprsFromPy(args, "args"), ToType(ret_type, "ret_type")));
      },
      py::arg("callee"), py::arg("args"), py::arg("ret_type"));

  // Modules.
  py::class_<ModuleH>(m, "Module", "An immutable module: an ordered map from names to items.")
      .def(py::init([](py::object items) {
             std::vector<Item> v;
             if (!items.is_none()) {
               if (!py::isinstance<py::sequence>(items))
                 TypeErr("items", "a list of plir.Function", items);
               for (py::handle i : items) {
                 if (!py::isinstance<ItemH>(i)) TypeErr("items", "a list of plir.Function", i);
                 v.push_back(Downcast<ItemNode>(i.cast<const ItemH&>().ref));
               }
             }
             return ModuleH{Unwrap(Module::Make(std::move(v)))};
           }),
           py::arg("items") = py::none())
      .def("__len__", [](const ModuleH& h) { return h.mod.size(); })
      .def("__contains__", [](const ModuleH& h, const std::string& n) { return h.mod.Contains(n); })
      .def("__getitem__",
           [](const ModuleH& h, const std::string& n) {
             Item i = h.mod.Lookup(n);
             if (!i) throw py::key_error(n);
             return Wrap(i);
           })
      .def(
          "get", [](const ModuleH& h, const std::string& n) { return Wrap(h.mod.Lookup(n)); },
          py::arg("name"))
      .def("names",
           [](const ModuleH& h) {
             std::vector<std::string> v;
             for (const Item& i : h.mod.items()) v.push_back(i->name());
             return v;
           })
      .def("__iter__",
           [](const ModuleH& h) {
             py::list l;
             for (const Item& i : h.mod.items()) l.append(py::str(i->name()));
             return py::iter(l);
           })
      .def_property_readonly("items", [](const ModuleH& h) { return RefList(h.mod.items()); })
      .def("functions",
           [](const ModuleH& h) {
             py::list l;
             for (const Item& i : h.mod.items())
               if (As<FunctionNode>(i)) l.append(Wrap(i));
             return l;
           })
      .def(
          "with_item",
          [](const ModuleH& h, py::object item) {
            if (!py::isinstance<ItemH>(item))
              TypeErr("item", "a plir.Function or plir.ExternFunc", item);
            return ModuleH{h.mod.WithItem(Downcast<ItemNode>(item.cast<const ItemH&>().ref))};
          },
          py::arg("item"))
      .def(
          "without",
          [](const ModuleH& h, const std::string& n) { return ModuleH{h.mod.Without(n)}; },
          py::arg("name"))
      .def(
          "copy", [](const ModuleH& h) { return ModuleH{h.mod}; },
          "An O(1) copy: the same immutable contents under a new handle.")
      .def("__copy__", [](const ModuleH& h) { return ModuleH{h.mod}; })
      .def("__deepcopy__", [](const ModuleH& h, py::object) { return ModuleH{h.mod}; })
      .def("same_as", [](const ModuleH& a, const ModuleH& b) { return a.mod.same_as(b.mod); })
      .def("__eq__",
           [](const ModuleH& a, py::object b) {
             return py::isinstance<ModuleH>(b) && a.mod.same_as(b.cast<const ModuleH&>().mod);
           })
      .def("__ne__",
           [](const ModuleH& a, py::object b) {
             return !(py::isinstance<ModuleH>(b) && a.mod.same_as(b.cast<const ModuleH&>().mod));
           })
      .def("__str__", [](const ModuleH& h) { return PrintModule(h.mod); })
      .def("__repr__",
           [](const ModuleH& h) {
             std::string s = "plir.Module(";
             size_t k = 0;
             for (const Item& i : h.mod.items()) {
               if (k++) s += ", ";
               if (k > 8) {
                 s += "...";
                 break;
               }
               s += "@" + i->name();
             }
             return s + ")";
           })
      .def(
          "serialize",
          [](const ModuleH& h, const std::string& format) {
            return py::bytes(Serialize(h.mod, format));
          },
          py::arg("format") = "text")
      .def("_save", [](const ModuleH& h, const std::string& path, const std::string& format) {
        WriteFileAtomically(path, Serialize(h.mod, format));
      });

  m.def(
      "_parse",
      [](const std::string& text, const std::string& name) {
        ParseOptions o;
        o.filename = name;
        return ModuleH{Unwrap(ParseModule(text, o), "parse")};
      },
      py::arg("text"), py::arg("name"));
  m.def(
      "_load_bytes",
      [](py::bytes data, const std::string& name) {
        std::string_view v = data;
        return ModuleH{Unwrap(LoadModule(v, name), "parse")};
      },
      py::arg("data"), py::arg("name"));
  m.def(
      "_load",
      [](const std::string& path) { return ModuleH{Unwrap(LoadModuleFile(path), "parse")}; },
      py::arg("path"));

  // Structural comparison.
  auto mismatch = [](py::object a, py::object b,
                     bool map_free_vars) -> std::optional<StructuralMismatch> {
    if (py::isinstance<ModuleH>(a) && py::isinstance<ModuleH>(b))
      return FindFirstMismatch(a.cast<const ModuleH&>().mod, b.cast<const ModuleH&>().mod,
                               map_free_vars);
    if (py::isinstance<NodeH>(a) && py::isinstance<NodeH>(b))
      return FindFirstMismatch(a.cast<const NodeH&>().ref, b.cast<const NodeH&>().ref,
                               map_free_vars);
    if (!py::isinstance<ModuleH>(a) && !py::isinstance<NodeH>(a))
      TypeErr("lhs", "a plir.Module or plir node", a);
    if (!py::isinstance<ModuleH>(b) && !py::isinstance<NodeH>(b))
      TypeErr("rhs", "a plir.Module or plir node", b);
    return StructuralMismatch{"", py::isinstance<ModuleH>(a) ? "module" : "node",
                              py::isinstance<ModuleH>(b) ? "module" : "node"};
  };
  m.def(
      "structural_equal",
      [mismatch](py::object a, py::object b, bool map_free_vars) {
        return !mismatch(a, b, map_free_vars);
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("map_free_vars") = false);
  m.def(
      "_diff",
      [mismatch](py::object a, py::object b, bool map_free_vars) -> py::object {
        auto mm = mismatch(a, b, map_free_vars);
        if (!mm) return py::none();
        return py::make_tuple(mm->path, mm->lhs, mm->rhs);
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("map_free_vars") = false);
  m.def(
      "structural_hash",
      [](py::object a, bool map_free_vars) -> uint64_t {
        if (py::isinstance<ModuleH>(a))
          return StructuralHash(a.cast<const ModuleH&>().mod, map_free_vars);
        if (py::isinstance<NodeH>(a))
          return StructuralHash(a.cast<const NodeH&>().ref, map_free_vars);
        TypeErr("obj", "a plir.Module or plir node", a);
      },
      py::arg("obj"), py::arg("map_free_vars") = false);
  m.def(
      "verify_errors",
      [](const ModuleH& h) {
        std::vector<std::string> out;
        for (const VerifyError& e : VerifyModule(h.mod)) out.push_back(e.ToString());
        return out;
      },
      py::arg("mod"));
  m.def(
      "deep_copy", [](const ModuleH& h) { return ModuleH{DeepCopy(h.mod)}; }, py::arg("mod"),
      "A copy in which every bound variable is fresh (structurally equal).");

  // Building.
  py::class_<BlockBuilder>(m, "_BlockBuilder")
      .def(py::init<>())
      .def("begin_dataflow_block", &BlockBuilder::BeginDataflowBlock)
      .def("begin_binding_block", &BlockBuilder::BeginBindingBlock)
      .def("end_block", [](BlockBuilder& b) { return Wrap(b.EndBlock()); })
      .def(
          "emit",
          [](BlockBuilder& b, py::object e, const std::string& name) {
            return Wrap(b.Emit(ToExpr(e, "expr"), name));
          },
          py::arg("expr"), py::arg("name_hint") = "")
      .def(
          "emit_output",
          [](BlockBuilder& b, py::object e, const std::string& name) {
            return Wrap(b.EmitOutput(ToExpr(e, "expr"), name));
          },
          py::arg("expr"), py::arg("name_hint") = "")
      .def(
          "emit_annotated",
          [](BlockBuilder& b, py::object e, py::object t, const std::string& name, bool is_output) {
            return Wrap(
                Unwrap(b.EmitAnnotated(ToExpr(e, "expr"), ToType(t, "type"), name, is_output)));
          },
          py::arg("expr"), py::arg("type"), py::arg("name_hint") = "", py::arg("is_output") = false)
      .def(
          "emit_binding",
          [](BlockBuilder& b, py::object binding) {
            if (!py::isinstance<BindingH>(binding)) TypeErr("binding", "a plir.Binding", binding);
            b.EmitBinding(Downcast<VarBindingNode>(binding.cast<const BindingH&>().ref));
          },
          py::arg("binding"))
      .def_property_readonly("in_dataflow_block", &BlockBuilder::in_dataflow_block)
      .def(
          "finalize",
          [](BlockBuilder& b, py::object result) {
            return Wrap(b.Finalize(ToExpr(result, "result")));
          },
          py::arg("result"));

  // Walking and rewriting.
  py::class_<PyVisitor>(m, "_Visitor")
      .def(py::init<py::function, py::function, bool>())
      .def("walk",
           [](PyVisitor& v, py::object root) {
             if (py::isinstance<ModuleH>(root))
               v.WalkModule(root.cast<const ModuleH&>().mod);
             else if (py::isinstance<NodeH>(root))
               v.Walk(root.cast<const NodeH&>().ref);
             else
               TypeErr("root", "a plir.Module or plir node", root);
           })
      .def("current_path", &PyVisitor::Path);
  py::class_<PyMutator>(m, "_Mutator")
      .def(py::init<py::function, py::object>())
      .def("remap_var", &PyMutator::Remap)
      .def("mutate", [](PyMutator& mu, py::object root) -> py::object {
        if (py::isinstance<ModuleH>(root))
          return py::cast(ModuleH{mu.MutateModule(root.cast<const ModuleH&>().mod)});
        if (py::isinstance<FunctionH>(root))
          return Wrap(mu.MutateFunction(Downcast<FunctionNode>(root.cast<const FunctionH&>().ref)));
        if (py::isinstance<NodeH>(root)) return Wrap(mu.Mutate(root.cast<const NodeH&>().ref));
        TypeErr("root", "a plir.Module or plir node", root);
      });
}

}  // namespace plir::py_bind
