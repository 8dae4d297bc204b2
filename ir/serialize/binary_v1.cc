// Version 1 of the binary format: a header (magic, version, payload length,
// checksum), then LEB128 records of the shared node table. Read for old
// files; written only by tests (internal::SaveBinaryV1).
#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/internal/pointer_map.h"
#include "ir/internal/radix_sort.h"
#include "ir/op.h"
#include "ir/serialize/binary_internal.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"
#include "ir/support/fnv.h"
#include "ir/var_map.h"

namespace plir {
namespace {

// Version 1 files were written with a mistyped offset basis (a digit
// dropped from 14695981039346656037); they are accepted with either basis.
inline constexpr uint64_t kV1LegacyOffsetBasis = 1469598103934665603ull;  // 0x14650fb0739d0383

namespace v1 {

using internal::Record;
using internal::RecordAttr;

class Writer : public internal::RecordSink {
 public:
  void Write(const Record& r) override {
    Byte(static_cast<uint8_t>(r.kind));
    Var(r.children.size());
    for (uint32_t c : r.children) Var(count_ - c);
    switch (r.kind) {
      case NodeKind::kTensorType:
      case NodeKind::kShapeType:
      case NodeKind::kShapeExpr:
      case NodeKind::kPrimExpr:
        Byte(static_cast<uint8_t>(r.dtype));
        Signed(r.ndim);
        Byte(r.flag);
        Var(r.dims.size());
        for (const auto& d : r.dims) {
          Signed(d.value);
          Var(d.sym.empty() ? 0 : Str(d.sym) + 1);
        }
        break;
      case NodeKind::kPrimType:
        // With a known value (Prim[int64, value=n]): dtype | 0x80, then the dim.
        Byte(static_cast<uint8_t>(r.dtype) | (r.flag ? 0x80 : 0));
        if (r.flag && r.dims.size() == 1) {
          Signed(r.dims[0].value);
          Var(r.dims[0].sym.empty() ? 0 : Str(r.dims[0].sym) + 1);
        }
        break;
      case NodeKind::kFuncType:
        Byte(r.flag);
        break;  // pure
      case NodeKind::kVar:
        Var(Str(r.name));
        Byte(r.flag);
        break;
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kStringImm:
        Var(Str(r.name));
        break;
      case NodeKind::kTupleGetItem:
        Signed(r.i);
        break;
      case NodeKind::kPrimValue:
        Byte(static_cast<uint8_t>(r.dtype));
        Signed(r.i);
        Raw(&r.f, 8);
        break;
      case NodeKind::kConstant:
        Var(r.bytes.size());
        out_.append(r.bytes);
        break;
      case NodeKind::kCall:
        Var(r.n_args);
        Var(r.n_sinfo);
        Attrs(r.attrs);
        break;
      case NodeKind::kBindingBlock:
        Byte(r.flag);
        break;
      case NodeKind::kFunction:
      case NodeKind::kExternFunc:
        Var(Str(r.name));
        Attrs(r.attrs);
        break;
      default:
        break;
    }
    ++count_;
  }

