// CPU tensors: storage, allocation hooks, size caps and element access.
#include "kernels/tensor.h"

#include <atomic>

#include "kernels/internal/elements.h"
#include "kernels/internal/uninitialized.h"

namespace plir {
using namespace internal;  // element access helpers
namespace {

thread_local const TensorAllocator* current_allocator = nullptr;
thread_local const TensorBytes* donated = nullptr;  // ScopedDonation's

}  // namespace

const TensorAllocator* SetThreadTensorAllocator(const TensorAllocator* alloc) {
  const TensorAllocator* prev = current_allocator;
  current_allocator = alloc;
  return prev;
}

namespace {
std::atomic<int64_t> g_max_tensor_bytes{int64_t{16} << 30};
}  // namespace

int64_t MaxTensorBytes() { return g_max_tensor_bytes.load(); }
void SetMaxTensorBytes(int64_t bytes) { g_max_tensor_bytes.store(bytes); }

Status CheckTensorSize(const Type& type, const std::string& what) {
  std::vector<const TypeNode*> work{type.get()};
  while (!work.empty()) {
    const TypeNode* t = work.back();
    work.pop_back();
    if (!t) continue;
    if (auto* tup = As<TupleTypeNode>(t)) {
      for (const Type& f : tup->fields()) work.push_back(f.get());
      continue;
    }
    auto* tt = As<TensorTypeNode>(t);
    if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown) continue;
    std::vector<int64_t> dims;
    for (const Dim& d : tt->shape()) dims.push_back(d.value);
    PLIR_ASSIGN_OR_RETURN(int64_t n,
                          ElementCount(dims, what + " (" + TypeToString(Type(tt)) + ")"));
    auto bytes = CheckedBytes(n, DataTypeSize(tt->dtype()), MaxTensorBytes(),
                              what + " (" + TypeToString(Type(tt)) + ")");
    if (!bytes.ok()) return bytes.status();
  }
  return Status::Ok();
}

std::shared_ptr<WritableTensorBytes> AllocateTensorBuffer(size_t bytes) {
  if (current_allocator) return (*current_allocator)(bytes, /*zero=*/true);
  return std::make_shared<WritableTensorBytes>(NewTensorString(bytes, /*zero=*/true));
}

std::shared_ptr<WritableTensorBytes> AllocateTensorBufferForOverwrite(size_t bytes) {
  if (current_allocator) return (*current_allocator)(bytes, /*zero=*/false);
  return std::make_shared<WritableTensorBytes>(NewTensorString(bytes, /*zero=*/false));
}

ScopedDonation::ScopedDonation(const Tensor* operand) : prev_(donated) {
  donated = operand && operand->data ? operand->data.get() : nullptr;
}
ScopedDonation::~ScopedDonation() { donated = prev_; }

namespace internal {
Tensor OutputForOverwrite(const Tensor& operand, DataType dt, std::vector<int64_t> shape) {
  if (donated && operand.data.get() == donated && operand.data.use_count() == 1 &&
      !operand.data->borrowed() && operand.dtype == dt && operand.shape == shape) {
    donated = nullptr;  // one output per donation
    return operand;
  }
  return NewTensorForOverwrite(dt, std::move(shape));
}
}  // namespace internal

void SetHugePageTensorBuffers(bool on) { internal::SetHugePageTensors(on); }

int64_t Tensor::NumElements() const { return Product(shape); }
double Tensor::GetDouble(int64_t i) const {
  return Load(dtype, data->data() + i * DataTypeSize(dtype));
}
int64_t Tensor::GetInt(int64_t i) const {
  if (IsFloat(dtype)) return static_cast<int64_t>(GetDouble(i));
  return static_cast<int64_t>(LoadInt(dtype, data->data() + i * DataTypeSize(dtype)));
}

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

Tensor MakeTensor(DataType dtype, std::vector<int64_t> shape,
                  const std::function<double(int64_t)>& f) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = t.NumElements();
  int size = DataTypeSize(dtype);
  std::shared_ptr<WritableTensorBytes> data = AllocateTensorBuffer(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i) Store(dtype, f(i), data->mutable_data() + i * size);
  t.data = std::move(data);
  return t;
}

StatusOr<Tensor> MakeIntTensor(DataType dtype, std::vector<int64_t> shape,
                               const std::function<int64_t(int64_t)>& f) {
  if (IsFloat(dtype))
    return InvalidArgument("MakeIntTensor: " + std::string(DataTypeName(dtype)) +
                           " is not an integer dtype");
  return IntTensor("MakeIntTensor", dtype, std::move(shape), [&](int64_t i, i128* v) {
    *v = f(i);
    return true;
  });
}

}  // namespace plir
