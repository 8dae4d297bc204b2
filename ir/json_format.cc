// The JSON format (schema: docs/serialization.md).
//
// Reading uses simdjson (Debian libsimdjson-dev): it parses at GB/s, which
// the JSON-load target (>= 200 MB/s of module text) needs; a DOM library
// such as nlohmann-json parses an order of magnitude slower. Writing is a
// small hand-written emitter: the output is a fixed, flat schema whose only
// escaping is that of strings, and building a library DOM first would double
// the time and memory of saving.
#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/attrs.h"
#include "ir/internal/node_table.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "ir/serialize.h"

namespace plir {
namespace {

using internal::Record;
using internal::RecordAttr;

void JsonString(std::string_view s, std::string* out) { AppendQuoted(s, out, QuoteStyle::kJson); }

// Floats: a JSON number when finite, else the string "inf", "-inf", "nan".
void JsonFloat(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append(std::isnan(v) ? "\"nan\"" : v < 0 ? "\"-inf\"" : "\"inf\"");
    return;
  }
  AppendFloat(v, out);  // always has '.' or 'e': "-0.0" keeps its sign
}

class Writer : public internal::RecordSink {
 public:
  Writer() { out_ = "{\"format\":\"plir\",\"version\":1,\"nodes\":[\n"; }

  void Write(const Record& r) override {
    if (count_++) out_.append(",\n");
    out_.append("{\"k\":\"").append(internal::RecordKindName(r.kind)).push_back('"');
    if (!r.children.empty()) {
      out_.append(",\"c\":[");
      for (size_t i = 0; i < r.children.size(); ++i) {
        if (i) out_.push_back(',');
        out_.append(std::to_string(r.children[i]));
      }
      out_.push_back(']');
    }
    switch (r.kind) {
      case NodeKind::kTensorType:
      case NodeKind::kShapeType:
        if (r.kind == NodeKind::kTensorType && r.dtype != DataType::kUnknown)
          out_.append(",\"dt\":\"").append(DataTypeName(r.dtype)).push_back('"');
        if (r.flag) {
          out_.append(",\"shape\":[");
          for (size_t i = 0; i < r.dims.size(); ++i) {
            if (i) out_.push_back(',');
            if (r.dims[i].sym.empty()) out_.append(std::to_string(r.dims[i].value));
            else JsonString(r.dims[i].sym, &out_);
          }
          out_.push_back(']');
        } else {
          out_.append(",\"ndim\":").append(std::to_string(r.ndim));
        }
        break;
      case NodeKind::kPrimType:
        if (r.dtype != DataType::kUnknown)
          out_.append(",\"dt\":\"").append(DataTypeName(r.dtype)).push_back('"');
        break;
      case NodeKind::kVar:
        out_.append(",\"n\":");
        JsonString(r.name, &out_);
        if (r.flag) out_.append(",\"dataflow\":true");
        break;
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kStringImm:
        out_.append(",\"n\":");
        JsonString(r.name, &out_);
        break;
      case NodeKind::kTupleGetItem: out_.append(",\"i\":").append(std::to_string(r.i)); break;
      case NodeKind::kPrimValue:
        out_.append(",\"dt\":\"").append(DataTypeName(r.dtype)).append("\",\"v\":");
        if (r.dtype == DataType::kFloat64) JsonFloat(r.f, &out_);
        else if (r.dtype == DataType::kBool) out_.append(r.i ? "true" : "false");
        else out_.append(std::to_string(r.i));
        break;
      case NodeKind::kConstant: {
        static const char* kHex = "0123456789abcdef";
        out_.append(",\"hex\":\"");
        for (unsigned char b : r.bytes) {
          out_.push_back(kHex[b >> 4]);
          out_.push_back(kHex[b & 15]);
        }
        out_.push_back('"');
        break;
      }
      case NodeKind::kCall:
        out_.append(",\"nargs\":").append(std::to_string(r.n_args));
        out_.append(",\"nsinfo\":").append(std::to_string(r.n_sinfo));
        Attrs(r.attrs);
        break;
      case NodeKind::kBindingBlock:
        if (r.flag) out_.append(",\"dataflow\":true");
        break;
      case NodeKind::kFunction:
      case NodeKind::kExternFunc:
        out_.append(",\"n\":");
        JsonString(r.name, &out_);
        Attrs(r.attrs);
        break;
      default: break;
    }
    out_.push_back('}');
  }

