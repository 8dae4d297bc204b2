// BlockBuilder: emits bindings into ordinary and dataflow blocks, inferring
// each bound variable's type from its value.
//
//   BlockBuilder bb;
//   bb.BeginDataflowBlock();
//   Var a = bb.Emit(*MakeOpCall("add", {x, y}), "a");   // dataflow var
//   Var out = bb.EmitOutput(*MakeOpCall("nn.relu", {a}), "out");
//   bb.EndBlock();
//   SeqExpr body = bb.Finalize(out);
#ifndef PLIR_IR_BUILDER_H_
#define PLIR_IR_BUILDER_H_

#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/op.h"
#include "ir/status.h"

namespace plir {

class BlockBuilder {
 public:
  // Ends any open block and starts a dataflow (or ordinary) block.
  void BeginDataflowBlock() { BeginBlock(true); }
  void BeginBindingBlock() { BeginBlock(false); }
  // Closes the open block (if any) and returns it (null if none was open).
  Block EndBlock();

  // Binds `value` to a new variable typed by inference. In a dataflow block
  // the variable is a dataflow variable. Opens an ordinary block if none is open.
  Var Emit(Expr value, std::string name_hint = "");
  // Like Emit, but the variable is an output of the current dataflow block
  // (an ordinary variable).
  Var EmitOutput(Expr value, std::string name_hint = "");
  // Binds `value` to a variable annotated with `type`; fails if the
  // annotation is incompatible with the inferred type.
  StatusOr<Var> EmitAnnotated(Expr value, Type type, std::string name_hint = "",
                              bool is_output = false);
  // Binds a pre-made variable (for passes that keep or rename variables).
  void EmitBinding(Binding binding);
  // Convenience: makes an op call and emits it.
  StatusOr<Var> EmitCall(std::string_view op, std::vector<Expr> args, Attrs attrs = Attrs(),
                         std::vector<Type> sinfo_args = {}, std::string name_hint = "");

  bool in_dataflow_block() const { return open_ && dataflow_; }

  // Closes the open block and returns the body with `result`. The builder is
  // empty again afterwards.
  SeqExpr Finalize(Expr result);

 private:
  void BeginBlock(bool dataflow);
  std::vector<Block> blocks_;
  std::vector<Binding> current_;
  bool open_ = false;
  bool dataflow_ = false;
};

}  // namespace plir

#endif  // PLIR_IR_BUILDER_H_
