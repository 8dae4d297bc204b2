// Free variables (SDK analysis): the variables an expression or a run of
// bindings uses without defining them.
#ifndef PLIR_IR_ANALYSIS_FREE_VARS_H_
#define PLIR_IR_ANALYSIS_FREE_VARS_H_

#include <span>
#include <vector>

#include "ir/expr.h"

namespace plir {

// The variables used in `root` and not defined inside it (by a binding or,
// for a function, as a parameter), each once, in order of first use.
std::vector<Var> FreeVars(const Node* root);
inline std::vector<Var> FreeVars(const Expr& e) { return FreeVars(e.get()); }

// The variables the bindings use that none of them defines (a binding may
// use the variables of earlier ones), each once, in order of first use.
// What a function outlined from these bindings takes as parameters.
std::vector<Var> FreeVars(std::span<const Binding> bindings);
std::vector<Var> FreeVars(std::span<const VarBindingNode* const> bindings);

// The symbolic dimension names the types written inside `root` use: the
// sinfo_args of its calls, its shape values (`shape[(n, 4)]`) and symbolic
// values (`prim[n]`); names inside dimension expressions count. Each once,
// in order of first use. Variables' types are not included: add a
// binding's own with TypeDimNames (ir/type.h).
std::vector<Symbol> DimNamesUsed(const Node* root);
inline std::vector<Symbol> DimNamesUsed(const Expr& e) { return DimNamesUsed(e.get()); }

}  // namespace plir

#endif  // PLIR_IR_ANALYSIS_FREE_VARS_H_