  std::string Finish(const std::vector<uint32_t>& items) {
    out_.append("\n],\"items\":[");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_.push_back(',');
      out_.append(std::to_string(items[i]));
    }
    out_.append("]}\n");
    return std::move(out_);
  }

 private:
  void Attr(const RecordAttr& a) {
    switch (a.kind) {
      case AttrValue::Kind::kInt: out_.append("{\"int\":").append(std::to_string(a.i)).push_back('}'); break;
      case AttrValue::Kind::kBool: out_.append(a.i ? "{\"bool\":true}" : "{\"bool\":false}"); break;
      case AttrValue::Kind::kFloat: out_.append("{\"float\":"); JsonFloat(a.f, &out_); out_.push_back('}'); break;
      case AttrValue::Kind::kString: out_.append("{\"str\":"); JsonString(a.s, &out_); out_.push_back('}'); break;
      case AttrValue::Kind::kType: out_.append("{\"type\":").append(std::to_string(a.type_id)).push_back('}'); break;
      case AttrValue::Kind::kList:
        out_.append("{\"list\":[");
        for (size_t i = 0; i < a.list.size(); ++i) {
          if (i) out_.push_back(',');
          Attr(a.list[i]);
        }
        out_.append("]}");
        break;
    }
  }
  void Attrs(const std::vector<RecordAttr>& attrs) {
    if (attrs.empty()) return;
    out_.append(",\"attrs\":{");
    for (size_t i = 0; i < attrs.size(); ++i) {
      if (i) out_.push_back(',');
      JsonString(attrs[i].key, &out_);
      out_.push_back(':');
      Attr(attrs[i]);
    }
    out_.push_back('}');
  }

  std::string out_;
  size_t count_ = 0;
};

Status Bad(size_t node, const std::string& what) {
  return InvalidArgument("invalid JSON module: node " + std::to_string(node) + ": " + what);
}

bool FloatValue(simdjson::dom::element e, double* d) {
  if (e.get_double().get(*d) == simdjson::SUCCESS) return true;
  int64_t i;
  if (e.get_int64().get(i) == simdjson::SUCCESS) {
    *d = static_cast<double>(i);
    return true;
  }
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return false;
  if (s == "inf") *d = INFINITY;
  else if (s == "-inf") *d = -INFINITY;
  else if (s == "nan") *d = NAN;
  else return false;
  return true;
}

// The keys a node object may have, by slot.
enum Field { kK, kC, kDt, kShape, kNdim, kN, kDataflow, kI, kV, kHex, kNargs, kNsinfo, kAttrs, kNumFields };

int FieldSlot(std::string_view key) {
  switch (key.size()) {
    case 1:
      switch (key[0]) {
        case 'k': return kK;
        case 'c': return kC;
        case 'n': return kN;
        case 'i': return kI;
        case 'v': return kV;
      }
      return -1;
    case 2: return key == "dt" ? kDt : -1;
    case 3: return key == "hex" ? kHex : -1;
    case 4: return key == "ndim" ? kNdim : -1;
    case 5: return key == "shape" ? kShape : key == "nargs" ? kNargs : key == "attrs" ? kAttrs : -1;
    case 6: return key == "nsinfo" ? kNsinfo : -1;
    case 8: return key == "dataflow" ? kDataflow : -1;
  }
  return -1;
}

