// ONNX's backend node tests as PLIR's conformance suite: each test folder
// holds model.onnx and test_data_set_N/{input_K.pb,output_K.pb}. RunNodeTest
// imports the model (binding shape-like inputs as constants where the
// importer asks for them), runs @main in the interpreter on every data set
// and compares every output the way ONNX does:
// |got - expected| <= 1e-7 + 1e-3 * |expected|, NaN equals NaN, exact
// dtype and shape; the model's declared output dtype wins (ONNX 1.12
// stores bfloat16 outputs as uint16 protos).
#ifndef PLIR_FRONTENDS_ONNX_NODE_TESTS_H_
#define PLIR_FRONTENDS_ONNX_NODE_TESTS_H_

#include <string>
#include <vector>

#include "kernels/tensor.h"

namespace plir::onnx_import {

struct NodeTestResult {
  bool pass = false;
  bool unsupported = false;      // the importer named unsupported ops
  std::string reason;            // one line; empty when passing
  std::vector<std::string> ops;  // the ONNX op types of the graph, sorted
};

// Runs the test in folder `dir`.
NodeTestResult RunNodeTest(const std::string& dir);

// The comparison, as a reason ("" if equal).
std::string CompareTensors(const Tensor& got, const Tensor& expected);

}  // namespace plir::onnx_import

#endif  // PLIR_FRONTENDS_ONNX_NODE_TESTS_H_
