#include "kernels/extern_kernels.h"

#include <algorithm>
#include <mutex>

#include "ir/attrs.h"
#include "kernels/op_kernels.h"

namespace plir {
namespace {

// An extern that permutes the dimensions of its one input by `axes`.
ExternKernelDef Permute(std::string name, std::string description, std::vector<int64_t> axes) {
  ExternKernelDef d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.fn = [axes, n = d.name](const std::vector<Tensor>& in, const Type&) -> StatusOr<Tensor> {
    if (in.size() != 1)
      return InvalidArgument("@" + n + " takes 1 tensor, got " + std::to_string(in.size()));
    if (in[0].shape.size() != axes.size())
      return InvalidArgument("@" + n + " needs a " + std::to_string(axes.size()) + "-D tensor");
    std::vector<AttrValue> l;
    for (int64_t a : axes) l.push_back(AttrValue::Int(a));
    PLIR_ASSIGN_OR_RETURN(Attrs attrs, Attrs::Make({{Symbol("axes"), AttrValue::List(l)}}));
    return EvalOp("permute_dims", in, attrs);
  };
  return d;
}

}  // namespace

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    Status s = r->Register(Permute("transform_layout_IOHW_to_OIHW",
                                   "conv weight layout IOHW -> OIHW (swaps the first two dims)",
                                   {1, 0, 2, 3}));
    s = r->Register(Permute("transpose", "2-D transpose", {1, 0}));
    (void)s;  // distinct built-in names
    return r;
  }();
  return *registry;
}

Status KernelRegistry::Register(ExternKernelDef def) {
  if (def.name.empty())
    return InvalidArgument("an extern kernel from " + def.origin + " has no name");
  if (!def.fn && !def.tuple_fn)
    return InvalidArgument("extern kernel @" + def.name + " from " + def.origin +
                           " has no function");
  std::string name = def.name, origin = def.origin;
  auto taken = kernels_.Insert(name, std::make_shared<const ExternKernelDef>(std::move(def)));
  if (taken)
    return AlreadyExists("extern kernel @" + name + " from " + origin +
                         " is already registered by " + taken->origin);
  return Status::Ok();
}

std::shared_ptr<const ExternKernelDef> KernelRegistry::Lookup(const std::string& name) const {
  return kernels_.Lookup(name);
}

std::vector<std::string> KernelRegistry::Names() const { return kernels_.Names(); }

}  // namespace plir
