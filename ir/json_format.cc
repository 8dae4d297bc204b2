// The JSON format (schema: docs/serialization.md).
//
// Reading uses simdjson (Debian libsimdjson-dev): it parses at GB/s, which
// the JSON-load target (>= 200 MB/s of module text) needs; a DOM library
// such as nlohmann-json parses an order of magnitude slower. Writing is a
// small hand-written emitter: the output is a fixed, flat schema whose only
// escaping is that of strings, and building a library DOM first would double
// the time and memory of saving.
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/attrs.h"
#include "ir/internal/node_table.h"
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

StatusOr<double> FloatValue(simdjson::dom::element e) {
  double d;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    if (s == "nan") return NAN;
  }
  return InvalidArgument("expected a number");
}

StatusOr<RecordAttr> ParseAttr(simdjson::dom::element e, bool allow_list, size_t node) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS || o.size() != 1) return Bad(node, "bad attribute value");
  auto [key, v] = *o.begin();
  RecordAttr a;
  if (key == "int") {
    a.kind = AttrValue::Kind::kInt;
    if (v.get_int64().get(a.i) != simdjson::SUCCESS) return Bad(node, "bad int attribute");
  } else if (key == "bool") {
    a.kind = AttrValue::Kind::kBool;
    bool b;
    if (v.get_bool().get(b) != simdjson::SUCCESS) return Bad(node, "bad bool attribute");
    a.i = b;
  } else if (key == "float") {
    a.kind = AttrValue::Kind::kFloat;
    auto f = FloatValue(v);
    if (!f.ok()) return Bad(node, "bad float attribute");
    a.f = *f;
  } else if (key == "str") {
    a.kind = AttrValue::Kind::kString;
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) return Bad(node, "bad string attribute");
    a.s = std::string(s);
  } else if (key == "type") {
    a.kind = AttrValue::Kind::kType;
    uint64_t id;
    if (v.get_uint64().get(id) != simdjson::SUCCESS || id > UINT32_MAX) return Bad(node, "bad type attribute");
    a.type_id = static_cast<uint32_t>(id);
  } else if (key == "list" && allow_list) {
    a.kind = AttrValue::Kind::kList;
    simdjson::dom::array arr;
    if (v.get_array().get(arr) != simdjson::SUCCESS) return Bad(node, "bad list attribute");
    for (simdjson::dom::element x : arr) {
      PLIR_ASSIGN_OR_RETURN(RecordAttr item, ParseAttr(x, false, node));
      a.list.push_back(std::move(item));
    }
  } else {
    return Bad(node, "unknown attribute kind '" + std::string(key) + "'");
  }
  return a;
}

