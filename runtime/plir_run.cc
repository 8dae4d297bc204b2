// plir-run: executes a function of a module with the reference interpreter.
//
//   plir-run MODULE --entry F [--inputs SPEC]... [--lazy-param-types "T;T"]
//            [--lazy-params SPEC]
//
// SPEC fills one parameter (a tuple parameter: each field): `zeros`, `ones`,
// `random` or `random:SEED` (uniform in [-1, 1)), or `file:PATH` (raw
// little-endian bytes of exactly the parameter's size). For a lazy function
// (after LazyTransformParams), --lazy-param-types gives the types of the
// parameters get_item loads and --lazy-params how to fill them. Prints each
// output (dtype, shape, checksum, first values) and the peak live bytes.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>

#include "ir/parser.h"
#include "runtime/file_util.h"
#include "runtime/interpreter.h"

namespace plir {
namespace {

StatusOr<Tensor> Fill(const Type& type, const std::string& spec, uint64_t salt) {
  auto* tt = As<TensorTypeNode>(type);
  if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
    return InvalidArgument("cannot make an input of type " + TypeToString(type) + " (needs a static tensor type)");
  std::vector<int64_t> shape;
  for (const Dim& d : tt->shape()) shape.push_back(d.value);
  if (spec.rfind("file:", 0) == 0) {
    PLIR_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(spec.substr(5)));
    Tensor t;
    t.dtype = tt->dtype();
    t.shape = shape;
    if (bytes.size() != static_cast<size_t>(t.NumElements()) * DataTypeSize(t.dtype))
      return InvalidArgument(spec.substr(5) + " has " + std::to_string(bytes.size()) + " bytes; " +
                             TypeToString(type) + " needs " +
                             std::to_string(t.NumElements() * DataTypeSize(t.dtype)));
    t.data = std::make_shared<const std::string>(std::move(bytes));
    return t;
  }
  if (spec == "zeros") return MakeTensor(tt->dtype(), shape, [](int64_t) { return 0.0; });
  if (spec == "ones") return MakeTensor(tt->dtype(), shape, [](int64_t) { return 1.0; });
  if (spec.rfind("random", 0) == 0) {
    uint64_t seed = spec.size() > 7 ? std::stoull(spec.substr(7)) : 0;
    std::mt19937_64 rng(seed * 1000003 + salt);
    std::uniform_real_distribution<double> dist(-1, 1);
    return MakeTensor(tt->dtype(), shape, [&](int64_t) { return dist(rng); });
  }
  return InvalidArgument("unknown input spec '" + spec + "' (zeros, ones, random[:SEED], file:PATH)");
}

StatusOr<ValueRef> FillValue(const Type& type, const std::string& spec, uint64_t& salt, Interpreter& in) {
  if (auto* tt = As<TupleTypeNode>(type)) {
    std::vector<ValueRef> fields;
    for (const Type& f : tt->fields()) {
      PLIR_ASSIGN_OR_RETURN(ValueRef v, FillValue(f, spec, salt, in));
      fields.push_back(v);
    }
    return Value::OfTuple(std::move(fields));
  }
  PLIR_ASSIGN_OR_RETURN(Tensor t, Fill(type, spec, salt++));
  return Value::OfTensor(in.Track(t));
}

void PrintValue(const ValueRef& v, const std::string& indent) {
  if (v->kind == Value::Kind::kTuple) {
    std::cout << indent << "tuple of " << v->fields.size() << "\n";
    for (const ValueRef& f : v->fields) PrintValue(f, indent + "  ");
    return;
  }
  if (v->kind != Value::Kind::kTensor) {
    std::cout << indent << "(non-tensor value)\n";
    return;
  }
  const Tensor& t = v->tensor;
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : *t.data) h = (h ^ c) * 1099511628211ull;
  std::cout << indent << DataTypeName(t.dtype) << "[";
  for (size_t i = 0; i < t.shape.size(); ++i) std::cout << (i ? ", " : "") << t.shape[i];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  std::cout << "] checksum " << buf << " first:";
  for (int64_t i = 0; i < std::min<int64_t>(4, t.NumElements()); ++i) std::cout << " " << t.GetDouble(i);
  std::cout << "\n";
}

int Run(const std::string& file, const std::string& entry, const std::vector<std::string>& inputs,
        const std::string& lazy_types, const std::string& lazy_spec) {
  auto m = ParseModuleFile(file);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    return 1;
  }
  Function f = m->LookupFunction(entry);
  if (!f) {
    std::cerr << "plir-run: no function @" << entry << " in " << file << "\n";
    return 1;
  }
  Interpreter interp(*m);
  if (!lazy_types.empty()) {
    std::vector<Tensor> source;
    std::stringstream ss(lazy_types);
    uint64_t salt = 0;
    for (std::string t; std::getline(ss, t, ';');) {
      auto type = ParseType(t);
      if (!type.ok()) {
        std::cerr << "plir-run: --lazy-param-types: " << type.status().message() << "\n";
        return 1;
      }
      auto tensor = Fill(*type, lazy_spec, salt++);
      if (!tensor.ok()) {
        std::cerr << "plir-run: " << tensor.status().message() << "\n";
        return 1;
      }
      source.push_back(*tensor);
    }
    interp.SetParamSource(std::move(source));
  }
  if (inputs.size() != f->params().size() && !(inputs.size() == 1 && f->params().size() > 1)) {
    std::cerr << "plir-run: @" << entry << " takes " << f->params().size() << " parameter(s); give one --inputs each (or one for all)\n";
    return 1;
  }
  std::vector<ValueRef> args;
  uint64_t salt = 0;
  for (size_t i = 0; i < f->params().size(); ++i) {
    auto v = FillValue(f->params()[i]->type(), inputs.size() == 1 ? inputs[0] : inputs[i], salt, interp);
    if (!v.ok()) {
      std::cerr << "plir-run: parameter %" << f->params()[i]->name_hint() << ": " << v.status().message() << "\n";
      return 1;
    }
    args.push_back(*v);
  }
  auto r = interp.Call(entry, args);
  if (!r.ok()) {
    std::cerr << "plir-run: " << r.status().message() << "\n";
    return 1;
  }
  std::cout << "result:\n";
  PrintValue(*r, "  ");
  if (!interp.outputs().empty()) {
    std::cout << "set_item outputs:\n";
    for (const auto& [j, t] : interp.outputs()) {
      std::cout << "  [" << j << "] ";
      PrintValue(Value::OfTensor(t), "");
    }
  }
  std::cout << "peak live bytes: " << interp.memory().peak() << "\n";
  return 0;
}

}  // namespace
}  // namespace plir

int main(int argc, char** argv) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("plir-run: chdir");
  }
  CLI::App app{"plir-run: execute a PLIR function with the reference interpreter"};
  std::string file, entry = "main", lazy_types, lazy_spec = "random";
  std::vector<std::string> inputs;
  app.add_option("module", file, "module file (.plir)")->required();
  app.add_option("--entry", entry, "function to run (default main)");
  app.add_option("--inputs", inputs, "one spec per parameter: zeros, ones, random[:SEED], file:PATH")
      ->allow_extra_args(false);
  app.add_option("--lazy-param-types", lazy_types, "types of the parameters get_item loads, ';'-separated");
  app.add_option("--lazy-params", lazy_spec, "spec for the get_item parameters (default random)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return plir::Run(file, entry, inputs, lazy_types, lazy_spec);
}
