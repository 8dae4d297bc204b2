// plir-run: executes a function of a module with the reference interpreter.
//
//   plir-run MODULE --entry F [--inputs SPEC]... [--params IN.safetensors]
//            [--save-outputs OUT.safetensors] [--plugin PATH]...
//            [--lazy-param-types "T;T"] [--lazy-params SPEC] [--threads N]
//
// Parameters. `--params IN.safetensors` reads them from a weights file. For
// an eager function every tensor of its parameters (tuple fields included)
// is read up front, bound by name when every name is in the file (a tuple
// field is named by the variable it is bound to, `%w1 = %params.0`), else
// by index in the file's order. For a lazy function (after
// LazyTransformParams) `get_item(i)` reads weight i from the file when it
// is called, and nothing before: by name when the variables get_item binds
// (`%w1 = call_packed("get_item", 0)`) all name tensors of the file, else
// by index. Without --params, SPEC fills each parameter (a tuple parameter:
// each field): `zeros`, `ones`, `random` or `random:SEED` (uniform in
// [-1, 1)), or `file:PATH` (raw little-endian bytes of exactly the
// parameter's size); for a lazy function --lazy-param-types gives the types
// get_item loads and --lazy-params how to fill them. Dtype and shape are
// checked against the declared types (--lazy-param-types for get_item).
//
// Inputs of an imported model. `--inputs-file IN.safetensors` binds the
// first `num_input` parameters (the function attribute the ONNX importer
// sets; all parameters when it is absent and there is no --params) by name
// when every one is in the file under its PLIR name or the ONNX name kept in
// `onnx_names`, else by position in file order (the file then holds exactly
// that many tensors); `--params` binds the parameters after them.
//
// Outputs. `--save-outputs OUT.safetensors` writes the tensors of the
// result (eager; a tuple flattened, named by the function's `onnx_outputs`
// when it names every tensor) or what `set_item(j, t)` receives (lazy: each
// output is spooled to disk as it arrives and then released), else named
// "0", "1", ... in index order; the file is complete and in place only when the run
// succeeds, and is byte-identical for the two forms. Without it, each output
// is printed (dtype, shape, checksum, first values).
//
// `--plugin PATH` loads a plugin first: its ops (with their kernels) and its
// extern kernels (call_tir targets) become available. The run ends with the
// interpreter's peak live bytes and the process's peak RSS (getrusage).
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "driver/file_util.h"
#include "driver/plugin_loader.h"
#include "interpreter/entry_inputs.h"
#include "interpreter/interpreter.h"
#include "interpreter/safetensors.h"
#include "ir/parallel.h"
#include "ir/serialize/module_file.h"
#include "ir/support/fnv.h"
#include "ir/text/parser.h"