  std::string Finish(const std::vector<uint32_t>& items) {
    std::string payload;
    payload.reserve(out_.size() + strings_size_ + 64);
    std::string tmp;
    tmp.swap(out_);
    Var(strings_.size());
    for (const std::string& s : strings_) {
      Var(s.size());
      out_.append(s);
    }
    Var(count_);
    payload.append(out_);
    payload.append(tmp);
    out_.clear();
    Var(items.size());
    for (uint32_t id : items) Var(id);
    payload.append(out_);
    std::string file(kBinaryMagic, 8);
    auto u32 = [&](uint32_t v) { file.append(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](uint64_t v) { file.append(reinterpret_cast<const char*>(&v), 8); };
    u32(1);
    u32(0);
    u64(payload.size());
    u64(Fnv1a64(payload, kV1LegacyOffsetBasis));  // as PLIR wrote version 1
    file.append(payload);
    return file;
  }

 private:
  void Byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void Raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void Var(uint64_t v) {
    char buf[10];
    out_.append(buf, static_cast<size_t>(internal::binary::PutVarint(buf, v) - buf));
  }
  void Signed(int64_t v) { Var(internal::binary::ZigZag(v)); }
  uint32_t Str(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
    if (inserted) {
      strings_.push_back(s);
      strings_size_ += s.size() + 2;
    }
    return it->second;
  }
  void Attr(const RecordAttr& a) {
    Byte(static_cast<uint8_t>(a.kind));
    switch (a.kind) {
      case AttrValue::Kind::kInt:
        Signed(a.i);
        break;
      case AttrValue::Kind::kBool:
        Byte(a.i != 0);
        break;
      case AttrValue::Kind::kFloat:
        Raw(&a.f, 8);
        break;
      case AttrValue::Kind::kString:
        Var(Str(a.s));
        break;
      case AttrValue::Kind::kType:
        Var(a.type_id);
        break;
      case AttrValue::Kind::kList:
        Var(a.list.size());
        for (const RecordAttr& e : a.list) Attr(e);
        break;
      case AttrValue::Kind::kMap:
        Var(a.list.size());
        for (const RecordAttr& e : a.list) {
          Var(Str(e.key));
          Attr(e);
        }
        break;
    }
  }
  void Attrs(const std::vector<RecordAttr>& attrs) {
    Var(attrs.size());
    for (const RecordAttr& a : attrs) {
      Var(Str(a.key));
      Attr(a);
    }
  }

  std::string out_;
  uint32_t count_ = 0;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
  size_t strings_size_ = 0;
};

class Reader {
 public:
  explicit Reader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  StatusOr<Module> Read() {
    uint64_t n_strings = 0;
    PLIR_RETURN_IF_ERROR(Var(&n_strings));
    if (n_strings > Remaining()) return Corrupt("string count exceeds the file size");
    strings_.reserve(n_strings);
    for (uint64_t i = 0; i < n_strings; ++i) {
      uint64_t len = 0;
      PLIR_RETURN_IF_ERROR(Var(&len));
      if (len > Remaining()) return Corrupt("string length exceeds the file size");
      strings_.emplace_back(p_, len);
      p_ += len;
    }
    uint64_t n_nodes = 0;
    PLIR_RETURN_IF_ERROR(Var(&n_nodes));
    if (n_nodes > Remaining() / 2) return Corrupt("node count exceeds the file size");
    internal::NodeBuilder builder;
    Record r;
    for (uint64_t id = 0; id < n_nodes; ++id) {
      PLIR_RETURN_IF_ERROR(ReadRecord(id, &r));
      Status s = builder.Add(r);
      if (!s.ok()) return Corrupt(s.message());
    }
    uint64_t n_items = 0;
    PLIR_RETURN_IF_ERROR(Var(&n_items));
    if (n_items > Remaining()) return Corrupt("item count exceeds the file size");
    std::vector<uint32_t> items;
    for (uint64_t i = 0; i < n_items; ++i) {
      uint64_t id = 0;
      PLIR_RETURN_IF_ERROR(Var(&id));
      if (id >= n_nodes) return Corrupt("item id out of range");
      items.push_back(static_cast<uint32_t>(id));
    }
    if (p_ != end_) return Corrupt("trailing bytes after the module");
    auto m = builder.Finish(items);
    if (!m.ok()) return Corrupt(m.status().message());
    return m;
  }

