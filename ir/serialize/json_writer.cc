// The JSON format's writer (schema: docs/serialization.md). A small
// hand-written emitter: the output is a fixed, flat schema whose only
// escaping is that of strings, and building a library DOM first would double
// the time and memory of saving.
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
      case NodeKind::kShapeExpr:  // flag is always set: {"k":"ShapeExpr","shape":[2,"n"]}
      case NodeKind::kPrimExpr:   // {"k":"PrimExpr","shape":["n + 1"]}
        if (r.kind == NodeKind::kTensorType && r.dtype != DataType::kUnknown)
          out_.append(",\"dt\":\"").append(DataTypeName(r.dtype)).push_back('"');
        if (r.flag) {
          out_.append(",\"shape\":[");
          for (size_t i = 0; i < r.dims.size(); ++i) {
            if (i) out_.push_back(',');
            if (r.dims[i].sym.empty())
              out_.append(std::to_string(r.dims[i].value));
            else
              JsonString(r.dims[i].sym, &out_);
          }
          out_.push_back(']');
        } else {
          out_.append(",\"ndim\":").append(std::to_string(r.ndim));
        }
        break;
      case NodeKind::kPrimType:
        if (r.dtype != DataType::kUnknown)
          out_.append(",\"dt\":\"").append(DataTypeName(r.dtype)).push_back('"');
        if (r.flag && r.dims.size() == 1) {  // a known value: "shape": [value]
          out_.append(",\"shape\":[");
          if (r.dims[0].sym.empty())
            out_.append(std::to_string(r.dims[0].value));
          else
            JsonString(r.dims[0].sym, &out_);
          out_.push_back(']');
        }
        break;
      case NodeKind::kFuncType:
        if (!r.flag) out_.append(",\"pure\":false");
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
      case NodeKind::kTupleGetItem:
        out_.append(",\"i\":").append(std::to_string(r.i));
        break;
      case NodeKind::kPrimValue:
        out_.append(",\"dt\":\"").append(DataTypeName(r.dtype)).append("\",\"v\":");
        if (r.dtype == DataType::kFloat64)
          JsonFloat(r.f, &out_);
        else if (r.dtype == DataType::kBool)
          out_.append(r.i ? "true" : "false");
        else
          out_.append(std::to_string(r.i));
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
      default:
        break;
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
      case AttrValue::Kind::kInt:
        out_.append("{\"int\":").append(std::to_string(a.i)).push_back('}');
        break;
      case AttrValue::Kind::kBool:
        out_.append(a.i ? "{\"bool\":true}" : "{\"bool\":false}");
        break;
      case AttrValue::Kind::kFloat:
        out_.append("{\"float\":");
        JsonFloat(a.f, &out_);
        out_.push_back('}');
        break;
      case AttrValue::Kind::kString:
        out_.append("{\"str\":");
        JsonString(a.s, &out_);
        out_.push_back('}');
        break;
      case AttrValue::Kind::kType:
        out_.append("{\"type\":").append(std::to_string(a.type_id)).push_back('}');
        break;
      case AttrValue::Kind::kList:
        out_.append("{\"list\":[");
        for (size_t i = 0; i < a.list.size(); ++i) {
          if (i) out_.push_back(',');
          Attr(a.list[i]);
        }
        out_.append("]}");
        break;
      case AttrValue::Kind::kMap:
        out_.append("{\"map\":{");
        for (size_t i = 0; i < a.list.size(); ++i) {
          if (i) out_.push_back(',');
          JsonString(a.list[i].key, &out_);
          out_.push_back(':');
          Attr(a.list[i]);
        }
        out_.append("}}");
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

}  // namespace

std::string SaveJson(const Module& m) {
  Writer w;
  std::vector<uint32_t> items = internal::FlattenModule(m, w);
  return w.Finish(items);
}

}  // namespace plir
