// Linear algebra and reductions: MatMul, Gemm.
#include "frontends/onnx/converter.h"

namespace plir::onnx_import {
namespace {

StatusOr<Outputs> Gemm(ConvertContext& c) {
  PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
  PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
  Attrs swap = MakeAttrs({{Symbol("axes"), IntList({1, 0})}});
  if (c.AttrInt("transA", 0)) { PLIR_ASSIGN_OR_RETURN(a, c.Call("permute_dims", {a}, swap)); }
  if (c.AttrInt("transB", 0)) { PLIR_ASSIGN_OR_RETURN(b, c.Call("permute_dims", {b}, swap)); }
  PLIR_ASSIGN_OR_RETURN(Expr y, c.Call("matmul", {a, b}));
  DataType dt = c.InputDtype(0);
  double alpha = c.AttrFloat("alpha", 1.0f), beta = c.AttrFloat("beta", 1.0f);
  if (alpha != 1.0) {
    PLIR_ASSIGN_OR_RETURN(Expr s, c.Scalar(alpha, dt));
    PLIR_ASSIGN_OR_RETURN(y, c.Call("multiply", {y, s}));
  }
  if (c.HasInput(2) && beta != 0.0) {
    PLIR_ASSIGN_OR_RETURN(Expr cc, c.Input(2));
    if (beta != 1.0) {
      PLIR_ASSIGN_OR_RETURN(Expr s, c.Scalar(beta, dt));
      PLIR_ASSIGN_OR_RETURN(cc, c.Call("multiply", {cc, s}));
    }
    PLIR_ASSIGN_OR_RETURN(y, c.Call("add", {y, cc}));
  }
  return Outputs{y};
}

}  // namespace

void RegisterMathConverters(ConverterTable& t) {
  t.Add("MatMul", 1, {"matmul"}, [](ConvertContext& c) -> StatusOr<Outputs> {
    PLIR_ASSIGN_OR_RETURN(Expr a, c.Input(0));
    PLIR_ASSIGN_OR_RETURN(Expr b, c.Input(1));
    return c.One("matmul", {a, b});
  });
  t.Add("Gemm", 7, {"matmul", "permute_dims", "multiply", "add"}, Gemm);
}

}  // namespace plir::onnx_import