bool KindFromName(std::string_view name, NodeKind* out) {
  // The common kinds first.
  static constexpr NodeKind kOrder[] = {
      NodeKind::kVar,        NodeKind::kCall,       NodeKind::kVarBinding, NodeKind::kTensorType,
      NodeKind::kOp,         NodeKind::kTuple,      NodeKind::kTupleGetItem, NodeKind::kPrimValue,
      NodeKind::kConstant,   NodeKind::kSeqExpr,    NodeKind::kBindingBlock, NodeKind::kFunction,
      NodeKind::kTupleType,  NodeKind::kObjectType, NodeKind::kPrimType,   NodeKind::kShapeType,
      NodeKind::kGlobalVar,  NodeKind::kStringImm,  NodeKind::kIf,         NodeKind::kExternFunc};
  for (NodeKind k : kOrder) {
    std::string_view n = internal::RecordKindName(k);
    if (n.size() == name.size() && n == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

// Builds nodes straight from the parsed document, one node object at a
// time: no intermediate records.
class JsonLoader {
 public:
  StatusOr<Module> Load(simdjson::dom::array nodes, simdjson::dom::array items) {
    nodes_.reserve(nodes.size());
    for (simdjson::dom::element e : nodes) {
      simdjson::dom::object o;
      if (e.get_object().get(o) != simdjson::SUCCESS) return Bad(id_, "not an object");
      PLIR_RETURN_IF_ERROR(LoadNode(o));
      ++id_;
    }
    std::vector<Item> out;
    for (simdjson::dom::element e : items) {
      uint64_t id;
      if (e.get_uint64().get(id) != simdjson::SUCCESS || id >= nodes_.size())
        return InvalidArgument("invalid JSON module: bad item id");
      NodeKind k = nodes_[id]->kind();
      if (k != NodeKind::kFunction && k != NodeKind::kExternFunc)
        return InvalidArgument("invalid JSON module: item id " + std::to_string(id) + " is not a function or extern");
      out.push_back(Downcast<ItemNode>(nodes_[id]));
    }
    nodes_.clear();
    auto m = Module::Make(std::move(out));
    if (!m.ok()) return InvalidArgument("invalid JSON module: " + m.status().message());
    return m;
  }

 private:
  Status Error(const std::string& what) const { return Bad(id_, what); }
  std::string Where() const { return "invalid JSON module: node " + std::to_string(id_); }

  // The child ids of the current node ("c"), each checked to be earlier.
  Status ReadChildren(simdjson::dom::element c) {
    kids_.clear();
    simdjson::dom::array a;
    if (c.get_array().get(a) != simdjson::SUCCESS) return Status::Ok();
    for (simdjson::dom::element x : a) {
      uint64_t id;
      if (x.get_uint64().get(id) != simdjson::SUCCESS || id >= id_) return Error("child id out of range");
      kids_.push_back(static_cast<uint32_t>(id));
    }
    return Status::Ok();
  }

  template <typename T>
  Status Child(size_t i, Ref<T>* out) const {
    if (i >= kids_.size()) return Error("missing child " + std::to_string(i));
    const Ref<Node>& n = nodes_[kids_[i]];
    bool ok;
    if constexpr (std::is_same_v<T, TypeNode>) ok = IsTypeKind(n->kind());
    else if constexpr (std::is_same_v<T, ExprNode>) ok = IsExprKind(n->kind());
    else ok = n->kind() == T::kKind;
    if (!ok)
      return Error("child " + std::to_string(i) + " is a " + NodeKindName(n->kind()) + ", which does not fit here");
    *out = Downcast<T>(n);
    return Status::Ok();
  }
  template <typename T>
  Status Children(size_t first, size_t n, std::vector<Ref<T>>* out) const {
    out->reserve(n);
    for (size_t i = first; i < first + n; ++i) {
      Ref<T> c;
      PLIR_RETURN_IF_ERROR(Child(i, &c));
      out->push_back(std::move(c));
    }
    return Status::Ok();
  }
  Status ExpectChildren(NodeKind k, size_t n) const {
    if (kids_.size() != n)
      return Error(std::string(NodeKindName(k)) + " needs " + std::to_string(n) + " children, has " +
                   std::to_string(kids_.size()));
    return Status::Ok();
  }

  Status AttrValueOf(simdjson::dom::element e, bool allow_list, AttrValue* out, size_t* n_types) const {
    simdjson::dom::object o;
    if (e.get_object().get(o) != simdjson::SUCCESS || o.size() != 1) return Error("bad attribute value");
    auto [key, v] = *o.begin();
    if (key == "int") {
      int64_t i;
      if (v.get_int64().get(i) != simdjson::SUCCESS) return Error("bad int attribute");
      *out = AttrValue::Int(i);
    } else if (key == "bool") {
      bool b;
      if (v.get_bool().get(b) != simdjson::SUCCESS) return Error("bad bool attribute");
      *out = AttrValue::Bool(b);
    } else if (key == "float") {
      double d;
      if (!FloatValue(v, &d)) return Error("bad float attribute");
      *out = AttrValue::Float(d);
    } else if (key == "str") {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) return Error("bad string attribute");
      *out = AttrValue::String(std::string(s));
    } else if (key == "type") {
      uint64_t id;
      if (v.get_uint64().get(id) != simdjson::SUCCESS || id >= id_ || !IsTypeKind(nodes_[id]->kind()))
        return Error("attribute type id is invalid");
      *out = AttrValue::OfType(Downcast<TypeNode>(nodes_[id]));
      ++*n_types;
    } else if (key == "list" && allow_list) {
      simdjson::dom::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) return Error("bad list attribute");
      std::vector<AttrValue> items;
      for (simdjson::dom::element x : arr) {
        AttrValue item;
        PLIR_RETURN_IF_ERROR(AttrValueOf(x, false, &item, n_types));
        items.push_back(std::move(item));
      }
      *out = AttrValue::List(std::move(items));
    } else {
      return Error("unknown attribute kind '" + std::string(key) + "'");
    }
    return Status::Ok();
  }

  // "attrs" (absent: none); counts the type values in `n_types`.
  Status AttrsOf(simdjson::dom::element e, bool present, Attrs* out, size_t* n_types) const {
    simdjson::dom::object a;
    if (!present || e.get_object().get(a) != simdjson::SUCCESS) return Status::Ok();
    std::vector<Attrs::Entry> entries;
    for (auto [key, value] : a) {
      AttrValue v;
      PLIR_RETURN_IF_ERROR(AttrValueOf(value, true, &v, n_types));
      entries.emplace_back(Symbol(key), std::move(v));
    }
    auto made = Attrs::Make(std::move(entries));
    if (!made.ok()) return Error(made.status().message());
    *out = std::move(made).value();
    return Status::Ok();
  }

  Status DTypeOf(simdjson::dom::element e, bool present, DataType* out) const {
    std::string_view name;
    if (!present || e.get_string().get(name) != simdjson::SUCCESS) {
      *out = DataType::kUnknown;
      return Status::Ok();
    }
    auto dt = ParseDataType(name);
    if (!dt) return Error("unknown dtype '" + std::string(name) + "'");
    *out = *dt;
    return Status::Ok();
  }

  // "shape" (known dims) or "ndim".
  Status ShapeOf(bool* known, int* ndim, std::vector<Dim>* dims) const {
    simdjson::dom::array shape;
    if (Has(kShape) && f_[kShape].get_array().get(shape) == simdjson::SUCCESS) {
      *known = true;
      for (simdjson::dom::element d : shape) {
        int64_t v;
        std::string_view s;
        if (d.get_int64().get(v) == simdjson::SUCCESS) {
          if (v < 0) return Error("negative dimension");
          dims->push_back(Dim::Const(v));
        } else if (d.get_string().get(s) == simdjson::SUCCESS && !s.empty()) {
          dims->push_back(Dim::Sym(Symbol(s)));
        } else {
          return Error("bad dimension");
        }
      }
      return Status::Ok();
    }
    int64_t nd = -1;
    if (!Has(kNdim) || f_[kNdim].get_int64().get(nd) != simdjson::SUCCESS || nd < -1 || nd > (1 << 20))
      return Error("missing shape or ndim");
    *known = false;
    *ndim = static_cast<int>(nd);
    return Status::Ok();
  }

  Status Name(std::string* out) const {
    std::string_view s;
    if (!Has(kN) || f_[kN].get_string().get(s) != simdjson::SUCCESS) return Error("missing name \"n\"");
    out->assign(s);
    return Status::Ok();
  }
  bool Flag(Field f) const {
    bool b;
    return Has(f) && f_[f].get_bool().get(b) == simdjson::SUCCESS && b;
  }
  bool Has(Field f) const { return present_ & (1u << f); }

  Status LoadNode(simdjson::dom::object o) {
    // One pass over the object's fields; the first of a repeated key wins.
    present_ = 0;
    for (auto field : o) {
      int slot = FieldSlot(field.key);
      if (slot < 0 || Has(static_cast<Field>(slot))) continue;
      present_ |= 1u << slot;
      f_[slot] = field.value;
    }
    std::string_view kind_name;
    NodeKind kind;
    if (!Has(kK) || f_[kK].get_string().get(kind_name) != simdjson::SUCCESS || !KindFromName(kind_name, &kind))
      return Error("missing or unknown kind \"k\"");
    if (Has(kC)) PLIR_RETURN_IF_ERROR(ReadChildren(f_[kC]));
    else kids_.clear();
    type_size_ = 1;  // the tree size of a type other than a tuple
    PLIR_ASSIGN_OR_RETURN(Ref<Node> n, Build(kind));
    nodes_.push_back(std::move(n));
    type_sizes_.push_back(type_size_);
    return Status::Ok();
  }

  StatusOr<Ref<Node>> Build(NodeKind kind) {
    std::string name;
    Type type;
    switch (kind) {
      case NodeKind::kTensorType:
      case NodeKind::kShapeType: {
        DataType dt;
        PLIR_RETURN_IF_ERROR(DTypeOf(f_[kDt], Has(kDt), &dt));
        bool known;
        int ndim = -1;
        std::vector<Dim> dims;
        PLIR_RETURN_IF_ERROR(ShapeOf(&known, &ndim, &dims));
        if (kind == NodeKind::kTensorType)
          return Ref<Node>(known ? TensorTypeNode::Make(std::move(dims), dt) : TensorTypeNode::MakeRank(ndim, dt));
        return Ref<Node>(known ? ShapeTypeNode::Make(std::move(dims)) : ShapeTypeNode::MakeRank(ndim));
      }
      case NodeKind::kTupleType: {
        std::vector<Type> fields;
        PLIR_RETURN_IF_ERROR(Children(0, kids_.size(), &fields));
        std::vector<uint32_t> sizes;
        for (uint32_t k : kids_) sizes.push_back(type_sizes_[k]);
        PLIR_RETURN_IF_ERROR(internal::TupleTypeTreeSize(sizes, &type_size_).WithPrefix(Where()));
        return Ref<Node>(TupleTypeNode::Make(std::move(fields)));
      }
      case NodeKind::kObjectType: return Ref<Node>(ObjectTypeNode::Get());
      case NodeKind::kPrimType: {
        DataType dt;
        PLIR_RETURN_IF_ERROR(DTypeOf(f_[kDt], Has(kDt), &dt));
        return Ref<Node>(PrimTypeNode::Make(dt));
      }
      case NodeKind::kVar: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 1));
        PLIR_RETURN_IF_ERROR(Child(0, &type));
        PLIR_RETURN_IF_ERROR(Name(&name));
        return Ref<Node>(VarNode::Make(std::move(name), std::move(type), Flag(kDataflow)));
      }
      case NodeKind::kGlobalVar:
        PLIR_RETURN_IF_ERROR(Name(&name));
        return Ref<Node>(GlobalVarNode::Make(std::move(name)));
      case NodeKind::kOp: {
        PLIR_RETURN_IF_ERROR(Name(&name));
        Op op = OpRegistry::Global().Lookup(name);
        if (!op) return Error("unknown op '" + name + "'");
        return Ref<Node>(op);
      }
      case NodeKind::kStringImm:
        PLIR_RETURN_IF_ERROR(Name(&name));
        return Ref<Node>(StringImmNode::Make(std::move(name)));
      case NodeKind::kTuple: {
        std::vector<Expr> fields;
        PLIR_RETURN_IF_ERROR(Children(0, kids_.size(), &fields));
        return Ref<Node>(TupleNode::Make(std::move(fields)));
      }
      case NodeKind::kTupleGetItem: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 2));
        Expr tuple;
        int64_t index;
        PLIR_RETURN_IF_ERROR(Child(0, &tuple));
        PLIR_RETURN_IF_ERROR(Child(1, &type));
        if (!Has(kI) || f_[kI].get_int64().get(index) != simdjson::SUCCESS) return Error("missing index \"i\"");
        return Ref<Node>(TupleGetItemNode::MakeUnchecked(std::move(tuple), index, std::move(type)));
      }
      case NodeKind::kPrimValue: {
        DataType dt;
        PLIR_RETURN_IF_ERROR(DTypeOf(f_[kDt], Has(kDt), &dt));
        if (!Has(kV)) return Error("missing value \"v\"");
        simdjson::dom::element v = f_[kV];
        if (dt == DataType::kFloat64) {
          double d;
          if (!FloatValue(v, &d)) return Error("bad float value");
          return Ref<Node>(PrimValueNode::Float(d));
        }
        if (dt == DataType::kBool) {
          bool b;
          if (v.get_bool().get(b) != simdjson::SUCCESS) return Error("bad bool value");
          return Ref<Node>(PrimValueNode::Bool(b));
        }
        int64_t i;
        if (v.get_int64().get(i) != simdjson::SUCCESS) return Error("bad int value");
        if (dt != DataType::kInt64) return Error("bad primitive value dtype");
        return Ref<Node>(PrimValueNode::Int(i));
      }
      case NodeKind::kConstant: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 1));
        PLIR_RETURN_IF_ERROR(Child(0, &type));
        PLIR_RETURN_IF_ERROR(internal::CheckConstantType(type).WithPrefix(Where()));
        std::string_view hex;
        if (!Has(kHex) || f_[kHex].get_string().get(hex) != simdjson::SUCCESS || hex.size() % 2)
          return Error("bad \"hex\" data");
        std::string bytes(hex.size() / 2, '\0');
        auto h = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
        for (size_t i = 0; i < bytes.size(); ++i) {
          int hi = h(hex[2 * i]), lo = h(hex[2 * i + 1]);
          if (hi < 0 || lo < 0) return Error("bad hex digit");
          bytes[i] = static_cast<char>(hi * 16 + lo);
        }
        auto c = ConstantNode::Make(std::move(type), std::make_shared<const std::string>(std::move(bytes)));
        if (!c.ok()) return c.status().WithPrefix(Where());
        return Ref<Node>(std::move(c).value());
      }
      case NodeKind::kCall: {
        uint64_t na, ns;
        if (!Has(kNargs) || !Has(kNsinfo) || f_[kNargs].get_uint64().get(na) != simdjson::SUCCESS ||
            f_[kNsinfo].get_uint64().get(ns) != simdjson::SUCCESS || na > kids_.size() || ns > kids_.size())
          return Error("bad nargs/nsinfo");
        size_t fixed = 2 + na + ns;
        if (kids_.size() < fixed) return Error("call has too few children");
        Expr callee;
        std::vector<Expr> args;
        std::vector<Type> sinfo;
        PLIR_RETURN_IF_ERROR(Child(0, &callee));
        PLIR_RETURN_IF_ERROR(Children(1, na, &args));
        PLIR_RETURN_IF_ERROR(Children(1 + na, ns, &sinfo));
        PLIR_RETURN_IF_ERROR(Child(fixed - 1, &type));
        Attrs attrs;
        size_t n_types = 0;
        PLIR_RETURN_IF_ERROR(AttrsOf(f_[kAttrs], Has(kAttrs), &attrs, &n_types));
        return Ref<Node>(CallNode::MakeUnchecked(std::move(callee), std::move(args), std::move(attrs),
                                                 std::move(sinfo), std::move(type)));
      }
      case NodeKind::kIf: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 4));
        Expr cond;
        SeqExpr then_body, else_body;
        PLIR_RETURN_IF_ERROR(Child(0, &cond));
        PLIR_RETURN_IF_ERROR(Child(1, &then_body));
        PLIR_RETURN_IF_ERROR(Child(2, &else_body));
        PLIR_RETURN_IF_ERROR(Child(3, &type));
        return Ref<Node>(
            IfNode::MakeUnchecked(std::move(cond), std::move(then_body), std::move(else_body), std::move(type)));
      }
      case NodeKind::kSeqExpr: {
        if (kids_.empty()) return Error("body without a result");
        std::vector<Block> blocks;
        Expr result;
        PLIR_RETURN_IF_ERROR(Children(0, kids_.size() - 1, &blocks));
        PLIR_RETURN_IF_ERROR(Child(kids_.size() - 1, &result));
        return Ref<Node>(SeqExprNode::Make(std::move(blocks), std::move(result)));
      }
      case NodeKind::kBindingBlock: {
        std::vector<Binding> bindings;
        PLIR_RETURN_IF_ERROR(Children(0, kids_.size(), &bindings));
        return Ref<Node>(BindingBlockNode::Make(std::move(bindings), Flag(kDataflow)));
      }
      case NodeKind::kVarBinding: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 2));
        Var var;
        Expr value;
        PLIR_RETURN_IF_ERROR(Child(0, &var));
        PLIR_RETURN_IF_ERROR(Child(1, &value));
        return Ref<Node>(VarBindingNode::Make(std::move(var), std::move(value)));
      }
      case NodeKind::kFunction:
      case NodeKind::kExternFunc: {
        bool is_def = kind == NodeKind::kFunction;
        PLIR_RETURN_IF_ERROR(Name(&name));
        Attrs attrs;
        size_t n_types = 0;
        PLIR_RETURN_IF_ERROR(AttrsOf(f_[kAttrs], Has(kAttrs), &attrs, &n_types));
        // Children: the parameters, the return type, the body (def), then
        // the types used in attributes.
        size_t tail = (is_def ? 2 : 1) + n_types;
        if (kids_.size() < tail) return Error("item has too few children");
        size_t n_params = kids_.size() - tail;
        std::vector<Var> params;
        PLIR_RETURN_IF_ERROR(Children(0, n_params, &params));
        PLIR_RETURN_IF_ERROR(Child(n_params, &type));
        if (!is_def)
          return Ref<Node>(ExternFuncNode::Make(std::move(name), std::move(params), std::move(type), std::move(attrs)));
        SeqExpr body;
        PLIR_RETURN_IF_ERROR(Child(n_params + 1, &body));
        return Ref<Node>(
            FunctionNode::Make(std::move(name), std::move(params), std::move(type), std::move(body), std::move(attrs)));
      }
    }
    return Error("unknown node kind");
  }

  std::vector<Ref<Node>> nodes_;
  std::vector<uint32_t> type_sizes_;  // per node: its tree size if a type
  uint32_t type_size_ = 1;            // the current node's
  std::vector<uint32_t> kids_;     // the current node's child ids
  simdjson::dom::element f_[kNumFields];  // the current node's fields
  uint32_t present_ = 0;           // bit i: f_[i] is set
  size_t id_ = 0;                  // the current node's id
};

