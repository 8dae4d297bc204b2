// Reference kernels of the binary elementwise ops (NumPy broadcasting):
// arithmetic, maximum/minimum, power, floor division and the remainders,
// comparisons, logic, bitwise ops and shifts; and where. Integers are exact
// (overflow and division by zero are errors), floats compute in double.
//
// float32 / float64 arithmetic (add, subtract, multiply, divide, maximum,
// minimum) takes a fast path: the broadcast is collapsed into rows of a
// contiguous inner dimension, each operand's inner stride 1 or 0 (same
// shape, scalar, row or channel broadcast), and the rows run a vectorized
// loop (32-byte vectors where the CPU has AVX2, chosen at run time). It
// computes in the dtype; for these ops that rounds exactly as the
// reference's double-then-round does. power by one exponent of 2, 0.5 or 1
// takes the same loops (FastPow).
#include <limits>

#include "kernels/internal/elements.h"
#include "kernels/internal/fast.h"
#include "kernels/op_kernels.h"

namespace plir::internal {
namespace {

enum class BinOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kPow,
  kFloorDiv,
  kFloorMod,
  kMod,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kXor,
  kBitAnd,
  kBitOr,
  kBitXor,
  kShl,
  kShr,
};

bool IsCompare(BinOp k) { return k >= BinOp::kEq && k <= BinOp::kGe; }
bool IsLogic(BinOp k) { return k >= BinOp::kAnd && k <= BinOp::kXor; }
bool IsBitwise(BinOp k) { return k >= BinOp::kBitAnd; }
bool Divides(BinOp k) {
  return k == BinOp::kDiv || k == BinOp::kFloorDiv || k == BinOp::kFloorMod || k == BinOp::kMod;
}

template <typename T>
bool Compare(BinOp k, T x, T y) {
  switch (k) {
    case BinOp::kEq:
      return x == y;
    case BinOp::kNe:
      return x != y;
    case BinOp::kLt:
      return x < y;
    case BinOp::kLe:
      return x <= y;
    case BinOp::kGt:
      return x > y;
    case BinOp::kGe:
      return x >= y;
    default:
      return false;
  }
}

// x^y exactly (y >= 0), false on overflow of i128 or of [lo, hi].
bool IntPow(i128 x, i128 y, i128 lo, i128 hi, i128* r) {
  i128 result = 1, base = x;
  while (y > 0) {
    if (y & 1) {
      if (__builtin_mul_overflow(result, base, &result) || result < lo || result > hi) return false;
    }
    y >>= 1;
    // A later bit of y multiplies result by base again: an overflow of base
    // is an overflow of the result (|x| >= 2 here; 0 and +-1 never overflow).
    if (y > 0 && __builtin_mul_overflow(base, base, &base)) return false;
  }
  *r = result;
  return true;
}

// An integer op on x and y; false on overflow. `dt` is the operands' dtype.
bool IntOp(BinOp k, DataType dt, i128 x, i128 y, i128* r) {
  i128 lo, hi;
  IntRange(dt, &lo, &hi);
  int width = DataTypeSize(dt) * 8;
  switch (k) {
    case BinOp::kAdd:
      return !__builtin_add_overflow(x, y, r);
    case BinOp::kSub:
      return !__builtin_sub_overflow(x, y, r);
    case BinOp::kMul:
      return !__builtin_mul_overflow(x, y, r);
    case BinOp::kDiv:
      *r = x / y;
      return true;  // truncates toward zero
    case BinOp::kMax:
      *r = x > y ? x : y;
      return true;
    case BinOp::kMin:
      *r = x < y ? x : y;
      return true;
    case BinOp::kPow:
      if (y < 0) {
        if (x == 1) {
          *r = 1;
          return true;
        }
        if (x == -1) {
          *r = (y & 1) ? -1 : 1;
          return true;
        }
        return false;
      }
      return IntPow(x, y, lo, hi, r);
    case BinOp::kFloorDiv: {
      i128 q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      *r = q;
      return true;
    }
    case BinOp::kFloorMod: {
      i128 m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      *r = m;
      return true;
    }
    case BinOp::kMod:
      *r = x % y;
      return true;
    case BinOp::kBitAnd:
      *r = x & y;
      return true;
    case BinOp::kBitOr:
      *r = x | y;
      return true;
    case BinOp::kBitXor:
      *r = x ^ y;
      return true;
    case BinOp::kShl: {
      if (y >= width) {
        *r = 0;
        return true;
      }
      unsigned __int128 mask = (static_cast<unsigned __int128>(1) << width) - 1;
      unsigned __int128 v = (static_cast<unsigned __int128>(x) << static_cast<int>(y)) & mask;
      if (lo < 0 && (v >> (width - 1)) & 1)
        *r = static_cast<i128>(v) - (static_cast<i128>(1) << width);
      else
        *r = static_cast<i128>(v);
      return true;
    }
    case BinOp::kShr:
      if (y >= width) {
        *r = x < 0 ? -1 : 0;
        return true;
      }
      *r = x >> static_cast<int>(y);  // arithmetic for negative x
      return true;
    default:
      return false;
  }
}

double FloatOp(BinOp k, double x, double y) {
  switch (k) {
    case BinOp::kAdd:
      return x + y;
    case BinOp::kSub:
      return x - y;
    case BinOp::kMul:
      return x * y;
    case BinOp::kDiv:
      return x / y;
    case BinOp::kMax:
      return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
    case BinOp::kMin:
      return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
    case BinOp::kPow:
      return std::pow(x, y);
    case BinOp::kFloorDiv:
      return std::floor(x / y);
    case BinOp::kFloorMod: {
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return m;
    }
    case BinOp::kMod:
      return std::fmod(x, y);
    default:
      return 0;
  }
}

// y[i] = f(a[i * sa], b[i * sb]) for i in [0, n), sa and sb 0 or 1.
template <typename T, typename F>
__attribute__((always_inline)) inline void BinaryRow(const T* a, int64_t sa, const T* b, int64_t sb,
                                                     T* y, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
  } else if (sa == 1) {
    T bv = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], bv);
  } else if (sb == 1) {
    T av = a[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = f(av, b[i]);
  } else {
    std::fill(y, y + n, f(a[0], b[0]));
  }
}

