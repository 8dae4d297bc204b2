// Helpers of the kernel tests (kernels/*_test.cc): tensors from values,
// their values back, attributes, and running an op through EvalOp.
#ifndef PLIR_KERNELS_INTERNAL_KERNEL_TEST_UTIL_H_
#define PLIR_KERNELS_INTERNAL_KERNEL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/op_kernels.h"

namespace plir::testing_kernels {

// A tensor of dtype `dt` holding `v` as raw values of type T.
template <typename T>
Tensor Raw(DataType dt, std::vector<T> v, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(shape);
  auto buf = std::make_shared<WritableTensorBytes>(std::string(v.size() * sizeof(T), '\0'));
  if (!v.empty()) std::memcpy(buf->mutable_data(), v.data(), buf->size());
  t.data = buf;
  return t;
}

// A tensor of any dtype from doubles (rounded once into the dtype).
inline Tensor T(DataType dt, std::vector<double> v, std::vector<int64_t> shape = {}) {
  if (shape.empty() && v.size() != 1) shape = {static_cast<int64_t>(v.size())};
  return MakeTensor(dt, shape, [&](int64_t i) { return v[i]; });
}
inline Tensor F32(std::vector<double> v, std::vector<int64_t> shape = {}) {
  return T(DataType::kFloat32, v, shape);
}
inline Tensor Scalar(DataType dt, double v) {
  return MakeTensor(dt, {}, [&](int64_t) { return v; });
}

inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.push_back(t.GetDouble(i));
  return v;
}

template <typename V>
AttrValue ToAttr(const V& v) {
  if constexpr (std::is_same_v<V, bool>)
    return AttrValue::Bool(v);
  else if constexpr (std::is_integral_v<V>)
    return AttrValue::Int(v);
  else if constexpr (std::is_floating_point_v<V>)
    return AttrValue::Float(v);
  else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
    std::vector<AttrValue> l;
    for (int64_t x : v) l.push_back(AttrValue::Int(x));
    return AttrValue::List(l);
  } else {
    return AttrValue::String(std::string(v));
  }
}

inline Attrs NoAttrs() { return Attrs(); }

// Attrs from (key, value) pairs: A("axis", 1, "keepdims", true).
inline void AddAttrs(std::vector<Attrs::Entry>*) {}
template <typename V, typename... Rest>
void AddAttrs(std::vector<Attrs::Entry>* out, const char* key, const V& v, const Rest&... rest) {
  out->push_back({Symbol(key), ToAttr(v)});
  AddAttrs(out, rest...);
}
template <typename... Rest>
Attrs A(const Rest&... rest) {
  std::vector<Attrs::Entry> e;
  AddAttrs(&e, rest...);
  return *Attrs::Make(std::move(e));
}
inline std::vector<int64_t> L(std::initializer_list<int64_t> v) { return std::vector<int64_t>(v); }

// Runs `op`; fails the test (and returns an empty tensor) on an error.
inline Tensor Eval(const std::string& op, const std::vector<Tensor>& args,
                   const Attrs& attrs = Attrs()) {
  auto r = EvalOp(op, args, attrs);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().message();
  if (!r.ok()) return MakeTensor(DataType::kFloat32, {0}, [](int64_t) { return 0.0; });
  return *r;
}

// The error message of running `op` ("" if it succeeded).
inline std::string Error(const std::string& op, const std::vector<Tensor>& args,
                         const Attrs& attrs = Attrs()) {
  auto r = EvalOp(op, args, attrs);
  return r.ok() ? "" : r.status().message();
}

// ONNX's tolerance, a little looser (float32 results of float64 math).
inline ::testing::AssertionResult Near(const std::vector<double>& got,
                                       const std::vector<double>& expected) {
  auto show = [](const std::vector<double>& v) {
    std::string s = "[";
    for (double x : v) s += std::to_string(x) + " ";
    return s + "]";
  };
  if (got.size() != expected.size())
    return ::testing::AssertionFailure() << "got " << show(got) << ", expected " << show(expected);
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i]) && std::isnan(got[i])) continue;
    if (!(std::fabs(got[i] - expected[i]) <= 1e-5 + 1e-4 * std::fabs(expected[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << show(got) << ", expected " << show(expected);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace plir::testing_kernels

#endif  // PLIR_KERNELS_INTERNAL_KERNEL_TEST_UTIL_H_
