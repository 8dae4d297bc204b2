// The verifier's check of symbolic dimensions (ir/internal/verify_dims.cc),
// one function at a time; VerifyModule (ir/verifier.cc) runs it per item.
#ifndef PLIR_IR_INTERNAL_VERIFY_DIMS_H_
#define PLIR_IR_INTERNAL_VERIFY_DIMS_H_

#include <cstddef>
#include <vector>

#include "ir/expr.h"
#include "ir/verifier.h"

namespace plir::internal {

// Appends to `errors` (up to `max_errors` in all) each use of a dimension
// name in `f` that nothing in scope binds.
void CheckSymbolicDims(const FunctionNode* f, std::vector<VerifyError>* errors, size_t max_errors);

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_VERIFY_DIMS_H_