Status ParseRecord(simdjson::dom::object o, size_t node, Record* r) {
  *r = Record();
  std::string_view kind;
  if (o["k"].get_string().get(kind) != simdjson::SUCCESS || !internal::RecordKindFromName(kind, &r->kind))
    return Bad(node, "missing or unknown kind \"k\"");
  simdjson::dom::array children;
  if (o["c"].get_array().get(children) == simdjson::SUCCESS) {
    for (simdjson::dom::element c : children) {
      uint64_t id;
      if (c.get_uint64().get(id) != simdjson::SUCCESS || id >= node) return Bad(node, "child id out of range");
      r->children.push_back(static_cast<uint32_t>(id));
    }
  }
  std::string_view s;
  auto dtype = [&](DataType* out) -> Status {
    std::string_view name;
    if (o["dt"].get_string().get(name) != simdjson::SUCCESS) {
      *out = DataType::kUnknown;
      return Status::Ok();
    }
    auto dt = ParseDataType(name);
    if (!dt) return Bad(node, "unknown dtype '" + std::string(name) + "'");
    *out = *dt;
    return Status::Ok();
  };
  auto name = [&]() -> Status {
    if (o["n"].get_string().get(s) != simdjson::SUCCESS) return Bad(node, "missing name \"n\"");
    r->name = std::string(s);
    return Status::Ok();
  };
  auto attrs = [&]() -> Status {
    simdjson::dom::object a;
    if (o["attrs"].get_object().get(a) != simdjson::SUCCESS) return Status::Ok();
    for (auto [key, value] : a) {
      PLIR_ASSIGN_OR_RETURN(RecordAttr attr, ParseAttr(value, true, node));
      attr.key = std::string(key);
      r->attrs.push_back(std::move(attr));
    }
    return Status::Ok();
  };
  bool b;
  switch (r->kind) {
    case NodeKind::kTensorType:
    case NodeKind::kShapeType: {
      PLIR_RETURN_IF_ERROR(dtype(&r->dtype));
      simdjson::dom::array shape;
      if (o["shape"].get_array().get(shape) == simdjson::SUCCESS) {
        r->flag = true;
        for (simdjson::dom::element d : shape) {
          internal::DimRecord dim;
          if (d.get_int64().get(dim.value) != simdjson::SUCCESS) {
            if (d.get_string().get(s) != simdjson::SUCCESS || s.empty()) return Bad(node, "bad dimension");
            dim.sym = std::string(s);
          }
          r->dims.push_back(std::move(dim));
        }
        r->ndim = static_cast<int32_t>(r->dims.size());
      } else {
        int64_t nd = -1;
        if (o["ndim"].get_int64().get(nd) != simdjson::SUCCESS || nd < -1 || nd > (1 << 20))
          return Bad(node, "missing shape or ndim");
        r->ndim = static_cast<int32_t>(nd);
      }
      return Status::Ok();
    }
    case NodeKind::kPrimType: return dtype(&r->dtype);
    case NodeKind::kVar:
      r->flag = o["dataflow"].get_bool().get(b) == simdjson::SUCCESS && b;
      return name();
    case NodeKind::kGlobalVar:
    case NodeKind::kOp:
    case NodeKind::kStringImm: return name();
    case NodeKind::kTupleGetItem:
      if (o["i"].get_int64().get(r->i) != simdjson::SUCCESS) return Bad(node, "missing index \"i\"");
      return Status::Ok();
    case NodeKind::kPrimValue: {
      PLIR_RETURN_IF_ERROR(dtype(&r->dtype));
      simdjson::dom::element v;
      if (o["v"].get(v) != simdjson::SUCCESS) return Bad(node, "missing value \"v\"");
      if (r->dtype == DataType::kFloat64) {
        auto f = FloatValue(v);
        if (!f.ok()) return Bad(node, "bad float value");
        r->f = *f;
      } else if (r->dtype == DataType::kBool) {
        if (v.get_bool().get(b) != simdjson::SUCCESS) return Bad(node, "bad bool value");
        r->i = b;
      } else if (v.get_int64().get(r->i) != simdjson::SUCCESS) {
        return Bad(node, "bad int value");
      }
      return Status::Ok();
    }
    case NodeKind::kConstant: {
      if (o["hex"].get_string().get(s) != simdjson::SUCCESS || s.size() % 2) return Bad(node, "bad \"hex\" data");
      r->bytes.resize(s.size() / 2);
      for (size_t i = 0; i < r->bytes.size(); ++i) {
        auto h = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
        int hi = h(s[2 * i]), lo = h(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return Bad(node, "bad hex digit");
        r->bytes[i] = static_cast<char>(hi * 16 + lo);
      }
      return Status::Ok();
    }
    case NodeKind::kCall: {
      uint64_t na, ns;
      if (o["nargs"].get_uint64().get(na) != simdjson::SUCCESS || o["nsinfo"].get_uint64().get(ns) != simdjson::SUCCESS ||
          na > r->children.size() || ns > r->children.size())
        return Bad(node, "bad nargs/nsinfo");
      r->n_args = static_cast<uint32_t>(na);
      r->n_sinfo = static_cast<uint32_t>(ns);
      return attrs();
    }
    case NodeKind::kBindingBlock:
      r->flag = o["dataflow"].get_bool().get(b) == simdjson::SUCCESS && b;
      return Status::Ok();
    case NodeKind::kFunction:
    case NodeKind::kExternFunc:
      PLIR_RETURN_IF_ERROR(name());
      return attrs();
    default:
      return Status::Ok();
  }
}

}  // namespace

std::string SaveJson(const Module& m) {
  Writer w;
  std::vector<uint32_t> items = internal::FlattenModule(m, w);
  return w.Finish(items);
}

StatusOr<Module> LoadJson(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element doc;
  auto err = parser.parse(padded).get(doc);
  if (err) return InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
  std::string_view format;
  int64_t version;
  if (doc["format"].get_string().get(format) != simdjson::SUCCESS || format != "plir")
    return InvalidArgument("not a PLIR JSON module (\"format\" is not \"plir\")");
  if (doc["version"].get_int64().get(version) != simdjson::SUCCESS || version != kJsonFormatVersion)
    return InvalidArgument("unsupported PLIR JSON version; this PLIR reads version " +
                           std::to_string(kJsonFormatVersion));
  simdjson::dom::array nodes, items;
  if (doc["nodes"].get_array().get(nodes) != simdjson::SUCCESS || doc["items"].get_array().get(items) != simdjson::SUCCESS)
    return InvalidArgument("invalid JSON module: \"nodes\" and \"items\" must be arrays");
  internal::NodeBuilder builder;
  Record r;
  size_t i = 0;
  for (simdjson::dom::element e : nodes) {
    simdjson::dom::object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) return Bad(i, "not an object");
    PLIR_RETURN_IF_ERROR(ParseRecord(o, i, &r));
    Status s = builder.Add(r);
    if (!s.ok()) return InvalidArgument("invalid JSON module: " + s.message());
    ++i;
  }
  std::vector<uint32_t> ids;
  for (simdjson::dom::element e : items) {
    uint64_t id;
    if (e.get_uint64().get(id) != simdjson::SUCCESS || id >= i) return InvalidArgument("invalid JSON module: bad item id");
    ids.push_back(static_cast<uint32_t>(id));
  }
  auto m = builder.Finish(ids);
  if (!m.ok()) return InvalidArgument("invalid JSON module: " + m.status().message());
  return m;
}

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

}  // namespace plir
