// ONNX import: a ModelProto becomes a PLIR module with one function, @main.
//
// The signature contract (what LiftTransformParams and LazyTransformParams
// read): @main takes the graph's real inputs first, in graph order, then one
// parameter per initializer, in the graph's initializer order; its attribute
// `num_input` is the number of real inputs. An initializer that the graph
// also lists in graph.input (IR version < 4 models) is a weight, not an
// input. Weights are returned (and written by WriteWeights) under the
// parameters' names, in parameter order.
//
// Names: every ONNX value name becomes a PLIR name by one rule (SanitizeName,
// docs/onnx-import.md); the original names of the parameters are kept in the
// function attribute `onnx_names` (a map PLIR name -> ONNX name);
// `onnx_outputs` lists the graph outputs' names.
//
// Errors are values naming the file and the node: a malformed protobuf, a
// model onnx::checker rejects, an opset outside 7..17, unsupported ops (all
// of them, with counts and the first node of each, before anything is
// converted), shapes that are not static where PLIR needs them (naming the
// node and the input, suggesting --constant-input).
#ifndef PLIR_FRONTENDS_ONNX_IMPORTER_H_
#define PLIR_FRONTENDS_ONNX_IMPORTER_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "ir/status.h"
#include "kernels/tensor.h"

namespace onnx {
class ModelProto;
}

namespace plir::onnx_import {

inline constexpr int kMinOpset = 7;
inline constexpr int kMaxOpset = 17;

struct ImportOptions {
  // Bind initializers as constants instead of parameters.
  bool weights_as_constants = false;
  // Graph inputs bound as constants (ONNX name -> value): shape-like inputs
  // such as Reshape's shape or Slice's starts.
  std::map<std::string, Tensor> constant_inputs;
  // Run onnx::checker::check_model (off only for tests of the importer's
  // own checks).
  bool check_model = true;
  // Where external data files are looked up (the model's folder).
  std::string base_dir;
  // Filled, when an import fails because a value derived from a graph
  // input must be known at import, with those inputs' ONNX names.
  std::vector<std::string>* needs_constant = nullptr;
};

struct ImportResult {
  Module module;
  int64_t num_input = 0;
  // ONNX names of @main's first num_input parameters, in order.
  std::vector<std::string> input_names;
  // The weights, in parameter order: (PLIR name, tensor); empty with
  // weights_as_constants.
  std::vector<std::pair<std::string, Tensor>> weights;
  // (PLIR name, ONNX name) of every parameter, in order.
  std::vector<std::pair<std::string, std::string>> param_names;
  // ONNX names of the graph outputs (the result, a tuple if more than one).
  std::vector<std::string> output_names;
  int opset = 0;
};

// The PLIR name of an ONNX name (see docs/onnx-import.md): every character
// outside [A-Za-z0-9_] becomes '_', and a name that is then empty or starts
// with a digit gets the prefix "v". (Collisions get "_1", "_2", ... in the
// importer, in order of appearance.)
std::string SanitizeName(std::string_view onnx_name);

// Imports a parsed model; `file` names it in messages.
StatusOr<ImportResult> ImportModel(onnx::ModelProto& model, const std::string& file,
                                   const ImportOptions& options);
// Parses and imports serialized bytes.
StatusOr<ImportResult> ImportModelBytes(std::string_view bytes, const std::string& file,
                                        const ImportOptions& options);
// Reads, parses and imports a .onnx file (base_dir defaults to its folder).
StatusOr<ImportResult> ImportModelFile(const std::string& path, ImportOptions options);

// The sorted ONNX op types of `model`'s graph with the converter table's
// verdict: empty if supported at the model's opset, else why not.
std::vector<std::pair<std::string, std::string>> UnsupportedOps(const onnx::ModelProto& model);

// Writes the weights to a safetensors file at `path` (atomically), under
// their PLIR names, in parameter order.
Status WriteWeights(const ImportResult& result, const std::string& path);

}  // namespace plir::onnx_import

#endif  // PLIR_FRONTENDS_ONNX_IMPORTER_H_
