#include "ir/op.h"

#include <algorithm>
#include <cctype>
#include <mutex>

namespace plir {

const char* OpPatternName(OpPattern p) {
  switch (p) {
    case OpPattern::kElemWise:
      return "elemwise";
    case OpPattern::kBroadcast:
      return "broadcast";
    case OpPattern::kInjective:
      return "injective";
    case OpPattern::kCommReduce:
      return "comm_reduce";
    case OpPattern::kOutEWiseFusable:
      return "out_elemwise_fusable";
    case OpPattern::kTuple:
      return "tuple";
    case OpPattern::kOpaque:
      return "opaque";
  }
  return "opaque";
}

OpPattern OpPatternFromInt(int64_t v) {
  switch (v) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 7:
    case 8:
      return static_cast<OpPattern>(v);
    default:
      return OpPattern::kOpaque;
  }
}

const char* AttrKindName(AttrKind k) {
  switch (k) {
    case AttrKind::kInt:
      return "int";
    case AttrKind::kFloat:
      return "float";
    case AttrKind::kBool:
      return "bool";
    case AttrKind::kString:
      return "string";
    case AttrKind::kIntList:
      return "list of ints";
    case AttrKind::kFloatList:
      return "list of floats";
    case AttrKind::kType:
      return "type";
    case AttrKind::kStringList:
      return "list of strings";
    case AttrKind::kMap:
      return "map";
    case AttrKind::kAny:
      return "any";
  }
  return "?";
}

// Ops live as long as the registry (the process): immortal, so that calls
// built on many threads do not contend on one reference count.
OpNode::OpNode(OpDef def) : ExprNode(kKind, ObjectTypeNode::Get()), def_(std::move(def)) {
  MakeImmortal();
}

const AttrSpec* OpNode::FindAttr(std::string_view key) const {
  for (const AttrSpec& s : def_.attrs)
    if (s.name == key) return &s;
  return nullptr;
}

Status OpRegistry::Validate(const OpDef& def) {
  if (def.name.empty()) return InvalidArgument("op name is empty");
  if (!def.infer) return InvalidArgument("op '" + def.name + "' has no type inference function");
  if (def.max_args >= 0 && def.max_args < def.min_args)
    return InvalidArgument("op '" + def.name + "' has max_args < min_args");
  return Status::Ok();
}

Status OpRegistry::Register(OpDef def) {
  PLIR_RETURN_IF_ERROR(Validate(def));
  auto taken_message = [&](const Op& taken) {
    return AlreadyExists("op '" + def.name + "' registered by " + def.origin +
                         " is already registered by " + taken->def().origin);
  };
  // Checked before the node is made: an op node is immortal, so one made
  // for a taken name would never be freed. (Plugins register one at a time;
  // Insert still refuses the name if two raced here.)
  if (Op taken = ops_.Lookup(def.name)) return taken_message(taken);
  std::string name = def.name;
  std::string origin = def.origin;
  Op op(new (internal::NodeMemory<OpNode>()) OpNode(std::move(def)));
  if (Op taken = ops_.Insert(name, op))
    return AlreadyExists("op '" + name + "' registered by " + origin +
                         " is already registered by " + taken->def().origin);
  return Status::Ok();
}

Op OpRegistry::Lookup(std::string_view name) const { return ops_.Lookup(name); }

std::vector<std::string> OpRegistry::Names() const { return ops_.Names(); }

namespace {
// Checks `v` against `spec`, coercing ints to floats where floats are wanted.
StatusOr<AttrValue> CheckAttr(const std::string& op, const AttrSpec& spec, const AttrValue& v) {
  using K = AttrValue::Kind;
  auto bad = [&]() {
    std::string got;
    v.AppendTo(&got);
    return InvalidArgument("attribute '" + spec.name + "' of " + op + " must be " +
                           AttrKindName(spec.kind) + ", got " + got);
  };
  switch (spec.kind) {
    case AttrKind::kAny:
      return v;
    case AttrKind::kInt:
      if (v.kind() != K::kInt) return bad();
      return v;
    case AttrKind::kBool:
      if (v.kind() != K::kBool) return bad();
      return v;
    case AttrKind::kString:
      if (v.kind() != K::kString) return bad();
      return v;
    case AttrKind::kType:
      if (v.kind() != K::kType) return bad();
      return v;
    case AttrKind::kFloat:
      if (v.kind() == K::kInt) return AttrValue::Float(static_cast<double>(v.as_int()));
      if (v.kind() != K::kFloat) return bad();
      return v;
    case AttrKind::kIntList:
      if (v.kind() != K::kList) return bad();
      for (const AttrValue& e : v.as_list())
        if (e.kind() != K::kInt) return bad();
      return v;
    case AttrKind::kFloatList: {
      if (v.kind() != K::kList) return bad();
      std::vector<AttrValue> items;
      for (const AttrValue& e : v.as_list()) {
        if (e.kind() == K::kInt)
          items.push_back(AttrValue::Float(static_cast<double>(e.as_int())));
        else if (e.kind() == K::kFloat)
          items.push_back(e);
        else
          return bad();
      }
      return AttrValue::List(std::move(items));
    }
    case AttrKind::kStringList:
      if (v.kind() != K::kList) return bad();
      for (const AttrValue& e : v.as_list())
        if (e.kind() != K::kString) return bad();
      return v;
    case AttrKind::kMap:
      if (v.kind() != K::kMap) return bad();
      return v;
  }
  return bad();
}
}  // namespace

