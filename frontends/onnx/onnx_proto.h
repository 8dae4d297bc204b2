// The ONNX protobuf messages (Debian's libonnx-dev ships only onnx-ml.pb.h:
// onnx/onnx_pb.h needs ONNX_ML=1 and ONNX_NAMESPACE=onnx, which
// @system//:onnx defines; the fallbacks here keep a stray include working).
#ifndef PLIR_FRONTENDS_ONNX_ONNX_PROTO_H_
#define PLIR_FRONTENDS_ONNX_ONNX_PROTO_H_

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include "onnx/onnx_pb.h"

#endif  // PLIR_FRONTENDS_ONNX_ONNX_PROTO_H_