// The broadcast of a and b into `shape`, collapsed: rows of `inner`
// elements; row r of the result reads a from RowOffset(r, ...) with inner
// stride sa (b likewise).
struct BroadcastRows {
  std::vector<int64_t> dims;      // outer dims (collapsed), without the inner one
  std::vector<int64_t> ast, bst;  // their strides in a and b (0: broadcast)
  int64_t inner = 1, sa = 1, sb = 1, rows = 1;

  BroadcastRows(const std::vector<int64_t>& shape, const std::vector<int64_t>& as,
                const std::vector<int64_t>& bs) {
    size_t r = shape.size();
    std::vector<int64_t> d, x(r, 0), y(r, 0);
    auto fill = [&](const std::vector<int64_t>& s, std::vector<int64_t>& st) {
      size_t off = r - s.size();
      int64_t mul = 1;
      for (size_t i = r; i-- > off;) {
        st[i] = s[i - off] == 1 ? 0 : mul;
        mul *= s[i - off];
      }
    };
    fill(as, x);
    fill(bs, y);
    // Merge dim i into the one after it when both operands stay linear.
    std::vector<int64_t> md, mx, my;
    for (size_t i = 0; i < r; ++i) {
      if (shape[i] == 1) continue;
      if (!md.empty() && mx.back() == x[i] * shape[i] && my.back() == y[i] * shape[i]) {
        md.back() *= shape[i];
        mx.back() = x[i];
        my.back() = y[i];
        continue;
      }
      md.push_back(shape[i]);
      mx.push_back(x[i]);
      my.push_back(y[i]);
    }
    if (!md.empty() && (mx.back() <= 1 && my.back() <= 1)) {
      inner = md.back();
      sa = mx.back();
      sb = my.back();
      md.pop_back();
      mx.pop_back();
      my.pop_back();
    }
    dims = md;
    ast = mx;
    bst = my;
    for (int64_t v : dims) rows *= v;
  }
  void RowOffsets(int64_t row, int64_t* oa, int64_t* ob) const {
    *oa = *ob = 0;
    for (size_t i = dims.size(); i-- > 0;) {
      int64_t c = row % dims[i];
      row /= dims[i];
      *oa += c * ast[i];
      *ob += c * bst[i];
    }
  }
};

