#include "kernels/op_kernels.h"

#include <mutex>

namespace plir {

OpKernelTable& OpKernelTable::Global() {
  static OpKernelTable* table = [] {
    auto* t = new OpKernelTable();
    internal::RegisterElementwiseKernels(*t);
    internal::RegisterBinaryKernels(*t);
    internal::RegisterReduceKernels(*t);
    internal::RegisterNormalizationKernels(*t);
    internal::RegisterPoolingKernels(*t);
    internal::RegisterNnKernels(*t);
    internal::RegisterLinalgKernels(*t);
    internal::RegisterDataMovementKernels(*t);
    internal::RegisterCreationKernels(*t);
    return t;
  }();
  return *table;
}

Status OpKernelTable::Register(std::string op, OpKernel kernel) {
  if (!kernel.eval) return InvalidArgument("kernel of op '" + op + "' has no eval function");
  if (kernels_.Insert(op, std::make_shared<const OpKernel>(std::move(kernel))))
    return AlreadyExists("op '" + op + "' already has a kernel");
  return Status::Ok();
}

const OpKernel* OpKernelTable::Lookup(std::string_view op) const {
  return kernels_.Lookup(op).get();  // entries live as long as the table
}

OpEvalFn FindOpKernel(const OpNode& op) {
  if (op.def().eval) return op.def().eval;
  // A core op's reference kernel: the op registry refuses a second op of
  // the same name, so the name identifies the op.
  const OpKernel* k = OpKernelTable::Global().Lookup(op.name());
  return k ? k->eval : nullptr;
}

StatusOr<Tensor> EvalOp(const OpNode& op, const std::vector<Tensor>& args, const Attrs& attrs) {
  OpEvalFn eval = FindOpKernel(op);
  if (!eval) return Unimplemented("op " + op.name() + " has no evaluation kernel");
  return eval(args, attrs);
}

StatusOr<Tensor> EvalOp(const std::string& op, const std::vector<Tensor>& args,
                        const Attrs& attrs) {
  Op o = OpRegistry::Global().Lookup(op);
  if (!o) return NotFound("unknown op '" + op + "'");
  return EvalOp(*o, args, attrs);
}

int64_t EstimateWork(const OpNode& op, const std::vector<Tensor>& args, int64_t out_elements) {
  if (op.def().work) return op.def().work(args, out_elements);
  if (!op.def().eval)
    if (const OpKernel* k = OpKernelTable::Global().Lookup(op.name()); k && k->work)
      return k->work(args, out_elements);
  return out_elements;
}

int64_t EstimateWork(const std::string& op, const std::vector<Tensor>& args, int64_t out_elements) {
  Op o = OpRegistry::Global().Lookup(op);
  return o ? EstimateWork(*o, args, out_elements) : out_elements;
}

}  // namespace plir
