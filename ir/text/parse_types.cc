// Types and dimension expressions.
#include "ir/text/parser_impl.h"

namespace plir::text_internal {

Dim TextParser::ParseDimSum(int depth) {
  if (depth == 0) dim_terms_ = 0;
  Dim d = ParseDimProduct(depth);
  while (true) {
    if (Accept(Tok::kPlus)) {
      d = DimAdd(d, ParseDimProduct(depth));
    } else if (Accept(Tok::kMinus)) {
      d = DimSub(d, ParseDimProduct(depth));
    } else if (Is(Tok::kInt) && c_.cur.text.starts_with("-")) {  // `n -1`: lexed as -1
      int64_t v = ParseInt64(c_.cur);
      if (v == INT64_MIN) Fail("integer " + std::string(c_.cur.text) + " is out of range", Here());
      Advance();
      d = DimSub(d, Dim::Const(-v));
    } else {
      return d;
    }
  }
}

Dim TextParser::ParseDimProduct(int depth) {
  Dim d = ParseDimAtom(depth);
  while (Accept(Tok::kStar)) d = DimMul(d, ParseDimAtom(depth));
  return d;
}

Dim TextParser::ParseDimAtom(int depth) {
  if (depth > 64) Fail("dimension expression nested too deeply", Here());
  if (++dim_terms_ > (kMaxDimTerms + 1) / 2)
    Fail("dimension expression with more than " + std::to_string((kMaxDimTerms + 1) / 2) +
             " operands",
         Here());
  if (Is(Tok::kInt)) {
    int64_t v = ParseInt64(c_.cur);
    if (v < 0) Fail("negative dimension " + std::to_string(v), Here());
    Advance();
    return Dim::Const(v);
  }
  if (Is(Tok::kIdent) && c_.cur.text.find('.') == std::string_view::npos) {
    Dim d = Dim::Sym(Symbol(c_.cur.text));
    Advance();
    return d;
  }
  if (Accept(Tok::kLParen)) {
    Dim d = ParseDimSum(depth + 1);
    Expect(Tok::kRParen, "')' in the dimension expression");
    return d;
  }
  FailExpected("a dimension (an integer, a name or an expression)");
}

std::vector<Dim> TextParser::ParseDims() {
  Expect(Tok::kLParen, "'(' to start the shape");
  std::vector<Dim> dims;
  if (!Is(Tok::kRParen)) {
    while (true) {
      dims.push_back(ParseDimSum(0));
      if (Accept(Tok::kComma)) {
        if (Is(Tok::kRParen)) break;
        continue;
      }
      break;
    }
  }
  Expect(Tok::kRParen, "',' or ')' in the shape");
  return dims;
}

DataType TextParser::ParseDTypeName() {
  if (!Is(Tok::kIdent)) FailExpected("a dtype (float32, int64, ...)");
  auto dt = ParseDataType(c_.cur.text);
  if (!dt) {
    std::vector<std::string> names;
    for (int i = 1; i <= static_cast<int>(DataType::kFloat64); ++i)
      names.emplace_back(DataTypeName(static_cast<DataType>(i)));
    std::string msg = "unknown dtype '" + std::string(c_.cur.text) + "'";
    auto close = ClosestNames(c_.cur.text, names, 1);
    if (!close.empty()) msg += "; did you mean '" + close[0] + "'?";
    Fail(msg, Here());
  }
  Advance();
  return *dt;
}

int TextParser::ParseNdim() {
  ExpectIdent("ndim");
  Expect(Tok::kEq, "'=' after ndim");
  if (!Is(Tok::kInt)) FailExpected("the rank (an integer)");
  int64_t v = ParseInt64(c_.cur);
  if (v < 0 || v > 1 << 20) Fail("invalid rank " + std::to_string(v), Here());
  Advance();
  return static_cast<int>(v);
}

Type TextParser::ParseTypeAt(int depth) {
  CheckDepth(depth);
  if (Is(Tok::kLParen)) {
    Advance();
    if (Accept(Tok::kRParen)) return TupleTypeNode::Make({});
    Type first = ParseTypeAt(depth + 1);
    if (Accept(Tok::kRParen)) return first;  // grouping; one-tuples need a comma
    std::vector<Type> fields{first};
    while (Accept(Tok::kComma)) {
      if (Is(Tok::kRParen)) break;
      fields.push_back(ParseTypeAt(depth + 1));
    }
    Expect(Tok::kRParen, "',' or ')' in the tuple type");
    return TupleTypeNode::Make(std::move(fields));
  }
  if (!Is(Tok::kIdent)) FailExpected("a type");
  if (IsIdent("Object")) {
    Advance();
    return ObjectTypeNode::Get();
  }
  if (IsIdent("Prim")) {
    Advance();
    Expect(Tok::kLBracket, "'[' after Prim");
    DataType dt = ParseDTypeName();
    if (Accept(Tok::kComma)) {  // Prim[int64, value=n]
      ExpectIdent("value");
      Expect(Tok::kEq, "'=' after value");
      Dim v = ParseDimSum(0);
      Expect(Tok::kRBracket, "']'");
      return PrimTypeNode::MakeValue(dt, v);
    }
    Expect(Tok::kRBracket, "']'");
    return PrimTypeNode::Make(dt);
  }
  if (IsIdent("Callable")) {
    // Callable[(T1, T2), R] or Callable[(T1, T2), R, pure=false]
    Advance();
    Expect(Tok::kLBracket, "'[' after Callable");
    Expect(Tok::kLParen, "'(' and the parameter types of the Callable");
    std::vector<Type> params;
    if (!Is(Tok::kRParen)) {
      while (true) {
        params.push_back(ParseTypeAt(depth + 1));
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    Expect(Tok::kRParen, "',' or ')' in the Callable's parameter types");
    Expect(Tok::kComma, "',' and the Callable's return type");
    Type ret = ParseTypeAt(depth + 1);
    bool pure = true;
    if (Accept(Tok::kComma)) {
      if (!IsIdent("pure")) FailExpected("'pure=true' or 'pure=false'");
      Advance();
      Expect(Tok::kEq, "'=' after pure");
      if (IsIdent("true"))
        pure = true;
      else if (IsIdent("false"))
        pure = false;
      else
        FailExpected("true or false");
      Advance();
    }
    Expect(Tok::kRBracket, "']' to close the Callable type");
    return FuncTypeNode::Make(std::move(params), std::move(ret), pure);
  }
  if (IsIdent("Shape")) {
    Advance();
    if (!Accept(Tok::kLBracket)) return ShapeTypeNode::MakeRank(-1);
    Type t =
        Is(Tok::kLParen) ? ShapeTypeNode::Make(ParseDims()) : ShapeTypeNode::MakeRank(ParseNdim());
    Expect(Tok::kRBracket, "']'");
    return t;
  }
  if (IsIdent("Tensor")) {
    Advance();
    if (!Accept(Tok::kLBracket)) return TensorTypeNode::MakeRank(-1, DataType::kUnknown);
    std::optional<std::vector<Dim>> dims;
    int ndim = -1;
    DataType dt = DataType::kUnknown;
    bool need_dtype = true;
    if (Is(Tok::kLParen)) {
      Loc at = Here();
      dims = ParseDims();
      int64_t count = 1;
      for (const Dim& d : *dims) {
        if (!d.is_const()) continue;
        auto r = CheckedMul(count, d.value);
        if (!r) Fail("the tensor shape has more elements than fit in 64 bits", at);
        count = *r;
      }
      need_dtype = Accept(Tok::kComma);
    } else if (IsIdent("ndim")) {
      ndim = ParseNdim();
      need_dtype = Accept(Tok::kComma);
    }
    if (need_dtype) dt = ParseDTypeName();
    Expect(Tok::kRBracket, "']' to close the tensor type");
    return dims ? TensorTypeNode::Make(std::move(*dims), dt) : TensorTypeNode::MakeRank(ndim, dt);
  }
  Fail("unknown type '" + std::string(c_.cur.text) +
           "' (expected Tensor, Object, Prim, Shape, Callable or a tuple)",
       Here());
}

}  // namespace plir::text_internal