// The rows [lo, hi) of the broadcast (rows == 1: elements [lo, hi) of the
// single row).
template <typename T, typename F>
__attribute__((always_inline)) inline void BinaryRows(const BroadcastRows& g, const T* x,
                                                      const T* y, T* o, int64_t lo, int64_t hi,
                                                      F f) {
  if (g.rows == 1) {
    BinaryRow(x + lo * g.sa, g.sa, y + lo * g.sb, g.sb, o + lo, hi - lo, f);
    return;
  }
  for (int64_t r = lo; r < hi; ++r) {
    int64_t oa, ob;
    g.RowOffsets(r, &oa, &ob);
    BinaryRow(x + oa, g.sa, y + ob, g.sb, o + r * g.inner, g.inner, f);
  }
}

#if defined(__x86_64__)
// The same loops compiled for AVX2 (32-byte vectors), chosen at run time:
// the build targets baseline x86-64.
template <typename T, typename F>
__attribute__((target("avx2,fma"))) void BinaryRowsAvx2(const BroadcastRows& g, const T* x,
                                                        const T* y, T* o, int64_t lo, int64_t hi,
                                                        F f) {
  BinaryRows(g, x, y, o, lo, hi, f);
}
#endif

template <typename T, typename F>
void FastBinary(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  BroadcastRows g(out.shape, a.shape, b.shape);
  const T* x = DataOf<T>(a);
  const T* y = DataOf<T>(b);
  T* o = MutableDataOf<T>(out);
  bool avx2 = CpuHasAvx2Fma();
  int64_t n = g.rows == 1 ? g.inner : g.rows;
  int64_t grain = g.rows == 1 ? 1 << 16 : std::max<int64_t>(1, (1 << 16) / g.inner);
  ParallelRange(n, grain, [&](int64_t lo, int64_t hi) {
#if defined(__x86_64__)
    if (avx2) return BinaryRowsAvx2(g, x, y, o, lo, hi, f);
#endif
    BinaryRows(g, x, y, o, lo, hi, f);
  });
  (void)avx2;
}

template <typename T>
void FastBinaryOp(BinOp kind, const Tensor& a, const Tensor& b, Tensor& out) {
  switch (kind) {
    case BinOp::kAdd:
      return FastBinary<T>(a, b, out, [](T x, T y) { return x + y; });
    case BinOp::kSub:
      return FastBinary<T>(a, b, out, [](T x, T y) { return x - y; });
    case BinOp::kMul:
      return FastBinary<T>(a, b, out, [](T x, T y) { return x * y; });
    case BinOp::kDiv:
      return FastBinary<T>(a, b, out, [](T x, T y) { return x / y; });
    case BinOp::kMax:  // NaN if either is (as the reference)
      return FastBinary<T>(a, b, out, [](T x, T y) {
        T m = x < y ? y : x;
        return x != x ? x : y != y ? y : m;
      });
    case BinOp::kMin:
      return FastBinary<T>(a, b, out, [](T x, T y) {
        T m = y < x ? y : x;
        return x != x ? x : y != y ? y : m;
      });
    default:
      return;
  }
}

bool FastBinaryKind(BinOp k) { return k <= BinOp::kMin; }

// power with one exponent for all elements, where it is 2 (LayerNorm's
// square, as ONNX exports it), 0.5 or 1: loops without pow. For float32,
// x * x is exactly the reference's pow(x, 2) rounded (a float's square is
// exact in double); for float64 it is within an ulp. sqrt is correctly
// rounded, as pow(x, 0.5) is, except at -0 and -inf, kept here.
bool FastPowExponent(BinOp k, const Tensor& b, double* e) {
  if (k != BinOp::kPow || b.NumElements() != 1) return false;
  *e = b.GetDouble(0);
  return *e == 2 || *e == 0.5 || *e == 1;
}