 private:
  size_t Remaining() const { return static_cast<size_t>(end_ - p_); }
  static Status Corrupt(const std::string& what) {
    return InvalidArgument("corrupt binary module: " + what);
  }
  Status Byte(uint8_t* b) {
    if (p_ >= end_) return Corrupt("unexpected end of data");
    *b = static_cast<uint8_t>(*p_++);
    return Status::Ok();
  }
  Status Var(uint64_t* v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return Corrupt("unexpected end of data");
      uint8_t b = static_cast<uint8_t>(*p_++);
      x |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *v = x;
        return Status::Ok();
      }
    }
    return Corrupt("varint too long");
  }
  Status Signed(int64_t* v) {
    uint64_t u = 0;
    PLIR_RETURN_IF_ERROR(Var(&u));
    *v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return Status::Ok();
  }
  Status Raw(void* out, size_t n) {
    if (Remaining() < n) return Corrupt("unexpected end of data");
    std::memcpy(out, p_, n);
    p_ += n;
    return Status::Ok();
  }
  Status Str(std::string* s) {
    uint64_t i = 0;
    PLIR_RETURN_IF_ERROR(Var(&i));
    if (i >= strings_.size()) return Corrupt("string index out of range");
    s->assign(strings_[i]);
    return Status::Ok();
  }
  Status DType(DataType* dt) {
    uint8_t b = 0;
    PLIR_RETURN_IF_ERROR(Byte(&b));
    if (b > static_cast<uint8_t>(DataType::kFloat64)) return Corrupt("bad dtype");
    *dt = static_cast<DataType>(b);
    return Status::Ok();
  }
  Status Attr(RecordAttr* a, int depth) {
    uint8_t k = 0;
    PLIR_RETURN_IF_ERROR(Byte(&k));
    if (k > static_cast<uint8_t>(AttrValue::Kind::kMap)) return Corrupt("bad attribute kind");
    a->kind = static_cast<AttrValue::Kind>(k);
    a->list.clear();
    switch (a->kind) {
      case AttrValue::Kind::kInt:
        return Signed(&a->i);
      case AttrValue::Kind::kBool: {
        uint8_t b = 0;
        PLIR_RETURN_IF_ERROR(Byte(&b));
        a->i = b != 0;
        return Status::Ok();
      }
      case AttrValue::Kind::kFloat:
        return Raw(&a->f, 8);
      case AttrValue::Kind::kString:
        return Str(&a->s);
      case AttrValue::Kind::kType: {
        uint64_t id = 0;
        PLIR_RETURN_IF_ERROR(Var(&id));
        if (id > UINT32_MAX) return Corrupt("type id out of range");
        a->type_id = static_cast<uint32_t>(id);
        return Status::Ok();
      }
      case AttrValue::Kind::kList:
      case AttrValue::Kind::kMap: {
        if (depth >= AttrValue::kMaxAttrDepth) return Corrupt("attribute value nested too deep");
        uint64_t n = 0;
        PLIR_RETURN_IF_ERROR(Var(&n));
        if (n > Remaining()) return Corrupt("list length exceeds the file size");
        a->list.resize(n);
        for (auto& e : a->list) {
          if (a->kind == AttrValue::Kind::kMap) PLIR_RETURN_IF_ERROR(Str(&e.key));
          PLIR_RETURN_IF_ERROR(Attr(&e, depth + 1));
        }
        return Status::Ok();
      }
    }
    return Corrupt("bad attribute");
  }
  Status Attrs(std::vector<RecordAttr>* attrs) {
    uint64_t n = 0;
    PLIR_RETURN_IF_ERROR(Var(&n));
    if (n > Remaining()) return Corrupt("attribute count exceeds the file size");
    attrs->resize(n);
    for (auto& a : *attrs) {
      PLIR_RETURN_IF_ERROR(Str(&a.key));
      PLIR_RETURN_IF_ERROR(Attr(&a, 0));
    }
    return Status::Ok();
  }
  Status Dims(Record* r) {
    uint64_t n = 0;
    PLIR_RETURN_IF_ERROR(Var(&n));
    if (n > Remaining()) return Corrupt("rank exceeds the file size");
    r->dims.resize(n);
    for (auto& d : r->dims) {
      PLIR_RETURN_IF_ERROR(Signed(&d.value));
      uint64_t sym = 0;
      PLIR_RETURN_IF_ERROR(Var(&sym));
      d.sym.clear();
      if (sym) {
        if (sym - 1 >= strings_.size()) return Corrupt("string index out of range");
        d.sym = strings_[sym - 1];
      }
    }
    return Status::Ok();
  }

