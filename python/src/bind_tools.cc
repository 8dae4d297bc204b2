// _plir, part 2: tensors (numpy buffers and DLPack, without copies), the
// interpreter, the pass and op registries, plugins, Python passes,
// pipelines, the ONNX importer; and the module's entry point.
#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "driver/pass_resolver.h"
#include "driver/pipeline.h"
#include "driver/plugin_loader.h"
#include "frontends/onnx/importer.h"
#include "interpreter/interpreter.h"
#include "ir/verifier.h"
#include "kernels/op_kernels.h"
#include "kernels/tensor.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"
#include "passes/properties.h"
#include "passes/registry.h"
#include "python/src/bind.h"

namespace plir::py_bind {
namespace {

using Buffer = std::shared_ptr<const TensorBytes>;

// ---------------------------------------------------------------- tensors

// The buffers handed to Python (numpy views, DLPack capsules), by address,
// so that a buffer that comes back (a run output as the next run's input, a
// torch tensor made from a constant) is shared again instead of copied.
std::mutex buffers_mu;
std::unordered_map<const void*, std::weak_ptr<const TensorBytes>>& Buffers() {
  static auto* m = new std::unordered_map<const void*, std::weak_ptr<const TensorBytes>>();
  return *m;
}
void Remember(const Buffer& b) {
  if (!b || b->empty()) return;
  std::lock_guard<std::mutex> l(buffers_mu);
  auto& m = Buffers();
  if (m.size() > 4096) {
    for (auto it = m.begin(); it != m.end();)
      it = it->second.expired() ? m.erase(it) : std::next(it);
  }
  m[b->data()] = b;
}
Buffer Recall(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> l(buffers_mu);
  auto it = Buffers().find(p);
  if (it == Buffers().end()) return nullptr;
  Buffer b = it->second.lock();
  if (!b || b->size() != bytes) return nullptr;
  return b;
}

const char* NumpyName(DataType t) {
  switch (t) {
    case DataType::kBool:
      return "bool";
    case DataType::kInt8:
      return "int8";
    case DataType::kInt16:
      return "int16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kUInt16:
      return "uint16";
    case DataType::kUInt32:
      return "uint32";
    case DataType::kUInt64:
      return "uint64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    default:
      return nullptr;
  }
}

py::array ToNumpy(const Tensor& t, bool writeable = false) {
  const char* name = NumpyName(t.dtype);
  if (!name)
    Throw("error", InvalidArgument("a " + std::string(DataTypeName(t.dtype)) +
                                   " tensor has no numpy dtype"));
  Buffer data = t.data ? t.data : std::make_shared<const TensorBytes>();
  Remember(data);
  auto* keep = new Buffer(data);
  py::capsule base(keep, [](void* p) { delete static_cast<Buffer*>(p); });
  py::array a(py::dtype(name), t.shape, {}, const_cast<char*>(data->data()), base);
  if (!writeable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

// A numpy view of any array-like (numpy arrays, torch tensors through
// DLPack or __array__, lists).
py::array AsArray(py::handle h, const char* param) {
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance<py::array>(h)) return py::reinterpret_borrow<py::array>(h);
  if (py::hasattr(h, "__dlpack__") && !py::hasattr(h, "__array_interface__")) {
    try {
      return np.attr("from_dlpack")(h);
    } catch (py::error_already_set&) {
    }
  }
  try {
    return np.attr("asarray")(h);
  } catch (py::error_already_set&) {
    throw py::type_error(std::string("argument '") + param + "' must be array-like, not " +
                         std::string(py::str(py::type::of(h).attr("__name__"))));
  }
}

DataType FromNumpy(const py::dtype& d, const char* param) {
  std::string n = py::str(d.attr("name"));
  if (n == "bool") return DataType::kBool;
  auto dt = ParseDataType(n);
  if (!dt || !NumpyName(*dt))
    throw py::type_error(std::string("argument '") + param + "': unsupported dtype " + n);
  return *dt;
}

// A reference to `o` for TensorBytes that borrow its memory. The last
// release may come from any thread (the interpreter and the pass manager run
// with the GIL released, DLPack consumers call deleters where they like):
// the reference is dropped with the GIL held. Once Python is finalizing, a
// thread without the GIL cannot take it, and the reference is left.
std::shared_ptr<const void> KeepAlive(py::object o) {
  PyObject* p = o.release().ptr();
  return std::shared_ptr<const void>(p, [](const void* q) {
    auto* obj = static_cast<PyObject*>(const_cast<void*>(q));
    if (!Py_IsInitialized()) return;
    if (PyGILState_Check()) {
      Py_DECREF(obj);
      return;
    }
    if (_Py_IsFinalizing()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(obj);
  });
}

// How FromArray got a tensor's bytes.
enum class Source {
  kShared,    // a buffer PLIR handed out, shared again
  kBorrowed,  // the array's own memory, borrowed (holding the array)
  kCopied,    // one copy (by numpy): the array is not C-contiguous, aligned, native-endian
};

// The tensor of an array-like. A C-contiguous, aligned, native-endian array
// of a supported dtype is not copied: its memory is PLIR's own (shared
// again) or borrowed, with a reference to the array (for a torch tensor,
// numpy's view of it through DLPack, which holds the tensor). Anything else
// is copied once. PLIR never writes the bytes of a borrowed array; the
// caller must not write them either while PLIR holds them.
Tensor FromArray(py::handle h, const char* param, Source* how = nullptr) {
  py::array a = AsArray(h, param);
  Tensor t;
  t.dtype = FromNumpy(a.dtype(), param);
  for (py::ssize_t i = 0; i < a.ndim(); ++i) t.shape.push_back(a.shape(i));
  size_t bytes = static_cast<size_t>(a.nbytes());
  Source s = Source::kShared;
  bool native = py::str(a.dtype().attr("byteorder")).cast<std::string>() != ">";
  if (!native || !(a.flags() & py::array::c_style) ||
      !(a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) {
    // numpy's one copy, then borrowed like any array (nothing else sees it).
    s = Source::kCopied;
    a = py::module_::import("numpy").attr("require")(a, a.dtype().attr("newbyteorder")("="),
                                                     py::make_tuple("C", "A"));
  }
  Buffer b = s == Source::kShared ? Recall(a.data(), bytes) : nullptr;
  if (!b) {
    if (s == Source::kShared) s = Source::kBorrowed;
    b = std::make_shared<const TensorBytes>(a.data(), bytes, KeepAlive(a));
  }
  if (how) *how = s;
  t.data = std::move(b);
  return t;
}

// DLPack (v0.7's ABI, as torch 1.13 reads it).
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLContext {
  Buffer data;
  std::vector<int64_t> shape;
  DLManagedTensor managed;
};

py::object ToDLPack(const Tensor& t) {
  DLDataType dt{};
  int bits = DataTypeSize(t.dtype) * 8;
  if (t.dtype == DataType::kBool)
    dt = {1, 8, 1};  // torch 1.13 reads bool as uint8
  else if (IsFloat(t.dtype))
    dt = {static_cast<uint8_t>(t.dtype == DataType::kBFloat16 ? 4 : 2), static_cast<uint8_t>(bits),
          1};
  else
    dt = {static_cast<uint8_t>(IsUnsigned(t.dtype) ? 1 : 0), static_cast<uint8_t>(bits), 1};
  auto* ctx = new DLContext{t.data ? t.data : std::make_shared<const TensorBytes>(), t.shape, {}};
  Remember(ctx->data);
  ctx->managed.dl_tensor = {const_cast<char*>(ctx->data->data()),
                            {1, 0},
                            static_cast<int32_t>(t.shape.size()),
                            dt,
                            ctx->shape.data(),
                            nullptr,
                            0};
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* m) { delete static_cast<DLContext*>(m->manager_ctx); };
  PyObject* cap = PyCapsule_New(&ctx->managed, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      m->deleter(m);
    }
  });
  if (!cap) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

Tensor ConstantTensor(const ExprH& h) { return Tensor::FromConstant(*As<ConstantNode>(h.ref)); }

py::object FromValue(const ValueRef& v) {
  switch (v->kind) {
    case Value::Kind::kTensor:
      return ToNumpy(v->tensor);
    case Value::Kind::kTuple: {
      py::list l;
      for (const ValueRef& f : v->fields) l.append(FromValue(f));
      return py::tuple(l);
    }
    case Value::Kind::kInt:
      return py::int_(v->i);
    case Value::Kind::kFloat:
      return py::float_(v->f);
    case Value::Kind::kBool:
      return py::bool_(v->i != 0);
    case Value::Kind::kString:
      return py::str(v->str);
    default:
      return py::none();
  }
}

ValueRef ToValue(py::handle h, const char* param) {
  if (py::isinstance<py::tuple>(h)) {
    std::vector<ValueRef> fields;
    for (py::handle f : h) fields.push_back(ToValue(f, param));
    return Value::OfTuple(std::move(fields));
  }
  return Value::OfTensor(FromArray(h, param));
}

// ---------------------------------------------------------------- plugins

PluginLoader& Loader() {
  static auto* l = new PluginLoader();
  return *l;
}
std::vector<std::string>& PluginDirs() {
  static auto* d = new std::vector<std::string>();
  return *d;
}

py::dict PluginDict(const LoadedPlugin& p) {
  py::dict d;
  d["name"] = p.name;
  d["version"] = p.version;
  d["path"] = p.path;
  d["passes"] = p.passes;
  d["ops"] = p.ops;
  return d;
}

const char* KindOfPass(PassKind k) { return k == PassKind::kModule ? "module" : "function"; }

py::dict PassInfoDict(const PassInfo& i) {
  py::dict d;
  d["name"] = i.name;
  d["description"] = i.description;
  d["kind"] = KindOfPass(i.kind);
  d["origin"] = i.origin;
  d["min_opt_level"] = i.min_opt_level;
  d["requires"] = i.requires_properties;
  d["provides"] = i.provides_properties;
  py::dict opts;
  for (const OptionSpec& o : i.options) opts[py::str(o.name)] = FromAttrValue(o.default_value);
  d["options"] = opts;
  return d;
}

// ---------------------------------------------------------------- Python passes

// Turns a Python exception raised by pass `name` into an error value naming
// the pass and the innermost Python frame (file:line). Holds the GIL.
Status PassException(const std::string& name, py::error_already_set& e) {
  std::string where, what;
  try {
    py::tuple r = py::module_::import("plir.errors")
                      .attr("_describe_exception")(e.type(), e.value(), e.trace());
    what = r[0].cast<std::string>();
    where = r[1].cast<std::string>();
  } catch (py::error_already_set&) {
    what = e.what();
  }
  return Internal("Python pass " + name + " raised " + what +
                  (where.empty() ? "" : " at " + where));
}

py::dict OptionsDict(const PassOptions& o) {
  py::dict d;
  for (const auto& [k, v] : o.values()) d[py::str(k)] = FromAttrValue(v);
  return d;
}

void RegisterPythonPass(const std::string& name, const std::string& kind, py::function fn,
                        std::vector<std::string> requires_, std::vector<std::string> provides,
                        const std::string& description, int min_opt_level,
                        const std::string& origin, py::dict options) {
  PassDef def;
  def.info.name = name;
  def.info.description = description.empty() ? "a Python pass" : description;
  def.info.min_opt_level = min_opt_level;
  def.info.requires_properties = std::move(requires_);
  def.info.provides_properties = std::move(provides);
  def.info.origin = origin;
  for (auto kv : options) {
    OptionSpec s;
    s.name = kv.first.cast<std::string>();
    py::handle v = kv.second;
    if (py::isinstance<py::bool_>(v)) {
      s.type = OptionType::kBool;
      s.default_value = AttrValue::Bool(v.cast<bool>());
    } else if (py::isinstance<py::int_>(v)) {
      s.type = OptionType::kInt;
      s.default_value = AttrValue::Int(v.cast<int64_t>());
    } else if (py::isinstance<py::float_>(v)) {
      s.type = OptionType::kFloat;
      s.default_value = AttrValue::Float(v.cast<double>());
    } else if (py::isinstance<py::str>(v)) {
      s.type = OptionType::kString;
      s.default_value = AttrValue::String(v.cast<std::string>());
    } else {
      throw py::type_error("argument 'options': the default of '" + s.name +
                           "' must be a bool, int, float or str");
    }
    def.info.options.push_back(std::move(s));
  }
  // The callable lives as long as the registry (the process): never freed,
  // so that no Python object is released after the interpreter is gone.
  auto* keep = new py::object(fn);
  if (kind == "module") {
    def.info.kind = PassKind::kModule;
    def.module_fn = [name, keep](const Module& m, const PassCallContext& ctx) -> StatusOr<Module> {
      py::gil_scoped_acquire gil;
      try {
        py::object r = (*keep)(py::cast(ModuleH{m}), OptionsDict(ctx.options));
        if (!py::isinstance<ModuleH>(r))
          return InvalidArgument("Python pass " + name + " returned " +
                                 std::string(py::str(py::type::of(r).attr("__name__"))) +
                                 ", not a plir.Module");
        return r.cast<const ModuleH&>().mod;
      } catch (py::error_already_set& e) {
        return PassException(name, e);
      } catch (const PlirException& e) {
        return Internal("Python pass " + name + " failed: " + e.message);
      }
    };
  } else if (kind == "function") {
    def.info.kind = PassKind::kFunction;
    def.function_fn = [name, keep](const Function& f,
                                   const PassCallContext& ctx) -> StatusOr<Function> {
      py::gil_scoped_acquire gil;
      try {
        py::object r = (*keep)(Wrap(f), OptionsDict(ctx.options), py::cast(ModuleH{ctx.module}));
        const NodeH* h = py::isinstance<NodeH>(r) ? &r.cast<const NodeH&>() : nullptr;
        if (!h || !As<FunctionNode>(h->ref))
          return InvalidArgument("Python pass " + name + " returned " +
                                 std::string(py::str(py::type::of(r).attr("__name__"))) +
                                 ", not a plir.Function");
        return Downcast<FunctionNode>(h->ref);
      } catch (py::error_already_set& e) {
        return PassException(name, e);
      } catch (const PlirException& e) {
        return Internal("Python pass " + name + " failed: " + e.message);
      }
    };
  } else {
    throw py::value_error("argument 'kind' must be 'module' or 'function'");
  }
  Check(PassRegistry::Global().Register(std::move(def)), "plugin");
}

// ---------------------------------------------------------------- pipelines

// Records (pass, seconds) for every pass run.
class TimingRecorder : public Instrument {
 public:
  void BeforePass(const PassInfo&, const Module&) override {
    start_ = std::chrono::steady_clock::now();
  }
  Status AfterPass(const PassInfo& pass, const Module&, const Module&) override {
    times.emplace_back(
        pass.name,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    return Status::Ok();
  }
  std::vector<std::pair<std::string, double>> times;

 private:
  std::chrono::steady_clock::time_point start_;
};

// The verifier after each pass, remembering whether it was what failed.
class VerifyEach : public VerifyInstrument {
 public:
  Status AfterPass(const PassInfo& pass, const Module& in, const Module& out) override {
    Status s = VerifyInstrument::AfterPass(pass, in, out);
    if (!s.ok()) failed = true;
    return s;
  }
  bool failed = false;
};

struct PyPipeline {
  Pipeline p;
  std::vector<std::pair<std::string, double>> timings;
  std::string output;
};

PipelineLoadOptions LoadOptions() {
  PipelineLoadOptions o;
  o.fallback_plugin_dirs = PluginDirs();
  o.bundled_plugin_dirs = PluginDirs();
  return o;
}

std::vector<std::string> StrList(py::handle h, const char* param) {
  std::vector<std::string> out;
  if (h.is_none()) return out;
  if (py::isinstance<py::str>(h)) return {h.cast<std::string>()};
  if (!py::isinstance<py::sequence>(h))
    throw py::type_error(std::string("argument '") + param + "' must be a list of str");
  for (py::handle x : h) {
    if (!py::isinstance<py::str>(x))
      throw py::type_error(std::string("argument '") + param + "' must be a list of str");
    out.push_back(x.cast<std::string>());
  }
  return out;
}

PipelineStep StepFor(py::handle spec) {
  std::string name;
  std::map<std::string, AttrValue> options;
  py::object opts = py::none();
  if (py::isinstance<py::str>(spec)) {
    name = spec.cast<std::string>();
  } else if (py::isinstance<py::tuple>(spec) && py::len(spec) == 2) {
    name = py::str(spec[py::int_(0)]);
    opts = spec[py::int_(1)];
  } else if (py::isinstance<py::dict>(spec) && spec.contains("name")) {
    name = py::str(spec["name"]);
    if (spec.contains("options")) opts = spec["options"];
  } else {
    throw py::type_error(
        "argument 'passes' must be a list of pass names, (name, options) pairs or "
        "{name:, options:} dicts");
  }
  if (!opts.is_none()) {
    Attrs a = ToAttrs(opts, "options");
    for (const auto& [k, v] : a.entries()) options[k.str()] = v;
  }
  std::string resolved =
      Unwrap(ResolvePassName(name, Loader(), PassRegistry::Global(), {.load_all_plugins = true}),
             "plugin");
  return Unwrap(MakePassStep(PassRegistry::Global(), resolved, options));
}

ModuleH RunPipeline(PyPipeline& pp, const ModuleH& in, bool verify_each, bool check_input_unchanged,
                    bool timing, py::object print_after, py::object print_before,
                    bool print_changed, py::object opt_level, bool verify) {
  PassContext ctx;
  ctx.opt_level = opt_level.is_none() ? pp.p.opt_level.value_or(2) : opt_level.cast<int>();
  ctx.required.insert(pp.p.required.begin(), pp.p.required.end());
  ctx.disabled.insert(pp.p.disabled.begin(), pp.p.disabled.end());
  ctx.config = pp.p.config;
  InstrumentOptions o = pp.p.instruments;
  bool each = verify_each || o.verify == VerifyMode::kEach;
  o.verify = VerifyMode::kNone;  // VerifyEach below, or the result at the end
  o.check_input_unchanged |= check_input_unchanged;
  o.timing |= timing;
  o.print_changed |= print_changed;
  for (const std::string& s : StrList(print_after, "print_after")) o.print_after.push_back(s);
  for (const std::string& s : StrList(print_before, "print_before")) o.print_before.push_back(s);
  auto rec = std::make_shared<TimingRecorder>();
  auto ver = std::make_shared<VerifyEach>();
  ctx.instruments.push_back(rec);
  if (each) ctx.instruments.push_back(ver);
  std::ostringstream out;
  AddInstruments(o, &out, ctx);
  StatusOr<Module> r = Module();
  {
    py::gil_scoped_release nogil;
    r = PassManager().Run(pp.p.steps, in.mod, ctx);
  }
  pp.timings = rec->times;
  pp.output = out.str();
  if (!r.ok()) Throw(ver->failed ? "verify" : "error", r.status());
  if (verify && pp.p.instruments.verify != VerifyMode::kNone) {
    Status s = Verify(*r);
    if (!s.ok()) Throw("verify", s.WithPrefix("the pipeline produced an ill-formed module"));
  }
  return ModuleH{*r};
}

}  // namespace

void BindTools(py::module_& m) {
  // Tensors.
  // plir.Constant's data (the class is made in bind_ir.cc).
  py::object cls = m.attr("Constant");
  py::object property = py::module_::import("builtins").attr("property");
  auto method = [&](const char* name, auto f, const char* doc) {
    cls.attr(name) = py::cpp_function(f, py::name(name), py::is_method(cls), doc);
  };
  auto prop = [&](const char* name, auto f, const char* doc) {
    cls.attr(name) = property(py::cpp_function(f, py::is_method(cls)), py::none(), py::none(), doc);
  };
  method(
      "numpy", [](const ExprH& h) { return ToNumpy(ConstantTensor(h)); },
      "A read-only numpy view of the data (no copy).");
  prop(
      "data", [](const ExprH& h) { return ToNumpy(ConstantTensor(h)); },
      "A read-only numpy view of the data (no copy).");
  prop(
      "data_address",
      [](const ExprH& h) {
        return reinterpret_cast<uintptr_t>(As<ConstantNode>(h.ref)->data().data());
      },
      "The address of the first byte of the data.");
  prop(
      "shape", [](const ExprH& h) { return ConstantTensor(h).shape; }, "The shape.");
  prop(
      "dtype", [](const ExprH& h) { return std::string(DataTypeName(ConstantTensor(h).dtype)); },
      "The dtype.");
  method(
      "to_dlpack", [](const ExprH& h) { return ToDLPack(ConstantTensor(h)); },
      "A DLPack capsule (no copy).");
  cls.attr("__dlpack__") =
      py::cpp_function([](const ExprH& h, py::object) { return ToDLPack(ConstantTensor(h)); },
                       py::name("__dlpack__"), py::is_method(cls), py::arg("stream") = py::none());
  method(
      "__dlpack_device__", [](const ExprH&) { return py::make_tuple(1, 0); }, "CPU.");
  m.def(
      "const",
      [](py::object value, py::object dtype) {
        py::object v = value;
        if (!dtype.is_none()) v = py::module_::import("numpy").attr("asarray")(value, dtype);
        Tensor t = FromArray(v, "value");
        return Wrap(Unwrap(t.ToConstant()));
      },
      py::arg("value"), py::arg("dtype") = py::none(),
      "A constant tensor over the array's own memory (no copy) when it is C-contiguous, aligned "
      "and native-endian; else over one copy.");
  m.def(
      "empty",
      [](std::vector<int64_t> shape, py::object dtype) {
        py::array probe = py::module_::import("numpy").attr("empty")(0, dtype);
        DataType dt = FromNumpy(probe.dtype(), "dtype");
        Tensor t;
        t.dtype = dt;
        t.shape = shape;
        for (int64_t d : shape)
          if (d < 0) throw py::value_error("argument 'shape': negative dimension");
        auto buf = std::make_shared<WritableTensorBytes>(
            std::string(static_cast<size_t>(t.NumElements()) * DataTypeSize(dt), '\0'));
        t.data = buf;
        return ToNumpy(t, /*writeable=*/true);
      },
      py::arg("shape"), py::arg("dtype") = "float32",
      "A writable, zero-filled array in memory PLIR owns: passed to plir.run or plir.const, it is "
      "not "
      "copied.");
  m.def(
      "to_dlpack", [](py::object a) { return ToDLPack(FromArray(a, "array")); }, py::arg("array"),
      "A DLPack capsule over an array's memory (no copy unless the array needs one, as for "
      "plir.const).");
  m.def(
      "_shares_buffer",
      [](py::object a) {
        Source how = Source::kCopied;
        FromArray(a, "array", &how);
        return how == Source::kShared;
      },
      py::arg("array"));
  m.def(
      "_borrows_memory",
      [](py::object a) {
        Source how = Source::kCopied;
        FromArray(a, "array", &how);
        return how == Source::kBorrowed;
      },
      py::arg("array"));
  m.def(
      "_release_on_other_thread",
      [](py::object a) {
        // Borrows the array, then drops the last handle on a thread that
        // does not hold the GIL (as the interpreter's workers may).
        Buffer b = FromArray(a, "array").data;
        py::gil_scoped_release nogil;
        std::thread([b = std::move(b)]() mutable { b.reset(); }).join();
      },
      py::arg("array"));

  // The interpreter.
  m.def(
      "_run",
      [](const ModuleH& h, const std::string& entry, py::object inputs, py::object params) {
        std::vector<ValueRef> args;
        for (py::handle x : inputs) args.push_back(ToValue(x, "inputs"));
        for (py::handle x : params) args.push_back(ToValue(x, "params"));
        Function f = h.mod.LookupFunction(entry);
        if (!f) Throw("error", NotFound("no function @" + entry + " in the module"));
        if (args.size() != f->params().size())
          Throw("error",
                InvalidArgument("@" + entry + " takes " + std::to_string(f->params().size()) +
                                " arguments, " + std::to_string(args.size()) + " given"));
        for (size_t i = 0; i < args.size(); ++i) {
          Status s = CheckMatch(args[i], f->params()[i]->type());
          if (!s.ok())
            Throw("error", s.WithPrefix("@" + entry + " argument " + std::to_string(i) + " (%" +
                                        f->params()[i]->name_hint() + ")"));
        }
        StatusOr<ValueRef> r = Internal("");
        {
          py::gil_scoped_release nogil;
          Interpreter in(h.mod);
          r = in.Call(entry, args);
        }
        return FromValue(Unwrap(std::move(r)));
      },
      py::arg("mod"), py::arg("entry"), py::arg("inputs"), py::arg("params"));

  // Registries and plugins.
  m.def("_set_plugin_dirs", [](std::vector<std::string> dirs) {
    PluginDirs() = dirs;
    for (const std::string& d : dirs) Loader().AddSearchDir(d);
  });
  m.def("_plugin_dirs", []() { return PluginDirs(); });
  m.def(
      "passes",
      [](bool load_plugins) {
        if (load_plugins) (void)Loader().LoadAll();  // failures: see load_plugin
        return PassRegistry::Global().Names();
      },
      py::arg("load_plugins") = true,
      "The registered pass names (after loading every plugin on the path).");
  m.def(
      "pass_info",
      [](const std::string& name) {
        auto p = PassRegistry::Global().Lookup(name);
        if (!p) {
          std::string r = Unwrap(ResolvePassName(name, Loader(), PassRegistry::Global()), "plugin");
          p = PassRegistry::Global().Lookup(r);
        }
        return PassInfoDict(p->info);
      },
      py::arg("name"));
  m.def("ops", []() { return OpRegistry::Global().Names(); });
  m.def(
      "load_plugin",
      [](const std::string& path) {
        PluginLoadResult r = path.find('/') == std::string::npos ? Loader().LoadByName(path)
                                                                 : Loader().LoadPath(path);
        if (!r.ok()) Throw("plugin", r.status());
        return PluginDict(*r);
      },
      py::arg("path"));
  m.def("_register_pass", &RegisterPythonPass, py::arg("name"), py::arg("kind"), py::arg("fn"),
        py::arg("requires"), py::arg("provides"), py::arg("description"), py::arg("min_opt_level"),
        py::arg("origin"), py::arg("options"));

  // Pipelines.
  py::class_<PyPipeline>(m, "Pipeline")
      .def_static(
          "from_yaml",
          [](const std::string& path) {
            PyPipeline p;
            p.p = Unwrap(LoadPipeline(path, Loader(), PassRegistry::Global(), LoadOptions()),
                         "parse");
            return p;
          },
          py::arg("path"))
      .def_static(
          "from_yaml_text",
          [](const std::string& text, const std::string& name) {
            PyPipeline p;
            p.p = Unwrap(
                LoadPipelineText(name, text, Loader(), PassRegistry::Global(), LoadOptions()),
                "parse");
            return p;
          },
          py::arg("text"), py::arg("name") = "<pipeline>")
      .def_static(
          "from_passes",
          [](py::object passes) {
            if (!py::isinstance<py::sequence>(passes) || py::isinstance<py::str>(passes))
              throw py::type_error("argument 'passes' must be a list");
            PyPipeline p;
            for (py::handle s : passes) p.p.steps.push_back(StepFor(s));
            Check(CheckProperties(p.p.steps, PassRegistry::Global()));
            return p;
          },
          py::arg("passes"))
      .def("run", &RunPipeline, py::arg("mod"), py::arg("verify_each") = false,
           py::arg("check_input_unchanged") = false, py::arg("timing") = false,
           py::arg("print_after") = py::none(), py::arg("print_before") = py::none(),
           py::arg("print_changed") = false, py::arg("opt_level") = py::none(),
           py::arg("verify") = true)
      .def_property_readonly(
          "timings", [](const PyPipeline& p) { return p.timings; },
          "(pass, seconds) of every pass of the last run, in order.")
      .def_property_readonly(
          "output", [](const PyPipeline& p) { return p.output; },
          "What the print and timing instruments wrote during the last run.")
      .def_property_readonly("name", [](const PyPipeline& p) { return p.p.name; })
      .def("to_yaml", [](const PyPipeline& p) { return PipelineToYaml(p.p); })
      .def_property_readonly("pass_names", [](const PyPipeline& p) {
        std::vector<std::string> names;
        std::function<void(const std::vector<PipelineStep>&)> walk =
            [&](const std::vector<PipelineStep>& s) {
              for (const PipelineStep& x : s) {
                if (x.kind == PipelineStep::Kind::kPass) names.push_back(x.pass);
                if (x.kind == PipelineStep::Kind::kRepeat) walk(x.steps);
              }
            };
        walk(p.p.steps);
        return names;
      });

  // ONNX.
  m.def(
      "_from_onnx",
      [](py::object source, bool is_path, bool weights_as_constants) {
        onnx_import::ImportOptions o;
        o.weights_as_constants = weights_as_constants;
        StatusOr<onnx_import::ImportResult> r = Internal("");
        if (is_path) {
          std::string path = source.cast<std::string>();
          py::gil_scoped_release nogil;
          r = onnx_import::ImportModelFile(path, o);
        } else {
          std::string bytes = source.cast<std::string>();
          py::gil_scoped_release nogil;
          r = onnx_import::ImportModelBytes(bytes, "<ModelProto>", o);
        }
        onnx_import::ImportResult res = Unwrap(std::move(r), "parse");
        py::dict params;
        for (const auto& [name, t] : res.weights) params[py::str(name)] = ToNumpy(t);
        return py::make_tuple(ModuleH{res.module}, params);
      },
      py::arg("source"), py::arg("is_path"), py::arg("weights_as_constants") = false);
}

PYBIND11_MODULE(_plir, m) {
  m.doc() = "PLIR's C++ core (use the plir package, not this module)";
  // numpy and torch in this process may use the same OpenBLAS: leave its
  // threads to it (kernels/op_kernels.h).
  SetBlasThreadsOwned(false);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PlirException& e) {
      py::object cls = py::module_::import("plir.errors").attr("_class_for")(e.kind);
      py::object exc = cls(e.message);
      PyErr_SetObject(cls.ptr(), exc.ptr());
    }
  });
  BindIR(m);
  BindTools(m);
  // A pipeline's `python:` files run in this interpreter (plir-opt, which
  // has none of its own, runs them through the python_passes plugin).
  SetPythonFileRunner([](const std::string& file, PluginLoader&) -> Status {
    py::gil_scoped_acquire gil;
    try {
      std::string err =
          py::module_::import("plir._passes").attr("_load_pass_file")(file).cast<std::string>();
      if (!err.empty()) return InvalidArgument(err);
      return Status::Ok();
    } catch (py::error_already_set& e) {
      return InvalidArgument(file + ": " + e.what());
    }
  });
}

}  // namespace plir::py_bind