namespace plir {
namespace {

StatusOr<Tensor> Fill(const Type& type, const std::string& spec, uint64_t salt) {
  auto* tt = As<TensorTypeNode>(type);
  if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
    return InvalidArgument("cannot make an input of type " + TypeToString(type) +
                           " (needs a static tensor type)");
  PLIR_RETURN_IF_ERROR(CheckTensorSize(type, "an input"));
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
    t.data = std::make_shared<const TensorBytes>(std::move(bytes));
    return t;
  }
  if (spec == "zeros") return MakeTensor(tt->dtype(), shape, [](int64_t) { return 0.0; });
  if (spec == "ones") return MakeTensor(tt->dtype(), shape, [](int64_t) { return 1.0; });
  if (spec.rfind("random", 0) == 0) {
    uint64_t seed = 0;
    if (spec.size() > 7) {
      auto r = std::from_chars(spec.data() + 7, spec.data() + spec.size(), seed);
      if (spec[6] != ':' || r.ec != std::errc() || r.ptr != spec.data() + spec.size())
        return InvalidArgument("bad input spec '" + spec +
                               "': random:SEED takes a non-negative integer");
    }
    std::mt19937_64 rng(seed * 1000003 + salt);
    std::uniform_real_distribution<double> dist(-1, 1);
    return MakeTensor(tt->dtype(), shape, [&](int64_t) { return dist(rng); });
  }
  return InvalidArgument("unknown input spec '" + spec +
                         "' (zeros, ones, random[:SEED], file:PATH)");
}

StatusOr<ValueRef> FillValue(const Type& type, const std::string& spec, uint64_t& salt,
                             Interpreter& in) {
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
  uint64_t h = Fnv1a64(t.data->view());
  std::cout << indent << DataTypeName(t.dtype) << "[";
  for (size_t i = 0; i < t.shape.size(); ++i) std::cout << (i ? ", " : "") << t.shape[i];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  std::cout << "] checksum " << buf << " first:";
  for (int64_t i = 0; i < std::min<int64_t>(4, t.NumElements()); ++i)
    std::cout << " " << t.GetDouble(i);
  std::cout << "\n";
}

// One tensor of a function's parameters (a tuple parameter has several).
// The tensor leaves of the entry's parameters: interpreter/entry_inputs.h.
using Leaf = ParamLeaf;

// Rebuilds a value of type `t` from tensors taken in order from `next`.
ValueRef BuildValue(const Type& t, std::vector<Tensor>::iterator& next) {
  if (auto* tt = As<TupleTypeNode>(t)) {
    std::vector<ValueRef> fields;
    for (const Type& f : tt->fields()) fields.push_back(BuildValue(f, next));
    return Value::OfTuple(std::move(fields));
  }
  return Value::OfTensor(*next++);
}

std::string ShapeString(DataType dt, const std::vector<int64_t>& shape) {
  std::string s = std::string(DataTypeName(dt)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Checks a file's tensor against a declared type.
Status CheckEntry(const SafetensorsEntry& e, const Type& type, const std::string& file,
                  const std::string& what) {
  auto* tt = As<TensorTypeNode>(type);
  if (!tt)
    return InvalidArgument(file + ": tensor '" + e.name + "' cannot be " + what + " of type " +
                           TypeToString(type));
  bool ok = tt->dtype() == DataType::kUnknown || tt->dtype() == e.dtype;
  if (tt->ndim() >= 0 && tt->ndim() != static_cast<int>(e.shape.size())) ok = false;
  if (ok && tt->has_shape())
    for (size_t i = 0; i < e.shape.size(); ++i)
      if (tt->shape()[i].is_const() && tt->shape()[i].value != e.shape[i]) ok = false;
  if (!ok)
    return InvalidArgument(file + ": tensor '" + e.name + "' is " + ShapeString(e.dtype, e.shape) +
                           ", but " + what + " is " + TypeToString(type));
  return Status::Ok();
}

// Maps names to file entries: by name when every name is in the file, else
// by index (file order). Returns entry indices, or an error. `alt_names`
// (empty, or one per name; "" for none) are second names a tensor may have
// (the ONNX names the importer keeps). `exact` requires, when binding by
// index, the file to hold exactly as many tensors as there are names.
StatusOr<std::vector<int64_t>> Bind(const SafetensorsReader& r,
                                    const std::vector<std::string>& names, const std::string& what,
                                    bool* by_name, const std::vector<std::string>& alt_names = {},
                                    bool exact = false) {
  std::vector<int64_t> idx;
  *by_name = !names.empty();
  for (size_t k = 0; k < names.size(); ++k) {
    int64_t i = r.header().Find(names[k]);
    if (i < 0 && k < alt_names.size() && !alt_names[k].empty()) i = r.header().Find(alt_names[k]);
    if (i < 0) *by_name = false;
    idx.push_back(i);
  }
  if (*by_name) return idx;
  size_t have = r.entries().size();
  if (names.size() > have || (exact && names.size() != have)) {
    std::string missing;
    for (size_t k = 0; k < names.size(); ++k)
      if (idx[k] < 0) {
        missing = names[k];
        if (k < alt_names.size() && !alt_names[k].empty() && alt_names[k] != names[k])
          missing += "' or '" + alt_names[k];
        break;
      }
    return InvalidArgument(r.path() + ": " + what + " takes " + std::to_string(names.size()) +
                           " tensors but the file has " + std::to_string(have) +
                           ", and no tensor is named '" + missing +
                           "' (tensors bind by name when every name matches, else by index)");
  }
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  return idx;
}

// The number of tensor leaves of a parameter type (a tuple: its fields').
size_t LeafCount(const Type& t) {
  if (auto* tt = As<TupleTypeNode>(t)) {
    size_t n = 0;
    for (const Type& f : tt->fields()) n += LeafCount(f);
    return n;
  }
  return 1;
}

// A string attribute list of `f` (such as the importer's `onnx_outputs`),
// or empty.
std::vector<std::string> StringListAttr(const FunctionNode& f, std::string_view key) {
  std::vector<std::string> out;
  const AttrValue* v = f.attrs().Get(key);
  if (!v || v->kind() != AttrValue::Kind::kList || !v->GetStringList(&out)) out.clear();
  return out;
}

// Reads `leaves` from `r` (bound by Bind) into `tensors`, checking each
// against its declared type.
Status ReadLeaves(const SafetensorsReader& r, const std::vector<Leaf>& leaves,
                  const std::vector<int64_t>& map, const std::string& file,
                  std::vector<Tensor>* tensors) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    const SafetensorsEntry& e = r.entries()[map[i]];
    PLIR_RETURN_IF_ERROR(CheckEntry(e, leaves[i].type, file, "parameter " + leaves[i].name));
    PLIR_ASSIGN_OR_RETURN(Tensor t, r.Read(map[i]));
    tensors->push_back(std::move(t));
  }
  return Status::Ok();
}

// The names of the variables bound to get_item(i), by index (empty when an
// index is not bound that way).
std::map<int64_t, std::string> GetItemNames(const FunctionNode& f, bool* lazy) {
  std::map<int64_t, std::string> names;
  *lazy = false;
  auto* body = As<SeqExprNode>(f.body());
  if (!body) return names;
  for (const Block& b : body->blocks())
    for (const Binding& x : b->bindings()) {
      auto* c = As<CallNode>(x->value());
      auto* op = c ? As<OpNode>(c->callee()) : nullptr;
      if (!op || op->name() != "call_packed" || c->args().size() < 2) continue;
      auto* fn = As<StringImmNode>(c->args()[0]);
      auto* idx = As<PrimValueNode>(c->args()[1]);
      if (!fn || fn->value() != "get_item") continue;
      *lazy = true;
      if (idx) names.emplace(idx->int_value(), x->var()->name_hint());
    }
  return names;
}

// The number of tensors of a value (a tuple: its fields', flattened).
size_t CountTensors(const Value& v) {
  if (v.kind != Value::Kind::kTuple) return 1;
  size_t n = 0;
  for (const ValueRef& f : v.fields) n += CountTensors(*f);
  return n;
}

long PeakRssKiB() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Options {
  std::string file, entry = "main", lazy_types, lazy_spec = "random", params, save_outputs,
                    inputs_file;
  std::vector<std::string> inputs, plugins;
};

int Fail(const Status& s) {
  std::cerr << "plir-run: " << s.message() << "\n";
  return 1;
}

int Run(const Options& o) {
  // Large tensors come from mmap and go back to the system when freed, so
  // the process's RSS follows the live tensors (glibc would otherwise raise
  // the threshold after the first free and keep freed weights in the heap).
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  PluginLoader loader;
  for (const std::string& p : o.plugins) {
    auto l = loader.LoadPath(p);
    if (!l.ok()) return Fail(l.status());
  }
  auto m = LoadModuleFile(o.file);
  if (!m.ok()) {
    std::cerr << m.status().message() << "\n";
    // An op no loaded library registers is usually a plugin's.
    if (m.status().message().find("unknown op") != std::string::npos)
      std::cerr << "plir-run: if a plugin registers this op, load it first with --plugin PATH\n";
    return 1;
  }
  Function f = m->LookupFunction(o.entry);
  if (!f) {
    std::cerr << "plir-run: no function @" << o.entry << " in " << o.file << "\n";
    return 1;
  }
  Interpreter interp(*m);
  TensorAllocator tracked = [&interp](size_t bytes, bool zero) {
    return interp.memory().Allocate(bytes, zero);
  };

  std::unique_ptr<SafetensorsReader> weights;
  if (!o.params.empty()) {
    auto r = SafetensorsReader::Open(o.params);
    if (!r.ok()) return Fail(r.status());
    weights = std::move(r).value();
  }
  bool lazy = false;
  std::map<int64_t, std::string> item_names = GetItemNames(*f, &lazy);

  std::vector<Type> lazy_types;
  if (!o.lazy_types.empty()) {
    std::stringstream ss(o.lazy_types);
    for (std::string t; std::getline(ss, t, ';');) {
      auto type = ParseType(t);
      if (!type.ok()) return Fail(type.status().WithPrefix("--lazy-param-types"));
      lazy_types.push_back(*type);
    }
  }
  if (weights && lazy) {
    // get_item(i) reads weight i when called.
    std::vector<std::string> names;
    bool named = !item_names.empty();
    for (int64_t i = 0; named && i < static_cast<int64_t>(item_names.size()); ++i) {
      auto it = item_names.find(i);
      if (it == item_names.end())
        named = false;
      else
        names.push_back(it->second);
    }
    bool by_name = false;
    std::vector<int64_t> map;
    if (named) {
      auto b = Bind(*weights, names, "@" + o.entry, &by_name);
      if (b.ok()) map = *b;
    }
    SafetensorsReader* w = weights.get();
    interp.SetParamLoader([w, map, by_name, names, lazy_types](int64_t i) -> StatusOr<Tensor> {
      int64_t e = i;
      if (by_name && i >= 0 && i < static_cast<int64_t>(map.size())) e = map[i];
      if (e < 0 || e >= static_cast<int64_t>(w->entries().size()))
        return InvalidArgument("get_item(" + std::to_string(i) + "): " + w->path() + " has only " +
                               std::to_string(w->entries().size()) + " tensors");
      if (i < static_cast<int64_t>(lazy_types.size()))
        PLIR_RETURN_IF_ERROR(
            CheckEntry(w->entries()[e], lazy_types[i], w->path(),
                       "get_item(" + std::to_string(i) + ") (--lazy-param-types)"));
      return w->Read(e);  // inside the interpreter: tracked memory
    });
    std::cerr << "plir-run: get_item reads " << o.params << " on demand, by "
              << (by_name ? "name" : "index in file order") << "\n";
  } else if (!lazy_types.empty()) {
    std::vector<Tensor> source;
    uint64_t salt = 0;
    for (const Type& t : lazy_types) {
      auto tensor = Fill(t, o.lazy_spec, salt++);
      if (!tensor.ok()) return Fail(tensor.status());
      source.push_back(*tensor);
    }
    interp.SetParamSource(std::move(source));
  }

  std::vector<ValueRef> args;
  if (!o.inputs_file.empty() || (weights && !lazy)) {
    if (!o.inputs.empty())
      return Fail(
          InvalidArgument("give either --inputs or --params/--inputs-file for @" + o.entry));
    std::vector<Leaf> leaves = EntryParamLeaves(*f);
    // The leaves the inputs file binds: the first num_input parameters'
    // (all of them without the attribute and without --params).
    size_t in_leaves = 0;
    if (!o.inputs_file.empty()) {
      const AttrValue* n = f->attrs().Get("num_input");
      if (n && n->kind() == AttrValue::Kind::kInt) {
        if (n->as_int() < 0 || n->as_int() > static_cast<int64_t>(f->params().size()))
          return Fail(InvalidArgument("@" + o.entry +
                                      " has num_input = " + std::to_string(n->as_int()) + " but " +
                                      std::to_string(f->params().size()) + " parameters"));
        for (int64_t i = 0; i < n->as_int(); ++i) in_leaves += LeafCount(f->params()[i]->type());
      } else if (!weights) {
        in_leaves = leaves.size();
      } else {
        return Fail(InvalidArgument("@" + o.entry +
                                    " has no num_input attribute: cannot tell its inputs "
                                    "(--inputs-file) from its parameters (--params)"));
      }
      if (in_leaves < leaves.size() && !weights)
        return Fail(
            InvalidArgument("@" + o.entry + " takes " + std::to_string(leaves.size() - in_leaves) +
                            " parameter tensor(s) after its " + std::to_string(in_leaves) +
                            " input(s) (num_input): give them with --params W.safetensors"));
    }
    // A leaf's second name: the ONNX name the importer kept in onnx_names.
    const AttrValue* onnx_names = f->attrs().Get("onnx_names");
    auto alt = [&](const Leaf& l) {
      const AttrValue* v = onnx_names ? onnx_names->Find(l.name) : nullptr;
      return v && v->kind() == AttrValue::Kind::kString ? v->as_string() : std::string();
    };
    std::vector<Tensor> tensors;
    const TensorAllocator* prev = SetThreadTensorAllocator(&tracked);  // count what we read
    auto bind_and_read = [&](const SafetensorsReader& r, const std::vector<Leaf>& part,
                             const std::string& what, bool exact) -> Status {
      std::vector<std::string> names, alts;
      for (const Leaf& l : part) {
        names.push_back(l.name);
        alts.push_back(alt(l));
      }
      bool by_name = false;
      PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> map,
                            Bind(r, names, "@" + o.entry + "'s " + what, &by_name, alts, exact));
      PLIR_RETURN_IF_ERROR(ReadLeaves(r, part, map, r.path(), &tensors));
      std::cerr << "plir-run: read " << part.size() << " " << what << " from " << r.path() << " by "
                << (by_name ? "name" : "index in file order") << "\n";
      return Status::Ok();
    };
    Status s = Status::Ok();
    std::unique_ptr<SafetensorsReader> inputs;
    if (!o.inputs_file.empty()) {
      auto r = SafetensorsReader::Open(o.inputs_file);
      s = r.status();
      if (s.ok()) {
        inputs = std::move(r).value();
        s = bind_and_read(*inputs, std::vector<Leaf>(leaves.begin(), leaves.begin() + in_leaves),
                          "inputs", /*exact=*/true);
      }
    }
    if (s.ok() && weights && in_leaves < leaves.size())
      s = bind_and_read(*weights, std::vector<Leaf>(leaves.begin() + in_leaves, leaves.end()),
                        "parameters", /*exact=*/false);
    SetThreadTensorAllocator(prev);
    if (!s.ok()) return Fail(s);
    auto next = tensors.begin();
    for (const Var& p : f->params()) args.push_back(BuildValue(p->type(), next));
    tensors.clear();
  } else {
    if (o.inputs.size() != f->params().size() &&
        !(o.inputs.size() == 1 && f->params().size() > 1) &&
        !(o.inputs.empty() && f->params().empty())) {
      std::cerr << "plir-run: @" << o.entry << " takes " << f->params().size()
                << " parameter(s); give one --inputs each (or one for all), or --params\n";
      return 1;
    }
    uint64_t salt = 0;
    for (size_t i = 0; i < f->params().size(); ++i) {
      auto v = FillValue(f->params()[i]->type(), o.inputs.size() == 1 ? o.inputs[0] : o.inputs[i],
                         salt, interp);
      if (!v.ok()) {
        std::cerr << "plir-run: parameter %" << f->params()[i]->name_hint() << ": "
                  << v.status().message() << "\n";
        return 1;
      }
      args.push_back(*v);
    }
  }