  Status ReadRecord(uint64_t id, Record* r) {
    uint8_t k = 0;
    PLIR_RETURN_IF_ERROR(Byte(&k));
    if (!IsKnownNodeKind(k)) return Corrupt("bad node kind at node " + std::to_string(id));
    r->kind = static_cast<NodeKind>(k);
    uint64_t n = 0;
    PLIR_RETURN_IF_ERROR(Var(&n));
    if (n > Remaining()) return Corrupt("child count exceeds the file size");
    r->children.resize(n);
    for (auto& c : r->children) {
      uint64_t back = 0;
      PLIR_RETURN_IF_ERROR(Var(&back));
      if (back == 0 || back > id)
        return Corrupt("child id out of range at node " + std::to_string(id));
      c = static_cast<uint32_t>(id - back);
    }
    r->attrs.clear();
    r->dims.clear();
    switch (r->kind) {
      case NodeKind::kTensorType:
      case NodeKind::kShapeType:
      case NodeKind::kShapeExpr:
      case NodeKind::kPrimExpr: {
        PLIR_RETURN_IF_ERROR(DType(&r->dtype));
        int64_t nd;
        PLIR_RETURN_IF_ERROR(Signed(&nd));
        if (nd < -1 || nd > (1 << 20)) return Corrupt("bad rank");
        r->ndim = static_cast<int32_t>(nd);
        uint8_t f = 0;
        PLIR_RETURN_IF_ERROR(Byte(&f));
        r->flag = f != 0;
        return Dims(r);
      }
      case NodeKind::kPrimType: {
        uint8_t b = 0;
        PLIR_RETURN_IF_ERROR(Byte(&b));
        if ((b & 0x7f) > static_cast<uint8_t>(DataType::kFloat64)) return Corrupt("bad dtype");
        r->dtype = static_cast<DataType>(b & 0x7f);
        r->flag = (b & 0x80) != 0;
        if (!r->flag) return Status::Ok();
        r->dims.resize(1);
        PLIR_RETURN_IF_ERROR(Signed(&r->dims[0].value));
        uint64_t sym = 0;
        PLIR_RETURN_IF_ERROR(Var(&sym));
        if (sym) {
          if (sym - 1 >= strings_.size()) return Corrupt("string index out of range");
          r->dims[0].sym = strings_[sym - 1];
        }
        return Status::Ok();
      }
      case NodeKind::kFuncType: {
        uint8_t f = 0;
        PLIR_RETURN_IF_ERROR(Byte(&f));
        r->flag = f != 0;
        return Status::Ok();
      }
      case NodeKind::kVar: {
        PLIR_RETURN_IF_ERROR(Str(&r->name));
        uint8_t f = 0;
        PLIR_RETURN_IF_ERROR(Byte(&f));
        r->flag = f != 0;
        return Status::Ok();
      }
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kStringImm:
        return Str(&r->name);
      case NodeKind::kTupleGetItem:
        return Signed(&r->i);
      case NodeKind::kPrimValue:
        PLIR_RETURN_IF_ERROR(DType(&r->dtype));
        PLIR_RETURN_IF_ERROR(Signed(&r->i));
        return Raw(&r->f, 8);
      case NodeKind::kConstant: {
        uint64_t len = 0;
        PLIR_RETURN_IF_ERROR(Var(&len));
        if (len > Remaining()) return Corrupt("constant size exceeds the file size");
        r->bytes.assign(p_, len);
        p_ += len;
        return Status::Ok();
      }
      case NodeKind::kCall: {
        uint64_t a, s;
        PLIR_RETURN_IF_ERROR(Var(&a));
        PLIR_RETURN_IF_ERROR(Var(&s));
        if (a > n || s > n) return Corrupt("bad call argument counts");
        r->n_args = static_cast<uint32_t>(a);
        r->n_sinfo = static_cast<uint32_t>(s);
        return Attrs(&r->attrs);
      }
      case NodeKind::kBindingBlock: {
        uint8_t f = 0;
        PLIR_RETURN_IF_ERROR(Byte(&f));
        r->flag = f != 0;
        return Status::Ok();
      }
      case NodeKind::kFunction:
      case NodeKind::kExternFunc:
        PLIR_RETURN_IF_ERROR(Str(&r->name));
        return Attrs(&r->attrs);
      default:
        return Status::Ok();
    }
  }

  const char* p_;
  const char* end_;
  std::vector<std::string> strings_;
};

}  // namespace v1

}  // namespace

namespace internal {
std::string SaveBinaryV1(const Module& m) {
  v1::Writer w;
  std::vector<uint32_t> items = FlattenModule(m, w);
  return w.Finish(items);
}

StatusOr<Module> binary::ReadV1(std::string_view payload, uint64_t checksum) {
  if (checksum != Fnv1a64(payload) && checksum != Fnv1a64(payload, kV1LegacyOffsetBasis))
    return InvalidArgument("corrupt binary module: checksum mismatch");
  return v1::Reader(payload).Read();
}
}  // namespace internal

}  // namespace plir
