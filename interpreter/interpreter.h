// A reference interpreter for PLIR modules on CPU tensors.
//
// Runs every op through the kernel it carries (`FindOpKernel`, kernels/op_kernels.h;
// plugins' ops too), `call_tir` through the extern kernels of the
// KernelRegistry (kernels/extern_kernels.h; RegisterKernel overrides one for this
// interpreter), `call_packed` through registered functions, module function
// calls and `if`. It counts the bytes of live tensors it allocated (a value
// is released after its last use) and keeps the peak. The lazy-parameter
// protocol is built in: `get_item(i)` asks the parameter loader for
// parameter i (e.g. read from a weights file into tracked memory),
// `set_item(i, v)` hands v to the output sink (e.g. written to a file; the
// interpreter then drops it), and `vm.kill_object(%v)` releases %v at once.
#ifndef PLIR_INTERPRETER_INTERPRETER_H_
#define PLIR_INTERPRETER_INTERPRETER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/module.h"
#include "kernels/extern_kernels.h"
#include "kernels/op_kernels.h"

namespace plir {

struct Value;
using ValueRef = std::shared_ptr<const Value>;

struct Value {
  // kFunction: a function value, either a closure (a local function and the
  // values of the variables it captured when it was defined) or a host
  // function (a callback passed in by the caller, e.g. for a Callable
  // parameter).
  enum class Kind { kTensor, kTuple, kInt, kFloat, kBool, kString, kOpaque, kFunction };
  using HostFn = std::function<StatusOr<ValueRef>(const std::vector<ValueRef>& args)>;
  Kind kind = Kind::kOpaque;
  Tensor tensor;
  std::vector<ValueRef> fields;
  int64_t i = 0;
  double f = 0;
  std::string str;
  Ref<LocalFnNode> fn;  // a closure's code
  std::shared_ptr<const std::unordered_map<const VarNode*, ValueRef>> captured;
  HostFn host;  // a host function (when fn is null)

  static ValueRef OfTensor(Tensor t);
  static ValueRef OfTuple(std::vector<ValueRef> fields);
  static ValueRef Opaque();
  static ValueRef OfHostFunction(HostFn fn);
};

// Counts the bytes of live tensor buffers it allocated, and keeps freed
// buffers for reuse by a later allocation of the same size (a model's
// activations repeat sizes from layer to layer). Reuse saves the page
// faults and the mmap/munmap a fresh large buffer costs: without it,
// plir-run on mobilenet_v2 spent more system time than user time. The kept
// bytes are bounded so that live + kept never exceeds the peak of live
// bytes: the process's memory stays what it would be without reuse. Buffers
// asked for zeroed are zeroed either way. Buffers may outlive the tracker.
class MemoryTracker {
 public:
  MemoryTracker();
  // `bytes` zero bytes; with `zero` false, contents the caller overwrites.
  std::shared_ptr<WritableTensorBytes> Allocate(size_t bytes, bool zero = true);
  // Counts `bytes` (memory the tracker did not allocate, such as a weights
  // file's mapping) as live until the last reference to what it returns
  // goes; the bytes are the same, never pooled for reuse.
  std::shared_ptr<const TensorBytes> Count(std::shared_ptr<const TensorBytes> bytes);
  size_t live() const;
  size_t peak() const;
  // Bytes of freed buffers kept for reuse.
  size_t kept() const;
  // Makes the current live bytes the peak; drops the kept buffers (which
  // the new bound no longer allows).
  void ResetPeak();
  // Frees the kept buffers and keeps the peak: for when the run is over and
  // memory that no tensor will reuse would otherwise stay resident (plir-run
  // before it writes the outputs, whose copy buffer would sit on top).
  void ReleaseKept();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

class Interpreter {
 public:
  using PackedFn = std::function<StatusOr<ValueRef>(Interpreter&, const std::vector<ValueRef>&)>;
  // Computes an extern kernel's output (of type `out`) from its inputs.
  using Kernel = ExternKernelFn;
  // Loads parameter i for get_item(i). Buffers it allocates with
  // AllocateTensorBuffer are counted as the interpreter's.
  using ParamLoader = std::function<StatusOr<Tensor>(int64_t i)>;
  // Receives set_item(j, t). The interpreter keeps nothing of `t`.
  using OutputSink = std::function<Status(int64_t j, const Tensor& t)>;

  explicit Interpreter(Module module);

  void RegisterPacked(const std::string& name, PackedFn fn) { packed_[name] = std::move(fn); }
  void RegisterKernel(const std::string& extern_name, Kernel fn) {
    kernels_[extern_name] = std::move(fn);
  }

  // The lazy protocol's parameter source: tensors in memory (copied into
  // tracked memory on get_item) or a loader.
  void SetParamSource(std::vector<Tensor> params);
  void SetParamLoader(ParamLoader loader) { loader_ = std::move(loader); }
  // Where set_item sends outputs. Without a sink they are kept (an
  // untracked copy) in outputs().
  void SetOutputSink(OutputSink sink) { sink_ = std::move(sink); }
  const std::map<int64_t, Tensor>& outputs() const { return outputs_; }
  // Called with every binding's value as it is computed, in evaluation
  // order: the function it is in, its variable, the value (plir-opt
  // --check-execution compares two runs binding by binding).
  using BindingObserver =
      std::function<void(const std::string& function, const VarNode& var, const ValueRef& v)>;
  void SetBindingObserver(BindingObserver observer) { observer_ = std::move(observer); }

  // Calls function `name` with `args` (values made with Track() or
  // untracked). Errors name the function and binding.
  StatusOr<ValueRef> Call(const std::string& name, const std::vector<ValueRef>& args);

  // Copies `t` into tracked memory (as if loaded by the interpreter).
  Tensor Track(const Tensor& t);
  MemoryTracker& memory() { return memory_; }

 private:
  struct Frame;
  StatusOr<ValueRef> CallFunction(const FunctionNode& f, const std::vector<ValueRef>& args,
                                  int depth);
  StatusOr<ValueRef> EvalBody(const SeqExprNode& body, Frame& frame, int depth);
  StatusOr<ValueRef> Eval(const Expr& e, Frame& frame, int depth);
  StatusOr<ValueRef> EvalCall(const CallNode& c, Frame& frame, int depth);
  StatusOr<ValueRef> CallValue(const ValueRef& callee, const std::vector<ValueRef>& args,
                               int depth);
  const std::vector<std::vector<const VarNode*>>& ReleasePlan(const SeqExprNode& body);
  const std::vector<char>& TransposePlan(const SeqExprNode& body);

  Module module_;
  MemoryTracker memory_;
  TensorAllocator allocator_;
  std::unordered_map<std::string, PackedFn> packed_;
  std::unordered_map<std::string, Kernel> kernels_;
  ParamLoader loader_;
  OutputSink sink_;
  BindingObserver observer_;
  std::map<int64_t, Tensor> outputs_;
  std::unordered_map<const SeqExprNode*, std::vector<std::vector<const VarNode*>>> plans_;
  std::unordered_map<const SeqExprNode*, std::vector<char>> transpose_plans_;
  std::unordered_map<const LocalFnNode*, std::vector<Var>>
      captures_;  // free variables per local function
};

// Bitwise comparison of two values (tensors compare dtype, shape and bytes).
bool ValuesBitwiseEqual(const ValueRef& a, const ValueRef& b);

// What match_cast checks at run time: `v` has type `t` (dtype, rank,
// constant dimensions; each symbolic name one size throughout `t`).
Status CheckMatch(const ValueRef& v, const Type& t);

}  // namespace plir

#endif  // PLIR_INTERPRETER_INTERPRETER_H_