  std::unique_ptr<SafetensorsWriter> out;
  if (!o.save_outputs.empty()) {
    auto w = SafetensorsWriter::Create(o.save_outputs);
    if (!w.ok()) return Fail(w.status());
    out = std::move(w).value();
    SafetensorsWriter* wp = out.get();
    interp.SetOutputSink(
        [wp](int64_t j, const Tensor& t) { return wp->Add(j, std::to_string(j), t); });
  }
  auto r = interp.Call(o.entry, args);
  args.clear();
  if (!r.ok()) return Fail(r.status());
  if (out) {
    if (out->size() == 0) {  // eager: the result's tensors
      std::vector<ValueRef> leaves;
      // The ONNX output names the importer recorded, when there is one per
      // result tensor and no two are the same (a graph may list one value
      // twice as an output).
      std::vector<std::string> names = StringListAttr(*f, "onnx_outputs");
      if (names.size() != CountTensors(**r) ||
          std::set<std::string>(names.begin(), names.end()).size() != names.size())
        names.clear();
      std::function<Status(const ValueRef&)> flat = [&](const ValueRef& v) -> Status {
        if (v->kind == Value::Kind::kTuple) {
          for (const ValueRef& f : v->fields) PLIR_RETURN_IF_ERROR(flat(f));
          return Status::Ok();
        }
        if (v->kind != Value::Kind::kTensor)
          return InvalidArgument("--save-outputs: the result of @" + o.entry +
                                 " holds a non-tensor value");
        int64_t j = static_cast<int64_t>(leaves.size());
        leaves.push_back(v);
        return out->Add(j, j < static_cast<int64_t>(names.size()) ? names[j] : std::to_string(j),
                        v->tensor);
      };
      Status s = flat(*r);
      if (!s.ok()) return Fail(s);
    }
    Status s = out->Finish();
    if (!s.ok()) return Fail(s);
    std::cout << "outputs: " << out->size() << " tensors written to " << o.save_outputs << "\n";
  } else {
    std::cout << "result:\n";
    PrintValue(*r, "  ");
    if (!interp.outputs().empty()) {
      std::cout << "set_item outputs:\n";
      for (const auto& [j, t] : interp.outputs()) {
        std::cout << "  [" << j << "] ";
        PrintValue(Value::OfTensor(t), "");
      }
    }
  }
  std::cout << "peak live bytes (interpreter counter): " << interp.memory().peak() << "\n";
  std::cout << "peak RSS (getrusage): " << PeakRssKiB() << " KiB\n";
  return 0;
}

}  // namespace
}  // namespace plir