namespace {

// Checks arity and attributes of a call of `op`; on success `*attrs` holds
// the validated (possibly normalized) attributes and the inferred type is
// returned. Shared by MakeOpCall and InferOpCallType.
StatusOr<Type> CheckOpCall(const Op& op, ExprSpan args, Attrs* attrs, TypeSpan sinfo_args) {
  const OpDef& def = op->def();
  int n = static_cast<int>(args.size());
  if (n < def.min_args || (def.max_args >= 0 && n > def.max_args)) {
    std::string want = def.max_args < 0 ? "at least " + std::to_string(def.min_args)
                       : def.min_args == def.max_args
                           ? std::to_string(def.min_args)
                           : std::to_string(def.min_args) + " to " + std::to_string(def.max_args);
    return InvalidArgument(def.name + " takes " + want + " argument" + (want == "1" ? "" : "s") +
                           ", got " + std::to_string(n));
  }
  if (!attrs->empty()) {
    std::vector<Attrs::Entry> checked;
    bool changed = false;
    for (const auto& [key, value] : attrs->entries()) {
      const AttrSpec* spec = op->FindAttr(key.str());
      if (!spec) {
        std::vector<std::string> known;
        for (const AttrSpec& s : def.attrs) known.push_back(s.name);
        std::string msg = def.name + " has no attribute '" + key.str() + "'";
        auto close = ClosestNames(key.str(), known, 1);
        if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
        return InvalidArgument(msg);
      }
      PLIR_ASSIGN_OR_RETURN(AttrValue v, CheckAttr(def.name, *spec, value));
      if (v.kind() != value.kind() || (v.kind() == AttrValue::Kind::kList && !v.Equals(value)))
        changed = true;
      checked.emplace_back(key, std::move(v));
    }
    if (changed) {
      PLIR_ASSIGN_OR_RETURN(*attrs, Attrs::Make(std::move(checked)));
    }
  }
  for (const AttrSpec& s : def.attrs)
    if (s.required && !attrs->Get(s.name))
      return InvalidArgument(def.name + " requires attribute '" + s.name + "'");
  return def.infer(args, *attrs, sinfo_args);
}

}  // namespace

StatusOr<Expr> MakeOpCall(const Op& op, std::vector<Expr> args, Attrs attrs,
                          std::vector<Type> sinfo_args) {
  return MakeOpCallFrom(op, args, std::move(attrs), sinfo_args);
}

StatusOr<Expr> MakeOpCallFrom(const Op& op, std::vector<Expr>& args, Attrs attrs,
                              std::vector<Type>& sinfo_args) {
  StatusOr<Type> type = CheckOpCall(op, args, &attrs, sinfo_args);
  if (!type.ok()) return type.status();
  Ref<CallNode> call =
      CallNode::MakeUncheckedFrom(op, args, std::move(attrs), sinfo_args, std::move(type).value());
  call->spare() |= 1;  // type_inferred(): set while this is the only handle
  return Expr(std::move(call));
}

StatusOr<Type> InferOpCallType(const Op& op, ExprSpan args, const Attrs& attrs,
                               TypeSpan sinfo_args) {
  Attrs checked = attrs;
  return CheckOpCall(op, args, &checked, sinfo_args);
}

StatusOr<Expr> MakeOpCall(const Op& op, ExprSpan args, Attrs attrs, TypeSpan sinfo_args) {
  return MakeOpCall(op, ToVector(args), std::move(attrs), ToVector(sinfo_args));
}

