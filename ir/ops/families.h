// The op families of the spec, one file each under ir/ops/: each registers
// its ops' definitions (name, arity, attributes, type inference, pattern
// kind, purity). Their reference kernels live apart, in kernels/, so that
// the IR links no computation.
#ifndef PLIR_IR_OPS_FAMILIES_H_
#define PLIR_IR_OPS_FAMILIES_H_

#include "ir/op.h"

namespace plir::internal {

void RegisterElementwiseOps(OpRegistry& r);    // ir/ops/elementwise.cc (unary)
void RegisterBinaryOps(OpRegistry& r);         // ir/ops/binary.cc
void RegisterReduceOps(OpRegistry& r);         // ir/ops/reduce.cc
void RegisterNormalizationOps(OpRegistry& r);  // ir/ops/normalization.cc
void RegisterPoolingOps(OpRegistry& r);        // ir/ops/pooling.cc
void RegisterNnOps(OpRegistry& r);             // ir/ops/nn.cc (convolution)
void RegisterLinalgOps(OpRegistry& r);         // ir/ops/linalg.cc
void RegisterDataMovementOps(OpRegistry& r);   // ir/ops/data_movement.cc
void RegisterCreationOps(OpRegistry& r);       // ir/ops/creation.cc
void RegisterShapeOps(OpRegistry& r);          // ir/ops/shape.cc
void RegisterBuiltinOps(OpRegistry& r);        // ir/ops/builtin.cc

}  // namespace plir::internal

#endif  // PLIR_IR_OPS_FAMILIES_H_