template <typename T>
void FastPow(double e, const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  if (e == 2) return FastBinary<T>(a, b, out, [](T x, T) { return x * x; });
  if (e == 1) return FastBinary<T>(a, b, out, [](T x, T) { return x; });
  FastBinary<T>(a, b, out, [](T x, T) {
    return x == T(0) ? T(0) : x == -kInf ? kInf : std::sqrt(x);
  });
}

OpEvalFn BinaryKernel(std::string op, BinOp kind) {
  return [op, kind](const std::vector<Tensor>& args, const Attrs&) -> StatusOr<Tensor> {
    PLIR_RETURN_IF_ERROR(CheckArgs(op, args, 2));
    const Tensor& a = args[0];
    const Tensor& b = args[1];
    if (a.dtype != b.dtype)
      return InvalidArgument(op + ": dtypes differ (" + std::string(DataTypeName(a.dtype)) +
                             " vs " + std::string(DataTypeName(b.dtype)) + ")");
    auto shape_or = BroadcastShape(a.shape, b.shape);
    if (!shape_or.ok()) return InvalidArgument(op + ": shapes do not broadcast");
    std::vector<int64_t> shape = *shape_or;
    PLIR_RETURN_IF_ERROR(CheckResult(op, a.dtype, shape));
    double e = 0;
    bool pow = FastFloat(a) && FastPowExponent(kind, b, &e);
    if (FastKernelsEnabled() && FastFloat(a) && (FastBinaryKind(kind) || pow)) {
      NoteFastPath();
      // Every element is written, out[i] from a[i] when a has the output's
      // shape: a's buffer if donated.
      Tensor out = OutputForOverwrite(a, a.dtype, shape);
      if (out.NumElements() > 0) {
        bool f32 = a.dtype == DataType::kFloat32;
        if (pow && f32)
          FastPow<float>(e, a, b, out);
        else if (pow)
          FastPow<double>(e, a, b, out);
        else if (f32)
          FastBinaryOp<float>(kind, a, b, out);
        else
          FastBinaryOp<double>(kind, a, b, out);
      }
      return out;
    }
    auto sa = Strides(a.shape), sb = Strides(b.shape);
    auto ia = [&](int64_t i) { return BroadcastIndex(i, shape, a.shape, sa); };
    auto ib = [&](int64_t i) { return BroadcastIndex(i, shape, b.shape, sb); };
    DataType dt = a.dtype;
    if (IsCompare(kind) || IsLogic(kind)) {
      bool exact = !IsFloat(dt);
      return MakeTensor(DataType::kBool, shape, [&](int64_t i) {
        bool r;
        if (IsLogic(kind)) {
          bool x = a.GetDouble(ia(i)) != 0, y = b.GetDouble(ib(i)) != 0;
          r = kind == BinOp::kAnd ? (x && y) : kind == BinOp::kOr ? (x || y) : (x != y);
        } else if (exact) {
          r = Compare(kind, LoadInt(dt, ElemPtr(a, ia(i))), LoadInt(dt, ElemPtr(b, ib(i))));
        } else {
          r = Compare(kind, a.GetDouble(ia(i)), b.GetDouble(ib(i)));
        }
        return r ? 1.0 : 0.0;
      });
    }
    if (IsBitwise(kind) && IsFloat(dt)) return InvalidArgument(op + " needs integer tensors");
    if ((kind == BinOp::kShl || kind == BinOp::kShr) && dt == DataType::kBool)
      return InvalidArgument(op + " needs integer tensors");
    if ((kind == BinOp::kPow || kind == BinOp::kFloorDiv || kind == BinOp::kFloorMod ||
         kind == BinOp::kMod) &&
        dt == DataType::kBool)
      return InvalidArgument(op + " does not take bool");
    if (IsInteger(dt) || (dt == DataType::kBool && kind != BinOp::kAdd && kind != BinOp::kSub &&
                          kind != BinOp::kMul && kind != BinOp::kDiv)) {
      for (int64_t i = 0; Divides(kind) && i < b.NumElements(); ++i)
        if (LoadInt(dt, ElemPtr(b, i)) == 0)
          return InvalidArgument(op + ": integer division by zero");
      for (int64_t i = 0; (kind == BinOp::kShl || kind == BinOp::kShr) && i < b.NumElements(); ++i)
        if (LoadInt(dt, ElemPtr(b, i)) < 0) return InvalidArgument(op + ": negative shift amount");
      bool pow_neg = false;
      StatusOr<Tensor> t = IntTensor(op, dt, shape, [&](int64_t i, i128* r) {
        i128 x = LoadInt(dt, ElemPtr(a, ia(i))), y = LoadInt(dt, ElemPtr(b, ib(i)));
        if (kind == BinOp::kPow && y < 0 && x != 1 && x != -1) pow_neg = true;
        return IntOp(kind, dt, x, y, r);
      });
      if (pow_neg) return InvalidArgument(op + ": integer power with a negative exponent");
      return t;
    }
    bool is_bool = dt == DataType::kBool;
    return MakeTensor(dt, shape, [&](int64_t i) {
      double x = a.GetDouble(ia(i)), y = b.GetDouble(ib(i));
      if (is_bool && kind == BinOp::kDiv) return y == 0 ? 0.0 : x / y;
      return FloatOp(kind, x, y);
    });
  };
}