// Parses `text`, which must be followed by SIMDJSON_PADDING readable bytes if
// `padded`.
StatusOr<Module> LoadJsonImpl(std::string_view text, bool padded) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  auto err = parser.parse(text.data(), text.size(), !padded).get(doc);
  if (err) return InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
  std::string_view format;
  int64_t version;
  if (doc["format"].get_string().get(format) != simdjson::SUCCESS || format != "plir")
    return InvalidArgument("not a PLIR JSON module (\"format\" is not \"plir\")");
  if (doc["version"].get_int64().get(version) != simdjson::SUCCESS || version != kJsonFormatVersion)
    return InvalidArgument("unsupported PLIR JSON version; this PLIR reads version " +
                           std::to_string(kJsonFormatVersion));
  simdjson::dom::array nodes, items;
  if (doc["nodes"].get_array().get(nodes) != simdjson::SUCCESS ||
      doc["items"].get_array().get(items) != simdjson::SUCCESS)
    return InvalidArgument("invalid JSON module: \"nodes\" and \"items\" must be arrays");
  return JsonLoader().Load(nodes, items);
}

}  // namespace

std::string SaveJson(const Module& m) {
  Writer w;
  std::vector<uint32_t> items = internal::FlattenModule(m, w);
  return w.Finish(items);
}

