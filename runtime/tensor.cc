#include "runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>

namespace plir {
namespace {

double Load(DataType dt, const char* p) {
  switch (dt) {
    case DataType::kBool: return *p ? 1 : 0;
    case DataType::kInt8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case DataType::kInt16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DataType::kInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kInt64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DataType::kUInt8: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case DataType::kUInt16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DataType::kUInt32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DataType::kUInt64: { uint64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case DataType::kFloat16: { uint16_t v; std::memcpy(&v, p, 2); return HalfToFloat(v); }
    case DataType::kBFloat16: { uint16_t v; std::memcpy(&v, p, 2); return BFloat16ToFloat(v); }
    case DataType::kFloat32: { float v; std::memcpy(&v, p, 4); return v; }
    case DataType::kFloat64: { double v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

void Store(DataType dt, double v, char* p) {
  auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  if (!IsFloat(dt) && dt != DataType::kBool) v = std::trunc(v);
  switch (dt) {
    case DataType::kBool: *p = v != 0; break;
    case DataType::kInt8: put(static_cast<int8_t>(v)); break;
    case DataType::kInt16: put(static_cast<int16_t>(v)); break;
    case DataType::kInt32: put(static_cast<int32_t>(v)); break;
    case DataType::kInt64: put(static_cast<int64_t>(v)); break;
    case DataType::kUInt8: put(static_cast<uint8_t>(v)); break;
    case DataType::kUInt16: put(static_cast<uint16_t>(v)); break;
    case DataType::kUInt32: put(static_cast<uint32_t>(v)); break;
    case DataType::kUInt64: put(static_cast<uint64_t>(v)); break;
    case DataType::kFloat16: put(FloatToHalf(static_cast<float>(v))); break;
    case DataType::kBFloat16: put(FloatToBFloat16(static_cast<float>(v))); break;
    case DataType::kFloat32: put(static_cast<float>(v)); break;
    case DataType::kFloat64: put(v); break;
    default: break;
  }
}

int64_t Product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

StatusOr<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return InvalidArgument("shapes do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// Maps an index of `out` to the flat index of a broadcast operand of `shape`.
int64_t BroadcastIndex(int64_t flat, const std::vector<int64_t>& out, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& strides) {
  int64_t idx = 0;
  size_t off = out.size() - shape.size();
  for (size_t i = out.size(); i-- > 0;) {
    int64_t coord = flat % out[i];
    flat /= out[i];
    if (i >= off && shape[i - off] != 1) idx += coord * strides[i - off];
  }
  return idx;
}

thread_local const TensorAllocator* current_allocator = nullptr;

}  // namespace

const TensorAllocator* SetThreadTensorAllocator(const TensorAllocator* alloc) {
  const TensorAllocator* prev = current_allocator;
  current_allocator = alloc;
  return prev;
}

std::shared_ptr<std::string> AllocateTensorBuffer(size_t bytes) {
  if (current_allocator) return (*current_allocator)(bytes);
  return std::make_shared<std::string>(bytes, '\0');
}

int64_t Tensor::NumElements() const { return Product(shape); }
double Tensor::GetDouble(int64_t i) const { return Load(dtype, data->data() + i * DataTypeSize(dtype)); }
int64_t Tensor::GetInt(int64_t i) const { return static_cast<int64_t>(GetDouble(i)); }

Tensor Tensor::FromConstant(const ConstantNode& c) {
  Tensor t;
  t.dtype = c.tensor_type().dtype();
  for (const Dim& d : c.tensor_type().shape()) t.shape.push_back(d.value);
  t.data = c.data_ptr();
  return t;
}

StatusOr<Ref<ConstantNode>> Tensor::ToConstant() const {
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim::Const(d));
  return ConstantNode::Make(TensorTypeNode::Make(std::move(dims), dtype), data);
}

Tensor MakeTensor(DataType dtype, std::vector<int64_t> shape, const std::function<double(int64_t)>& f) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = t.NumElements();
  int size = DataTypeSize(dtype);
  std::shared_ptr<std::string> data = AllocateTensorBuffer(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i) Store(dtype, f(i), data->data() + i * size);
  t.data = std::move(data);
  return t;
}

int64_t EstimateWork(const std::string& op, const std::vector<Tensor>& args, int64_t out_elements) {
  if (op == "matmul" && args.size() == 2 && !args[0].shape.empty())
    return out_elements * args[0].shape.back();
  if (op == "nn.conv2d" && args.size() == 2 && args[1].shape.size() == 4)
    return out_elements * args[1].shape[1] * args[1].shape[2] * args[1].shape[3];
  return out_elements;
}

StatusOr<Tensor> EvalCoreOp(const std::string& op, const std::vector<Tensor>& args, const Attrs& attrs) {
  auto int_list = [&](const char* key, std::vector<int64_t> dflt) {
    const AttrValue* v = attrs.Get(key);
    if (!v) return dflt;
    std::vector<int64_t> l;
    v->GetIntList(&l);
    return l;
  };
  if (op == "add" || op == "subtract" || op == "multiply" || op == "divide") {
    const Tensor& a = args[0];
    const Tensor& b = args[1];
    if (a.dtype != b.dtype) return InvalidArgument(op + ": dtypes differ");
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, BroadcastShape(a.shape, b.shape));
    auto sa = Strides(a.shape), sb = Strides(b.shape);
    bool is_int = !IsFloat(a.dtype);
    if (op == "divide" && is_int)
      for (int64_t i = 0; i < b.NumElements(); ++i)
        if (b.GetDouble(i) == 0) return InvalidArgument("divide: integer division by zero");
    return MakeTensor(a.dtype, shape, [&](int64_t i) {
      double x = a.GetDouble(BroadcastIndex(i, shape, a.shape, sa));
      double y = b.GetDouble(BroadcastIndex(i, shape, b.shape, sb));
      if (op == "add") return x + y;
      if (op == "subtract") return x - y;
      if (op == "multiply") return x * y;
      return is_int ? std::trunc(x / y) : x / y;
    });
  }
  if (op == "nn.relu") {
    const Tensor& a = args[0];
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return std::max(a.GetDouble(i), 0.0); });
  }
  if (op == "nn.softmax") {
    const Tensor& a = args[0];
    if (!IsFloat(a.dtype)) return InvalidArgument("nn.softmax needs a float tensor");
    int64_t nd = static_cast<int64_t>(a.shape.size());
    int64_t axis = attrs.Get("axis") ? attrs.Get("axis")->as_int() : -1;
    if (axis < 0) axis += nd;
    if (axis < 0 || axis >= nd) return InvalidArgument("nn.softmax: axis out of range");
    int64_t len = a.shape[axis];
    int64_t inner = 1;
    for (int64_t i = axis + 1; i < nd; ++i) inner *= a.shape[i];
    std::vector<double> out(a.NumElements());
    for (int64_t base = 0; base < a.NumElements(); ++base) {
      if ((base / inner) % len != 0) continue;  // first element of its row
      double mx = -INFINITY;
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, a.GetDouble(base + k * inner));
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(a.GetDouble(base + k * inner) - mx);
      for (int64_t k = 0; k < len; ++k) out[base + k * inner] = std::exp(a.GetDouble(base + k * inner) - mx) / sum;
    }
    return MakeTensor(a.dtype, a.shape, [&](int64_t i) { return out[i]; });
  }
  if (op == "reshape") {
    const Tensor& a = args[0];
    std::vector<int64_t> shape = int_list("shape", {});
    int64_t known = 1, minus = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == -1) minus = static_cast<int64_t>(i);
      else known *= shape[i];
    }
    if (minus >= 0) shape[minus] = known ? a.NumElements() / known : 0;
    if (Product(shape) != a.NumElements()) return InvalidArgument("reshape: element count differs");
    Tensor t = a;
    t.shape = shape;
    return t;
  }
  if (op == "permute_dims") {
    const Tensor& a = args[0];
    size_t nd = a.shape.size();
    std::vector<int64_t> axes = int_list("axes", {});
    if (axes.empty())
      for (size_t i = nd; i-- > 0;) axes.push_back(static_cast<int64_t>(i));
    for (int64_t& x : axes) if (x < 0) x += static_cast<int64_t>(nd);
    std::vector<int64_t> shape;
    for (int64_t x : axes) shape.push_back(a.shape[x]);
    auto in_strides = Strides(a.shape);
    return MakeTensor(a.dtype, shape, [&](int64_t flat) {
      int64_t src = 0;
      for (size_t i = nd; i-- > 0;) {
        int64_t coord = flat % shape[i];
        flat /= shape[i];
        src += coord * in_strides[axes[i]];
      }
      return a.GetDouble(src);
    });
  }
  if (op == "matmul") {
    Tensor a = args[0], b = args[1];
    if (a.dtype != b.dtype) return InvalidArgument("matmul: dtypes differ");
    bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
    if (a_vec) a.shape.insert(a.shape.begin(), 1);
    if (b_vec) b.shape.push_back(1);
    int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
    if (b.shape[b.shape.size() - 2] != k) return InvalidArgument("matmul: contraction mismatch");
    std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
    PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastShape(ba, bb));
    auto sa = Strides(ba), sb = Strides(bb);
    std::vector<int64_t> shape = batch;
    shape.push_back(n);
    shape.push_back(m);
    Tensor r = MakeTensor(a.dtype, shape, [&](int64_t flat) {
      int64_t j = flat % m, i = (flat / m) % n, bi = flat / (m * n);
      int64_t oa = BroadcastIndex(bi, batch, ba, sa) * n * k;
      int64_t ob = BroadcastIndex(bi, batch, bb, sb) * k * m;
      double s = 0;
      for (int64_t t = 0; t < k; ++t) s += a.GetDouble(oa + i * k + t) * b.GetDouble(ob + t * m + j);
      return s;
    });
    if (a_vec) r.shape.erase(r.shape.end() - 2);
    if (b_vec) r.shape.pop_back();
    return r;
  }
  if (op == "nn.conv2d" && (attrs.Get("data_layout") || attrs.Get("kernel_layout") ||
                            attrs.Get("out_layout"))) {
    // Other layouts: transpose to NCHW / OIHW, convolve, transpose back.
    auto layout = [&](const char* key, const std::string& def) {
      const AttrValue* v = attrs.Get(key);
      return v ? v->as_string() : def;
    };
    std::string dl = layout("data_layout", "NCHW"), kl = layout("kernel_layout", "OIHW");
    std::string ol = layout("out_layout", dl);
    auto axes = [](const std::string& l) -> std::vector<int64_t> {
      if (l == "NCHW" || l == "OIHW") return {0, 1, 2, 3};
      if (l == "NHWC" || l == "OHWI") return {0, 3, 1, 2};
      if (l == "HWIO") return {3, 2, 0, 1};
      return {};
    };
    auto da = axes(dl), ka = axes(kl), oa = axes(ol);
    if (da.empty() || ka.empty() || oa.empty() || ol == "OIHW" || ol == "OHWI" || ol == "HWIO")
      return InvalidArgument("nn.conv2d: unsupported layouts " + dl + "/" + kl + "/" + ol);
    auto permute = [&](const Tensor& t, const std::vector<int64_t>& a) {
      std::vector<AttrValue> l;
      for (int64_t x : a) l.push_back(AttrValue::Int(x));
      return EvalCoreOp("permute_dims", {t}, *Attrs::Make({{Symbol("axes"), AttrValue::List(l)}}));
    };
    std::vector<Attrs::Entry> rest;
    for (const auto& e : attrs.entries())
      if (e.first.str() != "data_layout" && e.first.str() != "kernel_layout" && e.first.str() != "out_layout")
        rest.push_back(e);
    PLIR_ASSIGN_OR_RETURN(Tensor d, permute(args[0], da));
    PLIR_ASSIGN_OR_RETURN(Tensor w, permute(args[1], ka));
    PLIR_ASSIGN_OR_RETURN(Attrs plain, Attrs::Make(std::move(rest)));
    PLIR_ASSIGN_OR_RETURN(Tensor out, EvalCoreOp("nn.conv2d", {d, w}, plain));
    std::vector<int64_t> inverse(4);
    for (int64_t i = 0; i < 4; ++i) inverse[oa[i]] = i;
    return permute(out, inverse);
  }
  if (op == "zeros" || op == "ones" || op == "full") {
    std::vector<int64_t> shape = int_list("shape", {});
    DataType dt = op == "full" && !args.empty() ? args[0].dtype : DataType::kUnknown;
    if (const AttrValue* v = attrs.Get("dtype")) {
      std::optional<DataType> p = ParseDataType(v->as_string());
      if (!p) return InvalidArgument(op + ": unknown dtype " + v->as_string());
      dt = *p;
    }
    if (dt == DataType::kUnknown) return InvalidArgument(op + ": dtype needed");
    double fill = op == "ones" ? 1.0 : 0.0;
    if (op == "full") {
      if (args.size() != 1 || args[0].NumElements() != 1)
        return InvalidArgument("full: the fill value must be a scalar tensor");
      fill = args[0].GetDouble(0);
    }
    return MakeTensor(dt, shape, [&](int64_t) { return fill; });
  }
  if (op == "astype") {
    const Tensor& a = args[0];
    std::optional<DataType> dt = ParseDataType(attrs.Get("dtype")->as_string());
    if (!dt) return InvalidArgument("astype: unknown dtype");
    return MakeTensor(*dt, a.shape, [&](int64_t i) { return a.GetDouble(i); });
  }
  if (op == "arange") {
    auto num = [&](const char* k, double def) {
      const AttrValue* v = attrs.Get(k);
      if (!v) return def;
      return v->kind() == AttrValue::Kind::kInt ? static_cast<double>(v->as_int()) : v->as_float();
    };
    double start = num("start", 0), end = num("end", 0), step = num("step", 1);
    if (step == 0) return InvalidArgument("arange: step must not be 0");
    int64_t n = static_cast<int64_t>(std::max(0.0, std::ceil((end - start) / step)));
    DataType dt = DataType::kInt64;
    if (const AttrValue* v = attrs.Get("dtype")) {
      std::optional<DataType> p = ParseDataType(v->as_string());
      if (!p) return InvalidArgument("arange: unknown dtype");
      dt = *p;
    }
    return MakeTensor(dt, {n}, [&](int64_t i) { return start + step * static_cast<double>(i); });
  }
  if (op == "nn.conv2d") {
    const Tensor& d = args[0];
    const Tensor& w = args[1];
    if (d.shape.size() != 4 || w.shape.size() != 4) return InvalidArgument("nn.conv2d: 4-D tensors needed");
    auto expand = [](std::vector<int64_t> v, size_t n) {
      if (v.size() == 1) v.assign(n, v[0]);
      if (n == 4 && v.size() == 2) v = {v[0], v[1], v[0], v[1]};
      return v;
    };
    std::vector<int64_t> st = expand(int_list("strides", {1, 1}), 2);
    std::vector<int64_t> pad = expand(int_list("padding", {0, 0, 0, 0}), 4);
    std::vector<int64_t> dil = expand(int_list("dilation", {1, 1}), 2);
    int64_t groups = attrs.Get("groups") ? attrs.Get("groups")->as_int() : 1;
    int64_t N = d.shape[0], C = d.shape[1], H = d.shape[2], W = d.shape[3];
    int64_t O = w.shape[0], I = w.shape[1], KH = w.shape[2], KW = w.shape[3];
    if (C != I * groups) return InvalidArgument("nn.conv2d: channel mismatch");
    int64_t OH = (H + pad[0] + pad[2] - dil[0] * (KH - 1) - 1) / st[0] + 1;
    int64_t OW = (W + pad[1] + pad[3] - dil[1] * (KW - 1) - 1) / st[1] + 1;
    int64_t opg = O / groups;
    return MakeTensor(d.dtype, {N, O, OH, OW}, [&](int64_t flat) {
      int64_t ow = flat % OW, oh = (flat / OW) % OH, o = (flat / (OW * OH)) % O, n = flat / (OW * OH * O);
      int64_t g = o / opg;
      double s = 0;
      for (int64_t ic = 0; ic < I; ++ic)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
            int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            int64_t c = g * I + ic;
            s += d.GetDouble(((n * C + c) * H + ih) * W + iw) * w.GetDouble(((o * I + ic) * KH + kh) * KW + kw);
          }
      return s;
    });
  }
  return InvalidArgument("no reference kernel for op " + op);
}

}  // namespace plir