// where(cond, x, y): x's element where cond is nonzero, else y's (bytes
// copied: exact for every dtype).
StatusOr<Tensor> Where(const std::vector<Tensor>& args, const Attrs&) {
  PLIR_RETURN_IF_ERROR(CheckArgs("where", args, 3));
  const Tensor& c = args[0];
  const Tensor& x = args[1];
  const Tensor& y = args[2];
  if (x.dtype != y.dtype) return InvalidArgument("where: x and y differ in dtype");
  auto xy = BroadcastShape(x.shape, y.shape);
  if (!xy.ok()) return InvalidArgument("where: shapes do not broadcast");
  auto shape_or = BroadcastShape(c.shape, *xy);
  if (!shape_or.ok()) return InvalidArgument("where: shapes do not broadcast");
  std::vector<int64_t> shape = *shape_or;
  PLIR_RETURN_IF_ERROR(CheckResult("where", x.dtype, shape));
  Tensor out = NewTensor(x.dtype, shape);
  auto sc = Strides(c.shape), sx = Strides(x.shape), sy = Strides(y.shape);
  int size = DataTypeSize(x.dtype);
  char* dst = MutableData(out);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    bool take_x = c.GetDouble(BroadcastIndex(i, shape, c.shape, sc)) != 0;
    const char* src = take_x ? ElemPtr(x, BroadcastIndex(i, shape, x.shape, sx))
                             : ElemPtr(y, BroadcastIndex(i, shape, y.shape, sy));
    std::memcpy(dst + i * size, src, size);
  }
  return out;
}

}  // namespace

void RegisterBinaryKernels(OpKernelTable& t) {
  struct B {
    const char* name;
    BinOp kind;
  };
  const B ops[] = {
      {"add", BinOp::kAdd},
      {"subtract", BinOp::kSub},
      {"multiply", BinOp::kMul},
      {"divide", BinOp::kDiv},
      {"maximum", BinOp::kMax},
      {"minimum", BinOp::kMin},
      {"power", BinOp::kPow},
      {"floor_divide", BinOp::kFloorDiv},
      {"floor_mod", BinOp::kFloorMod},
      {"mod", BinOp::kMod},
      {"equal", BinOp::kEq},
      {"not_equal", BinOp::kNe},
      {"less", BinOp::kLt},
      {"less_equal", BinOp::kLe},
      {"greater", BinOp::kGt},
      {"greater_equal", BinOp::kGe},
      {"logical_and", BinOp::kAnd},
      {"logical_or", BinOp::kOr},
      {"logical_xor", BinOp::kXor},
      {"bitwise_and", BinOp::kBitAnd},
      {"bitwise_or", BinOp::kBitOr},
      {"bitwise_xor", BinOp::kBitXor},
      {"left_shift", BinOp::kShl},
      {"right_shift", BinOp::kShr},
  };
  for (const B& b : ops) Set(t, b.name, BinaryKernel(b.name, b.kind));
  Set(t, "where", Where);
}

}  // namespace plir::internal
