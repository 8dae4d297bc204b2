// The JSON format's reader (schema: docs/serialization.md).
//
// Reading uses simdjson (Debian libsimdjson-dev): it parses at GB/s, which
// the JSON-load target (>= 200 MB/s of module text) needs; a DOM library
// such as nlohmann-json parses an order of magnitude slower. The loader uses
// its On Demand API, building each node while it walks the text: simdjson's
// DOM would first write a tape of every value (for a 1M-binding module,
// hundreds of MB of freshly faulted memory), which cost 25% of loading.
#include <simdjson.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/serialize/internal.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"

namespace plir {
namespace {

using internal::Record;
using internal::RecordAttr;

Status Bad(size_t node, const std::string& what) {
  return InvalidArgument("invalid JSON module: node " + std::to_string(node) + ": " + what);
}

namespace od = simdjson::ondemand;

// The keys a node object may have, by slot.
enum Field {
  kK,
  kC,
  kDt,
  kShape,
  kNdim,
  kN,
  kDataflow,
  kI,
  kV,
  kHex,
  kNargs,
  kNsinfo,
  kAttrs,
  kPure,
  kNumFields
};

int FieldSlot(std::string_view key) {
  switch (key.size()) {
    case 1:
      switch (key[0]) {
        case 'k':
          return kK;
        case 'c':
          return kC;
        case 'n':
          return kN;
        case 'i':
          return kI;
        case 'v':
          return kV;
      }
      return -1;
    case 2:
      return key == "dt" ? kDt : -1;
    case 3:
      return key == "hex" ? kHex : -1;
    case 4:
      return key == "ndim" ? kNdim : key == "pure" ? kPure : -1;
    case 5:
      return key == "shape" ? kShape : key == "nargs" ? kNargs : key == "attrs" ? kAttrs : -1;
    case 6:
      return key == "nsinfo" ? kNsinfo : -1;
    case 8:
      return key == "dataflow" ? kDataflow : -1;
  }
  return -1;
}

bool KindFromName(std::string_view name, NodeKind* out) {
  // The common kinds first.
  static constexpr NodeKind kOrder[] = {
      NodeKind::kVar,       NodeKind::kCall,       NodeKind::kVarBinding,   NodeKind::kTensorType,
      NodeKind::kOp,        NodeKind::kTuple,      NodeKind::kTupleGetItem, NodeKind::kPrimValue,
      NodeKind::kConstant,  NodeKind::kSeqExpr,    NodeKind::kBindingBlock, NodeKind::kFunction,
      NodeKind::kTupleType, NodeKind::kObjectType, NodeKind::kPrimType,     NodeKind::kShapeType,
      NodeKind::kGlobalVar, NodeKind::kStringImm,  NodeKind::kIf,           NodeKind::kExternFunc,
      NodeKind::kShapeExpr, NodeKind::kPrimExpr,   NodeKind::kFuncType,     NodeKind::kLocalFn};
  for (NodeKind k : kOrder) {
    std::string_view n = internal::RecordKindName(k);
    if (n.size() == name.size() && n == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

// A number or string that may stand for a float ("inf", "-inf", "nan").
struct Scalar {
  enum Kind { kNone, kBool, kNumber, kString } kind = kNone;
  bool b = false;
  bool is_int = false;  // the number is an integer that fits int64
  int64_t i = 0;
  double d = 0;
  std::string_view s;

  bool AsFloat(double* out) const {
    if (kind == kNumber) {
      *out = d;
      return true;
    }
    if (kind != kString) return false;
    if (s == "inf")
      *out = INFINITY;
    else if (s == "-inf")
      *out = -INFINITY;
    else if (s == "nan")
      *out = NAN;
    else
      return false;
    return true;
  }
};

// Reads a scalar value; false if it is not a bool, number or string (or is
// malformed).
bool ReadScalar(od::value v, Scalar* out) {
  od::json_type t;
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  switch (t) {
    case od::json_type::boolean:
      out->kind = Scalar::kBool;
      return v.get_bool().get(out->b) == simdjson::SUCCESS;
    case od::json_type::number: {
      od::number n;
      if (v.get_number().get(n) != simdjson::SUCCESS) return false;
      out->kind = Scalar::kNumber;
      out->is_int = n.is_int64();
      if (out->is_int) out->i = n.get_int64();
      out->d = n.as_double();
      return true;
    }
    case od::json_type::string:
      out->kind = Scalar::kString;
      return v.get_string().get(out->s) == simdjson::SUCCESS;
    default:
      return false;
  }
}

// Reads and discards a value, so that malformed JSON is an error even where
// the loader ignores the value (On Demand would skip it unchecked).
simdjson::error_code Skip(od::value v, size_t depth = 0) {
  if (depth > simdjson::DEFAULT_MAX_DEPTH) return simdjson::DEPTH_ERROR;
  od::json_type t;
  if (auto err = v.type().get(t)) return err;
  switch (t) {
    case od::json_type::array: {
      od::array a;
      if (auto err = v.get_array().get(a)) return err;
      for (auto x : a) {
        od::value xv;
        if (auto err = x.get(xv)) return err;
        if (auto err = Skip(xv, depth + 1)) return err;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::object: {
      od::object o;
      if (auto err = v.get_object().get(o)) return err;
      for (auto field : o) {
        std::string_view key;
        if (auto err = field.unescaped_key().get(key)) return err;
        if (auto err = Skip(field.value(), depth + 1)) return err;
      }
      return simdjson::SUCCESS;
    }
    case od::json_type::number: {
      od::number n;
      return v.get_number().get(n);
    }
    case od::json_type::string: {
      std::string_view str;
      return v.get_string().get(str);
    }
    case od::json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    case od::json_type::null: {
      bool null;
      if (auto err = v.is_null().get(null)) return err;
      return null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

// Builds nodes straight from simdjson's On Demand parser: one forward pass
// over the document, each node object read field by field (in any order;
// the first of a repeated key counts) and built from those values and the
// already-built children. No DOM, no intermediate records.
class JsonLoader {
 public:
  StatusOr<Module> Load(od::document& doc) {
    od::object root;
    if (auto err = doc.get_object().get(root)) {
      if (err == simdjson::INCORRECT_TYPE) return NotPlir();
      return Syntax(err);
    }
    bool format_ok = false, version_seen = false, nodes_seen = false, items_seen = false;
    int64_t version = -1;
    std::vector<uint64_t> item_ids;
    for (auto field : root) {
      std::string_view key;
      if (auto err = field.unescaped_key().get(key)) return Syntax(err);
      od::value value = field.value();
      if (key == "format" && !format_ok) {
        std::string_view f;
        format_ok = value.get_string().get(f) == simdjson::SUCCESS && f == "plir";
        if (!format_ok) return NotPlir();
      } else if (key == "version" && !version_seen) {
        version_seen = true;
        if (value.get_int64().get(version) != simdjson::SUCCESS || version != kJsonFormatVersion)
          return Unsupported();
      } else if (key == "nodes" && !nodes_seen) {
        if (!format_ok) return NotPlir();
        if (!version_seen) return Unsupported();
        od::array nodes;
        if (value.get_array().get(nodes) != simdjson::SUCCESS) return NotArrays();
        nodes_seen = true;
        for (auto element : nodes) {
          od::object o;
          if (auto err = element.get_object().get(o)) {
            if (err == simdjson::INCORRECT_TYPE) return Bad(id_, "not an object");
            return Syntax(err);
          }
          PLIR_RETURN_IF_ERROR(LoadNode(o));
          ++id_;
        }
      } else if (key == "items" && !items_seen) {
        od::array items;
        if (value.get_array().get(items) != simdjson::SUCCESS) return NotArrays();
        items_seen = true;
        for (auto element : items) {
          uint64_t id;
          if (element.get_uint64().get(id) != simdjson::SUCCESS) return BadItem();
          item_ids.push_back(id);
        }
      } else if (auto err = Skip(value)) {
        return Syntax(err);
      }
    }
    if (!format_ok) return NotPlir();
    if (!version_seen) return Unsupported();
    if (!nodes_seen || !items_seen) return NotArrays();
    const char* rest;
    if (doc.current_location().get(rest) == simdjson::SUCCESS)
      return InvalidArgument("invalid JSON: content after the module object");
    std::vector<Item> out;
    out.reserve(item_ids.size());
    for (uint64_t id : item_ids) {
      if (id >= nodes_.size()) return BadItem();
      NodeKind k = nodes_[id]->kind();
      if (k != NodeKind::kFunction && k != NodeKind::kExternFunc)
        return InvalidArgument("invalid JSON module: item id " + std::to_string(id) +
                               " is not a function or extern");
      out.push_back(Downcast<ItemNode>(nodes_[id]));
    }
    nodes_.clear();
    auto m = Module::Make(std::move(out));
    if (!m.ok()) return InvalidArgument("invalid JSON module: " + m.status().message());
    return m;
  }

 private:
  static Status Syntax(simdjson::error_code err) {
    return InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
  }
  static Status NotPlir() {
    return InvalidArgument("not a PLIR JSON module (\"format\" is not \"plir\")");
  }
  static Status Unsupported() {
    return InvalidArgument("unsupported PLIR JSON version; this PLIR reads version " +
                           std::to_string(kJsonFormatVersion));
  }
  static Status NotArrays() {
    return InvalidArgument("invalid JSON module: \"nodes\" and \"items\" must be arrays");
  }
  static Status BadItem() { return InvalidArgument("invalid JSON module: bad item id"); }
  Status Error(const std::string& what) const { return Bad(id_, what); }
  std::string Where() const { return "invalid JSON module: node " + std::to_string(id_); }
  bool Has(Field f) const { return present_ & (1u << f); }

  // --- reading the fields -------------------------------------------------
  // A field counts as present only if its value has the expected JSON type
  // (a field of another type counts as missing, as with a DOM lookup); bad
  // dims are reported only if the node's kind has a shape. Every value is
  // read or skipped with validation: malformed JSON is always an error.
  Status ReadChildren(od::value v) {
    od::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS) {  // no children
      if (auto err = Skip(v)) return Syntax(err);
      return Status::Ok();
    }
    for (auto x : a) {
      uint64_t id;
      if (x.get_uint64().get(id) != simdjson::SUCCESS || id >= id_)
        return Error("child id out of range");
      kids_.push_back(static_cast<uint32_t>(id));
    }
    return Status::Ok();
  }
  Status ReadShape(od::value v) {
    od::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS) {
      if (auto err = Skip(v)) return Syntax(err);
      return Status::Ok();
    }
    present_ |= 1u << kShape;
    for (auto x : a) {
      od::value xv;
      if (auto err = x.get(xv)) return Syntax(err);
      od::json_type t;
      int64_t d;
      std::string_view str;
      if (xv.type().get(t) == simdjson::SUCCESS && t == od::json_type::number &&
          xv.get_int64().get(d) == simdjson::SUCCESS) {
        if (d < 0 && shape_error_.empty()) shape_error_ = "negative dimension";
        dims_.push_back(Dim::Const(d));
        continue;
      }
      if (xv.type().get(t) == simdjson::SUCCESS && t == od::json_type::string &&
          xv.get_string().get(str) == simdjson::SUCCESS && !str.empty()) {
        auto d = LoadDimText(str);  // a name, or an expression's text
        if (!d.ok()) {
          if (shape_error_.empty()) shape_error_ = d.status().message();
          continue;
        }
        dims_.push_back(*d);
        continue;
      }
      if (shape_error_.empty()) shape_error_ = "bad dimension";
      if (auto err = Skip(xv)) return Syntax(err);
    }
    return Status::Ok();
  }
  Status AttrValueOf(od::value e, int depth, AttrValue* out) {
    od::object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) return Error("bad attribute value");
    std::string_view key;
    bool seen = false;
    for (auto field : o) {
      if (seen) return Error("bad attribute value");  // exactly one key
      seen = true;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Error("bad attribute value");
      od::value v = field.value();
      if (key == "int") {
        int64_t i;
        if (v.get_int64().get(i) != simdjson::SUCCESS) return Error("bad int attribute");
        *out = AttrValue::Int(i);
      } else if (key == "bool") {
        bool b;
        if (v.get_bool().get(b) != simdjson::SUCCESS) return Error("bad bool attribute");
        *out = AttrValue::Bool(b);
      } else if (key == "float") {
        Scalar sc;
        double d;
        if (!ReadScalar(v, &sc) || !sc.AsFloat(&d)) return Error("bad float attribute");
        *out = AttrValue::Float(d);
      } else if (key == "str") {
        std::string_view s;
        if (v.get_string().get(s) != simdjson::SUCCESS) return Error("bad string attribute");
        *out = AttrValue::String(std::string(s));
      } else if (key == "type") {
        uint64_t id;
        if (v.get_uint64().get(id) != simdjson::SUCCESS || id >= id_ ||
            !IsTypeKind(nodes_[id]->kind()))
          return Error("attribute type id is invalid");
        *out = AttrValue::OfType(Downcast<TypeNode>(nodes_[id]));
        ++n_attr_types_;
      } else if ((key == "list" || key == "map") && depth >= AttrValue::kMaxAttrDepth) {
        return Error("attribute value nested too deep");
      } else if (key == "map") {
        od::object mo;
        if (v.get_object().get(mo) != simdjson::SUCCESS) return Error("bad map attribute");
        std::vector<AttrValue::MapEntry> entries;
        for (auto f : mo) {
          std::string_view k;
          if (f.unescaped_key().get(k) != simdjson::SUCCESS) return Error("bad map attribute");
          AttrValue item;
          PLIR_RETURN_IF_ERROR(AttrValueOf(f.value(), depth + 1, &item));
          entries.emplace_back(std::string(k), std::move(item));
        }
        auto m = AttrValue::Map(std::move(entries));
        if (!m.ok()) return Error(m.status().message());
        *out = std::move(m).value();
      } else if (key == "list") {
        od::array arr;
        if (v.get_array().get(arr) != simdjson::SUCCESS) return Error("bad list attribute");
        std::vector<AttrValue> items;
        for (auto x : arr) {
          od::value xv;
          if (x.get(xv) != simdjson::SUCCESS) return Error("bad list attribute");
          AttrValue item;
          PLIR_RETURN_IF_ERROR(AttrValueOf(xv, depth + 1, &item));
          items.push_back(std::move(item));
        }
        *out = AttrValue::List(std::move(items));
      } else {
        return Error("unknown attribute kind '" + std::string(key) + "'");
      }
    }
    if (!seen) return Error("bad attribute value");
    return Status::Ok();
  }
  Status ReadAttrs(od::value v) {
    od::object a;
    if (v.get_object().get(a) != simdjson::SUCCESS) {  // no attributes
      if (auto err = Skip(v)) return Syntax(err);
      return Status::Ok();
    }
    std::vector<Attrs::Entry> entries;
    for (auto field : a) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) return Error("bad attribute value");
      AttrValue value;
      PLIR_RETURN_IF_ERROR(AttrValueOf(field.value(), 0, &value));
      entries.emplace_back(Symbol(key), std::move(value));
    }
    auto made = Attrs::Make(std::move(entries));
    if (!made.ok()) return Error(made.status().message());
    attrs_ = std::move(made).value();
    return Status::Ok();
  }

  // One pass over the node object's fields.
  Status ReadFields(od::object o) {
    present_ = 0;
    kids_.clear();
    dims_.clear();
    shape_error_.clear();
    attrs_ = Attrs();
    n_attr_types_ = 0;
    for (auto field : o) {
      std::string_view key;
      if (auto err = field.unescaped_key().get(key)) return Syntax(err);
      int slot = FieldSlot(key);
      od::value v = field.value();
      if (slot < 0 || Has(static_cast<Field>(slot))) {  // unknown or repeated: ignored
        if (auto err = Skip(v)) return Syntax(err);
        continue;
      }
      bool ok = true;
      switch (slot) {
        case kK:
          ok = v.get_string().get(kind_name_) == simdjson::SUCCESS;
          break;
        case kC:
          PLIR_RETURN_IF_ERROR(ReadChildren(v));
          break;
        case kDt:
          ok = v.get_string().get(dt_) == simdjson::SUCCESS;
          break;
        case kShape:
          PLIR_RETURN_IF_ERROR(ReadShape(v));
          continue;
        case kNdim:
          ok = v.get_int64().get(ndim_) == simdjson::SUCCESS;
          break;
        case kN:
          ok = v.get_string().get(name_) == simdjson::SUCCESS;
          break;
        case kDataflow:
          ok = v.get_bool().get(dataflow_) == simdjson::SUCCESS;
          break;
        case kPure:
          ok = v.get_bool().get(pure_) == simdjson::SUCCESS;
          break;
        case kI:
          ok = v.get_int64().get(index_) == simdjson::SUCCESS;
          break;
        case kV:
          ok = ReadScalar(v, &value_);
          break;
        case kHex:
          ok = v.get_string().get(hex_) == simdjson::SUCCESS;
          break;
        case kNargs:
          ok = v.get_uint64().get(nargs_) == simdjson::SUCCESS;
          break;
        case kNsinfo:
          ok = v.get_uint64().get(nsinfo_) == simdjson::SUCCESS;
          break;
        case kAttrs:
          PLIR_RETURN_IF_ERROR(ReadAttrs(v));
          break;
      }
      if (ok) {
        present_ |= 1u << slot;
      } else if (auto err = Skip(v)) {  // of another type than expected: counts as missing
        return Syntax(err);
      }
    }
    return Status::Ok();
  }

  // --- building ------------------------------------------------------------
  template <typename T>
  Status Child(size_t i, Ref<T>* out) const {
    if (i >= kids_.size()) return Error("missing child " + std::to_string(i));
    const Ref<Node>& n = nodes_[kids_[i]];
    bool ok;
    if constexpr (std::is_same_v<T, TypeNode>)
      ok = IsTypeKind(n->kind());
    else if constexpr (std::is_same_v<T, ExprNode>)
      ok = IsExprKind(n->kind());
    else
      ok = n->kind() == T::kKind;
    if (!ok)
      return Error("child " + std::to_string(i) + " is a " + NodeKindName(n->kind()) +
                   ", which does not fit here");
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
      return Error(std::string(NodeKindName(k)) + " needs " + std::to_string(n) +
                   " children, has " + std::to_string(kids_.size()));
    return Status::Ok();
  }
  Status DType(DataType* out) const {
    if (!Has(kDt)) {
      *out = DataType::kUnknown;
      return Status::Ok();
    }
    auto dt = ParseDataType(dt_);
    if (!dt) return Error("unknown dtype '" + std::string(dt_) + "'");
    *out = *dt;
    return Status::Ok();
  }
  Status Shape(bool* known, int* ndim) const {
    if (Has(kShape)) {
      if (!shape_error_.empty()) return Error(shape_error_);
      *known = true;
      return Status::Ok();
    }
    if (!Has(kNdim) || ndim_ < -1 || ndim_ > (1 << 20)) return Error("missing shape or ndim");
    *known = false;
    *ndim = static_cast<int>(ndim_);
    return Status::Ok();
  }
  Status Name(std::string* out) const {
    if (!Has(kN)) return Error("missing name \"n\"");
    out->assign(name_);
    return Status::Ok();
  }
  bool Flag() const { return Has(kDataflow) && dataflow_; }
  Status LoadNode(od::object o) {
    PLIR_RETURN_IF_ERROR(ReadFields(o));
    NodeKind kind;
    if (!Has(kK) || !KindFromName(kind_name_, &kind)) return Error("missing or unknown kind \"k\"");
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
        PLIR_RETURN_IF_ERROR(DType(&dt));
        bool known = false;
        int ndim = -1;
        PLIR_RETURN_IF_ERROR(Shape(&known, &ndim));
        if (kind == NodeKind::kTensorType)
          return Ref<Node>(known ? TensorTypeNode::Make(dims_, dt)
                                 : TensorTypeNode::MakeRank(ndim, dt));
        return Ref<Node>(known ? ShapeTypeNode::Make(dims_) : ShapeTypeNode::MakeRank(ndim));
      }
      case NodeKind::kShapeExpr: {
        bool known = false;
        int ndim = -1;
        PLIR_RETURN_IF_ERROR(Shape(&known, &ndim));
        if (!known) return Error("a shape value needs \"shape\"");
        return Ref<Node>(ShapeExprNode::Make(dims_));
      }
      case NodeKind::kPrimExpr: {
        bool known = false;
        int ndim = -1;
        PLIR_RETURN_IF_ERROR(Shape(&known, &ndim));
        if (!known || dims_.size() != 1)
          return Error("a PrimExpr needs \"shape\" with its one value");
        return Ref<Node>(PrimExprNode::Make(dims_[0]));
      }
      case NodeKind::kTupleType: {
        std::vector<Type> fields;
        PLIR_RETURN_IF_ERROR(Children(0, kids_.size(), &fields));
        std::vector<uint32_t> sizes;
        for (uint32_t k : kids_) sizes.push_back(type_sizes_[k]);
        PLIR_RETURN_IF_ERROR(internal::TupleTypeTreeSize(sizes, &type_size_).WithPrefix(Where()));
        return Ref<Node>(TupleTypeNode::Make(std::move(fields)));
      }
      case NodeKind::kFuncType: {  // parameter types, then the return type
        if (kids_.empty()) return Error("a Callable type needs a return type");
        std::vector<Type> fields;
        PLIR_RETURN_IF_ERROR(Children(0, kids_.size(), &fields));
        std::vector<uint32_t> sizes;
        for (uint32_t k : kids_) sizes.push_back(type_sizes_[k]);
        PLIR_RETURN_IF_ERROR(internal::TupleTypeTreeSize(sizes, &type_size_).WithPrefix(Where()));
        Type ret = fields.back();
        fields.pop_back();
        return Ref<Node>(
            FuncTypeNode::Make(std::move(fields), std::move(ret), !Has(kPure) || pure_));
      }
      case NodeKind::kLocalFn: {  // parameters, return type, body
        if (kids_.size() < 2) return Error("local function has too few children");
        size_t n_params = kids_.size() - 2;
        std::vector<Var> params;
        SeqExpr body;
        PLIR_RETURN_IF_ERROR(Children(0, n_params, &params));
        PLIR_RETURN_IF_ERROR(Child(n_params, &type));
        PLIR_RETURN_IF_ERROR(Child(n_params + 1, &body));
        return Ref<Node>(LocalFnNode::Make(std::move(params), std::move(type), std::move(body)));
      }
      case NodeKind::kObjectType:
        return Ref<Node>(ObjectTypeNode::Get());
      case NodeKind::kPrimType: {
        DataType dt;
        PLIR_RETURN_IF_ERROR(DType(&dt));
        // The text format writes Prim[dtype] with a known dtype only.
        if (dt == DataType::kUnknown)
          return InvalidArgument(Where() + ": a primitive type needs a dtype");
        if (Has(kShape)) {  // a known value: "shape": [value]
          bool known = false;
          int ndim = -1;
          PLIR_RETURN_IF_ERROR(Shape(&known, &ndim));
          if (dims_.size() != 1) return Error("a primitive type's value must be one dimension");
          return Ref<Node>(PrimTypeNode::MakeValue(dt, dims_[0]));
        }
        return Ref<Node>(PrimTypeNode::Make(dt));
      }
      case NodeKind::kVar: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 1));
        PLIR_RETURN_IF_ERROR(Child(0, &type));
        PLIR_RETURN_IF_ERROR(Name(&name));
        // Variables are numbered densely per item, in table (definition) order.
        return Ref<Node>(VarNode::Make(NameHint(name), std::move(type), Flag(), next_var_index_++));
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
        PLIR_RETURN_IF_ERROR(Child(0, &tuple));
        PLIR_RETURN_IF_ERROR(Child(1, &type));
        if (!Has(kI)) return Error("missing index \"i\"");
        return Ref<Node>(
            TupleGetItemNode::MakeUnchecked(std::move(tuple), index_, std::move(type)));
      }
      case NodeKind::kPrimValue: {
        DataType dt;
        PLIR_RETURN_IF_ERROR(DType(&dt));
        if (!Has(kV)) return Error("missing value \"v\"");
        if (dt == DataType::kFloat64) {
          double d;
          if (!value_.AsFloat(&d)) return Error("bad float value");
          return Ref<Node>(PrimValueNode::Float(d));
        }
        if (dt == DataType::kBool) {
          if (value_.kind != Scalar::kBool) return Error("bad bool value");
          return Ref<Node>(PrimValueNode::Bool(value_.b));
        }
        if (value_.kind != Scalar::kNumber || !value_.is_int) return Error("bad int value");
        if (dt != DataType::kInt64) return Error("bad primitive value dtype");
        return Ref<Node>(PrimValueNode::Int(value_.i));
      }
      case NodeKind::kConstant: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 1));
        PLIR_RETURN_IF_ERROR(Child(0, &type));
        PLIR_RETURN_IF_ERROR(internal::CheckConstantType(type).WithPrefix(Where()));
        if (!Has(kHex) || hex_.size() % 2) return Error("bad \"hex\" data");
        std::string bytes(hex_.size() / 2, '\0');
        auto h = [](char c) {
          return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        };
        for (size_t i = 0; i < bytes.size(); ++i) {
          int hi = h(hex_[2 * i]), lo = h(hex_[2 * i + 1]);
          if (hi < 0 || lo < 0) return Error("bad hex digit");
          bytes[i] = static_cast<char>(hi * 16 + lo);
        }
        auto c = ConstantNode::Make(std::move(type),
                                    std::make_shared<const TensorBytes>(std::move(bytes)));
        if (!c.ok()) return c.status().WithPrefix(Where());
        return Ref<Node>(std::move(c).value());
      }
      case NodeKind::kCall: {
        if (!Has(kNargs) || !Has(kNsinfo) || nargs_ > kids_.size() || nsinfo_ > kids_.size())
          return Error("bad nargs/nsinfo");
        size_t fixed = 2 + nargs_ + nsinfo_;
        if (kids_.size() < fixed) return Error("call has too few children");
        Expr callee;
        std::vector<Expr> args;
        std::vector<Type> sinfo;
        PLIR_RETURN_IF_ERROR(Child(0, &callee));
        PLIR_RETURN_IF_ERROR(Children(1, nargs_, &args));
        PLIR_RETURN_IF_ERROR(Children(1 + nargs_, nsinfo_, &sinfo));
        PLIR_RETURN_IF_ERROR(Child(fixed - 1, &type));
        return Ref<Node>(CallNode::MakeUnchecked(std::move(callee), std::move(args),
                                                 std::move(attrs_), std::move(sinfo),
                                                 std::move(type)));
      }
      case NodeKind::kIf: {
        PLIR_RETURN_IF_ERROR(ExpectChildren(kind, 4));
        Expr cond;
        SeqExpr then_body, else_body;
        PLIR_RETURN_IF_ERROR(Child(0, &cond));
        PLIR_RETURN_IF_ERROR(Child(1, &then_body));
        PLIR_RETURN_IF_ERROR(Child(2, &else_body));
        PLIR_RETURN_IF_ERROR(Child(3, &type));
        return Ref<Node>(IfNode::MakeUnchecked(std::move(cond), std::move(then_body),
                                               std::move(else_body), std::move(type)));
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
        return Ref<Node>(BindingBlockNode::Make(std::move(bindings), Flag()));
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
        // Children: the parameters, the return type, the body (def), then
        // the types used in attributes.
        size_t tail = (is_def ? 2 : 1) + n_attr_types_;
        if (kids_.size() < tail) return Error("item has too few children");
        size_t n_params = kids_.size() - tail;
        next_var_index_ = 0;  // the next item's variables
        std::vector<Var> params;
        PLIR_RETURN_IF_ERROR(Children(0, n_params, &params));
        PLIR_RETURN_IF_ERROR(Child(n_params, &type));
        if (!is_def)
          return Ref<Node>(ExternFuncNode::Make(std::move(name), std::move(params), std::move(type),
                                                std::move(attrs_)));
        SeqExpr body;
        PLIR_RETURN_IF_ERROR(Child(n_params + 1, &body));
        return Ref<Node>(FunctionNode::Make(std::move(name), std::move(params), std::move(type),
                                            std::move(body), std::move(attrs_)));
      }
    }
    return Error("unknown node kind");
  }

  std::vector<Ref<Node>> nodes_;
  uint32_t next_var_index_ = 0;       // dense variable numbers, per item
  std::vector<uint32_t> type_sizes_;  // per node: its tree size if a type
  uint32_t type_size_ = 1;            // the current node's
  size_t id_ = 0;                     // the current node's id
  // The current node's fields (valid where present_ has their bit).
  uint32_t present_ = 0;
  std::string_view kind_name_, dt_, name_, hex_;
  std::vector<uint32_t> kids_;
  std::vector<Dim> dims_;
  std::string shape_error_;
  int64_t ndim_ = -1, index_ = 0;
  bool dataflow_ = false;
  bool pure_ = true;
  Scalar value_;
  uint64_t nargs_ = 0, nsinfo_ = 0;
  Attrs attrs_;
  size_t n_attr_types_ = 0;
};

// Parses `text`, which must be followed by SIMDJSON_PADDING readable bytes if
// `padded` (else it is copied into a padded buffer first).

}  // namespace

namespace internal {
StatusOr<Module> LoadJsonText(std::string_view text, bool padded) {
  simdjson::padded_string copy;
  simdjson::padded_string_view view;
  if (padded) {
    view = simdjson::padded_string_view(text.data(), text.size(),
                                        text.size() + simdjson::SIMDJSON_PADDING);
  } else {
    copy = simdjson::padded_string(text);
    view = copy;
  }
  od::parser parser;
  od::document doc;
  if (auto err = parser.iterate(view).get(doc))
    return InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
  return JsonLoader().Load(doc);
}

}  // namespace internal

StatusOr<Module> LoadJson(std::string_view text) { return internal::LoadJsonText(text, false); }

}  // namespace plir