Expr RebuildCall(const CallNode& old, Expr callee, std::vector<Expr> args) {
  if (callee->kind() == NodeKind::kOp) {
    auto made = MakeOpCall(Downcast<OpNode>(callee), args, old.attrs(), ToVector(old.sinfo_args()));
    if (made.ok()) return *made;
  }
  return CallNode::MakeUnchecked(std::move(callee), std::move(args), old.attrs(),
                                 ToVector(old.sinfo_args()), old.type());
}

Expr MakeGlobalCall(GlobalVar callee, std::vector<Expr> args, Type ret_type,
                    std::vector<Type> sinfo_args) {
  return CallNode::MakeUnchecked(std::move(callee), std::move(args), Attrs(), std::move(sinfo_args),
                                 std::move(ret_type));
}

StatusOr<Expr> MakeValueCall(Expr callee, std::vector<Expr> args) {
  auto* ft = As<FuncTypeNode>(callee->type());
  if (!ft)
    return InvalidArgument("cannot call a value of type " + TypeToString(callee->type()) +
                           " (only Callable values are called)");
  if (ft->params().size() != args.size())
    return InvalidArgument("the callee of type " + TypeToString(callee->type()) + " takes " +
                           std::to_string(ft->params().size()) + " argument(s), got " +
                           std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (!TypeCompatible(args[i]->type(), ft->params()[i]))
      return InvalidArgument("argument " + std::to_string(i) + " has type " +
                             TypeToString(args[i]->type()) + ", the parameter expects " +
                             TypeToString(ft->params()[i]));
  Type ret = ft->ret();
  return Expr(
      CallNode::MakeUnchecked(std::move(callee), std::move(args), Attrs(), {}, std::move(ret)));
}

namespace {

std::string Signature(const OpDef& d) {
  std::string s = d.name + "(";
  int shown = d.max_args < 0 ? d.min_args : d.max_args;
  for (int i = 0; i < shown; ++i) {
    if (i) s += ", ";
    if (i >= d.min_args) s += "[";
    s += "x" + std::to_string(i);
    if (i >= d.min_args) s += "]";
  }
  if (d.max_args < 0) s += shown ? ", ..." : "...";
  return s + ")";
}

std::string AttrDoc(const AttrSpec& a) {
  std::string s = a.name + ": " + AttrKindName(a.kind);
  if (a.required) {
    s += " (required)";
  } else if (a.default_value) {
    s += " = ";
    a.default_value->AppendTo(&s);
  }
  return s;
}

}  // namespace

std::string RenderOpDocs(const OpRegistry& registry, OpDocFormat format) {
  std::string out;
  if (format == OpDocFormat::kMarkdown) {
    out +=
        "# Ops\n\n"
        "<!-- Generated by `bazel run //tools:gen_ops_doc`; do not edit. -->\n\n"
        "Every op the registry holds: its signature (`[xN]`: optional operand, `...`: "
        "variadic), attributes (kind, then `(required)` or the default), pattern kind "
        "(TVM's TOpPattern, read by FuseOps), and whether it is pure.\n\n"
        "| Op | Signature | Attributes | Pattern | Pure | Description |\n"
        "|----|-----------|------------|---------|------|-------------|\n";
  }
  for (const std::string& name : registry.Names()) {
    Op op = registry.Lookup(name);
    const OpDef& d = op->def();
    std::string attrs;
    for (const AttrSpec& a : d.attrs) {
      if (!attrs.empty()) attrs += format == OpDocFormat::kMarkdown ? "<br>" : "\n    ";
      attrs += format == OpDocFormat::kMarkdown ? "`" + AttrDoc(a) + "`" : AttrDoc(a);
    }
    std::string origin = d.origin == "core" ? "" : " [" + d.origin + "]";
    if (format == OpDocFormat::kMarkdown) {
      std::string desc = d.description;
      for (char& c : desc)
        if (c == '|' || c == '\n') c = ' ';
      out += "| `" + d.name + "` | `" + Signature(d) + "` | " + (attrs.empty() ? "-" : attrs) +
             " | " + OpPatternName(d.pattern) + " | " + (d.pure ? "yes" : "no") + " | " + desc +
             origin + " |\n";
    } else {
      out += Signature(d) + "  pattern=" + OpPatternName(d.pattern) + (d.pure ? "" : " impure") +
             origin + "  " + d.description + "\n";
      if (!attrs.empty()) out += "    " + attrs + "\n";
    }
  }
  return out;
}

}  // namespace plir
