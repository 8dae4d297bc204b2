// The arguments of an entry function, for a tool that runs a module on
// given or generated data (plir-opt --check-execution).
//
// Each parameter's tensors (a tuple parameter has one per field, named by
// the variable a top-level `%x = %param.k` binds, else "param.k") come from
// safetensors files, the inputs file's tensors first, then the weights
// file's: bound by name when every name is in one of the files, else by
// index in that order. Without files, every tensor is generated from a seed:
// floats uniform in [-1, 1), signed integers in [-4, 4), unsigned in [0, 4),
// bools 0 or 1; the same seed gives the same tensors. A parameter that is
// not a static tensor (or a tuple of them) is an error naming it.
#ifndef PLIR_INTERPRETER_ENTRY_INPUTS_H_
#define PLIR_INTERPRETER_ENTRY_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"

namespace plir {

struct EntryInputOptions {
  std::string inputs_file;  // safetensors; optional
  std::string params_file;  // safetensors; optional
  uint64_t seed = 0;        // for generated tensors (no file given)
};

struct EntryArgs {
  std::vector<ValueRef> args;  // one per parameter of the function
  std::string description;     // how they were made, for messages
};

// One tensor of a function's parameters.
struct ParamLeaf {
  Type type;
  std::string name;
};
// The tensor leaves of `f`'s parameters, in order (see above for names).
std::vector<ParamLeaf> EntryParamLeaves(const FunctionNode& f);

StatusOr<EntryArgs> MakeEntryArgs(const FunctionNode& f, const EntryInputOptions& options);

// "float32[1, 3]": a tensor's dtype and shape, for messages.
std::string ShapeString(DataType dt, const std::vector<int64_t>& shape);
// Rebuilds a value of type `t` (a tensor, or a tuple of them, nested) from
// tensors taken in order from `next`.
ValueRef BuildValue(const Type& t, std::vector<Tensor>::iterator& next);

}  // namespace plir

#endif  // PLIR_INTERPRETER_ENTRY_INPUTS_H_
