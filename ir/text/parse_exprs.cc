// Expressions: primaries, global references and calls, op calls, if,
// local functions, constants.
#include "ir/text/parser_impl.h"

namespace plir::text_internal {

Expr TextParser::ParseExpr(int depth) {
  CheckDepth(depth);
  Expr e = ParsePrimary(depth);
  while (Is(Tok::kDot)) {
    Advance();
    if (!Is(Tok::kInt)) FailExpected("a tuple index after '.'");
    Loc loc = Here();
    int64_t index = ParseInt64(c_.cur);
    Advance();
    auto r = TupleGetItemNode::Make(e, index);
    if (!r.ok()) Fail(r.status().message(), loc);
    e = *r;
  }
  return e;
}

int64_t TextParser::ParseInt64(const Token& t) {
  int64_t v = 0;
  auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
    Fail("integer " + std::string(t.text) + " does not fit in int64", LocOf(t));
  return v;
}

double TextParser::ParseDouble(const Token& t) {
  if (t.text == "inf") return INFINITY;
  if (t.text == "-inf") return -INFINITY;
  if (t.text == "nan") return NAN;
  double v = 0;
  auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (r.ec == std::errc::result_out_of_range)
    Fail("float " + std::string(t.text) + " is out of range", LocOf(t));
  if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
    Fail("malformed float " + std::string(t.text), LocOf(t));
  return v;
}

Expr TextParser::ParsePrimary(int depth) {
  const Token& t = c_.cur;
  switch (t.kind) {
    case Tok::kLocal: {
      Token name = t;
      Var v = LookupLocal(t);
      Advance();
      if (!Is(Tok::kLParen)) return v;
      // A call of a function value: `%f(args)`.
      CallArgs args = ParseCallArgs(depth);
      if (!args.attrs.empty() || !args.sinfo.empty())
        Fail("a call of a function value takes no attributes or sinfo_args",
             args.attrs.empty() ? LocOf(name) : args.first_attr);
      auto call = MakeValueCall(v, std::move(args.args));
      if (!call.ok()) Fail(call.status().message(), LocOf(name));
      return *call;
    }
    case Tok::kGlobal:
      return ParseGlobalRef(depth);
    case Tok::kLParen: {
      Advance();
      if (Accept(Tok::kRParen)) return TupleNode::Make({});
      Expr first = ParseExpr(depth + 1);
      if (Accept(Tok::kRParen)) return first;  // grouping
      std::vector<Expr> fields{first};
      while (Accept(Tok::kComma)) {
        if (Is(Tok::kRParen)) break;
        fields.push_back(ParseExpr(depth + 1));
      }
      Expect(Tok::kRParen, "',' or ')' in the tuple");
      return TupleNode::Make(std::move(fields));
    }
    case Tok::kInt: {
      int64_t v = ParseInt64(t);
      Advance();
      return PrimValueNode::Int(v);
    }
    case Tok::kFloat: {
      double v = ParseDouble(t);
      Advance();
      return PrimValueNode::Float(v);
    }
    case Tok::kString: {
      Expr e = StringImmNode::Make(std::string(t.value));
      Advance();
      return e;
    }
    case Tok::kIdent: {
      if (t.text == "true" || t.text == "false") {
        bool b = t.text == "true";
        Advance();
        return PrimValueNode::Bool(b);
      }
      Tok next = PeekNext().kind;
      if (t.text == "const" && next == Tok::kLAngle) return ParseConstant();
      if (t.text == "if" && next == Tok::kLParen) return ParseIf(depth);
      if (t.text == "prim" && next == Tok::kLBracket) {
        // `prim[n + 1]`: a symbolic int64 value (Relax's R.prim_value(n + 1)).
        Advance();
        Advance();  // '['
        Dim d = ParseDimSum(0);
        Expect(Tok::kRBracket, "']' to close the value");
        return PrimExprNode::Make(d);
      }
      if (t.text == "shape" && next == Tok::kLBracket) {
        // `shape[(2, n)]`: a shape value (Relax's R.shape([2, n])).
        Advance();
        Advance();  // '['
        std::vector<Dim> dims = ParseDims();
        Expect(Tok::kRBracket, "']' to close the shape value");
        return ShapeExprNode::Make(std::move(dims));
      }
      if (t.text == "fn" && next == Tok::kLParen) return ParseLocalFn(depth);
      if (next == Tok::kLParen) return ParseOpCall(depth);
      if (IsFloatWord()) {
        double v = ParseDouble(t);
        Advance();
        return PrimValueNode::Float(v);
      }
      Fail(
          "expected an expression, found " + internal::DescribeToken(t) + " (an op call needs '(')",
          Here());
    }
    default:
      FailExpected("an expression");
  }
}

ItemInfo& TextParser::GlobalInfo(const Token& t) {
  std::string name(t.text);
  auto it = item_index_.find(name);
  if (it == item_index_.end()) {
    std::vector<std::string> names;
    for (auto& i : items_) names.push_back(i->name);
    std::string msg = "unknown global @" + name;
    auto close = ClosestNames(name, names, 1);
    if (!close.empty()) msg += "; did you mean @" + close[0] + "?";
    Fail(msg, LocOf(t));
  }
  return *items_[it->second];
}

Expr TextParser::ParseGlobalRef(int depth) {
  Token t = c_.cur;
  ItemInfo& info = GlobalInfo(t);
  GlobalVar gv = GlobalVarNode::Make(info.name);
  Advance();
  if (!Is(Tok::kLParen)) return gv;
  if (!info.is_def)
    Fail("@" + info.name + " is an extern kernel; call it through call_tir", LocOf(t));
  Loc open = Here();
  CallArgs args = ParseCallArgs(depth);
  if (!args.attrs.empty())
    Fail("a call of a module function takes no attributes (only sinfo_args)", args.first_attr);
  if (args.args.size() != info.params.size())
    Fail("@" + info.name + " takes " + std::to_string(info.params.size()) + " argument(s), got " +
             std::to_string(args.args.size()),
         open);
  for (size_t i = 0; i < args.args.size(); ++i)
    if (!TypeCompatible(args.args[i]->type(), info.params[i]->type()))
      Fail("argument " + std::to_string(i) + " of @" + info.name + " has type " +
               TypeToString(args.args[i]->type()) + ", the parameter expects " +
               TypeToString(info.params[i]->type()),
           args.arg_locs[i]);
  if (!info.ret) {
    if (info.state == ItemInfo::kParsing)
      Fail("cannot infer the return type of @" + info.name +
               ", which is called before its body is complete; write '-> Type' on it",
           LocOf(t));
    ParseItemBody(info);
  }
  return MakeGlobalCall(gv, std::move(args.args), info.ret, std::move(args.sinfo));
}

void TextParser::ParseCallArgsInto(int depth, CallArgs& out) {
  Expect(Tok::kLParen, "'('");
  out.args.clear();
  out.arg_locs.clear();
  out.attrs.clear();
  out.sinfo.clear();
  out.first_attr = Loc();
  std::unordered_map<std::string, Loc> seen;
  bool keywords = false;
  bool have_sinfo = false;
  if (!Is(Tok::kRParen)) {
    while (true) {
      if (Is(Tok::kIdent) && PeekNext().kind == Tok::kEq) {
        std::string key(c_.cur.text);
        Loc loc = Here();
        if (seen.count(key)) Fail("attribute '" + key + "' given twice", loc);
        seen.emplace(key, loc);
        Advance();
        Advance();  // '='
        keywords = true;
        if (key == "sinfo_args") {
          have_sinfo = true;
          Expect(Tok::kLBracket, "'[' and a list of types for sinfo_args");
          if (!Is(Tok::kRBracket)) {
            while (true) {
              out.sinfo.push_back(ParseTypeAt(depth + 1));
              if (Accept(Tok::kComma)) continue;
              break;
            }
          }
          Expect(Tok::kRBracket, "',' or ']' in sinfo_args");
        } else {
          if (out.attrs.empty()) out.first_attr = loc;
          out.attrs.emplace_back(Symbol(key), ParseAttrValue());
        }
      } else {
        if (keywords) Fail("positional argument after keyword arguments", Here());
        out.arg_locs.push_back(Here());
        out.args.push_back(ParseExpr(depth + 1));
      }
      if (Accept(Tok::kComma)) continue;
      break;
    }
  }
  (void)have_sinfo;
  Expect(Tok::kRParen, "',' or ')' in the argument list");
}

Expr TextParser::ParseOpCall(int depth) {
  Token t = c_.cur;
  std::string name(t.text);
  Op op;
  if (auto it = op_cache_.find(name); it != op_cache_.end()) {
    op = it->second;
  } else {
    op = OpRegistry::Global().Lookup(name);
    if (op) op_cache_.emplace(name, op);
  }
  if (!op) {
    std::string msg = "unknown op '" + name + "'";
    auto close = ClosestNames(name, OpRegistry::Global().Names(), 1);
    if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
    Fail(msg, LocOf(t));
  }
  Advance();
  ScratchCallArgs scratch(*this);
  CallArgs& args = scratch.args;
  ParseCallArgsInto(depth, args);
  if (name == "call_tir" && !args.args.empty()) {
    if (auto* g = As<GlobalVarNode>(args.args[0])) {
      ItemInfo& info = *items_[item_index_.at(g->name())];
      if (info.is_def)
        Fail("call_tir needs an extern kernel, but @" + g->name() + " is a function",
             args.arg_locs[0]);
    }
  }
  Attrs attrs;  // most calls have none: no Attrs::Make, and the scratch list keeps its capacity
  if (!args.attrs.empty()) {
    auto made = Attrs::Make(std::move(args.attrs));
    if (!made.ok()) Fail(made.status().message(), LocOf(t));
    attrs = std::move(*made);
  }
  auto call = MakeOpCallFrom(op, args.args, std::move(attrs), args.sinfo);
  if (!call.ok()) Fail(call.status().message(), LocOf(t));
  return *call;
}

Expr TextParser::ParseIf(int depth) {
  Loc loc = Here();
  Advance();  // if
  Expect(Tok::kLParen, "'(' after 'if'");
  Expr cond = ParseExpr(depth + 1);
  Expect(Tok::kRParen, "')' after the condition");
  if (!Is(Tok::kLBrace)) FailExpected("'{' to start the then branch");
  SeqExpr then_body = ParseBody(depth + 1);
  ExpectIdent("else");
  if (!Is(Tok::kLBrace)) FailExpected("'{' to start the else branch");
  SeqExpr else_body = ParseBody(depth + 1);
  auto r = IfNode::Make(cond, then_body, else_body);
  if (!r.ok()) Fail(r.status().message(), loc);
  return *r;
}

Expr TextParser::ParseLocalFn(int depth) {
  Loc loc = Here();
  Advance();  // fn
  Expect(Tok::kLParen, "'(' after 'fn'");
  // The parameters are visible in the body only.
  ctx_->scope_marks.push_back(ctx_->scope_names.size());
  std::vector<Var> params;
  if (!Is(Tok::kRParen)) {
    while (true) {
      if (!Is(Tok::kLocal)) FailExpected("a parameter '%name: Type'");
      NameHint name(c_.cur.text);
      Loc ploc = Here();
      CheckNotVisible(name, ploc);
      Advance();
      Expect(Tok::kColon, "':' and the parameter's type");
      Type t = ParseTypeAt(depth + 1);
      Var p = VarNode::Make(name, t, false, ctx_->next_index++);
      Define(p, name, ploc);
      params.push_back(p);
      if (Accept(Tok::kComma)) continue;
      break;
    }
  }
  Expect(Tok::kRParen, "',' or ')' after the parameters");
  Type declared;
  if (Accept(Tok::kArrow)) declared = ParseTypeAt(depth + 1);
  if (!Is(Tok::kLBrace)) FailExpected("'{' to start the local function's body");
  Loc body_loc = Here();
  SeqExpr body = ParseBody(depth + 1);
  if (declared && !TypeCompatible(declared, body->type()))
    Fail("the local function returns " + TypeToString(body->type()) +
             ", which does not match its declared return type " + TypeToString(declared),
         body_loc);
  for (size_t i = ctx_->scope_marks.back(); i < ctx_->scope_names.size(); ++i) {
    LocalName* n = ctx_->names.Find(ctx_->scope_names[i]);
    if (n && n->state == LocalName::kVisible) n->state = LocalName::kOutOfScope;
  }
  ctx_->scope_names.resize(ctx_->scope_marks.back());
  ctx_->scope_marks.pop_back();
  (void)loc;
  return LocalFnNode::Make(std::move(params), declared, std::move(body));
}

Expr TextParser::ParseConstant() {
  Loc loc = Here();
  Advance();  // const
  Expect(Tok::kLAngle, "'<'");
  Loc type_loc = Here();
  Type type = ParseTypeAt(1);
  Expect(Tok::kRAngle, "'>' after the constant's type");
  auto* tt = As<TensorTypeNode>(type);
  if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
    Fail(
        "a constant needs a tensor type with a static shape and a dtype, not " + TypeToString(type),
        type_loc);
  // Reject sizes that cannot be real before allocating anything.
  uint64_t count = 1;
  for (const Dim& d : tt->shape()) {
    if (d.value < 0) Fail("negative dimension in a constant's type", type_loc);
    if (d.value != 0 && count > (uint64_t{1} << 40) / static_cast<uint64_t>(d.value))
      Fail("constant of type " + TypeToString(type) + " is too large", type_loc);
    count *= static_cast<uint64_t>(d.value);
  }
  DataType dt = tt->dtype();
  size_t size = static_cast<size_t>(DataTypeSize(dt));
  auto data = std::make_unique<std::string>();
  if (Is(Tok::kHexString)) {
    if (c_.cur.value.size() != count * size)
      Fail("the hex payload has " + std::to_string(c_.cur.value.size()) + " bytes; " +
               TypeToString(type) + " needs " + std::to_string(count * size),
           Here());
    data->assign(c_.cur.value);
    Advance();
  } else {
    Expect(Tok::kLBracket, "'[' and the elements, or a hex payload x\"...\"");
    if (count * size <= src_.size() * 8 + 64) data->reserve(count * size);
    uint64_t n = 0;
    if (!Is(Tok::kRBracket)) {
      while (true) {
        if (n == count)
          Fail(TypeToString(type) + " has " + std::to_string(count) + " elements; found more",
               Here());
        AppendElement(dt, data.get());
        ++n;
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    if (!Is(Tok::kRBracket)) FailExpected("',' or ']' in the constant's elements");
    if (n != count)
      Fail(TypeToString(type) + " has " + std::to_string(count) + " elements; found " +
               std::to_string(n),
           Here());
    Advance();
  }
  auto c = ConstantNode::Make(type, std::make_shared<const TensorBytes>(std::move(*data)));
  if (!c.ok()) Fail(c.status().message(), loc);
  return *c;
}

template <typename T>
void TextParser::PutRaw(T v, std::string* out) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out->append(buf, sizeof(T));
}

void TextParser::AppendElement(DataType dt, std::string* out) {
  const Token& t = c_.cur;
  Loc loc = Here();
  auto range_error = [&]() {
    Fail("element " + std::string(t.text) + " does not fit in " + std::string(DataTypeName(dt)),
         loc);
  };
  if (dt == DataType::kBool) {
    if (IsIdent("true") || IsIdent("false")) {
      out->push_back(IsIdent("true") ? 1 : 0);
    } else if (Is(Tok::kInt) && (t.text == "0" || t.text == "1")) {
      out->push_back(t.text == "1" ? 1 : 0);
    } else {
      FailExpected("a bool element (true or false)");
    }
    Advance();
    return;
  }
  if (IsFloat(dt)) {
    if (!Is(Tok::kInt) && !Is(Tok::kFloat) && !IsFloatWord()) FailExpected("a numeric element");
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    if (dt == DataType::kFloat64) {
      PutRaw(ParseDouble(t), out);
    } else {
      float f;
      if (t.text == "inf" || t.text == "-inf" || t.text == "nan") {
        f = static_cast<float>(ParseDouble(t));
      } else {
        auto r = std::from_chars(b, e, f);
        if (r.ec == std::errc::result_out_of_range) range_error();
        if (r.ec != std::errc() || r.ptr != e) Fail("malformed number " + std::string(t.text), loc);
      }
      if (dt == DataType::kFloat32)
        PutRaw(f, out);
      else if (dt == DataType::kFloat16)
        PutRaw(FloatToHalf(f), out);
      else
        PutRaw(FloatToBFloat16(f), out);
    }
    Advance();
    return;
  }
  if (!Is(Tok::kInt))
    FailExpected(std::string("an integer element of ") + std::string(DataTypeName(dt)));
  const char* b = t.text.data();
  const char* e = b + t.text.size();
  auto parse = [&](auto& v) {
    auto r = std::from_chars(b, e, v);
    if (r.ec != std::errc() || r.ptr != e) range_error();
  };
  switch (dt) {
    case DataType::kInt8: {
      int8_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kInt16: {
      int16_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kInt32: {
      int32_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kInt64: {
      int64_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kUInt8: {
      uint8_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kUInt16: {
      uint16_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kUInt32: {
      uint32_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    case DataType::kUInt64: {
      uint64_t v = 0;
      parse(v);
      PutRaw(v, out);
      break;
    }
    default:
      range_error();
  }
  Advance();
}

}  // namespace plir::text_internal
