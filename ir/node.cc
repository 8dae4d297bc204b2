#include "ir/node.h"

#include <vector>

namespace plir {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kTensorType: return "TensorType";
    case NodeKind::kTupleType: return "TupleType";
    case NodeKind::kObjectType: return "ObjectType";
    case NodeKind::kPrimType: return "PrimType";
    case NodeKind::kShapeType: return "ShapeType";
    case NodeKind::kVar: return "Var";
    case NodeKind::kGlobalVar: return "GlobalVar";
    case NodeKind::kOp: return "Op";
    case NodeKind::kTuple: return "Tuple";
    case NodeKind::kTupleGetItem: return "TupleGetItem";
    case NodeKind::kPrimValue: return "PrimValue";
    case NodeKind::kStringImm: return "StringImm";
    case NodeKind::kConstant: return "Constant";
    case NodeKind::kCall: return "Call";
    case NodeKind::kIf: return "If";
    case NodeKind::kSeqExpr: return "SeqExpr";
    case NodeKind::kVarBinding: return "VarBinding";
    case NodeKind::kBindingBlock: return "BindingBlock";
    case NodeKind::kFunction: return "Function";
    case NodeKind::kExternFunc: return "ExternFunc";
  }
  return "?";
}

// Destruction is deferred through a per-thread queue: while one node is being
// deleted, the nodes whose last reference its destructor drops are queued
// instead of deleted recursively, so the stack depth stays constant however
// deep the IR is. The queue lives on the stack of the outermost DecRef; the
// thread_local is a plain pointer, so it is usable during static destruction
// (modules held by statics are released after thread_locals are destroyed).
void Node::DecRef() const {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  thread_local std::vector<const Node*>* pending = nullptr;
  if (pending) {
    pending->push_back(this);
    return;
  }
  std::vector<const Node*> queue;
  pending = &queue;
  delete this;
  while (!queue.empty()) {
    const Node* next = queue.back();
    queue.pop_back();
    delete next;
  }
  pending = nullptr;
}

}  // namespace plir
