// Generated benchmark workloads of realistic shape, at any size.
#ifndef PLIR_BENCH_WORKLOADS_H_
#define PLIR_BENCH_WORKLOADS_H_

#include <cstddef>
#include <string>

#include "ir/module.h"

namespace plir::bench {

// Long chains of scalar-tensor ops with dead bindings (every 7th) and
// duplicate subexpressions (every 5th): the 1M-binding target workload.
// Functions of `per_function` bindings each (10,000 by default; `bindings`
// for the single-large-function shape of LLM graphs).
Module ChainModel(size_t bindings, size_t per_function = 10000);
// A ResNet-style CNN: blocks of conv2d, relu, add (residual).
Module ResNetModel(size_t bindings);
// A transformer stack: matmul, permute_dims, reshape, softmax, add.
Module TransformerModel(size_t bindings);

}  // namespace plir::bench

#endif  // PLIR_BENCH_WORKLOADS_H_
