#include "driver/execution_check.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace plir {

StatusOr<Tolerance> ParseTolerance(const std::string& text) {
  Tolerance t;
  auto bad = [&] {
    return InvalidArgument("--check-tolerance '" + text +
                           "': expected RTOL or RTOL,ATOL (non-negative numbers)");
  };
  size_t comma = text.find(',');
  std::string parts[2] = {text.substr(0, comma),
                          comma == std::string::npos ? "" : text.substr(comma + 1)};
  double* out[2] = {&t.rtol, &t.atol};
  for (int i = 0; i < 2; ++i) {
    if (i == 1 && comma == std::string::npos) break;
    const std::string& p = parts[i];
    if (p.empty()) return bad();
    double v = 0;
    auto r = std::from_chars(p.data(), p.data() + p.size(), v);
    if (r.ec != std::errc() || r.ptr != p.data() + p.size() || !(v >= 0) || std::isinf(v))
      return bad();
    *out[i] = v;
  }
  return t;
}

namespace {

std::string Num(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

std::string MultiIndex(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

const char* KindName(Value::Kind k) {
  switch (k) {
    case Value::Kind::kTensor:
      return "a tensor";
    case Value::Kind::kTuple:
      return "a tuple";
    case Value::Kind::kInt:
      return "an integer";
    case Value::Kind::kFloat:
      return "a float";
    case Value::Kind::kBool:
      return "a bool";
    case Value::Kind::kString:
      return "a string";
    case Value::Kind::kOpaque:
      return "an opaque value";
    case Value::Kind::kFunction:
      return "a function";
  }
  return "a value";
}

bool Close(double a, double b, const Tolerance& t) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;  // infinities of one sign
  return std::fabs(a - b) <= t.atol + t.rtol * std::fabs(a);
}

ValueDifference CompareTensors(const Tensor& a, const Tensor& b, const Tolerance& t) {
  ValueDifference d;
  if (a.dtype != b.dtype || a.shape != b.shape) {
    d.what = "was " + ShapeString(a.dtype, a.shape) + ", is " + ShapeString(b.dtype, b.shape);
    d.max_abs_error = INFINITY;
    return d;
  }
  int64_t n = a.NumElements(), worst = -1;
  bool differs = false;
  double max_err = -1;
  for (int64_t i = 0; i < n; ++i) {
    double x = a.GetDouble(i), y = b.GetDouble(i);
    if (Close(x, y, t)) continue;
    differs = true;
    double err = std::isnan(x) != std::isnan(y) ? INFINITY : std::fabs(x - y);
    if (err > max_err) {
      max_err = err;
      worst = i;
    }
  }
  if (!differs) return d;
  d.max_abs_error = max_err;
  d.what = "max abs error " + Num(max_err) + " at index " + std::to_string(worst) +
           (a.shape.size() > 1 ? " (" + MultiIndex(worst, a.shape) + ")" : "") + ": " +
           Num(a.GetDouble(worst)) + " before, " + Num(b.GetDouble(worst)) + " after";
  return d;
}

}  // namespace

ValueDifference CompareValues(const ValueRef& before, const ValueRef& after, const Tolerance& t) {
  ValueDifference d;
  if (!before || !after) {
    if (before != after) d.what = "one value is missing";
    return d;
  }
  if (before->kind != after->kind) {
    d.what = std::string("was ") + KindName(before->kind) + ", is " + KindName(after->kind);
    d.max_abs_error = INFINITY;
    return d;
  }
  switch (before->kind) {
    case Value::Kind::kTensor:
      return CompareTensors(before->tensor, after->tensor, t);
    case Value::Kind::kTuple:
      if (before->fields.size() != after->fields.size()) {
        d.what = "was a " + std::to_string(before->fields.size()) + "-tuple, is a " +
                 std::to_string(after->fields.size()) + "-tuple";
        d.max_abs_error = INFINITY;
        return d;
      }
      for (size_t i = 0; i < before->fields.size(); ++i) {
        ValueDifference f = CompareValues(before->fields[i], after->fields[i], t);
        if (!f.what.empty()) {
          f.what = "field " + std::to_string(i) + ": " + f.what;
          return f;
        }
      }
      return d;
    case Value::Kind::kInt:
    case Value::Kind::kBool:
      if (before->i != after->i) {
        d.what = std::to_string(before->i) + " before, " + std::to_string(after->i) + " after";
        d.max_abs_error = std::fabs(static_cast<double>(before->i - after->i));
      }
      return d;
    case Value::Kind::kFloat:
      if (!Close(before->f, after->f, t)) {
        d.what = Num(before->f) + " before, " + Num(after->f) + " after";
        d.max_abs_error = std::fabs(before->f - after->f);
      }
      return d;
    case Value::Kind::kString:
      if (before->str != after->str) d.what = "'" + before->str + "' before, '" + after->str + "'";
      return d;
    case Value::Kind::kOpaque:
    case Value::Kind::kFunction:
      return d;  // not comparable
  }
  return d;
}

namespace {

struct Recorded {
  std::vector<std::pair<std::string, ValueRef>> order;  // first value of each name
  std::unordered_map<std::string, ValueRef> by_name;
};

std::string BindingKey(const std::string& function, const VarNode& var) {
  return "%" + var.name_hint() + " in @" + function;
}

StatusOr<ValueRef> RunEntry(const Module& m, const std::string& entry,
                            const std::vector<ValueRef>& args, Recorded* record) {
  Interpreter interp(m);
  if (record)
    interp.SetBindingObserver(
        [record](const std::string& fn, const VarNode& var, const ValueRef& v) {
          if (var.name_hint().empty()) return;
          std::string key = BindingKey(fn, var);
          if (record->by_name.emplace(key, v).second) record->order.push_back({key, v});
        });
  return interp.Call(entry, args);
}

// "output", "output 1", "output 1.0": the first leaf that differs.
std::string FirstOutput(const ValueRef& a, const ValueRef& b, const Tolerance& t,
                        const std::string& path, ValueDifference* diff) {
  if (a && b && a->kind == Value::Kind::kTuple && b->kind == Value::Kind::kTuple &&
      a->fields.size() == b->fields.size()) {
    for (size_t i = 0; i < a->fields.size(); ++i) {
      std::string p = path.empty() ? std::to_string(i) : path + "." + std::to_string(i);
      std::string r = FirstOutput(a->fields[i], b->fields[i], t, p, diff);
      if (!r.empty()) return r;
    }
    return "";
  }
  *diff = CompareValues(a, b, t);
  if (diff->what.empty()) return "";
  return path.empty() ? "output" : "output " + path;
}

std::string ToleranceText(const Tolerance& t) {
  return "rtol " + Num(t.rtol) + ", atol " + Num(t.atol);
}

}  // namespace

StatusOr<std::string> FirstDifferingBinding(const Module& before, const Module& after,
                                            const std::string& entry,
                                            const std::vector<ValueRef>& args, const Tolerance& t) {
  Recorded a, b;
  PLIR_RETURN_IF_ERROR(RunEntry(before, entry, args, &a).status());
  (void)RunEntry(after, entry, args, &b);  // what it computed up to a failure counts
  for (const auto& [key, value] : a.order) {
    auto it = b.by_name.find(key);
    if (it == b.by_name.end()) continue;
    ValueDifference d = CompareValues(value, it->second, t);
    if (!d.what.empty()) return key + ": " + d.what;
  }
  return std::string();
}

StatusOr<std::shared_ptr<ExecutionChecker>> ExecutionChecker::Create(
    const Module& input, ExecutionCheckOptions options) {
  Function f = input.LookupFunction(options.entry);
  if (!f)
    return NotFound("--check-execution: the module has no function @" + options.entry +
                    " to run (--entry names another)");
  StatusOr<EntryArgs> args = MakeEntryArgs(*f, options.inputs);
  if (!args.ok()) return args.status().WithPrefix("--check-execution");
  StatusOr<ValueRef> ref = RunEntry(input, options.entry, args->args, nullptr);
  if (!ref.ok())
    return FailedPrecondition(
        "--check-execution: @" + options.entry +
        " cannot run on the input module, so no pass was run: " + ref.status().message());
  return std::shared_ptr<ExecutionChecker>(
      new ExecutionChecker(input, std::move(options), std::move(args).value(), *ref));
}

Status ExecutionChecker::AfterPass(const PassInfo& pass, const Module& input,
                                   const Module& output) {
  ++applications_;
  if (output.same_as(input)) return Status::Ok();
  ++checks_;
  const std::string& entry = options_.entry;
  // The first line is the same for the same pass whatever the module and
  // the pipeline (plir-reduce compares it); the details follow.
  std::string origin = pass.origin.substr(0, pass.origin.find(" ("));
  std::string head = "--check-execution: pass " + pass.name + " (" + origin + ")";
  std::string where =
      "\n  on " + args_.description + ", in pass application " + std::to_string(applications_);
  if (!output.LookupFunction(entry)) return FailedPrecondition(head + " removed @" + entry + where);
  StatusOr<ValueRef> got = RunEntry(output, entry, args_.args, nullptr);
  if (!got.ok())
    return FailedPrecondition(head + " left @" + entry + " unable to run\n  " +
                              got.status().message() + where);
  ValueDifference diff;
  std::string which = FirstOutput(reference_, *got, options_.tolerance, "", &diff);
  if (which.empty()) return Status::Ok();
  std::string message = head + " changed what @" + entry + " computes\n  first differing " + which +
                        ": " + diff.what + " (" + ToleranceText(options_.tolerance) + ")";
  StatusOr<std::string> binding =
      FirstDifferingBinding(original_, output, entry, args_.args, options_.tolerance);
  if (!binding.ok())
    message += "\n  first differing binding: unknown (" + binding.status().message() + ")";
  else if (binding->empty())
    message += "\n  first differing binding: none of the bindings both modules name differs";
  else
    message += "\n  first differing binding: " + *binding;
  return FailedPrecondition(message + where);
}

}  // namespace plir
