// The binary format (docs/serialization.md).
//
// Version 2 (written by SaveBinary) is laid out for loading: a fixed header
// with every section's count and size, then a string table (one blob and
// end offsets), a type table, a table of distinct attribute sets, the other
// nodes in post-order, and the items. Records refer to strings, types,
// attribute sets and earlier nodes by index, so the loader makes one linear
// pass and builds each node straight from its record. Version 1 (LEB128
// records through the shared node table, node_table.h) is still read.
#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/internal/node_table.h"
#include "ir/internal/pointer_map.h"
#include "ir/internal/radix_sort.h"
#include "ir/op.h"
#include "ir/serialize.h"
#include "ir/var_map.h"

namespace plir {

// FNV-1a 64 as published (http://www.isthe.com/chongo/tech/comp/fnv/):
// for each byte, hash ^= byte, then hash *= prime, modulo 2^64.
inline constexpr uint64_t kFnv64OffsetBasis = 0xcbf29ce484222325ull;  // 14695981039346656037
inline constexpr uint64_t kFnv64Prime = 0x100000001b3ull;             // 1099511628211

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = kFnv64OffsetBasis;
  for (unsigned char c : bytes) h = (h ^ c) * kFnv64Prime;
  return h;
}

namespace {

// Version 1 files were written with a mistyped offset basis (a digit
// dropped from 14695981039346656037); they are accepted with either basis.
inline constexpr uint64_t kV1LegacyOffsetBasis = 1469598103934665603ull;  // 0x14650fb0739d0383

void Fnv1a64Both(std::string_view bytes, uint64_t* standard, uint64_t* legacy) {
  uint64_t a = kFnv64OffsetBasis, b = kV1LegacyOffsetBasis;
  for (unsigned char c : bytes) {
    a = (a ^ c) * kFnv64Prime;
    b = (b ^ c) * kFnv64Prime;
  }
  *standard = a;
  *legacy = b;
}

// ===========================================================================
// Version 1: a header (magic, version, payload length, checksum), then LEB128
// records of the shared node table.

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
      case NodeKind::kFuncType: Byte(r.flag); break;  // pure
      case NodeKind::kVar:
        Var(Str(r.name));
        Byte(r.flag);
        break;
      case NodeKind::kGlobalVar:
      case NodeKind::kOp:
      case NodeKind::kStringImm: Var(Str(r.name)); break;
      case NodeKind::kTupleGetItem: Signed(r.i); break;
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
      case NodeKind::kBindingBlock: Byte(r.flag); break;
      case NodeKind::kFunction:
      case NodeKind::kExternFunc:
        Var(Str(r.name));
        Attrs(r.attrs);
        break;
      default: break;
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
    uint64_t standard, legacy;
    Fnv1a64Both(payload, &standard, &legacy);
    u64(legacy);  // as PLIR wrote version 1
    file.append(payload);
    return file;
  }

 private:
  void Byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void Raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void Var(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Signed(int64_t v) { Var((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
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
      case AttrValue::Kind::kInt: Signed(a.i); break;
      case AttrValue::Kind::kBool: Byte(a.i != 0); break;
      case AttrValue::Kind::kFloat: Raw(&a.f, 8); break;
      case AttrValue::Kind::kString: Var(Str(a.s)); break;
      case AttrValue::Kind::kType: Var(a.type_id); break;
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
      case AttrValue::Kind::kInt: return Signed(&a->i);
      case AttrValue::Kind::kBool: {
        uint8_t b = 0;
        PLIR_RETURN_IF_ERROR(Byte(&b));
        a->i = b != 0;
        return Status::Ok();
      }
      case AttrValue::Kind::kFloat: return Raw(&a->f, 8);
      case AttrValue::Kind::kString: return Str(&a->s);
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
      if (back == 0 || back > id) return Corrupt("child id out of range at node " + std::to_string(id));
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
      case NodeKind::kStringImm: return Str(&r->name);
      case NodeKind::kTupleGetItem: return Signed(&r->i);
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

// ===========================================================================
// Version 2.

namespace v2 {

constexpr size_t kHeaderSize = 32;          // magic, version, flags, length, checksum
constexpr size_t kSectionTableSize = 80;    // 5 x (u64 count, u64 bytes)
constexpr size_t kPreambleSize = kHeaderSize + kSectionTableSize;
enum Section { kStrings, kTypes, kAttrSets, kNodes, kItems, kNumSections };
const char* const kSectionNames[kNumSections] = {"string", "type", "attribute", "node", "item"};
constexpr uint8_t kShapeUnknown = 0;  // type records: rank only (maybe -1)
constexpr uint8_t kShapeKnown = 1;    // type records: the dims follow

// Appends little-endian integers and LEB128 varints to a string.
class Out {
 public:
  std::string bytes;
  void Byte(uint8_t b) { bytes.push_back(static_cast<char>(b)); }
  void Raw(const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); }
  void Var(uint64_t v) {
    if (v < 0x80) return Byte(static_cast<uint8_t>(v));
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    bytes.append(buf, n);
  }
  void Signed(int64_t v) { Var((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void F64(double d) { Raw(&d, 8); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
};

// The node children of `n` that the node table refers to (types and
// attribute sets live in their own tables): the i-th, or null past the end.
const Node* NodeChild(const Node* n, size_t i) {
  switch (n->kind()) {
    case NodeKind::kTuple: {
      const auto& f = static_cast<const TupleNode*>(n)->fields();
      return i < f.size() ? f[i].get() : nullptr;
    }
    case NodeKind::kTupleGetItem: return i == 0 ? static_cast<const TupleGetItemNode*>(n)->tuple().get() : nullptr;
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      if (i == 0) return c->callee().get();
      return i - 1 < c->args().size() ? c->args()[i - 1].get() : nullptr;
    }
    case NodeKind::kIf: {
      auto* f = static_cast<const IfNode*>(n);
      return i == 0 ? static_cast<const Node*>(f->cond().get())
             : i == 1 ? f->then_body().get()
             : i == 2 ? f->else_body().get()
                      : nullptr;
    }
    case NodeKind::kSeqExpr: {
      auto* s = static_cast<const SeqExprNode*>(n);
      if (i < s->blocks().size()) return s->blocks()[i].get();
      return i == s->blocks().size() ? s->result().get() : nullptr;
    }
    case NodeKind::kBindingBlock: {
      const auto& b = static_cast<const BindingBlockNode*>(n)->bindings();
      return i < b.size() ? b[i].get() : nullptr;
    }
    case NodeKind::kVarBinding: {
      auto* b = static_cast<const VarBindingNode*>(n);
      return i == 0 ? static_cast<const Node*>(b->var().get()) : i == 1 ? b->value().get() : nullptr;
    }
    case NodeKind::kFunction:
    case NodeKind::kExternFunc: {
      auto* f = static_cast<const ItemNode*>(n);
      if (i < f->params().size()) return f->params()[i].get();
      if (i == f->params().size() && n->kind() == NodeKind::kFunction)
        return static_cast<const FunctionNode*>(n)->body().get();
      return nullptr;
    }
    case NodeKind::kLocalFn: {
      auto* f = static_cast<const LocalFnNode*>(n);
      if (i < f->params().size()) return f->params()[i].get();
      return i == f->params().size() ? f->body().get() : nullptr;
    }
    default: return nullptr;
  }
}

class Writer {
 public:
  std::string Save(const Module& m) {
    for (const Item& item : m.items()) {
      item_vars_.Clear();
      items_.Var(Flatten(item.get()));
    }
    if (!exact_vars_ && AnyVariableEmittedTwice()) {
      // A variable shared by two items (an ill-formed module): write again,
      // keeping every variable in the module-wide table, so that its
      // identity survives the round trip.
      Writer exact;
      exact.exact_vars_ = true;
      return exact.Save(m);
    }
    // Assemble: header, section table, sections.
    size_t string_bytes = 4 * string_ends_.size() + blob_.size();
    const std::string* sections[kNumSections] = {nullptr, &types_.bytes, &attrs_.bytes, &nodes_.bytes,
                                                 &items_.bytes};
    uint64_t counts[kNumSections] = {string_ends_.size(), n_types_, n_attrs_, n_nodes_, m.items().size()};
    uint64_t sizes[kNumSections] = {string_bytes, types_.bytes.size(), attrs_.bytes.size(), nodes_.bytes.size(),
                                    items_.bytes.size()};
    size_t total = kPreambleSize;
    for (uint64_t s : sizes) total += s;
    std::string file;
    file.reserve(total);
    Out h;
    h.Raw(kBinaryMagic, 8);
    h.U32(kBinaryFormatVersion);
    h.U32(0);  // flags
    h.U64(total - kHeaderSize);
    h.U64(0);  // checksum, filled in below
    for (int s = 0; s < kNumSections; ++s) {
      h.U64(counts[s]);
      h.U64(sizes[s]);
    }
    file.append(h.bytes);
    file.append(reinterpret_cast<const char*>(string_ends_.data()), 4 * string_ends_.size());
    file.append(blob_);
    for (int s = 1; s < kNumSections; ++s) file.append(*sections[s]);
    uint64_t sum = Fnv1a64(std::string_view(file).substr(kHeaderSize));
    std::memcpy(&file[24], &sum, 8);
    return file;
  }

 private:
  // Returns the index of `s` in the string table, adding it if new. `s`
  // must outlive the writer (it points into the module or the interner).
  uint32_t Str(std::string_view s) {
    auto [it, inserted] = string_index_.try_emplace(s, static_cast<uint32_t>(string_ends_.size()));
    if (inserted) {
      blob_.append(s);
      string_ends_.push_back(static_cast<uint32_t>(blob_.size()));
    }
    return it->second;
  }

  // Returns the index of `t` in the type table: structurally equal types
  // are written once. Iterative (tuple types may nest deeply).
  uint32_t TypeIndex(const TypeNode* root) {
    if (const uint32_t* id = type_ptr_.Find(root)) return *id;
    struct Frame {
      const TypeNode* t;  // a tuple or Callable type
      const std::vector<Type>* fields;
      size_t next;
      size_t ids_base;
    };
    std::vector<Frame> stack;
    std::vector<uint32_t> ids;
    const TypeNode* t = root;
    while (true) {
      // Descend into `t` until a leaf or a memoized type gives an id.
      uint32_t id;
      if (const uint32_t* known = type_ptr_.Find(t)) {
        id = *known;
      } else if (t->kind() == NodeKind::kTupleType) {
        stack.push_back({t, &static_cast<const TupleTypeNode*>(t)->fields(), 0, ids.size()});
        id = UINT32_MAX;
      } else if (t->kind() == NodeKind::kFuncType) {
        stack.push_back({t, &static_cast<const FuncTypeNode*>(t)->fields(), 0, ids.size()});
        id = UINT32_MAX;
      } else {
        id = InternType(t, nullptr);
      }
      if (id != UINT32_MAX) {
        if (stack.empty()) return id;
        ids.push_back(id);
      }
      // Finish every tuple whose fields are done; descend into the next field.
      while (true) {
        Frame& f = stack.back();
        if (f.next < f.fields->size()) {
          t = (*f.fields)[f.next++].get();
          break;
        }
        uint32_t tid = InternType(f.t, ids.data() + f.ids_base);
        ids.resize(f.ids_base);
        stack.pop_back();
        if (stack.empty()) return tid;
        ids.push_back(tid);
      }
    }
  }

  // Encodes a type record (`fields`: the field type ids of a tuple) and
  // returns its id, reusing an equal record's.
  uint32_t InternType(const TypeNode* t, const uint32_t* fields) {
    Out& r = scratch_;
    r.bytes.clear();
    r.Byte(static_cast<uint8_t>(t->kind()));
    auto shape = [&](bool known, int ndim, const std::vector<Dim>& dims) {
      if (!known) {
        r.Byte(kShapeUnknown);
        r.Signed(ndim);
        return;
      }
      r.Byte(kShapeKnown);
      r.Var(dims.size());
      for (const Dim& d : dims)
        r.Var(d.is_const() ? static_cast<uint64_t>(d.value) << 1 : (uint64_t{Str(d.sym.str())} << 1) | 1);
    };
    switch (t->kind()) {
      case NodeKind::kTensorType: {
        auto* x = static_cast<const TensorTypeNode*>(t);
        r.Byte(static_cast<uint8_t>(x->dtype()));
        shape(x->has_shape(), x->ndim(), x->shape());
        break;
      }
      case NodeKind::kTupleType: {
        size_t n = static_cast<const TupleTypeNode*>(t)->fields().size();
        r.Var(n);
        for (size_t i = 0; i < n; ++i) r.Var(fields[i]);
        break;
      }
      case NodeKind::kPrimType: {
        // With a known value (Prim[int64, value=n]): dtype | 0x80, then a
        // known shape holding the one dimension.
        auto* x = static_cast<const PrimTypeNode*>(t);
        r.Byte(static_cast<uint8_t>(x->dtype()) | (x->has_value() ? 0x80 : 0));
        if (x->has_value()) shape(true, 1, {x->value()});
        break;
      }
      case NodeKind::kShapeType: {
        auto* x = static_cast<const ShapeTypeNode*>(t);
        shape(x->has_values(), x->ndim(), x->values());
        break;
      }
      case NodeKind::kFuncType: {  // the parameter types and the return type, then purity
        auto* x = static_cast<const FuncTypeNode*>(t);
        size_t n = x->fields().size();
        r.Var(n);
        for (size_t i = 0; i < n; ++i) r.Var(fields[i]);
        r.Byte(x->pure());
        break;
      }
      default: break;  // ObjectType: the kind alone
    }
    auto [it, inserted] = type_content_.try_emplace(r.bytes, n_types_);
    if (inserted) {
      types_.bytes.append(r.bytes);
      ++n_types_;
    }
    if (t->use_count() > 1) type_ptr_.Insert(t, it->second);
    return it->second;
  }

  // Returns 0 for no attributes, else 1 + the index of the attribute set.
  uint64_t AttrSet(const Attrs& a) {
    if (a.empty()) return 0;
    const void* key = &a.entries();  // shared by copies of `a`
    if (const uint32_t* id = attrs_ptr_.Find(key)) return *id;
    // Intern the types first: TypeIndex uses the scratch buffer.
    std::vector<uint32_t> type_ids;
    std::function<void(const AttrValue&)> intern = [&](const AttrValue& v) {
      if (v.kind() == AttrValue::Kind::kType) type_ids.push_back(TypeIndex(v.as_type().get()));
      if (v.kind() == AttrValue::Kind::kList)
        for (const AttrValue& e : v.as_list()) intern(e);
      if (v.kind() == AttrValue::Kind::kMap)
        for (const auto& [mk, e] : v.as_map()) intern(e);
    };
    for (const auto& [k, v] : a.entries()) intern(v);
    size_t next_type = 0;
    Out r;
    // A list or map: its size, then its elements (a map's each after its key).
    std::function<void(const AttrValue&)> value = [&](const AttrValue& v) {
      r.Byte(static_cast<uint8_t>(v.kind()));
      switch (v.kind()) {
        case AttrValue::Kind::kInt: r.Signed(v.as_int()); break;
        case AttrValue::Kind::kFloat: r.F64(v.as_float()); break;
        case AttrValue::Kind::kBool: r.Byte(v.as_bool()); break;
        case AttrValue::Kind::kString: r.Var(Str(v.as_string())); break;
        case AttrValue::Kind::kType: r.Var(type_ids[next_type++]); break;
        case AttrValue::Kind::kList:
          r.Var(v.as_list().size());
          for (const AttrValue& e : v.as_list()) value(e);
          break;
        case AttrValue::Kind::kMap:
          r.Var(v.as_map().size());
          for (const auto& [mk, e] : v.as_map()) {
            r.Var(Str(mk));
            value(e);
          }
          break;
      }
    };
    r.Var(a.size());
    for (const auto& [k, v] : a.entries()) {
      r.Var(Str(k.str()));
      value(v);
    }
    auto [it, inserted] = attrs_content_.try_emplace(std::move(r.bytes), n_attrs_ + 1);
    if (inserted) {
      attrs_.bytes.append(it->first);
      ++n_attrs_;
    }
    attrs_ptr_.Insert(key, it->second);
    return it->second;
  }

  // Writes the nodes of `root` that are not written yet, children first;
  // returns root's id. Iterative.
  uint32_t Flatten(const Node* root) {
    if (const uint32_t* id = node_ptr_.Find(root)) return *id;
    stack_.clear();
    ids_.clear();
    stack_.push_back({root, 0, 0});
    while (true) {
      Frame& f = stack_.back();
      if (const Node* c = NodeChild(f.n, f.next)) {
        ++f.next;
        if (const uint32_t* id = SharedId(c)) ids_.push_back(*id);
        else stack_.push_back({c, 0, ids_.size()});
        continue;
      }
      uint32_t id = Emit(f.n, ids_.data() + f.ids_base);
      ids_.resize(f.ids_base);
      stack_.pop_back();
      if (stack_.empty()) return id;
      ids_.push_back(id);
    }
  }

  // Writes the record of `n`, whose node children have ids `kids`.
  uint32_t Emit(const Node* n, const uint32_t* kids) {
    uint32_t id = n_nodes_++;
    Out& o = nodes_;
    auto ref = [&](size_t i) { o.Var(id - kids[i]); };
    auto type = [&](const Type& t) { o.Var(TypeIndex(t.get())); };
    o.Byte(static_cast<uint8_t>(n->kind()));
    switch (n->kind()) {
      case NodeKind::kVar: {
        // The name as its parts (an interned prefix, which outlives the
        // writer, and the number + 1, 0 for none): a million generated names
        // share a few strings.
        auto* v = static_cast<const VarNode*>(n);
        NameHint h = v->hint();
        o.Var(Str(h.prefix().str()));
        o.Var(h.number() == NameHint::kNoNumber ? 0 : uint64_t{h.number()} + 1);
        type(v->type());
        o.Byte(v->is_dataflow());
        break;
      }
      case NodeKind::kGlobalVar: o.Var(Str(static_cast<const GlobalVarNode*>(n)->name())); break;
      case NodeKind::kOp: o.Var(Str(static_cast<const OpNode*>(n)->name())); break;
      case NodeKind::kTuple: {
        size_t k = static_cast<const TupleNode*>(n)->fields().size();
        o.Var(k);
        for (size_t i = 0; i < k; ++i) ref(i);
        break;
      }
      case NodeKind::kTupleGetItem: {
        auto* t = static_cast<const TupleGetItemNode*>(n);
        ref(0);
        o.Signed(t->index());
        type(t->type());
        break;
      }
      case NodeKind::kPrimValue: {
        auto* p = static_cast<const PrimValueNode*>(n);
        o.Byte(static_cast<uint8_t>(p->dtype()));
        if (p->dtype() == DataType::kFloat64) o.F64(p->float_value());
        else if (p->dtype() == DataType::kBool) o.Byte(p->int_value() != 0);
        else o.Signed(p->int_value());
        break;
      }
      case NodeKind::kStringImm: o.Var(Str(static_cast<const StringImmNode*>(n)->value())); break;
      case NodeKind::kShapeExpr: type(static_cast<const ShapeExprNode*>(n)->type()); break;  // Shape[(...)]: the values
      case NodeKind::kPrimExpr: type(static_cast<const PrimExprNode*>(n)->type()); break;  // Prim[int64, value=...]
      case NodeKind::kConstant: {
        auto* c = static_cast<const ConstantNode*>(n);
        type(c->type());
        o.Var(c->data().size());
        o.bytes.append(c->data());
        break;
      }
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(n);
        ref(0);
        o.Var(c->args().size());
        for (size_t i = 0; i < c->args().size(); ++i) ref(1 + i);
        o.Var(c->sinfo_args().size());
        for (const Type& t : c->sinfo_args()) type(t);
        type(c->type());
        o.Var(AttrSet(c->attrs()));
        break;
      }
      case NodeKind::kIf:
        ref(0);
        ref(1);
        ref(2);
        type(static_cast<const IfNode*>(n)->type());
        break;
      case NodeKind::kSeqExpr: {
        size_t k = static_cast<const SeqExprNode*>(n)->blocks().size();
        o.Var(k);
        for (size_t i = 0; i <= k; ++i) ref(i);  // the blocks, then the result
        break;
      }
      case NodeKind::kVarBinding:
        ref(0);
        ref(1);
        break;
      case NodeKind::kBindingBlock: {
        auto* b = static_cast<const BindingBlockNode*>(n);
        o.Byte(b->is_dataflow());
        o.Var(b->bindings().size());
        for (size_t i = 0; i < b->bindings().size(); ++i) ref(i);
        break;
      }
      case NodeKind::kLocalFn: {
        auto* f = static_cast<const LocalFnNode*>(n);
        size_t k = f->params().size();
        o.Var(k);
        for (size_t i = 0; i < k; ++i) ref(i);
        type(f->ret_type());
        ref(k);
        break;
      }
      case NodeKind::kFunction:
      case NodeKind::kExternFunc: {
        auto* f = static_cast<const ItemNode*>(n);
        o.Var(Str(f->name()));
        size_t k = f->params().size();
        o.Var(k);
        for (size_t i = 0; i < k; ++i) ref(i);
        type(f->ret_type());
        if (n->kind() == NodeKind::kFunction) ref(k);
        o.Var(AttrSet(f->attrs()));
        break;
      }
      default: break;  // types never reach the node table
    }
    if (n->kind() == NodeKind::kVar && !exact_vars_) {
      // Variables are per item: a table indexed by their dense number,
      // cleared per item, instead of the module-wide hash table.
      item_vars_.Insert(static_cast<const VarNode*>(n), id);
      emitted_vars_.push_back(static_cast<const VarNode*>(n));
    } else if (n->use_count() > 1) {
      node_ptr_.Insert(n, id);
    }
    return id;
  }

  std::string blob_;
  std::vector<uint32_t> string_ends_;
  std::unordered_map<std::string_view, uint32_t> string_index_;
  Out types_, attrs_, nodes_, items_, scratch_;
  uint32_t n_types_ = 0, n_attrs_ = 0, n_nodes_ = 0;
  internal::PointerMap<uint32_t> type_ptr_, attrs_ptr_, node_ptr_;
  VarMap<uint32_t> item_vars_;                // the current item's variables
  std::vector<const VarNode*> emitted_vars_;  // every variable record, in order
  bool exact_vars_ = false;  // variables in node_ptr_ too (a variable spans items)

  // The id of `c` if it was already written and may be shared, else null.
  const uint32_t* SharedId(const Node* c) {
    if (c->use_count() <= 1) return nullptr;
    if (c->kind() == NodeKind::kVar && !exact_vars_) return item_vars_.Find(static_cast<const VarNode*>(c));
    return node_ptr_.Find(c);
  }
  // True iff some variable got two records (it appears in two items).
  bool AnyVariableEmittedTwice() {
    if (emitted_vars_.size() < 2) return false;
    std::vector<const VarNode*> sorted = emitted_vars_;
    internal::RadixSortByAddress(sorted, [](const VarNode* v) { return v; });
    return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  }
  std::unordered_map<std::string, uint32_t> type_content_, attrs_content_;
  struct Frame {
    const Node* n;
    size_t next;
    size_t ids_base;
  };
  std::vector<Frame> stack_;
  std::vector<uint32_t> ids_;
};

// Reads a version 2 file in one pass: each section in order, each record
// straight into its node. Every count is checked against its section's size
// before anything is reserved, and every index against what exists.
class Reader {
 public:
  explicit Reader(std::string_view file)
      : base_(reinterpret_cast<const uint8_t*>(file.data())), size_(file.size()) {}

  StatusOr<Module> Read() {
    uint64_t counts[kNumSections], sizes[kNumSections];
    size_t starts[kNumSections];
    size_t pos = kPreambleSize;
    for (int s = 0; s < kNumSections; ++s) {
      std::memcpy(&counts[s], base_ + kHeaderSize + 16 * s, 8);
      std::memcpy(&sizes[s], base_ + kHeaderSize + 16 * s + 8, 8);
      if (sizes[s] > size_ - pos)
        return Corrupt(std::string("the ") + kSectionNames[s] + " section's size (" + std::to_string(sizes[s]) +
                       " bytes) exceeds the file");
      starts[s] = pos;
      pos += sizes[s];
    }
    if (pos != size_) return Corrupt(std::to_string(size_ - pos) + " bytes after the last section");
    // Smallest record of each section: a string's end offset (4 bytes), a
    // type (its kind), an attribute set (count, key, value kind, value), a
    // node (kind and one more byte), an item id (1 byte).
    const uint64_t min_record[kNumSections] = {4, 1, 4, 2, 1};
    for (int s = 0; s < kNumSections; ++s)
      if (counts[s] > sizes[s] / min_record[s] || counts[s] >= UINT32_MAX)
        return Corrupt(std::string("the ") + kSectionNames[s] + " count (" + std::to_string(counts[s]) +
                       ") exceeds what the section's " + std::to_string(sizes[s]) + " bytes can hold");

    // Strings: end offsets, then the blob they index.
    n_strings_ = counts[kStrings];
    ends_ = base_ + starts[kStrings];
    blob_ = reinterpret_cast<const char*>(ends_ + 4 * n_strings_);
    uint64_t blob_size = sizes[kStrings] - 4 * n_strings_;
    uint32_t prev = 0;
    for (uint64_t i = 0; i < n_strings_; ++i) {
      uint32_t e = End(i);
      if (e < prev || e > blob_size) return Corrupt("string " + std::to_string(i) + " ends outside the string blob");
      prev = e;
    }
    if (prev != blob_size) return Corrupt("bytes after the last string in the string blob");

    where_ = kTypes;
    Begin(starts[kTypes], sizes[kTypes]);
    types_.reserve(counts[kTypes]);
    for (index_ = 0; index_ < counts[kTypes]; ++index_)
      if (!ReadType()) return Corrupt();
    PLIR_RETURN_IF_ERROR(SectionEnd());

    where_ = kAttrSets;
    Begin(starts[kAttrSets], sizes[kAttrSets]);
    attr_sets_.reserve(counts[kAttrSets]);
    for (index_ = 0; index_ < counts[kAttrSets]; ++index_)
      if (!ReadAttrSet()) return Corrupt();
    PLIR_RETURN_IF_ERROR(SectionEnd());

    where_ = kNodes;
    Begin(starts[kNodes], sizes[kNodes]);
    nodes_.reserve(counts[kNodes]);
    for (index_ = 0; index_ < counts[kNodes]; ++index_)
      if (!ReadNode(static_cast<uint32_t>(index_))) return Corrupt();
    PLIR_RETURN_IF_ERROR(SectionEnd());

    where_ = kItems;
    Begin(starts[kItems], sizes[kItems]);
    std::vector<Item> items;
    items.reserve(counts[kItems]);
    for (index_ = 0; index_ < counts[kItems]; ++index_) {
      uint64_t id;
      if (!Var(&id)) return Corrupt();
      if (id >= nodes_.size()) return Corrupt("item " + std::to_string(index_) + " refers to node " +
                                              std::to_string(id) + ", past the last node");
      NodeKind k = nodes_[id]->kind();
      if (k != NodeKind::kFunction && k != NodeKind::kExternFunc)
        return Corrupt("item " + std::to_string(index_) + " is a " + NodeKindName(k) +
                       ", not a function or extern");
      items.push_back(Downcast<ItemNode>(nodes_[id]));
    }
    PLIR_RETURN_IF_ERROR(SectionEnd());
    nodes_.clear();
    types_.clear();
    attr_sets_.clear();
    auto m = Module::Make(std::move(items));
    if (!m.ok()) return Corrupt(m.status().message());
    return m;
  }

 private:
  // --- errors -------------------------------------------------------------
  static Status Corrupt(const std::string& what) { return InvalidArgument("corrupt binary module: " + what); }
  // The recorded error, with the record it was found in.
  Status Corrupt() const {
    std::string where = std::string(kSectionNames[where_]) + " " + std::to_string(index_);
    if (where_ == kNodes && kind_ >= 0) where += std::string(" (") + NodeKindName(static_cast<NodeKind>(kind_)) + ")";
    return Corrupt(where + ": " + error_);
  }
  bool Fail(std::string what) {
    error_ = std::move(what);
    return false;
  }

  // --- bytes --------------------------------------------------------------
  void Begin(size_t start, size_t size) {
    p_ = base_ + start;
    end_ = p_ + size;
  }
  // The error for bytes left over after a section's last record, if any.
  Status SectionEnd() const {
    if (p_ == end_) return Status::Ok();
    return Corrupt(std::to_string(end_ - p_) + " bytes after the last record of the " + kSectionNames[where_] +
                   " section");
  }
  size_t Remaining() const { return static_cast<size_t>(end_ - p_); }
  bool Truncated() {
    return Fail(std::string("the record runs past the end of the ") + kSectionNames[where_] + " section");
  }
  bool Byte(uint8_t* b) {
    if (p_ == end_) return Truncated();
    *b = *p_++;
    return true;
  }
  bool Flag(bool* f) {
    uint8_t b = 0;
    if (!Byte(&b)) return false;
    if (b > 1) return Fail("flag byte " + std::to_string(b) + " is neither 0 nor 1");
    *f = b != 0;
    return true;
  }
  bool Var(uint64_t* v) {
    if (p_ != end_ && *p_ < 0x80) {
      *v = *p_++;
      return true;
    }
    uint64_t x = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (p_ == end_) return Truncated();
      uint8_t b = *p_++;
      if (shift == 63 && b > 1) return Fail("varint overflows 64 bits");
      x |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *v = x;
        return true;
      }
    }
    return Fail("varint overflows 64 bits");
  }
  bool Signed(int64_t* v) {
    uint64_t u = 0;
    if (!Var(&u)) return false;
    *v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return true;
  }
  bool F64(double* d) {
    if (Remaining() < 8) return Truncated();
    std::memcpy(d, p_, 8);
    p_ += 8;
    return true;
  }
  // A count of things that take at least `min_bytes` bytes each, checked
  // against the bytes left in the section before anything is reserved.
  bool Count(uint64_t* n, const char* what, size_t min_bytes = 1) {
    if (!Var(n)) return false;
    if (*n > Remaining() / min_bytes)
      return Fail(std::string(what) + " count " + std::to_string(*n) + " exceeds the section");
    return true;
  }
  bool DType(DataType* dt) {
    uint8_t b = 0;
    if (!Byte(&b)) return false;
    if (b > static_cast<uint8_t>(DataType::kFloat64)) return Fail("bad dtype " + std::to_string(b));
    *dt = static_cast<DataType>(b);
    return true;
  }

  // --- table references -----------------------------------------------------
  uint32_t End(uint64_t i) const {
    uint32_t e;
    std::memcpy(&e, ends_ + 4 * i, 4);
    return e;
  }
  bool Str(std::string_view* s) {
    uint64_t i;
    if (!Var(&i)) return false;
    if (i >= n_strings_) return Fail("string index " + std::to_string(i) + " out of range");
    uint32_t b = i ? End(i - 1) : 0;
    *s = std::string_view(blob_ + b, End(i) - b);
    return true;
  }
  bool TypeRef(Type* t) {
    uint64_t i;
    if (!Var(&i)) return false;
    if (i >= types_.size()) return Fail("type index " + std::to_string(i) + " out of range");
    *t = types_[i];
    return true;
  }
  bool AttrRef(Attrs* a) {
    uint64_t i;
    if (!Var(&i)) return false;
    if (i == 0) return true;
    if (i > attr_sets_.size()) return Fail("attribute set " + std::to_string(i) + " out of range");
    *a = attr_sets_[i - 1];
    return true;
  }
  // A reference to an earlier node of the kind T (ExprNode: any expression).
  template <typename T>
  bool NodeRef(uint32_t id, Ref<T>* out) {
    uint64_t back;
    if (!Var(&back)) return false;
    if (back == 0 || back > id) return Fail("node reference " + std::to_string(back) + " back is out of range");
    const Node* n = nodes_[id - back].get();
    bool ok;
    if constexpr (std::is_same_v<T, ExprNode>) ok = IsExprKind(n->kind());
    else ok = n->kind() == T::kKind;
    if (!ok) {
      const char* want;
      if constexpr (std::is_same_v<T, ExprNode>) want = "an expression";
      else want = NodeKindName(T::kKind);
      return Fail(std::string("node ") + std::to_string(id - back) + " is a " + NodeKindName(n->kind()) +
                  ", which does not fit where " + want + " is needed");
    }
    *out = Ref<T>(static_cast<const T*>(n));
    return true;
  }
  template <typename T>
  bool NodeRefs(uint32_t id, uint64_t n, std::vector<Ref<T>>* out) {
    out->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      Ref<T> r;
      if (!NodeRef(id, &r)) return false;
      out->push_back(std::move(r));
    }
    return true;
  }

  // --- records ------------------------------------------------------------
  bool Shape(bool* known, int* ndim, std::vector<Dim>* dims) {
    uint8_t form = 0;
    if (!Byte(&form)) return false;
    if (form == kShapeUnknown) {
      int64_t nd;
      if (!Signed(&nd)) return false;
      if (nd < -1 || nd > (1 << 20)) return Fail("bad rank " + std::to_string(nd));
      *known = false;
      *ndim = static_cast<int>(nd);
      return true;
    }
    if (form != kShapeKnown) return Fail("bad shape form " + std::to_string(form));
    uint64_t n;
    if (!Count(&n, "dimension")) return false;
    *known = true;
    dims->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t d;
      if (!Var(&d)) return false;
      if (d & 1) {
        uint64_t s = d >> 1;
        if (s >= n_strings_) return Fail("string index " + std::to_string(s) + " out of range");
        uint32_t b = s ? End(s - 1) : 0;
        if (End(s) == b) return Fail("empty dimension name");
        auto dim = LoadDimText(std::string_view(blob_ + b, End(s) - b));  // a name or an expression
        if (!dim.ok()) return Fail(dim.status().message());
        dims->push_back(*dim);
      } else {
        dims->push_back(Dim::Const(static_cast<int64_t>(d >> 1)));
      }
    }
    return true;
  }

  bool ReadType() {
    size_t before = types_.size();
    if (!ReadTypeRecord()) return false;
    if (type_sizes_.size() == before) type_sizes_.push_back(1);  // not a tuple
    return true;
  }

  // A count, then that many references to earlier types (a tuple's
  // fields; a Callable type's parameters and return type); *size is the
  // tree size of a tuple of them.
  bool TypeList(std::vector<Type>* fields, uint32_t* size) {
    uint64_t n;
    if (!Count(&n, "field")) return false;
    fields->reserve(n);
    std::vector<uint32_t>& sizes = scratch_sizes_;
    sizes.clear();
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t t = 0;
      if (!Var(&t)) return false;
      if (t >= types_.size()) return Fail("field type " + std::to_string(t) + " is not an earlier type");
      fields->push_back(types_[t]);
      sizes.push_back(type_sizes_[t]);
    }
    if (Status st = internal::TupleTypeTreeSize(sizes, size); !st.ok()) return Fail(st.message());
    return true;
  }

  bool ReadTypeRecord() {
    uint8_t k = 0;
    if (!Byte(&k)) return false;
    if (k > static_cast<uint8_t>(NodeKind::kShapeType) && k != static_cast<uint8_t>(NodeKind::kFuncType))
      return Fail("kind " + std::to_string(k) + " is not a type");
    bool known = false;
    int ndim = -1;
    std::vector<Dim> dims;
    switch (static_cast<NodeKind>(k)) {
      case NodeKind::kTensorType: {
        DataType dt;
        if (!DType(&dt) || !Shape(&known, &ndim, &dims)) return false;
        types_.push_back(known ? TensorTypeNode::Make(std::move(dims), dt) : TensorTypeNode::MakeRank(ndim, dt));
        return true;
      }
      case NodeKind::kTupleType: {
        std::vector<Type> fields;
        uint32_t size;
        if (!TypeList(&fields, &size)) return false;
        types_.push_back(TupleTypeNode::Make(std::move(fields)));
        type_sizes_.push_back(size);
        return true;
      }
      case NodeKind::kFuncType: {  // parameter types, return type, purity
        std::vector<Type> fields;
        uint32_t size;
        bool pure;
        if (!TypeList(&fields, &size) || !Flag(&pure)) return false;
        if (fields.empty()) return Fail("a Callable type needs a return type");
        Type ret = fields.back();
        fields.pop_back();
        types_.push_back(FuncTypeNode::Make(std::move(fields), std::move(ret), pure));
        type_sizes_.push_back(size);
        return true;
      }
      case NodeKind::kObjectType: types_.push_back(ObjectTypeNode::Get()); return true;
      case NodeKind::kPrimType: {
        uint8_t b = 0;
        if (!Byte(&b)) return false;
        if ((b & 0x7f) > static_cast<uint8_t>(DataType::kFloat64)) return Fail("bad dtype " + std::to_string(b));
        DataType dt = static_cast<DataType>(b & 0x7f);
        // The text format writes Prim[dtype] with a known dtype only.
        if (dt == DataType::kUnknown) return Fail("a primitive type needs a dtype");
        if (b & 0x80) {  // a known value: one dimension
          if (!Shape(&known, &ndim, &dims)) return false;
          if (!known || dims.size() != 1) return Fail("a primitive type's value must be one dimension");
          types_.push_back(PrimTypeNode::MakeValue(dt, dims[0]));
          return true;
        }
        types_.push_back(PrimTypeNode::Make(dt));
        return true;
      }
      default: {  // kShapeType
        if (!Shape(&known, &ndim, &dims)) return false;
        types_.push_back(known ? ShapeTypeNode::Make(std::move(dims)) : ShapeTypeNode::MakeRank(ndim));
        return true;
      }
    }
  }

  bool ReadAttrValue(AttrValue* out, int depth) {
    uint8_t k = 0;
    if (!Byte(&k)) return false;
    switch (static_cast<AttrValue::Kind>(k)) {
      case AttrValue::Kind::kInt: {
        int64_t i;
        if (!Signed(&i)) return false;
        *out = AttrValue::Int(i);
        return true;
      }
      case AttrValue::Kind::kFloat: {
        double d;
        if (!F64(&d)) return false;
        *out = AttrValue::Float(d);
        return true;
      }
      case AttrValue::Kind::kBool: {
        bool b;
        if (!Flag(&b)) return false;
        *out = AttrValue::Bool(b);
        return true;
      }
      case AttrValue::Kind::kString: {
        std::string_view s;
        if (!Str(&s)) return false;
        *out = AttrValue::String(std::string(s));
        return true;
      }
      case AttrValue::Kind::kType: {
        Type t;
        if (!TypeRef(&t)) return false;
        *out = AttrValue::OfType(std::move(t));
        return true;
      }
      case AttrValue::Kind::kList: {
        if (depth >= AttrValue::kMaxAttrDepth) return Fail("attribute value nested too deep");
        uint64_t n;
        if (!Count(&n, "list element", 2)) return false;
        std::vector<AttrValue> items(n);
        for (AttrValue& v : items)
          if (!ReadAttrValue(&v, depth + 1)) return false;
        *out = AttrValue::List(std::move(items));
        return true;
      }
      case AttrValue::Kind::kMap: {
        if (depth >= AttrValue::kMaxAttrDepth) return Fail("attribute value nested too deep");
        uint64_t n;
        if (!Count(&n, "map entry", 3)) return false;
        std::vector<AttrValue::MapEntry> entries(n);
        for (auto& [key, v] : entries) {
          std::string_view k;
          if (!Str(&k)) return false;
          key = std::string(k);
          if (!ReadAttrValue(&v, depth + 1)) return false;
        }
        auto m = AttrValue::Map(std::move(entries));
        if (!m.ok()) return Fail(m.status().message());
        *out = std::move(m).value();
        return true;
      }
    }
    return Fail("bad attribute kind " + std::to_string(k));
  }

  bool ReadAttrSet() {
    uint64_t n;
    if (!Count(&n, "attribute", 3)) return false;
    if (n == 0) return Fail("empty attribute set");
    std::vector<Attrs::Entry> entries(n);
    for (auto& [key, value] : entries) {
      std::string_view k;
      if (!Str(&k)) return false;
      key = Symbol(k);
      if (!ReadAttrValue(&value, 0)) return false;
    }
    auto a = Attrs::Make(std::move(entries));
    if (!a.ok()) return Fail(a.status().message());
    attr_sets_.push_back(std::move(a).value());
    return true;
  }

  bool ReadNode(uint32_t id) {
    uint8_t k = 0;
    kind_ = -1;
    if (!Byte(&k)) return false;
    if ((k < static_cast<uint8_t>(NodeKind::kVar) || k > static_cast<uint8_t>(NodeKind::kPrimExpr)) &&
        k != static_cast<uint8_t>(NodeKind::kLocalFn))
      return Fail(k <= static_cast<uint8_t>(NodeKind::kShapeType) || k == static_cast<uint8_t>(NodeKind::kFuncType)
                      ? "a type in the node table (types have their own)"
                      : "bad node kind " + std::to_string(k));
    kind_ = k;
    std::string_view s;
    Type type;
    uint64_t n;
    switch (static_cast<NodeKind>(k)) {
      case NodeKind::kVar: {
        bool df;
        uint64_t number;
        if (!Str(&s) || !Var(&number) || !TypeRef(&type) || !Flag(&df)) return false;
        if (number > uint64_t{NameHint::kNoNumber}) return Fail("variable name number out of range");
        NameHint name = NameHint::FromParts(Symbol(s), number == 0 ? NameHint::kNoNumber
                                                                   : static_cast<uint32_t>(number - 1));
        // Variables are numbered densely per item, in table (definition) order.
        nodes_.push_back(VarNode::Make(name, std::move(type), df, next_var_index_++));
        return true;
      }
      case NodeKind::kGlobalVar:
        if (!Str(&s)) return false;
        nodes_.push_back(GlobalVarNode::Make(std::string(s)));
        return true;
      case NodeKind::kOp: {
        if (!Str(&s)) return false;
        Op op = OpRegistry::Global().Lookup(s);
        if (!op) return Fail("unknown op '" + std::string(s) + "'");
        nodes_.push_back(std::move(op));
        return true;
      }
      case NodeKind::kTuple: {
        std::vector<Expr> fields;
        if (!Count(&n, "field") || !NodeRefs(id, n, &fields)) return false;
        nodes_.push_back(TupleNode::Make(std::move(fields)));
        return true;
      }
      case NodeKind::kTupleGetItem: {
        Expr tuple;
        int64_t index;
        if (!NodeRef(id, &tuple) || !Signed(&index) || !TypeRef(&type)) return false;
        nodes_.push_back(TupleGetItemNode::MakeUnchecked(std::move(tuple), index, std::move(type)));
        return true;
      }
      case NodeKind::kPrimValue: {
        DataType dt;
        if (!DType(&dt)) return false;
        if (dt == DataType::kFloat64) {
          double d;
          if (!F64(&d)) return false;
          nodes_.push_back(PrimValueNode::Float(d));
        } else if (dt == DataType::kBool) {
          bool b;
          if (!Flag(&b)) return false;
          nodes_.push_back(PrimValueNode::Bool(b));
        } else if (dt == DataType::kInt64) {
          int64_t i;
          if (!Signed(&i)) return false;
          nodes_.push_back(PrimValueNode::Int(i));
        } else {
          return Fail(std::string("a primitive value of dtype ") + std::string(DataTypeName(dt)) +
                      " (only bool, int64, float64)");
        }
        return true;
      }
      case NodeKind::kStringImm:
        if (!Str(&s)) return false;
        nodes_.push_back(StringImmNode::Make(std::string(s)));
        return true;
      case NodeKind::kShapeExpr: {
        if (!TypeRef(&type)) return false;
        auto* st = As<ShapeTypeNode>(type);
        if (!st || !st->has_values()) return Fail("a shape value whose type is not Shape[(...)]");
        nodes_.push_back(ShapeExprNode::Make(st->values()));
        return true;
      }
      case NodeKind::kPrimExpr: {
        if (!TypeRef(&type)) return false;
        auto* pt = As<PrimTypeNode>(type);
        if (!pt || !pt->has_value() || pt->dtype() != DataType::kInt64 || pt->value().is_const())
          return Fail("a PrimExpr whose type is not Prim[int64, value=<symbolic>]");
        nodes_.push_back(PrimExprNode::Make(pt->value()));
        return true;
      }
      case NodeKind::kConstant: {
        if (!TypeRef(&type) || !Count(&n, "data byte")) return false;
        if (Status st = internal::CheckConstantType(type); !st.ok()) return Fail(st.message());
        auto data = std::make_shared<const std::string>(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        auto c = ConstantNode::Make(std::move(type), std::move(data));
        if (!c.ok()) return Fail(c.status().message());
        nodes_.push_back(std::move(c).value());
        return true;
      }
      case NodeKind::kCall: {
        Expr callee;
        std::vector<Expr> args;
        std::vector<Type> sinfo;
        Attrs attrs;
        if (!NodeRef(id, &callee) || !Count(&n, "argument") || !NodeRefs(id, n, &args) ||
            !Count(&n, "sinfo_args"))
          return false;
        sinfo.reserve(n);
        for (uint64_t i = 0; i < n; ++i) {
          if (!TypeRef(&type)) return false;
          sinfo.push_back(std::move(type));
        }
        if (!TypeRef(&type) || !AttrRef(&attrs)) return false;
        nodes_.push_back(CallNode::MakeUnchecked(std::move(callee), std::move(args), std::move(attrs),
                                                 std::move(sinfo), std::move(type)));
        return true;
      }
      case NodeKind::kIf: {
        Expr cond;
        SeqExpr then_body, else_body;
        if (!NodeRef(id, &cond) || !NodeRef(id, &then_body) || !NodeRef(id, &else_body) || !TypeRef(&type))
          return false;
        nodes_.push_back(
            IfNode::MakeUnchecked(std::move(cond), std::move(then_body), std::move(else_body), std::move(type)));
        return true;
      }
      case NodeKind::kSeqExpr: {
        std::vector<Block> blocks;
        Expr result;
        if (!Count(&n, "block") || !NodeRefs(id, n, &blocks) || !NodeRef(id, &result)) return false;
        nodes_.push_back(SeqExprNode::Make(std::move(blocks), std::move(result)));
        return true;
      }
      case NodeKind::kVarBinding: {
        plir::Var var;
        Expr value;
        if (!NodeRef(id, &var) || !NodeRef(id, &value)) return false;
        nodes_.push_back(VarBindingNode::Make(std::move(var), std::move(value)));
        return true;
      }
      case NodeKind::kBindingBlock: {
        bool df;
        std::vector<Binding> bindings;
        if (!Flag(&df) || !Count(&n, "binding") || !NodeRefs(id, n, &bindings)) return false;
        nodes_.push_back(BindingBlockNode::Make(std::move(bindings), df));
        return true;
      }
      case NodeKind::kLocalFn: {
        std::vector<plir::Var> params;
        SeqExpr body;
        if (!Count(&n, "parameter") || !NodeRefs(id, n, &params) || !TypeRef(&type) || !NodeRef(id, &body))
          return false;
        nodes_.push_back(LocalFnNode::Make(std::move(params), std::move(type), std::move(body)));
        return true;
      }
      default: {  // kFunction, kExternFunc
        std::vector<plir::Var> params;
        SeqExpr body;
        Attrs attrs;
        bool is_def = k == static_cast<uint8_t>(NodeKind::kFunction);
        if (!Str(&s) || !Count(&n, "parameter") || !NodeRefs(id, n, &params) || !TypeRef(&type) ||
            (is_def && !NodeRef(id, &body)) || !AttrRef(&attrs))
          return false;
        if (is_def)
          nodes_.push_back(FunctionNode::Make(std::string(s), std::move(params), std::move(type), std::move(body),
                                              std::move(attrs)));
        else
          nodes_.push_back(ExternFuncNode::Make(std::string(s), std::move(params), std::move(type), std::move(attrs)));
        next_var_index_ = 0;  // the next item's variables
        return true;
      }
    }
  }

  const uint8_t* base_;
  size_t size_;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t n_strings_ = 0;
  const uint8_t* ends_ = nullptr;
  const char* blob_ = nullptr;
  std::vector<Type> types_;
  std::vector<uint32_t> type_sizes_;  // tree sizes of types_
  std::vector<uint32_t> scratch_sizes_;
  std::vector<Attrs> attr_sets_;
  std::vector<Ref<Node>> nodes_;
  uint32_t next_var_index_ = 0;  // dense variable numbers, per item
  // Where an error was found: the section, the record's index, its kind.
  Section where_ = kStrings;
  uint64_t index_ = 0;
  int kind_ = -1;
  std::string error_;
};

}  // namespace v2
}  // namespace

