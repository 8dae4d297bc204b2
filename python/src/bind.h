// The plir Python extension (_plir): shared declarations of its two
// translation units (bind_ir.cc: nodes, modules, building, walking;
// bind_tools.cc: passes, pipelines, the interpreter, tensors, ONNX).
//
// Every IR node reaches Python as an instance of one wrapper class per node
// kind (plir.Var, plir.Call, ...) holding a Ref to the node: Python objects
// share ownership of the nodes, so a node outlives every module it came
// from for as long as Python holds it. Nodes are immutable; `==` is identity.
#ifndef PLIR_PYTHON_SRC_BIND_H_
#define PLIR_PYTHON_SRC_BIND_H_

#include <pybind11/pybind11.h>

#include <string>

#include "ir/module.h"
#include "ir/status.h"

namespace plir::py_bind {

namespace py = pybind11;

// The holder every node wrapper class derives from.
struct NodeH {
  Ref<Node> ref;
};
struct TypeH : NodeH {};
struct ExprH : NodeH {};
struct ModuleH {
  Module mod;
};

// Thrown by the bindings; translated into plir.ParseError, VerifyError,
// PluginError or PlirError (plir/errors.py) with the message.
struct PlirException {
  std::string kind;  // "parse", "verify", "plugin", "error"
  std::string message;
};
[[noreturn]] void Throw(const std::string& kind, const Status& s);
// Returns the value or throws (kind as above).
template <typename T>
T Unwrap(StatusOr<T> s, const char* kind = "error") {
  if (!s.ok()) Throw(kind, s.status());
  return std::move(s).value();
}
inline void Check(const Status& s, const char* kind = "error") {
  if (!s.ok()) Throw(kind, s);
}

// Wraps a node in the Python class of its kind (None for null).
py::object Wrap(const Ref<Node>& n);
// The node inside a wrapper (TypeError naming `param` otherwise).
Expr ToExpr(py::handle h, const char* param);
Type ToType(py::handle h, const char* param);
// Python values to attributes: int, float, bool, str, Type, list, dict.
Attrs ToAttrs(py::handle dict, const char* param);
py::object FromAttrValue(const AttrValue& v);
py::dict FromAttrs(const Attrs& a);
Module ToModule(py::handle h, const char* param);

void BindIR(py::module_& m);
void BindTools(py::module_& m);

}  // namespace plir::py_bind

#endif  // PLIR_PYTHON_SRC_BIND_H_
