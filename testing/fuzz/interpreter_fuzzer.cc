// libFuzzer target for the reference interpreter: any text that parses and
// verifies runs @main (or the first function) on small deterministic inputs
// and gives a value or a clean error: never a crash, a hang on bounded
// input, or an allocation past the tensor cap (1 MiB here).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "interpreter/interpreter.h"
#include "ir/text/parser.h"
#include "ir/verifier.h"
#include "kernels/op_kernels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  plir::SetMaxTensorBytes(1 << 20);
  auto m = plir::ParseModule(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!m.ok() || !plir::Verify(*m).ok()) return 0;
  plir::Function f = m->LookupFunction("main");
  if (!f) {
    for (const plir::Item& it : m->items())
      if (it->kind() == plir::NodeKind::kFunction) {
        f = plir::Downcast<plir::FunctionNode>(it);
        break;
      }
  }
  if (!f) return 0;
  std::vector<plir::ValueRef> args;
  for (const plir::Var& p : f->params()) {
    if (!plir::CheckTensorSize(p->type(), "input").ok()) return 0;
    auto* tt = plir::As<plir::TensorTypeNode>(p->type());
    if (!tt || !tt->IsStatic() || tt->dtype() == plir::DataType::kUnknown) return 0;
    std::vector<int64_t> shape;
    for (const plir::Dim& d : tt->shape()) shape.push_back(d.value);
    args.push_back(plir::Value::OfTensor(plir::MakeTensor(
        tt->dtype(), shape, [](int64_t i) { return static_cast<double>(i % 7 - 3); })));
  }
  plir::Interpreter interp(*m);
  auto r = interp.Call(f->name(), args);
  if (!r.ok() && r.status().message().empty()) std::abort();
  return 0;
}
