// ONNX TensorProto <-> plir::Tensor.
#ifndef PLIR_FRONTENDS_ONNX_TENSOR_PROTO_H_
#define PLIR_FRONTENDS_ONNX_TENSOR_PROTO_H_

#include <string>

#include "frontends/onnx/onnx_proto.h"
#include "ir/dtype.h"
#include "ir/status.h"
#include "kernels/tensor.h"

namespace plir::onnx_import {

// The PLIR dtype of an ONNX TensorProto.DataType; kUnknown for those PLIR
// lacks (string, complex, float8).
DataType DataTypeFromOnnx(int32_t elem_type);
// The ONNX element type name ("FLOAT", "BFLOAT16", ...), for messages.
std::string OnnxTypeName(int32_t elem_type);

// The tensor a TensorProto holds: raw_data or the typed fields
// (float_data, int32_data for the small types, int64_data, ...), or external
// data in a file relative to `base_dir`. `proto` is taken by non-const
// reference so that raw_data can be moved out instead of copied (it is
// cleared); `what` names the tensor in errors.
StatusOr<Tensor> TensorFromProto(onnx::TensorProto& proto, const std::string& base_dir,
                                 const std::string& what);
// Reads a serialized TensorProto file (a node test's input_N.pb).
StatusOr<Tensor> ReadTensorProtoFile(const std::string& path);

}  // namespace plir::onnx_import

#endif  // PLIR_FRONTENDS_ONNX_TENSOR_PROTO_H_