StatusOr<Module> LoadJson(std::string_view text) { return LoadJsonImpl(text, false); }

ModuleFormat DetectFormat(std::string_view contents) {
  if (contents.size() >= 8 && std::memcmp(contents.data(), kBinaryMagic, 8) == 0) return ModuleFormat::kBinary;
  size_t i = contents.find_first_not_of(" \t\r\n");
  if (i != std::string_view::npos && contents[i] == '{') return ModuleFormat::kJson;
  return ModuleFormat::kText;
}

StatusOr<Module> LoadModule(std::string_view contents, const std::string& name) {
  switch (DetectFormat(contents)) {
    case ModuleFormat::kBinary: {
      auto m = LoadBinary(contents);
      if (!m.ok()) return m.status().WithPrefix(name);
      return m;
    }
    case ModuleFormat::kJson: {
      auto m = LoadJson(contents);
      if (!m.ok()) return m.status().WithPrefix(name);
      return m;
    }
    case ModuleFormat::kText: {
      ParseOptions o;
      o.filename = name;
      return ParseModule(contents, o);
    }
  }
  return Internal("unreachable");
}

// ---------------------------------------------------------------------------
// Files.

ModuleFile::ModuleFile(ModuleFile&& o) noexcept { *this = std::move(o); }

ModuleFile& ModuleFile::operator=(ModuleFile&& o) noexcept {
  if (this == &o) return *this;
  Release();
  mapped_ = o.mapped_;
  map_size_ = o.map_size_;
  size_ = o.size_;
  padding_ = o.padding_;
  buffer_ = std::move(o.buffer_);
  data_ = mapped_ ? o.data_ : buffer_.data();
  o.data_ = nullptr;
  o.size_ = o.padding_ = o.map_size_ = 0;
  o.mapped_ = false;
  return *this;
}

