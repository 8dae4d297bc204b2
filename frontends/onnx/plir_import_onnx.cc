// plir-import-onnx: an ONNX model to a PLIR module (and its weights).
//
//   plir-import-onnx MODEL.onnx -o OUT.plir|.plirb|.json [--weights W.safetensors]
//                    [--constant-input NAME=FILE.pb]... [--weights-as-constants]
//
// @main takes the graph's real inputs, then one parameter per initializer
// (num_input = the number of real inputs); the weights go to --weights
// (default: OUT with the extension .safetensors) in parameter order. Every
// file is written atomically, and nothing at all on an error (exit 1).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/file_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/tensor_proto.h"
#include "ir/serialize/serialize.h"
#include "ir/text/printer.h"

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "plir-import-onnx: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Imports an ONNX model as a PLIR module (@main: inputs, then weights; num_input)"};
  std::string model, output, weights;
  std::vector<std::string> constant_inputs;
  bool weights_as_constants = false;
  app.add_option("model", model, "the .onnx file")->required();
  app.add_option("-o,--output", output,
                 "the module: .plir (text), .plirb (binary) or .json; - for standard output (text)")
      ->required();
  app.add_option("--weights", weights,
                 "the weights file (default: OUTPUT's name with .safetensors)");
  app.add_option("--constant-input", constant_inputs,
                 "NAME=FILE.pb: bind graph input NAME to the TensorProto in FILE.pb as a constant");
  app.add_flag("--weights-as-constants", weights_as_constants,
               "bind initializers as constants, not parameters");
  CLI11_PARSE(app, argc, argv);

  plir::onnx_import::ImportOptions options;
  options.weights_as_constants = weights_as_constants;
  for (const std::string& ci : constant_inputs) {
    size_t eq = ci.find('=');
    if (eq == std::string::npos || eq == 0)
      return Fail("--constant-input " + ci + ": expected NAME=FILE.pb");
    auto t = plir::onnx_import::ReadTensorProtoFile(ci.substr(eq + 1));
    if (!t.ok()) return Fail("--constant-input " + ci + ": " + t.status().message());
    options.constant_inputs[ci.substr(0, eq)] = *t;
  }
  auto result = plir::onnx_import::ImportModelFile(model, options);
  if (!result.ok()) return Fail(result.status().message());

  std::string text;
  if (EndsWith(output, ".plirb"))
    text = plir::SaveBinary(result->module);
  else if (EndsWith(output, ".json"))
    text = plir::SaveJson(result->module);
  else
    text = plir::PrintModule(result->module);

  bool to_stdout = output == "-";
  if (!result->weights.empty()) {
    if (weights.empty() && to_stdout)
      return Fail("the model has weights: with -o -, give --weights W.safetensors");
    if (weights.empty()) {
      size_t dot = output.find_last_of('.');
      size_t slash = output.find_last_of('/');
      weights = (dot != std::string::npos && (slash == std::string::npos || dot > slash)
                     ? output.substr(0, dot)
                     : output) +
                ".safetensors";
    }
    plir::Status s = plir::onnx_import::WriteWeights(*result, weights);
    if (!s.ok()) return Fail("writing " + weights + ": " + s.message());
  }
  if (to_stdout) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      return Fail("error writing to standard output");
    return 0;
  }
  plir::Status s = plir::WriteFileAtomically(output, text);
  if (!s.ok()) {
    if (!result->weights.empty()) std::remove(weights.c_str());
    return Fail("writing " + output + ": " + s.message());
  }
  return 0;
}
