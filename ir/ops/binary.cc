// Binary elementwise ops with NumPy broadcasting: arithmetic, maximum and
// minimum, power, integer division and remainders, comparisons (bool
// result), logic and bitwise ops, shifts; and where (three operands).
#include "ir/ops/families.h"
#include "ir/ops/infer_util.h"

namespace plir::internal {
namespace {

// where(cond, x, y): cond is bool; x and y share a dtype; all three broadcast.
StatusOr<Type> InferWhere(const Args& args, const Attrs&, TypeSpan) {
  const std::string op = "where";
  PLIR_ASSIGN_OR_RETURN(auto c, TensorArg(op, args, 0));
  PLIR_ASSIGN_OR_RETURN(auto x, TensorArg(op, args, 1));
  PLIR_ASSIGN_OR_RETURN(auto y, TensorArg(op, args, 2));
  if (c && c->dtype() != DataType::kUnknown && c->dtype() != DataType::kBool)
    return InvalidArgument("where: the condition must be bool, got " + ShapeStr(c));
  DataType dt = x ? x->dtype() : y ? y->dtype() : DataType::kUnknown;
  if (x && y) {
    PLIR_ASSIGN_OR_RETURN(dt, SameDType(op, x, y));
  }
  PLIR_ASSIGN_OR_RETURN(Type xy, BroadcastTypes(op, x, y, dt));
  if (!c) return UnknownTensor(dt);
  PLIR_ASSIGN_OR_RETURN(Type out, BroadcastTypes(op, c, As<TensorTypeNode>(xy), dt));
  return out;
}

struct BinaryOp {
  const char* name;
  DTypeClass dtypes;
  bool bool_result;
  const char* desc;
  const char* onnx;
};

}  // namespace

void RegisterBinaryOps(OpRegistry& r) {
  const char* onnx_arith[] = {"Add, Sum", "Sub", "Mul", "Div"};
  int k = 0;
  for (const char* name : {"add", "subtract", "multiply", "divide"})
    Add(r, Def(name,
               Onnx(std::string("elementwise ") + name + " with NumPy broadcasting" +
                        (std::string(name) == "divide" ? " (integers: truncated toward zero)" : ""),
                    onnx_arith[k++]),
               2, 2, Elementwise(name), {}, true, OpPattern::kBroadcast));
  const BinaryOp binary[] = {
      {"maximum", DTypeClass::kAny, false, "the larger of x and y (NaN wins)", "Max"},
      {"minimum", DTypeClass::kAny, false, "the smaller of x and y (NaN wins)", "Min"},
      {"power", DTypeClass::kNumeric, false,
       "x^y (integers: exact, a negative exponent is an error)", "Pow"},
      {"floor_divide", DTypeClass::kNumeric, false, "floor(x / y)",
       "Div (integers, Python semantics)"},
      {"floor_mod", DTypeClass::kNumeric, false, "x - floor(x / y) * y: the sign of y (Python's %)",
       "Mod (fmod=0)"},
      {"mod", DTypeClass::kNumeric, false,
       "C's fmod: the remainder of x / y truncated, the sign of x", "Mod (fmod=1)"},
      {"equal", DTypeClass::kAny, true, "x == y (bool result)", "Equal"},
      {"not_equal", DTypeClass::kAny, true, "x != y (bool result)", "-"},
      {"less", DTypeClass::kAny, true, "x < y (bool result)", "Less"},
      {"less_equal", DTypeClass::kAny, true, "x <= y (bool result)", "LessOrEqual"},
      {"greater", DTypeClass::kAny, true, "x > y (bool result)", "Greater"},
      {"greater_equal", DTypeClass::kAny, true, "x >= y (bool result)", "GreaterOrEqual"},
      {"logical_and", DTypeClass::kAny, true, "x and y (bool result; nonzero is true)", "And"},
      {"logical_or", DTypeClass::kAny, true, "x or y (bool result; nonzero is true)", "Or"},
      {"logical_xor", DTypeClass::kAny, true, "x xor y (bool result; nonzero is true)", "Xor"},
      {"bitwise_and", DTypeClass::kIntBool, false, "x & y", "BitwiseAnd"},
      {"bitwise_or", DTypeClass::kIntBool, false, "x | y", "BitwiseOr"},
      {"bitwise_xor", DTypeClass::kIntBool, false, "x ^ y", "BitwiseXor"},
      {"left_shift", DTypeClass::kInt, false, "x << y, bits shifted out are lost (y >= width: 0)",
       "BitShift (direction=LEFT)"},
      {"right_shift", DTypeClass::kInt, false,
       "x >> y, arithmetic for signed x (y >= width: 0 or -1)", "BitShift (direction=RIGHT)"},
  };
  for (const BinaryOp& b : binary)
    Add(r,
        Def(b.name, Onnx(std::string("elementwise ") + b.desc + " with NumPy broadcasting", b.onnx),
            2, 2,
            BinaryInfer(b.name, b.dtypes, b.bool_result ? DataType::kBool : DataType::kUnknown), {},
            true, OpPattern::kBroadcast));
  Add(r,
      Def("where",
          Onnx("elementwise x where cond else y: where(cond, x, y), all three broadcast", "Where"),
          3, 3, InferWhere, {}, true, OpPattern::kBroadcast));
}

}  // namespace plir::internal
