// Attribute values: scalars, lists, maps, types.
#include "ir/text/parser_impl.h"

namespace plir::text_internal {

bool TextParser::AtTypeStart() const {
  return IsIdent("Tensor") || IsIdent("Object") || IsIdent("Prim") || IsIdent("Shape") ||
         Is(Tok::kLParen);
}

AttrValue TextParser::ParseAttrScalar() {
  const Token& t = c_.cur;
  AttrValue v;
  if (Is(Tok::kInt)) {
    v = AttrValue::Int(ParseInt64(t));
  } else if (Is(Tok::kFloat) || IsFloatWord()) {
    v = AttrValue::Float(ParseDouble(t));
  } else if (IsIdent("true") || IsIdent("false")) {
    v = AttrValue::Bool(IsIdent("true"));
  } else if (Is(Tok::kString)) {
    v = AttrValue::String(std::string(t.value));
  } else if (AtTypeStart()) {
    return AttrValue::OfType(ParseTypeAt(1));
  } else {
    FailExpected("an attribute value (integer, float, bool, string, type, list or map)");
  }
  Advance();
  return v;
}

AttrValue TextParser::ParseAttrValue(int depth) {
  if (!Is(Tok::kLBracket) && !Is(Tok::kLBrace)) return ParseAttrScalar();
  if (depth >= AttrValue::kMaxAttrDepth)
    Fail("attribute value nested deeper than " + std::to_string(AttrValue::kMaxAttrDepth) +
             " levels",
         Here());
  if (Accept(Tok::kLBracket)) {
    std::vector<AttrValue> items;
    if (!Is(Tok::kRBracket)) {
      while (true) {
        items.push_back(ParseAttrValue(depth + 1));
        if (Accept(Tok::kComma)) continue;
        break;
      }
    }
    Expect(Tok::kRBracket, "',' or ']' in the list");
    return AttrValue::List(std::move(items));
  }
  Advance();  // '{'
  std::vector<AttrValue::MapEntry> entries;
  std::unordered_map<std::string, Loc> seen;
  if (!Is(Tok::kRBrace)) {
    while (true) {
      if (!Is(Tok::kIdent) && !Is(Tok::kString)) FailExpected("a map key (a name or a string)");
      std::string key = Is(Tok::kString) ? std::string(c_.cur.value) : std::string(c_.cur.text);
      if (seen.count(key)) Fail("map key '" + key + "' given twice", Here());
      seen.emplace(key, Here());
      Advance();
      Expect(Tok::kEq, "'=' after the map key");
      entries.emplace_back(std::move(key), ParseAttrValue(depth + 1));
      if (Accept(Tok::kComma)) continue;
      break;
    }
  }
  Expect(Tok::kRBrace, "',' or '}' in the map");
  return *AttrValue::Map(std::move(entries));
}

}  // namespace plir::text_internal
