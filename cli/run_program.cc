// plir-run's program: everything but its command line (cli/plir_run.cc
// parses that and calls RunMain), built at the default -O2: it fills the
// inputs, runs the interpreter and writes the outputs.
#include "cli/run_program.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "driver/child_result.h"
#include "driver/file_util.h"
#include "driver/plugin_loader.h"
#include "driver/sandbox.h"
#include "driver/supervised_child.h"
#include "driver/supervisor.h"
#include "interpreter/entry_inputs.h"
#include "interpreter/interpreter.h"
#include "interpreter/safetensors.h"
#include "ir/parallel.h"
#include "ir/serialize/module_file.h"
#include "ir/support/fnv.h"
#include "ir/text/parser.h"
#include "kernels/internal/uninitialized.h"
#include "kernels/op_kernels.h"

namespace plir::run {
namespace {

// The raw bytes of `path` for a tensor of `type`, `need` bytes. The size
// is compared before anything is read: a regular file by its size, anything
// else (a pipe, a device) by reading at most one byte more than `need`.
StatusOr<std::string> ReadTensorFile(const std::string& path, uint64_t need, const Type& type) {
  auto wrong_size = [&](const std::string& have) {
    return InvalidArgument(path + " has " + have + " bytes; " + TypeToString(type) + " needs " +
                           std::to_string(need));
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    close(fd);
    return InvalidArgument(path + ": not a file");
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) != need) {
    close(fd);
    return wrong_size(std::to_string(st.st_size));
  }
  std::string bytes(need + 1, '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return Internal(path + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got != need)
    return wrong_size(got > need ? "more than " + std::to_string(need) : std::to_string(got));
  bytes.resize(need);
  return bytes;
}

StatusOr<Tensor> Fill(const Type& type, const std::string& spec, uint64_t salt) {
  auto* tt = As<TensorTypeNode>(type);
  if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
    return InvalidArgument("cannot make an input of type " + TypeToString(type) +
                           " (needs a static tensor type)");
  PLIR_RETURN_IF_ERROR(CheckTensorSize(type, "an input"));
  std::vector<int64_t> shape;
  for (const Dim& d : tt->shape()) shape.push_back(d.value);
  if (spec.rfind("file:", 0) == 0) {
    Tensor t;
    t.dtype = tt->dtype();
    t.shape = shape;
    const uint64_t need = static_cast<uint64_t>(t.NumElements()) * DataTypeSize(t.dtype);
    PLIR_ASSIGN_OR_RETURN(std::string bytes, ReadTensorFile(spec.substr(5), need, type));
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

void PrintValue(std::ostream& out, const ValueRef& v, const std::string& indent) {
  if (v->kind == Value::Kind::kTuple) {
    out << indent << "tuple of " << v->fields.size() << "\n";
    for (const ValueRef& f : v->fields) PrintValue(out, f, indent + "  ");
    return;
  }
  if (v->kind != Value::Kind::kTensor) {
    out << indent << "(non-tensor value)\n";
    return;
  }
  const Tensor& t = v->tensor;
  uint64_t h = Fnv1a64(t.data->view());
  out << indent << DataTypeName(t.dtype) << "[";
  for (size_t i = 0; i < t.shape.size(); ++i) out << (i ? ", " : "") << t.shape[i];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  out << "] checksum " << buf << " first:";
  for (int64_t i = 0; i < std::min<int64_t>(4, t.NumElements()); ++i) out << " " << t.GetDouble(i);
  out << "\n";
}

// One tensor of a function's parameters (a tuple parameter has several).
// The tensor leaves of the entry's parameters: interpreter/entry_inputs.h.
using Leaf = ParamLeaf;

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
// against its declared type. Large tensors view the file's mapping instead
// of a copy (no read into fresh pages: bert's weights were 14% of its
// whole run as pread copies); `memory` counts them as live either way.
Status ReadLeaves(const SafetensorsReader& r, const std::vector<Leaf>& leaves,
                  const std::vector<int64_t>& map, const std::string& file, MemoryTracker& memory,
                  std::vector<Tensor>* tensors) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    const SafetensorsEntry& e = r.entries()[map[i]];
    PLIR_RETURN_IF_ERROR(CheckEntry(e, leaves[i].type, file, "parameter " + leaves[i].name));
    PLIR_ASSIGN_OR_RETURN(Tensor t, r.ReadMapped(map[i]));
    if (t.data && t.data->borrowed()) t.data = memory.Count(std::move(t.data));
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

int Fail(const Status& s) {
  std::cerr << "plir-run: " << s.message() << "\n";
  return 1;
}

// Where a run's results go: what it prints, and the --save-outputs file.
// In this process: standard output and the file itself; in the supervised
// child: text and bytes handed to the parent.
struct RunSinks {
  std::ostream* text;
  std::function<StatusOr<std::unique_ptr<SafetensorsWriter>>()> open_outputs;
  std::function<Status(SafetensorsWriter&)> finish_outputs;
};

// The plugins a loader holds, for messages: "NAME VERSION (PATH), ...".
std::string LoadedPlugins(const PluginLoader& loader) {
  std::string list;
  for (const LoadedPlugin& p : loader.loaded())
    list += (list.empty() ? "" : ", ") + p.name + " " + p.version + " (" + p.path + ")";
  return list;
}

// The run's steps, in order: load the plugins, the module and its entry,
// the parameters (eager or lazy), bind the arguments, open the outputs,
// call the entry, write the results. Each step records what it does in
// `state` (the supervisor's page when supervised).

// --plugin PATH, in order, each load and kernel recorded in `state`.
Status LoadPlugins(const Options& o, RunState* state, PluginLoader& loader) {
  if (!o.no_isolate && o.sandbox != "off")
    loader.set_permission_hint(
        "the plugin sandbox lets plugins read only the files plir-run knows they need; "
        "--sandbox-read PATH adds one");
  // A plugin's kernel is named while it runs; between kernels, the run (and
  // the plugins loaded).
  RecordPluginActivity(loader, state);
  for (const std::string& p : o.plugins) {
    auto l = loader.LoadPath(p);
    if (!l.ok()) return l.status();
  }
  return Status::Ok();
}

// The module, in any format. Its error is printed as it is, with a hint
// when an op is unknown (usually a plugin's).
StatusOr<Module> LoadInputModule(const std::string& module_path, const std::string& module_name,
                                 RunState* state) {
  state->Enter(RunPhase::kLoadingInput, module_name);
  PLIR_ASSIGN_OR_RETURN(ModuleFile file, ModuleFile::Open(module_path));
  return LoadModule(file, module_name);
}

int FailLoading(const Status& s) {
  std::cerr << s.message() << "\n";
  if (s.message().find("unknown op") != std::string::npos)
    std::cerr << "plir-run: if a plugin registers this op, load it first with --plugin PATH\n";
  return 1;
}

// --lazy-param-types, and where get_item's tensors come from: --params
// read on demand when the entry is lazy, else tensors filled as
// --lazy-param-spec says.
Status SetUpLazyParams(const Options& o, SafetensorsReader* weights, bool lazy,
                       const std::map<int64_t, std::string>& item_names, Interpreter& interp) {
  std::vector<Type> lazy_types;
  if (!o.lazy_types.empty()) {
    std::stringstream ss(o.lazy_types);
    for (std::string t; std::getline(ss, t, ';');) {
      auto type = ParseType(t);
      if (!type.ok()) return type.status().WithPrefix("--lazy-param-types");
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
    SafetensorsReader* w = weights;
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
      if (!tensor.ok()) return tensor.status();
      source.push_back(*tensor);
    }
    interp.SetParamSource(std::move(source));
  }

  return Status::Ok();
}

// The entry's arguments: from --inputs-file and --params (by name, else
// in file order), or filled as --inputs says.
StatusOr<std::vector<ValueRef>> BindArguments(const Options& o, const Function& f,
                                              SafetensorsReader* weights, bool lazy,
                                              Interpreter& interp, const TensorAllocator& tracked) {
  std::vector<ValueRef> args;
  if (!o.inputs_file.empty() || (weights && !lazy)) {
    if (!o.inputs.empty())
      return InvalidArgument("give either --inputs or --params/--inputs-file for @" + o.entry);
    std::vector<Leaf> leaves = EntryParamLeaves(*f);
    // The leaves the inputs file binds: the first num_input parameters'
    // (all of them without the attribute and without --params).
    size_t in_leaves = 0;
    if (!o.inputs_file.empty()) {
      const AttrValue* n = f->attrs().Get("num_input");
      if (n && n->kind() == AttrValue::Kind::kInt) {
        if (n->as_int() < 0 || n->as_int() > static_cast<int64_t>(f->params().size()))
          return InvalidArgument("@" + o.entry + " has num_input = " + std::to_string(n->as_int()) +
                                 " but " + std::to_string(f->params().size()) + " parameters");
        for (int64_t i = 0; i < n->as_int(); ++i) in_leaves += LeafCount(f->params()[i]->type());
      } else if (!weights) {
        in_leaves = leaves.size();
      } else {
        return InvalidArgument("@" + o.entry +
                               " has no num_input attribute: cannot tell its inputs "
                               "(--inputs-file) from its parameters (--params)");
      }
      if (in_leaves < leaves.size() && !weights)
        return InvalidArgument("@" + o.entry + " takes " +
                               std::to_string(leaves.size() - in_leaves) +
                               " parameter tensor(s) after its " + std::to_string(in_leaves) +
                               " input(s) (num_input): give them with --params W.safetensors");
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
      PLIR_RETURN_IF_ERROR(ReadLeaves(r, part, map, r.path(), interp.memory(), &tensors));
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
    if (!s.ok()) return s;
    auto next = tensors.begin();
    for (const Var& p : f->params()) args.push_back(BuildValue(p->type(), next));
    tensors.clear();
  } else {
    if (o.inputs.size() != f->params().size() &&
        !(o.inputs.size() == 1 && f->params().size() > 1) &&
        !(o.inputs.empty() && f->params().empty())) {
      return InvalidArgument("@" + o.entry + " takes " + std::to_string(f->params().size()) +
                             " parameter(s); give one --inputs each (or one for all), or --params");
    }
    uint64_t salt = 0;
    for (size_t i = 0; i < f->params().size(); ++i) {
      auto v = FillValue(f->params()[i]->type(), o.inputs.size() == 1 ? o.inputs[0] : o.inputs[i],
                         salt, interp);
      if (!v.ok()) {
        return InvalidArgument("parameter %" + std::string(f->params()[i]->name_hint()) + ": " +
                               v.status().message());
      }
      args.push_back(*v);
    }
  }

  return args;
}

// The results: the --save-outputs file (the eager result's tensors, named
// as the importer recorded, unless set_item already streamed them), or the
// printed result; then the memory figures.
Status WriteResults(const Options& o, const FunctionNode& f, const ValueRef& result,
                    SafetensorsWriter* out, Interpreter& interp, const RunSinks& sinks,
                    RunState* state) {
  std::ostream& print = *sinks.text;
  if (out) {
    if (out->size() == 0) {  // eager: the result's tensors
      std::vector<ValueRef> leaves;
      // The ONNX output names the importer recorded, when there is one per
      // result tensor and no two are the same (a graph may list one value
      // twice as an output).
      std::vector<std::string> names = StringListAttr(f, "onnx_outputs");
      if (names.size() != CountTensors(*result) ||
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
      Status s = flat(result);
      if (!s.ok()) return s;
    }
    if (out->spooled_bytes() > o.max_output_bytes)
      return ResourceExhausted("--save-outputs: the outputs hold " +
                               std::to_string(out->spooled_bytes()) +
                               " bytes, more than the limit of " +
                               std::to_string(o.max_output_bytes) + " (--max-output-bytes)");
    state->Enter(RunPhase::kWritingOutput, o.save_outputs);
    Status s = sinks.finish_outputs(*out);
    if (!s.ok()) return s;
    print << "outputs: " << out->size() << " tensors written to " << o.save_outputs << "\n";
  } else {
    print << "result:\n";
    PrintValue(print, result, "  ");
    if (!interp.outputs().empty()) {
      print << "set_item outputs:\n";
      for (const auto& [j, t] : interp.outputs()) {
        print << "  [" << j << "] ";
        PrintValue(print, Value::OfTensor(t), "");
      }
    }
  }
  print << "peak live bytes (interpreter counter): " << interp.memory().peak() << "\n";
  print << "peak RSS (getrusage): " << PeakRssKiB() << " KiB\n";
  return Status::Ok();
}

int Run(const Options& o, const std::string& module_path, const std::string& module_name,
        RunState* state, const RunSinks& sinks) {
  PluginLoader loader;
  if (Status s = LoadPlugins(o, state, loader); !s.ok()) return Fail(s);
  const std::string running = "@" + o.entry, loaded_plugins = LoadedPlugins(loader);
  StatusOr<Module> m = LoadInputModule(module_path, module_name, state);
  if (!m.ok()) return FailLoading(m.status());
  Function f = m->LookupFunction(o.entry);
  if (!f) return Fail(NotFound("no function @" + o.entry + " in " + module_name));
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
  if (Status s = SetUpLazyParams(o, weights.get(), lazy, item_names, interp); !s.ok())
    return Fail(s);
  StatusOr<std::vector<ValueRef>> args = BindArguments(o, f, weights.get(), lazy, interp, tracked);
  if (!args.ok()) return Fail(args.status());
  std::unique_ptr<SafetensorsWriter> out;
  if (!o.save_outputs.empty()) {
    auto w = sinks.open_outputs();
    if (!w.ok()) return Fail(w.status());
    out = std::move(w).value();
    SafetensorsWriter* wp = out.get();
    interp.SetOutputSink(
        [wp](int64_t j, const Tensor& t) { return wp->Add(j, std::to_string(j), t); });
  }
  state->Enter(RunPhase::kRunning, running, loaded_plugins);
  auto r = interp.Call(o.entry, *args);
  args->clear();
  if (!r.ok()) return Fail(r.status());
  // No kernel runs after this: the buffers kept for reuse go before the
  // outputs are written. Otherwise the writer's copy buffer (8 MiB) came on
  // top of them, and a lazy transform's peak RSS was that much above its
  // live tensors (bench/lazy_rss.sh 16 2048: 40.9 MiB over the baseline,
  // where one weight pair is 32).
  interp.memory().ReleaseKept();
  if (Status s = WriteResults(o, *f, *r, out.get(), interp, sinks, state); !s.ok()) return Fail(s);
  return 0;
}

// The most text a run prints that the supervisor takes from the child.
constexpr uint64_t kMaxPrintedBytes = uint64_t{64} << 20;

// In this process: no plugin code runs (or --no-isolate asked for it).
int RunHere(const Options& o) {
  RunState* state = NewRunState(false);
  // --save-outputs goes through plir-opt's atomic output (driver/file_util.h),
  // as in the supervised run: the file's mode and owner kept, a symlink
  // followed, an O_TMPFILE temporary that no signal leaves behind.
  std::optional<AtomicOutput> outputs;
  if (!o.save_outputs.empty()) {
    StatusOr<AtomicOutput> file = AtomicOutput::Create(o.save_outputs);
    if (!file.ok()) return Fail(file.status());
    outputs.emplace(std::move(file).value());
  }
  RunSinks sinks;
  sinks.text = &std::cout;
  sinks.open_outputs = [&o] { return SafetensorsWriter::Create(o.save_outputs); };
  sinks.finish_outputs = [&outputs](SafetensorsWriter& w) -> Status {
    Status s = w.FinishTo([&outputs](std::string_view data) { return outputs->Write(data); });
    if (!s.ok()) {
      outputs->Abort();
      return s;
    }
    return outputs->Commit();
  };
  return Run(o, o.file, o.file == "-" ? "<stdin>" : o.file, state, sinks);
}

// What the child may read: the system's files, the module, the inputs and
// weights files, the plugins and --sandbox-read; it may write nothing.
SandboxPolicy BuildSandboxPolicy(const Options& o, const ChildInput& in) {
  SandboxPolicy p = NewSandboxPolicy();
  auto add = [&](const std::string& path) {
    if (!path.empty() && path != "-") AddReadPath(path, &p);
  };
  if (in.fd < 0) add(in.path);
  for (const std::string& spec : o.inputs)
    if (spec.rfind("file:", 0) == 0) add(spec.substr(5));
  if (o.lazy_spec.rfind("file:", 0) == 0) add(o.lazy_spec.substr(5));
  add(o.params);
  add(o.inputs_file);
  for (const std::string& plugin : o.plugins) AddPluginReadPath(plugin, &p);
  for (const std::string& r : o.sandbox_read) add(r);
  return p;
}

// The results the child handed over, checked by the parent's own code, and
// written by it: the outputs file (it must parse as safetensors), then the
// printed text (control bytes escaped).
Status CommitChildResults(const Options& o, int text_fd, int outputs_fd,
                          std::optional<AtomicOutput>& outputs) {
  PLIR_ASSIGN_OR_RETURN(ChildResult text,
                        ReadChildResult(text_fd, kMaxPrintedBytes, "the printed results' limit"));
  if (text.kind() != ChildResultKind::kText)
    return FailedPrecondition("the child handed over a result of the wrong kind");
  if (outputs) {
    PLIR_ASSIGN_OR_RETURN(
        ChildResult bytes,
        ReadChildResult(outputs_fd, o.max_output_bytes + 8 + kMaxSafetensorsHeader,
                        "--max-output-bytes"));
    if (bytes.kind() != ChildResultKind::kBytes)
      return FailedPrecondition("the child handed over outputs of the wrong kind");
    StatusOr<SafetensorsHeader> h = ParseSafetensors(bytes.payload(), o.save_outputs);
    if (!h.ok())
      return FailedPrecondition("the child's outputs are not a safetensors file: " +
                                h.status().message());
    if (h->data_size > o.max_output_bytes)
      return ResourceExhausted("the child's outputs hold " + std::to_string(h->data_size) +
                               " bytes, more than the limit of " +
                               std::to_string(o.max_output_bytes) + " (--max-output-bytes)");
    if (Status s = outputs->Write(bytes.payload()); !s.ok()) {
      outputs->Abort();
      return s;
    }
    PLIR_RETURN_IF_ERROR(outputs->Commit());
  }
  std::cout << Printable(text.payload());
  return Status::Ok();
}

// In the supervised, sandboxed child (driver/supervised_child.h): a plugin's
// code never runs in this process, and never holds the user's files.
int RunSupervised(const Options& o) {
  const SandboxMode mode = *ParseSandboxMode(o.sandbox);
  StatusOr<SandboxSupport> support = ProbeSandboxFor(mode, "plir-run");
  if (!support.ok()) {
    std::cerr << support.status().message() << "\n";
    return 1;
  }
  StatusOr<ChildInput> in = PrepareChildInput(o.file, o.max_input_bytes);
  if (!in.ok()) return Fail(in.status());
  std::optional<AtomicOutput> outputs;
  if (!o.save_outputs.empty()) {
    StatusOr<AtomicOutput> file = AtomicOutput::Create(o.save_outputs);
    if (!file.ok()) return Fail(file.status());
    outputs.emplace(std::move(file).value());
  }
  RunState* state = NewRunState(true);
  if (!state) return Fail(Internal("cannot allocate shared memory for the supervisor"));
  if (o.memory_limit_mb > 0) state->memory_limit_mb.store(o.memory_limit_mb);
  StatusOr<int> text_fd = CreateResultFile();
  if (!text_fd.ok()) return Fail(text_fd.status());
  StatusOr<int> outputs_fd = CreateResultFile();
  if (!outputs_fd.ok()) return Fail(outputs_fd.status());

  ChildSetup setup;
  setup.tool = "plir-run";
  setup.sandbox_mode = mode;
  setup.sandbox_support = *support;
  setup.sandbox_policy = BuildSandboxPolicy(o, *in);
  setup.memory_limit_mb = o.memory_limit_mb;
  setup.limits = SupervisorLimits(o.timeout_s, o.load_timeout_s);
  setup.fds = {*text_fd, *outputs_fd};
  if (in->fd >= 0) setup.fds.push_back(in->fd);
  StatusOr<ChildEnd> end = RunInSupervisedChild(setup, state, [&](const std::vector<int>& fds) {
    std::ostringstream text;
    RunSinks sinks;
    sinks.text = &text;
    sinks.open_outputs = [&o] { return SafetensorsWriter::CreateInMemory(o.save_outputs); };
    sinks.finish_outputs = [&fds](SafetensorsWriter& w) -> Status {
      PLIR_ASSIGN_OR_RETURN(ChildResultWriter r,
                            ChildResultWriter::Start(fds[1], ChildResultKind::kBytes));
      PLIR_RETURN_IF_ERROR(w.FinishTo([&r](std::string_view data) { return r.Append(data); }));
      return r.Finish();
    };
    std::string path = in->fd >= 0 ? "/proc/self/fd/" + std::to_string(fds[2]) : in->path;
    int rc = Run(o, path, in->name, state, sinks);
    if (rc != 0) return rc;
    state->Enter(RunPhase::kWritingOutput, "the printed results");
    if (Status s = WriteChildResult(fds[0], ChildResultKind::kText, {}, text.str()); !s.ok())
      return Fail(s);
    return 0;
  });
  if (!end.ok()) return Fail(end.status());
  if (!end->abnormal.empty()) {
    std::cerr << end->abnormal << "\n";
    return 1;
  }
  if (end->outcome.exit_code != 0) return 1;  // the child said why
  if (Status s = CommitChildResults(o, *text_fd, *outputs_fd, outputs); !s.ok())
    return Fail(Status(s.code(), Printable(s.message())));
  return 0;
}

}  // namespace

int RunMain(const Options& o) {
  // The supervisor runs plugins, and keeps the limits.
  const bool limited = o.timeout_s > 0 || o.memory_limit_mb > 0;
  if (o.no_isolate) {
    if (o.sandbox == "require")
      return Fail(
          FailedPrecondition("--sandbox=require needs the supervised child (not "
                             "--no-isolate)"));
    if (limited)
      std::cerr << "warning: --timeout and --memory-limit need isolation; ignored with "
                   "--no-isolate\n";
    return RunHere(o);
  }
  if (o.plugins.empty() && !limited) return RunHere(o);
  return RunSupervised(o);
}

}  // namespace plir::run
