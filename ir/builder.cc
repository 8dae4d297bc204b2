#include "ir/builder.h"

namespace plir {

void BlockBuilder::BeginBlock(bool dataflow) {
  EndBlock();
  open_ = true;
  dataflow_ = dataflow;
}

Block BlockBuilder::EndBlock() {
  if (!open_) return Block();
  Block b = BindingBlockNode::Make(std::move(current_), dataflow_);
  current_.clear();
  open_ = false;
  blocks_.push_back(b);
  return b;
}

void BlockBuilder::EmitBinding(Binding binding) {
  if (!open_) BeginBlock(false);
  current_.push_back(std::move(binding));
}

Var BlockBuilder::Emit(Expr value, std::string name_hint) {
  if (!open_) BeginBlock(false);
  Var v = VarNode::Make(std::move(name_hint), value->type(), dataflow_);
  current_.push_back(VarBindingNode::Make(v, std::move(value)));
  return v;
}

Var BlockBuilder::EmitOutput(Expr value, std::string name_hint) {
  if (!open_) BeginBlock(false);
  Var v = VarNode::Make(std::move(name_hint), value->type(), false);
  current_.push_back(VarBindingNode::Make(v, std::move(value)));
  return v;
}

StatusOr<Var> BlockBuilder::EmitAnnotated(Expr value, Type type, std::string name_hint,
                                          bool is_output) {
  if (!TypeCompatible(type, value->type()))
    return InvalidArgument("annotation " + TypeToString(type) +
                           " is incompatible with the value's type " + TypeToString(value->type()));
  if (!open_) BeginBlock(false);
  Var v = VarNode::Make(std::move(name_hint), std::move(type), dataflow_ && !is_output);
  current_.push_back(VarBindingNode::Make(v, std::move(value)));
  return v;
}

StatusOr<Var> BlockBuilder::EmitCall(std::string_view op, std::vector<Expr> args, Attrs attrs,
                                     std::vector<Type> sinfo_args, std::string name_hint) {
  PLIR_ASSIGN_OR_RETURN(Expr call,
                        MakeOpCall(op, std::move(args), std::move(attrs), std::move(sinfo_args)));
  return Emit(std::move(call), std::move(name_hint));
}

SeqExpr BlockBuilder::Finalize(Expr result) {
  EndBlock();
  SeqExpr s = SeqExprNode::Make(std::move(blocks_), std::move(result));
  blocks_.clear();
  return s;
}

}  // namespace plir
