// Forwarding header: the tensors and reference kernels are part of the SDK
// now (ir/tensor.h; extern kernels in ir/kernels.h).
#ifndef PLIR_RUNTIME_TENSOR_H_
#define PLIR_RUNTIME_TENSOR_H_

#include "ir/kernels.h"
#include "ir/tensor.h"

#endif  // PLIR_RUNTIME_TENSOR_H_