namespace {

int ParseAndRun(int argc, char** argv) {
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(wd) != 0) std::perror("plir-run: chdir");
  }
  CLI::App app{"plir-run: execute a PLIR function with the reference interpreter"};
  plir::Options o;
  app.add_option("module", o.file, "module file: text, JSON or binary (.plir, .json, .plirb)")
      ->required();
  app.add_option("--entry", o.entry, "function to run (default main)");
  // Several values after one --inputs (`--inputs a b c`, as the help says)
  // or one per repeated --inputs; the module comes first.
  app.add_option("--inputs", o.inputs,
                 "one spec per parameter, in order: zeros, ones, random[:SEED], file:PATH")
      ->allow_extra_args(true);
  app.add_option(
      "--params", o.params,
      "safetensors file: the parameters (eager) or what get_item loads (lazy, read on demand)");
  app.add_option("--inputs-file", o.inputs_file,
                 "safetensors file for the first num_input parameters (by name, PLIR or ONNX, "
                 "else by position in file order); --params gives the rest");
  app.add_option("--save-outputs", o.save_outputs,
                 "safetensors file for the result tensors (eager) or the set_item outputs (lazy)");
  app.add_option("--plugin", o.plugins, "load a plugin (ops, kernels) first; repeatable")
      ->allow_extra_args(false);
  app.add_option("--lazy-param-types", o.lazy_types,
                 "types of the parameters get_item loads, ';'-separated");
  app.add_option("--lazy-params", o.lazy_spec,
                 "spec for the get_item parameters without --params (default random)");
  int threads = 0;
  app.add_option("--threads", threads,
                 "threads of the kernels (OpenBLAS and split loops; default: the hardware's)")
      ->check(CLI::Range(0, 1024));
  int64_t max_tensor_bytes = plir::MaxTensorBytes();
  app.add_option("--max-tensor-bytes", max_tensor_bytes,
                 "refuse to create a tensor larger than this, checked from its declared type "
                 "(default 16 GiB)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  uint64_t max_input_bytes = plir::ModuleFile::kDefaultMaxBytes;
  app.add_option("--max-input-bytes", max_input_bytes,
                 "refuse a module or input file larger than this (default 16 GiB)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 50));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  plir::ModuleFile::SetMaxBytes(max_input_bytes);
  plir::SetMaxTensorBytes(max_tensor_bytes);
  if (threads > 0) plir::SetDefaultThreads(threads);
  return plir::Run(o);
}

}  // namespace

int main(int argc, char** argv) {
  plir::GuardStandardFds();
  // Nothing escapes main(): whatever is thrown ends in a message and exit 1.
  try {
    return plir::FinishStdout("plir-run", ParseAndRun(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "plir-run: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "plir-run: internal error\n";
  }
  return 1;
}
