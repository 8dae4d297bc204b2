// A reference interpreter for PLIR modules on CPU tensors.
//
// Runs every core op through the reference kernels (runtime/tensor.h),
// `call_tir` through a table of registered C++ kernels, `call_packed`
// through registered functions, module function calls and `if`. It counts
// the bytes of live tensors it allocated (a value is released after its last
// use) and keeps the peak. The lazy-parameter protocol is built in:
// `get_item(i)` copies parameter i from a parameter source (a file or memory
// outside the interpreter's accounting) into tracked memory, `set_item(i, v)`
// hands v to the output sink (leaving the interpreter's memory), and
// `vm.kill_object(%v)` releases %v at once.
#ifndef PLIR_RUNTIME_INTERPRETER_H_
#define PLIR_RUNTIME_INTERPRETER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/module.h"
#include "runtime/tensor.h"

namespace plir {

struct Value;
using ValueRef = std::shared_ptr<const Value>;

struct Value {
  enum class Kind { kTensor, kTuple, kInt, kFloat, kBool, kString, kOpaque };
  Kind kind = Kind::kOpaque;
  Tensor tensor;
  std::vector<ValueRef> fields;
  int64_t i = 0;
  double f = 0;
  std::string str;

  static ValueRef OfTensor(Tensor t);
  static ValueRef OfTuple(std::vector<ValueRef> fields);
  static ValueRef Opaque();
};

// Counts the bytes of live tensor buffers it allocated.
class MemoryTracker {
 public:
  std::shared_ptr<std::string> Allocate(size_t bytes);
  size_t live() const { return live_; }
  size_t peak() const { return peak_; }
  void ResetPeak() { peak_ = live_.load(); }

 private:
  std::atomic<size_t> live_{0};
  std::atomic<size_t> peak_{0};
};

class Interpreter {
 public:
  using PackedFn = std::function<StatusOr<ValueRef>(Interpreter&, const std::vector<ValueRef>&)>;
  // Computes an extern kernel's output (of type `out`) from its inputs.
  using Kernel = std::function<StatusOr<Tensor>(const std::vector<Tensor>& in, const Type& out)>;

  explicit Interpreter(Module module);

  void RegisterPacked(const std::string& name, PackedFn fn) { packed_[name] = std::move(fn); }
  void RegisterKernel(const std::string& extern_name, Kernel fn) { kernels_[extern_name] = std::move(fn); }

  // The lazy protocol's parameter source and output sink.
  void SetParamSource(std::vector<Tensor> params) { source_ = std::move(params); }
  const std::map<int64_t, Tensor>& outputs() const { return outputs_; }

  // Calls function `name` with `args` (values made with Track() or
  // untracked). Errors name the function and binding.
  StatusOr<ValueRef> Call(const std::string& name, const std::vector<ValueRef>& args);

  // Copies `t` into tracked memory (as if loaded by the interpreter).
  Tensor Track(const Tensor& t);
  MemoryTracker& memory() { return memory_; }

 private:
  struct Frame;
  StatusOr<ValueRef> CallFunction(const FunctionNode& f, const std::vector<ValueRef>& args, int depth);
  StatusOr<ValueRef> EvalBody(const SeqExprNode& body, Frame& frame, int depth);
  StatusOr<ValueRef> Eval(const Expr& e, Frame& frame, int depth);
  StatusOr<ValueRef> EvalCall(const CallNode& c, Frame& frame, int depth);
  const std::vector<std::vector<const VarNode*>>& ReleasePlan(const SeqExprNode& body);

  Module module_;
  MemoryTracker memory_;
  TensorAllocator allocator_;
  std::unordered_map<std::string, PackedFn> packed_;
  std::unordered_map<std::string, Kernel> kernels_;
  std::vector<Tensor> source_;
  std::map<int64_t, Tensor> outputs_;
  std::unordered_map<const SeqExprNode*, std::vector<std::vector<const VarNode*>>> plans_;
};

// Bitwise comparison of two values (tensors compare dtype, shape and bytes).
bool ValuesBitwiseEqual(const ValueRef& a, const ValueRef& b);

// What match_cast checks at run time: `v` has type `t` (dtype, rank,
// constant dimensions; each symbolic name one size throughout `t`).
Status CheckMatch(const ValueRef& v, const Type& t);

}  // namespace plir

#endif  // PLIR_RUNTIME_INTERPRETER_H_
