#include "frontends/onnx/node_tests.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_proto.h"
#include "frontends/onnx/tensor_proto.h"
#include "interpreter/interpreter.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"

namespace plir::onnx_import {
namespace {

namespace fs = std::filesystem;

std::string OneLine(std::string s, const std::string& strip) {
  for (size_t p; !strip.empty() && (p = s.find(strip)) != std::string::npos;)
    s.erase(p, strip.size());
  for (char& c : s)
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  if (s.size() > 300) s = s.substr(0, 297) + "...";
  return s;
}

std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// input_K.pb / output_K.pb files of a data set, by K.
std::vector<std::string> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::map<int, std::string> by;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + 3 && n.substr(n.size() - 3) == ".pb")
      by[std::atoi(n.c_str() + prefix.size())] = e.path().string();
  }
  std::vector<std::string> out;
  for (auto& [k, v] : by) out.push_back(v);
  return out;
}

}  // namespace

std::string CompareTensors(const Tensor& got, const Tensor& exp) {
  if (got.dtype != exp.dtype)
    return "dtype " + std::string(DataTypeName(got.dtype)) + ", expected " +
           std::string(DataTypeName(exp.dtype));
  if (got.shape != exp.shape)
    return "shape " + ShapeStr(got.shape) + ", expected " + ShapeStr(exp.shape);
  int64_t n = exp.NumElements();
  bool fl = IsFloat(exp.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (fl) {
      double g = got.GetDouble(i), e = exp.GetDouble(i);
      if (std::isnan(e) && std::isnan(g)) continue;
      if (g == e) continue;
      if (!(std::fabs(g - e) <= 1e-7 + 1e-3 * std::fabs(e)))
        return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " +
               std::to_string(e);
    } else if (got.GetInt(i) != exp.GetInt(i) ||
               (exp.dtype == DataType::kUInt64 && got.GetDouble(i) != exp.GetDouble(i))) {
      return "element " + std::to_string(i) + " is " + std::to_string(got.GetInt(i)) +
             ", expected " + std::to_string(exp.GetInt(i));
    }
  }
  return "";
}

NodeTestResult RunNodeTest(const std::string& dir) {
  NodeTestResult r;
  std::string model_path = dir + "/model.onnx";
  std::string strip = fs::path(dir).parent_path().string() + "/";
  onnx::ModelProto model;
  {
    std::ifstream in(model_path, std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) {
      r.reason = "cannot read model.onnx";
      return r;
    }
  }
  std::set<std::string> ops;
  for (const auto& n : model.graph().node())
    ops.insert(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                             : n.domain() + "." + n.op_type());
  r.ops.assign(ops.begin(), ops.end());

  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> real_inputs;
  std::map<std::string, int32_t> input_types;
  for (const auto& vi : model.graph().input())
    if (!inits.count(vi.name())) {
      real_inputs.push_back(vi.name());
      input_types[vi.name()] =
          vi.type().has_tensor_type() ? vi.type().tensor_type().elem_type() : 0;
    }
  std::vector<int32_t> declared;
  for (const auto& vi : model.graph().output())
    declared.push_back(vi.type().has_tensor_type() ? vi.type().tensor_type().elem_type() : 0);

  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    r.reason = "no test_data_set_N folders";
    return r;
  }

  for (const fs::path& set : sets) {
    std::string set_name = set.filename().string();
    std::vector<std::string> in_files = NumberedFiles(set, "input_"),
                             out_files = NumberedFiles(set, "output_");
    std::map<std::string, Tensor> inputs;
    std::map<std::string, std::string> bad_inputs;  // reported only when the input is used
    for (size_t k = 0; k < in_files.size() && k < real_inputs.size(); ++k) {
      auto t = ReadTensorProtoFile(in_files[k]);
      if (!t.ok())
        bad_inputs[real_inputs[k]] = set_name + ": " + OneLine(t.status().message(), strip);
      else {
        Tensor in = *t;
        DataType want = DataTypeFromOnnx(input_types[real_inputs[k]]);
        if (want != DataType::kUnknown && want != in.dtype &&
            DataTypeSize(want) == DataTypeSize(in.dtype))
          in.dtype = want;  // bfloat16 stored as uint16
        inputs[real_inputs[k]] = in;
      }
    }
    // Import, binding the inputs the importer needs known as constants.
    ImportOptions opt;
    std::vector<std::string> needs;
    opt.needs_constant = &needs;
    StatusOr<ImportResult> imp = InvalidArgument("not imported");
    for (int attempt = 0; attempt < 8; ++attempt) {
      needs.clear();
      onnx::ModelProto copy = model;
      imp = ImportModel(copy, "model.onnx", opt);
      if (imp.ok() || needs.empty()) break;
      bool added = false;
      for (const std::string& n : needs)
        if (inputs.count(n) && !opt.constant_inputs.count(n)) {
          opt.constant_inputs[n] = inputs[n];
          added = true;
        }
      if (!added) break;
    }
    if (!imp.ok()) {
      const std::string& m = imp.status().message();
      r.unsupported = imp.status().code() == StatusCode::kUnimplemented;
      r.reason = (r.unsupported ? "unsupported: " : "import: ") + OneLine(m, strip);
      return r;
    }
    // The module reads back from its text as the same module.
    {
      auto back = ParseModule(PrintModule(imp->module));
      if (!back.ok()) {
        r.reason = "text round trip: " + OneLine(back.status().message(), strip);
        return r;
      }
      if (!StructuralEqual(*back, imp->module)) {
        r.reason = "text round trip: the parsed module differs";
        return r;
      }
    }
    std::vector<ValueRef> args;
    for (const std::string& name : imp->input_names) {
      auto it = inputs.find(name);
      if (it == inputs.end()) {
        r.reason = bad_inputs.count(name) ? bad_inputs[name]
                                          : set_name + ": no data for input '" + name + "'";
        return r;
      }
      args.push_back(Value::OfTensor(it->second));
    }
    for (auto& [name, t] : imp->weights) args.push_back(Value::OfTensor(t));
    Interpreter interp(imp->module);
    auto out = interp.Call("main", args);
    if (!out.ok()) {
      r.reason = "run: " + OneLine(out.status().message(), strip);
      return r;
    }
    std::vector<ValueRef> got;
    if (imp->output_names.size() == 1)
      got.push_back(*out);
    else
      got = (*out)->fields;
    if (got.size() != out_files.size()) {
      r.reason = set_name + ": " + std::to_string(got.size()) + " outputs, expected " +
                 std::to_string(out_files.size());
      return r;
    }
    for (size_t k = 0; k < out_files.size(); ++k) {
      auto e = ReadTensorProtoFile(out_files[k]);
      if (!e.ok()) {
        r.reason = set_name + ": " + OneLine(e.status().message(), strip);
        return r;
      }
      Tensor exp = *e;
      DataType want = k < declared.size() ? DataTypeFromOnnx(declared[k]) : DataType::kUnknown;
      if (want != DataType::kUnknown && want != exp.dtype &&
          DataTypeSize(want) == DataTypeSize(exp.dtype))
        exp.dtype = want;  // bfloat16 stored as uint16
      if (got[k]->kind != Value::Kind::kTensor) {
        r.reason = set_name + ": output " + std::to_string(k) + " is not a tensor";
        return r;
      }
      std::string diff = CompareTensors(got[k]->tensor, exp);
      if (!diff.empty()) {
        r.reason = set_name + ": output " + std::to_string(k) + ": " + diff;
        return r;
      }
    }
  }
  r.pass = true;
  return r;
}

}  // namespace plir::onnx_import
