// Def-use chains of one function (SDK analysis).
//
// For every variable the function defines (parameters and binding targets,
// in nested bodies too, local functions' parameters counting as parameters): the binding that
// defines it (null for a parameter), how many times it is used, and where. Each use is either in
// the value of a binding, the innermost one (a use in an `if` condition
// belongs to the binding of the `if`; a use in a binding inside a branch
// belongs to that binding), or in the result of a body (a SeqExpr: the
// function's body or an `if` branch). Tables are indexed by
// VarNode::index() (VarMap), so lookups are array reads.
//
// DefUse reads the function as it was; after a rewrite compute it again.
#ifndef PLIR_IR_ANALYSIS_DEF_USE_H_
#define PLIR_IR_ANALYSIS_DEF_USE_H_

#include <cstdint>
#include <vector>

#include "ir/expr.h"
#include "ir/var_map.h"

namespace plir {

class DefUse {
 public:
  // One use of a variable: in the value of `binding`, or (binding null) in
  // the result of `body`.
  struct Use {
    const VarBindingNode* binding = nullptr;
    const SeqExprNode* body = nullptr;
  };
  struct Info {
    const VarBindingNode* def = nullptr;  // null: a parameter
    bool is_param = false;
    std::vector<Use> uses;  // in walk order (definition order), with repeats
  };

  // Walks `f` once.
  static DefUse Compute(const FunctionNode& f);

  // The facts for `v`, or null if `f` does not define it (a free variable).
  const Info* Find(const VarNode* v) const { return infos_.Find(v); }
  bool Defines(const VarNode* v) const { return infos_.Contains(v); }
  // Number of uses (0 for a variable the function does not define).
  size_t NumUses(const VarNode* v) const;
  // The binding defining `v`: null for a parameter or an unknown variable.
  const VarBindingNode* Definition(const VarNode* v) const;
  // The distinct bindings using `v`, in order (uses in a body's result are
  // not bindings: see Find(v)->uses).
  std::vector<const VarBindingNode*> Users(const VarNode* v) const;
  // True iff `v` is used in the result of some body (`body`: that one).
  bool UsedInResult(const VarNode* v, const SeqExprNode* body = nullptr) const;

  // Variables in definition order.
  const std::vector<const VarNode*>& vars() const { return order_; }

 private:
  VarMap<Info> infos_;
  std::vector<const VarNode*> order_;
};

}  // namespace plir

#endif  // PLIR_IR_ANALYSIS_DEF_USE_H_
