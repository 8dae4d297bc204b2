#include "ir/node.h"

#include <vector>

#include "ir/expr.h"
#include "ir/op.h"
#include "ir/type.h"

namespace plir {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kTensorType:
      return "TensorType";
    case NodeKind::kTupleType:
      return "TupleType";
    case NodeKind::kObjectType:
      return "ObjectType";
    case NodeKind::kPrimType:
      return "PrimType";
    case NodeKind::kShapeType:
      return "ShapeType";
    case NodeKind::kVar:
      return "Var";
    case NodeKind::kGlobalVar:
      return "GlobalVar";
    case NodeKind::kOp:
      return "Op";
    case NodeKind::kTuple:
      return "Tuple";
    case NodeKind::kTupleGetItem:
      return "TupleGetItem";
    case NodeKind::kPrimValue:
      return "PrimValue";
    case NodeKind::kStringImm:
      return "StringImm";
    case NodeKind::kConstant:
      return "Constant";
    case NodeKind::kCall:
      return "Call";
    case NodeKind::kIf:
      return "If";
    case NodeKind::kSeqExpr:
      return "SeqExpr";
    case NodeKind::kVarBinding:
      return "VarBinding";
    case NodeKind::kBindingBlock:
      return "BindingBlock";
    case NodeKind::kFunction:
      return "Function";
    case NodeKind::kExternFunc:
      return "ExternFunc";
    case NodeKind::kShapeExpr:
      return "ShapeExpr";
    case NodeKind::kPrimExpr:
      return "PrimExpr";
    case NodeKind::kFuncType:
      return "FuncType";
    case NodeKind::kLocalFn:
      return "LocalFn";
  }
  return "?";
}

namespace {

template <typename T>
void DestroyAs(const Node* n) {
  const T* p = static_cast<const T*>(n);
  size_t size;
  if constexpr (requires { p->AllocSize(); }) {
    size = p->AllocSize();  // nodes with inline operand arrays
  } else {
    size = sizeof(T);
  }
  p->~T();
  internal::FreeNodeMemory(const_cast<T*>(p), size);
}

// Runs the destructor of `n`'s concrete class and frees its memory.
void DestroyNode(const Node* n) {
  switch (n->kind()) {
    case NodeKind::kTensorType:
      return DestroyAs<TensorTypeNode>(n);
    case NodeKind::kTupleType:
      return DestroyAs<TupleTypeNode>(n);
    case NodeKind::kObjectType:
      return DestroyAs<ObjectTypeNode>(n);
    case NodeKind::kPrimType:
      return DestroyAs<PrimTypeNode>(n);
    case NodeKind::kShapeType:
      return DestroyAs<ShapeTypeNode>(n);
    case NodeKind::kVar:
      return DestroyAs<VarNode>(n);
    case NodeKind::kGlobalVar:
      return DestroyAs<GlobalVarNode>(n);
    case NodeKind::kOp:
      return DestroyAs<OpNode>(n);
    case NodeKind::kTuple:
      return DestroyAs<TupleNode>(n);
    case NodeKind::kTupleGetItem:
      return DestroyAs<TupleGetItemNode>(n);
    case NodeKind::kPrimValue:
      return DestroyAs<PrimValueNode>(n);
    case NodeKind::kStringImm:
      return DestroyAs<StringImmNode>(n);
    case NodeKind::kConstant:
      return DestroyAs<ConstantNode>(n);
    case NodeKind::kCall:
      return DestroyAs<CallNode>(n);
    case NodeKind::kIf:
      return DestroyAs<IfNode>(n);
    case NodeKind::kSeqExpr:
      return DestroyAs<SeqExprNode>(n);
    case NodeKind::kVarBinding:
      return DestroyAs<VarBindingNode>(n);
    case NodeKind::kBindingBlock:
      return DestroyAs<BindingBlockNode>(n);
    case NodeKind::kFunction:
      return DestroyAs<FunctionNode>(n);
    case NodeKind::kExternFunc:
      return DestroyAs<ExternFuncNode>(n);
    case NodeKind::kShapeExpr:
      return DestroyAs<ShapeExprNode>(n);
    case NodeKind::kPrimExpr:
      return DestroyAs<PrimExprNode>(n);
    case NodeKind::kFuncType:
      return DestroyAs<FuncTypeNode>(n);
    case NodeKind::kLocalFn:
      return DestroyAs<LocalFnNode>(n);
  }
}

}  // namespace

// Destruction is deferred through a per-thread queue: while one node is being
// destroyed, the nodes whose last reference its destructor drops are queued
// instead of destroyed recursively, so the stack depth stays constant however
// deep the IR is. The queue lives on the stack of the outermost Destroy; the
// thread_local is a plain pointer, so it is usable during static destruction
// (modules held by statics are released after thread_locals are destroyed).
void Node::Destroy() const {
  thread_local std::vector<const Node*>* pending = nullptr;
  if (pending) {
    pending->push_back(this);
    return;
  }
  std::vector<const Node*> queue;
  pending = &queue;
  DestroyNode(this);
  while (!queue.empty()) {
    const Node* next = queue.back();
    queue.pop_back();
    DestroyNode(next);
  }
  pending = nullptr;
}

}  // namespace plir