ModuleFile::~ModuleFile() { Release(); }

void ModuleFile::Release() {
  if (mapped_) munmap(const_cast<char*>(data_), map_size_);
  mapped_ = false;
  data_ = nullptr;
  size_ = 0;
  buffer_.clear();
}

StatusOr<ModuleFile> ModuleFile::Open(const std::string& path) {
  ModuleFile f;
  int fd = 0;
  struct stat st {};
  if (path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NotFound(path + ": cannot open file: " + std::strerror(errno));
    if (fstat(fd, &st) != 0) {
      int err = errno;
      close(fd);
      return Internal(path + ": cannot stat file: " + std::strerror(err));
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      size_t size = static_cast<size_t>(st.st_size);
      void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p != MAP_FAILED) {
        close(fd);
        long page = sysconf(_SC_PAGESIZE);
        f.data_ = static_cast<const char*>(p);
        f.size_ = f.map_size_ = size;
        f.mapped_ = true;
        // The rest of the last page reads as zeros.
        f.padding_ = page > 0 && size % page ? page - size % page : 0;
        return f;
      }
    }
  }
  // Pipes, devices, files that report no size (/proc), or mmap failed: read.
  if (S_ISREG(st.st_mode) && st.st_size > 0)
    f.buffer_.reserve(static_cast<size_t>(st.st_size) + simdjson::SIMDJSON_PADDING);
  char chunk[1 << 16];
  while (true) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      if (fd != 0) close(fd);
      return Internal((path == "-" ? std::string("<stdin>") : path) + ": read error: " + std::strerror(err));
    }
    f.buffer_.append(chunk, static_cast<size_t>(n));
  }
  if (fd != 0) close(fd);
  f.size_ = f.buffer_.size();
  f.buffer_.append(simdjson::SIMDJSON_PADDING, '\0');
  f.padding_ = simdjson::SIMDJSON_PADDING;
  f.data_ = f.buffer_.data();
  return f;
}

StatusOr<Module> LoadModule(const ModuleFile& file, const std::string& name) {
  if (DetectFormat(file) == ModuleFormat::kJson && file.padding() >= simdjson::SIMDJSON_PADDING) {
    auto m = LoadJsonImpl(file.contents(), /*padded=*/true);  // in place, no copy
    if (!m.ok()) return m.status().WithPrefix(name);
    return m;
  }
  return LoadModule(file.contents(), name);
}

StatusOr<Module> LoadModuleFile(const std::string& path) {
  PLIR_ASSIGN_OR_RETURN(ModuleFile f, ModuleFile::Open(path));
  return LoadModule(f, path == "-" ? "<stdin>" : path);
}

}  // namespace plir