namespace internal {
std::string SaveBinaryV1(const Module& m) {
  v1::Writer w;
  std::vector<uint32_t> items = FlattenModule(m, w);
  return w.Finish(items);
}
}  // namespace internal

std::string SaveBinary(const Module& m) { return v2::Writer().Save(m); }

StatusOr<Module> LoadBinary(std::string_view bytes) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kBinaryMagic, 8) != 0)
    return InvalidArgument("not a PLIR binary module (bad magic)");
  if (bytes.size() < 12) return InvalidArgument("corrupt binary module: truncated header");
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version < kOldestBinaryFormatVersion || version > kBinaryFormatVersion)
    return InvalidArgument("binary module format version " + std::to_string(version) + "; this PLIR reads versions " +
                           std::to_string(kOldestBinaryFormatVersion) + " to " + std::to_string(kBinaryFormatVersion));
  size_t header = version == 1 ? 32 : v2::kPreambleSize;
  if (bytes.size() < header)
    return InvalidArgument("corrupt binary module: truncated header (" + std::to_string(bytes.size()) +
                           " bytes; version " + std::to_string(version) + " needs " + std::to_string(header) + ")");
  uint32_t flags;
  uint64_t length, checksum;
  std::memcpy(&flags, bytes.data() + 12, 4);
  std::memcpy(&length, bytes.data() + 16, 8);
  std::memcpy(&checksum, bytes.data() + 24, 8);
  if (flags != 0)
    return InvalidArgument("binary module flags " + std::to_string(flags) +
                           " are not supported (this PLIR knows none)");
  if (length != bytes.size() - 32)
    return InvalidArgument("corrupt binary module: the header says " + std::to_string(length) +
                           " payload bytes, the file has " + std::to_string(bytes.size() - 32));
  std::string_view payload = bytes.substr(32);
  if (version == 1) {
    uint64_t standard, legacy;
    Fnv1a64Both(payload, &standard, &legacy);
    if (checksum != standard && checksum != legacy) return InvalidArgument("corrupt binary module: checksum mismatch");
    return v1::Reader(payload).Read();
  }
  uint64_t sum = Fnv1a64(payload);
  if (sum != checksum) return InvalidArgument("corrupt binary module: checksum mismatch");
  return v2::Reader(bytes).Read();
}

}  // namespace plir
