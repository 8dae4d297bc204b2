// The node records of binary versions 2 and 3 (layout: binary_internal.h).
#include "ir/op.h"
#include "ir/serialize/binary_reader.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"

namespace plir::internal::binary {

bool FileReader::ReadNode(uint32_t id) {
  uint8_t k = 0;
  kind_ = -1;
  if (!Byte(&k)) return false;
  if ((k < static_cast<uint8_t>(NodeKind::kVar) || k > static_cast<uint8_t>(NodeKind::kPrimExpr)) &&
      k != static_cast<uint8_t>(NodeKind::kLocalFn))
    return Fail(k <= static_cast<uint8_t>(NodeKind::kShapeType) ||
                        k == static_cast<uint8_t>(NodeKind::kFuncType)
                    ? "a type in the node table (types have their own)"
                    : "bad node kind " + std::to_string(k));
  kind_ = k;
  std::string_view s;
  Type type;
  uint64_t n;
  switch (static_cast<NodeKind>(k)) {
    case NodeKind::kVar: {
      bool df = false;
      uint64_t number;
      Symbol prefix;
      if (!SymbolRef(&prefix) || !Var(&number) || !TypeRef(&type) || !Flag(&df)) return false;
      if (number > uint64_t{NameHint::kNoNumber}) return Fail("variable name number out of range");
      NameHint name = NameHint::FromParts(
          prefix, number == 0 ? NameHint::kNoNumber : static_cast<uint32_t>(number - 1));
      // Variables are numbered densely per item, in table (definition) order.
      Push(VarNode::Make(name, std::move(type), df, next_var_index_++));
      return true;
    }
    case NodeKind::kGlobalVar:
      if (!Str(&s)) return false;
      Push(GlobalVarNode::Make(std::string(s)));
      return true;
    case NodeKind::kOp: {
      if (!Str(&s)) return false;
      Op op = OpRegistry::Global().Lookup(s);
      if (!op) return Fail("unknown op '" + std::string(s) + "'");
      Push(std::move(op));
      return true;
    }
    case NodeKind::kTuple: {
      std::vector<Expr> fields;
      if (!Count(&n, "field") || !NodeRefs(id, n, &fields)) return false;
      Push(TupleNode::Make(std::move(fields)));
      return true;
    }
    case NodeKind::kTupleGetItem: {
      Expr tuple;
      int64_t index;
      if (!NodeRef(id, &tuple) || !Signed(&index) || !TypeRef(&type)) return false;
      Push(TupleGetItemNode::MakeUnchecked(std::move(tuple), index, std::move(type)));
      return true;
    }
    case NodeKind::kPrimValue: {
      DataType dt = DataType::kUnknown;
      if (!DType(&dt)) return false;
      if (dt == DataType::kFloat64) {
        double d;
        if (!F64(&d)) return false;
        Push(PrimValueNode::Float(d));
      } else if (dt == DataType::kBool) {
        bool b = false;
        if (!Flag(&b)) return false;
        Push(PrimValueNode::Bool(b));
      } else if (dt == DataType::kInt64) {
        int64_t i;
        if (!Signed(&i)) return false;
        Push(PrimValueNode::Int(i));
      } else {
        return Fail(std::string("a primitive value of dtype ") + std::string(DataTypeName(dt)) +
                    " (only bool, int64, float64)");
      }
      return true;
    }
    case NodeKind::kStringImm:
      if (!Str(&s)) return false;
      Push(StringImmNode::Make(std::string(s)));
      return true;
    case NodeKind::kShapeExpr: {
      if (!TypeRef(&type)) return false;
      auto* st = As<ShapeTypeNode>(type);
      if (!st || !st->has_values()) return Fail("a shape value whose type is not Shape[(...)]");
      Push(ShapeExprNode::Make(st->values()));
      return true;
    }
    case NodeKind::kPrimExpr: {
      if (!TypeRef(&type)) return false;
      auto* pt = As<PrimTypeNode>(type);
      if (!pt || !pt->has_value() || pt->dtype() != DataType::kInt64 || pt->value().is_const())
        return Fail("a PrimExpr whose type is not Prim[int64, value=<symbolic>]");
      Push(PrimExprNode::Make(pt->value()));
      return true;
    }
    case NodeKind::kConstant: {
      std::shared_ptr<const TensorBytes> data;
      if (version_ >= 3) {
        uint64_t off;
        if (!TypeRef(&type) || !Var(&off) || !Var(&n)) return false;
        if (Status st = internal::CheckConstantType(type); !st.ok()) return Fail(st.message());
        if (n > data_size_ || off > data_size_ - n)
          return Fail("the constant's " + std::to_string(n) + " bytes at offset " +
                      std::to_string(off) + " run past the tensor data (" +
                      std::to_string(data_size_) + " bytes from byte " +
                      std::to_string(data_offset_) + ")");
        if (n && off % kTensorAlignment)
          return Fail("the constant's data offset " + std::to_string(off) +
                      " is not a multiple of 64");
        const char* at = data_ + off;
        // Borrowed in place when the memory is aligned as the file is
        // (a mapping is); else (or without a keepalive) copied.
        if (keepalive_ && n && reinterpret_cast<uintptr_t>(at) % kTensorAlignment == 0)
          data = std::make_shared<const TensorBytes>(at, n, keepalive_);
        else
          data = CopyTensorBytes({at, n});
      } else {
        if (!TypeRef(&type) || !Count(&n, "data byte")) return false;
        if (Status st = internal::CheckConstantType(type); !st.ok()) return Fail(st.message());
        data = CopyTensorBytes({reinterpret_cast<const char*>(p_), n});
        p_ += n;
      }
      auto c = ConstantNode::Make(std::move(type), std::move(data));
      if (!c.ok()) return Fail(c.status().message());
      Push(std::move(c).value());
      return true;
    }
    case NodeKind::kCall: {
      Expr callee;
      Attrs attrs;
      // call_args_ and call_sinfo_ are empty here: MakeUncheckedFrom
      // clears them, and a failed record ends the read.
      if (!NodeRef(id, &callee) || !Count(&n, "argument") || !NodeRefs(id, n, &call_args_) ||
          !Count(&n, "sinfo_args"))
        return false;
      call_sinfo_.reserve(n);
      for (uint64_t i = 0; i < n; ++i) {
        if (!TypeRef(&type)) return false;
        call_sinfo_.push_back(std::move(type));
      }
      if (!TypeRef(&type) || !AttrRef(&attrs)) return false;
      Push(CallNode::MakeUncheckedFrom(std::move(callee), call_args_, std::move(attrs), call_sinfo_,
                                       std::move(type)));
      return true;
    }
    case NodeKind::kIf: {
      Expr cond;
      SeqExpr then_body, else_body;
      if (!NodeRef(id, &cond) || !NodeRef(id, &then_body) || !NodeRef(id, &else_body) ||
          !TypeRef(&type))
        return false;
      Push(IfNode::MakeUnchecked(std::move(cond), std::move(then_body), std::move(else_body),
                                 std::move(type)));
      return true;
    }
    case NodeKind::kSeqExpr: {
      std::vector<Block> blocks;
      Expr result;
      // The blocks stay the table's too: Make merges adjacent ordinary
      // blocks and drops empty ones (a file written by PLIR has neither),
      // and a block it drops may be named again by a later record.
      if (!Count(&n, "block") || !NodeRefs<BindingBlockNode, false, false>(id, n, &blocks) ||
          !NodeRef(id, &result))
        return false;
      Push(SeqExprNode::Make(std::move(blocks), std::move(result)));
      return true;
    }
    case NodeKind::kVarBinding: {
      plir::Var var;
      Expr value;
      if (!NodeRef<VarNode, true>(id, &var) || !NodeRef(id, &value)) return false;
      Push(VarBindingNode::Make(std::move(var), std::move(value)));
      return true;
    }
    case NodeKind::kBindingBlock: {
      bool df = false;
      std::vector<Binding> bindings;
      if (!Flag(&df) || !Count(&n, "binding") || !NodeRefs(id, n, &bindings)) return false;
      Push(BindingBlockNode::Make(std::move(bindings), df));
      return true;
    }
    case NodeKind::kLocalFn: {
      std::vector<plir::Var> params;
      SeqExpr body;
      if (!Count(&n, "parameter") || !NodeRefs<VarNode, true>(id, n, &params) || !TypeRef(&type) ||
          !NodeRef(id, &body))
        return false;
      Push(LocalFnNode::Make(std::move(params), std::move(type), std::move(body)));
      return true;
    }
    default: {  // kFunction, kExternFunc
      std::vector<plir::Var> params;
      SeqExpr body;
      Attrs attrs;
      bool is_def = k == static_cast<uint8_t>(NodeKind::kFunction);
      if (!Str(&s) || !Count(&n, "parameter") || !NodeRefs<VarNode, true>(id, n, &params) ||
          !TypeRef(&type) || (is_def && !NodeRef(id, &body)) || !AttrRef(&attrs))
        return false;
      if (is_def)
        Push(FunctionNode::Make(std::string(s), std::move(params), std::move(type), std::move(body),
                                std::move(attrs)));
      else
        Push(ExternFuncNode::Make(std::string(s), std::move(params), std::move(type),
                                  std::move(attrs)));
      next_var_index_ = 0;  // the next item's variables
      return true;
    }
  }
}

}  // namespace plir::internal::binary
