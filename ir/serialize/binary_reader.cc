// Versions 2 and 3 of the binary format: the reader (layout: binary_internal.h),
// and LoadBinary, which reads every version.
#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/internal/node_memory_ahead.h"
#include "ir/internal/pointer_map.h"
#include "ir/internal/radix_sort.h"
#include "ir/op.h"
#include "ir/serialize/binary_internal.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"
#include "ir/support/crc32c.h"
#include "ir/support/fnv.h"
#include "ir/var_map.h"

namespace plir::internal::binary {
namespace {

class Reader {
 public:
  Reader(std::string_view file, int version, std::shared_ptr<const void> keepalive,
         bool verify_tensor_data, bool memory_ahead)
      : base_(reinterpret_cast<const uint8_t*>(file.data())),
        size_(file.size()),
        version_(version),
        keepalive_(std::move(keepalive)),
        verify_tensor_data_(verify_tensor_data),
        memory_ahead_(memory_ahead) {}

  StatusOr<Module> Read() {
    uint64_t counts[kNumSections], sizes[kNumSections];
    size_t starts[kNumSections];
    size_t pos = kPreambleSize;
    if (version_ >= 3) {
      pos = kV3PreambleSize;
      PLIR_RETURN_IF_ERROR(ReadTensorDataEntry());
    }
    for (int s = 0; s < kNumSections; ++s) {
      std::memcpy(&counts[s], base_ + kHeaderSize + 16 * s, 8);
      std::memcpy(&sizes[s], base_ + kHeaderSize + 16 * s + 8, 8);
      if (sizes[s] > size_ - pos)
        return Corrupt(std::string("the ") + kSectionNames[s] + " section's size (" +
                       std::to_string(sizes[s]) + " bytes) exceeds the file");
      starts[s] = pos;
      pos += sizes[s];
    }
    if (version_ >= 3) {
      // The data starts at the end of the structure, rounded up to 64.
      uint64_t want = data_size_ ? AlignTensor(pos) : pos;
      if (data_offset_ != want)
        return Corrupt("the tensor data starts at byte " + std::to_string(data_offset_) +
                       ", but the structure ends at byte " + std::to_string(pos) +
                       " (the data must start there, rounded up to a multiple of 64)");
    } else if (pos != size_) {
      return Corrupt(std::to_string(size_ - pos) + " bytes after the last section");
    }
    // Smallest record of each section: a string's end offset (4 bytes), a
    // type (its kind), an attribute set (count, key, value kind, value), a
    // node (kind and one more byte), an item id (1 byte).
    const uint64_t min_record[kNumSections] = {4, 1, 4, 2, 1};
    for (int s = 0; s < kNumSections; ++s)
      if (counts[s] > sizes[s] / min_record[s] || counts[s] >= UINT32_MAX)
        return Corrupt(std::string("the ") + kSectionNames[s] + " count (" +
                       std::to_string(counts[s]) + ") exceeds what the section's " +
                       std::to_string(sizes[s]) + " bytes can hold");

    // Strings: end offsets, then the blob they index.
    n_strings_ = counts[kStrings];
    ends_ = base_ + starts[kStrings];
    blob_ = reinterpret_cast<const char*>(ends_ + 4 * n_strings_);
    uint64_t blob_size = sizes[kStrings] - 4 * n_strings_;
    uint32_t prev = 0;
    for (uint64_t i = 0; i < n_strings_; ++i) {
      uint32_t e = End(i);
      if (e < prev || e > blob_size)
        return Corrupt("string " + std::to_string(i) + " ends outside the string blob");
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
    // The nodes' memory, faulted in by a helper thread while this one
    // builds them. 48 bytes a node is an upper estimate (the 1M-binding
    // chains use 37); what is left over goes back.
    internal::NodeMemoryAhead ahead(memory_ahead_ ? counts[kNodes] * 48 : 0);
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
      if (id >= nodes_.size())
        return Corrupt("item " + std::to_string(index_) + " refers to node " + std::to_string(id) +
                       ", past the last node");
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
  // Version 3: the tensor-data entry after the section table; checks the
  // structure checksum (the bytes from 32 to the data) and, if asked, the
  // data's.
  Status ReadTensorDataEntry() {
    uint64_t count, checksum, data_checksum;
    std::memcpy(&count, base_ + kPreambleSize, 8);
    std::memcpy(&data_offset_, base_ + kPreambleSize + 8, 8);
    std::memcpy(&data_size_, base_ + kPreambleSize + 16, 8);
    std::memcpy(&data_checksum, base_ + kV3DataChecksumAt, 8);
    std::memcpy(&checksum, base_ + 24, 8);
    if (data_offset_ < kV3PreambleSize || data_offset_ > size_)
      return Corrupt("the tensor data's offset (byte " + std::to_string(data_offset_) +
                     ") is outside the file (" + std::to_string(size_) + " bytes)");
    if (data_size_ != size_ - data_offset_)
      return Corrupt("the tensor data (" + std::to_string(data_size_) + " bytes from byte " +
                     std::to_string(data_offset_) + ") does not end where the file does (byte " +
                     std::to_string(size_) + ")");
    if (count > data_size_)
      return Corrupt("the tensor count (" + std::to_string(count) + ") exceeds the " +
                     std::to_string(data_size_) + " bytes of tensor data");
    auto view = [&](size_t from, size_t n) {
      return std::string_view(reinterpret_cast<const char*>(base_) + from, n);
    };
    if (Crc32c(view(kHeaderSize, data_offset_ - kHeaderSize)) != checksum)
      return Corrupt("checksum mismatch (bytes 32 to " + std::to_string(data_offset_) + ")");
    if (verify_tensor_data_ && Crc32c(view(data_offset_, data_size_)) != data_checksum)
      return Corrupt("tensor data checksum mismatch (bytes " + std::to_string(data_offset_) +
                     " to " + std::to_string(size_) + ")");
    data_ = reinterpret_cast<const char*>(base_) + data_offset_;
    return Status::Ok();
  }

  // --- errors -------------------------------------------------------------
  static Status Corrupt(const std::string& what) {
    return InvalidArgument("corrupt binary module: " + what);
  }
  // The recorded error, with the record it was found in.
  Status Corrupt() const {
    std::string where = std::string(kSectionNames[where_]) + " " + std::to_string(index_);
    if (where_ == kNodes && kind_ >= 0)
      where += std::string(" (") + NodeKindName(static_cast<NodeKind>(kind_)) + ")";
    return Corrupt(where + ": " + error_ + " (at byte " + std::to_string(p_ - base_) + ")");
  }
  __attribute__((noinline, cold)) bool Fail(std::string what) {
    error_ = std::move(what);
    return false;
  }
  // The error paths of the inline readers below, out of line so that the
  // readers stay small enough to inline.
  __attribute__((noinline, cold)) bool FailIndex(const char* what, uint64_t i) {
    return Fail(std::string(what) + " " + std::to_string(i) + " out of range");
  }
  __attribute__((noinline, cold)) bool FailFlag(uint8_t b) {
    return Fail("flag byte " + std::to_string(b) + " is neither 0 nor 1");
  }
  __attribute__((noinline, cold)) bool FailCount(const char* what, uint64_t n) {
    return Fail(std::string(what) + " count " + std::to_string(n) + " exceeds the section");
  }
  __attribute__((noinline, cold)) bool FailBack(uint64_t back) {
    return Fail("node reference " + std::to_string(back) + " back is out of range");
  }
  __attribute__((noinline, cold)) bool FailMisfit(uint64_t at, NodeKind k, const char* want) {
    return Fail(std::string("node ") + std::to_string(at) + " is a " + NodeKindName(k) +
                ", which does not fit where " + want + " is needed");
  }

  // --- bytes --------------------------------------------------------------
  void Begin(size_t start, size_t size) {
    p_ = base_ + start;
    end_ = p_ + size;
  }
  // The error for bytes left over after a section's last record, if any.
  Status SectionEnd() const {
    if (p_ == end_) return Status::Ok();
    return Corrupt(std::to_string(end_ - p_) + " bytes after the last record of the " +
                   kSectionNames[where_] + " section");
  }
  size_t Remaining() const { return static_cast<size_t>(end_ - p_); }
  __attribute__((noinline, cold)) bool Truncated() {
    return Fail(std::string("the record runs past the end of the ") + kSectionNames[where_] +
                " section");
  }
  bool Byte(uint8_t* b) {
    if (p_ == end_) [[unlikely]]
      return Truncated();
    *b = *p_++;
    return true;
  }
  bool Flag(bool* f) {
    uint8_t b = 0;
    if (!Byte(&b)) return false;
    if (b > 1) [[unlikely]]
      return FailFlag(b);
    *f = b != 0;
    return true;
  }
  // The one-byte case (most references and counts) inline; longer ones in
  // VarLong, which checks every byte against the section's end.
  __attribute__((always_inline)) bool Var(uint64_t* v) {
    if (p_ != end_ && *p_ < 0x80) [[likely]] {
      *v = *p_++;
      return true;
    }
    return VarLong(v);
  }
  __attribute__((noinline)) bool VarLong(uint64_t* v) {
    if (Remaining() >= 10) {
      // A varint ends within 10 bytes: none of them needs an end check.
      const uint8_t* p = p_;
      uint64_t x = 0;
      for (int i = 0; i < 9; ++i) {
        uint8_t b = p[i];
        x |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
          p_ = p + i + 1;
          *v = x;
          return true;
        }
      }
      p_ = p + 10;
      if (p[9] > 1) return Fail("varint overflows 64 bits");
      *v = x | static_cast<uint64_t>(p[9]) << 63;
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
    if (*n > Remaining() / min_bytes) [[unlikely]]
      return FailCount(what, *n);
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
    if (i >= n_strings_) [[unlikely]]
      return FailIndex("string index", i);
    uint32_t b = i ? End(i - 1) : 0;
    *s = std::string_view(blob_ + b, End(i) - b);
    return true;
  }
  // A string table entry as an interned symbol (a variable's name prefix:
  // the same few come back on every variable), interned once per entry.
  bool SymbolRef(Symbol* out) {
    uint64_t i;
    if (!Var(&i)) return false;
    if (i >= n_strings_) [[unlikely]]
      return FailIndex("string index", i);
    if (symbols_.empty()) {
      symbols_.resize(n_strings_);
      have_symbol_.resize(n_strings_);
    }
    if (!have_symbol_[i]) {
      uint32_t b = i ? End(i - 1) : 0;
      symbols_[i] = Symbol(std::string_view(blob_ + b, End(i) - b));
      have_symbol_[i] = 1;
    }
    *out = symbols_[i];
    return true;
  }
  bool TypeRef(Type* t) {
    uint64_t i;
    if (!Var(&i)) return false;
    if (i >= types_.size()) [[unlikely]]
      return FailIndex("type index", i);
    *t = types_[i];
    return true;
  }
  bool AttrRef(Attrs* a) {
    uint64_t i;
    if (!Var(&i)) return false;
    if (i == 0) return true;
    if (i > attr_sets_.size()) [[unlikely]]
      return FailIndex("attribute set", i);
    *a = attr_sets_[i - 1];
    return true;
  }
  // A reference to an earlier node of the kind T (ExprNode: any expression).
  template <typename T>
  bool NodeRef(uint32_t id, Ref<T>* out) {
    uint64_t back;
    if (!Var(&back)) return false;
    if (back == 0 || back > id) [[unlikely]]
      return FailBack(back);
    const Node* n = nodes_[id - back].get();
    bool ok;
    if constexpr (std::is_same_v<T, ExprNode>)
      ok = IsExprKind(n->kind());
    else
      ok = n->kind() == T::kKind;
    if (!ok) [[unlikely]] {
      const char* want;
      if constexpr (std::is_same_v<T, ExprNode>)
        want = "an expression";
      else
        want = NodeKindName(T::kKind);
      return FailMisfit(id - back, n->kind(), want);
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
      if (t >= types_.size())
        return Fail("field type " + std::to_string(t) + " is not an earlier type");
      fields->push_back(types_[t]);
      sizes.push_back(type_sizes_[t]);
    }
    if (Status st = internal::TupleTypeTreeSize(sizes, size); !st.ok()) return Fail(st.message());
    return true;
  }

  bool ReadTypeRecord() {
    uint8_t k = 0;
    if (!Byte(&k)) return false;
    if (k > static_cast<uint8_t>(NodeKind::kShapeType) &&
        k != static_cast<uint8_t>(NodeKind::kFuncType))
      return Fail("kind " + std::to_string(k) + " is not a type");
    bool known = false;
    int ndim = -1;
    std::vector<Dim> dims;
    switch (static_cast<NodeKind>(k)) {
      case NodeKind::kTensorType: {
        DataType dt = DataType::kUnknown;
        if (!DType(&dt) || !Shape(&known, &ndim, &dims)) return false;
        types_.push_back(known ? TensorTypeNode::Make(std::move(dims), dt)
                               : TensorTypeNode::MakeRank(ndim, dt));
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
        bool pure = false;
        if (!TypeList(&fields, &size) || !Flag(&pure)) return false;
        if (fields.empty()) return Fail("a Callable type needs a return type");
        Type ret = fields.back();
        fields.pop_back();
        types_.push_back(FuncTypeNode::Make(std::move(fields), std::move(ret), pure));
        type_sizes_.push_back(size);
        return true;
      }
      case NodeKind::kObjectType:
        types_.push_back(ObjectTypeNode::Get());
        return true;
      case NodeKind::kPrimType: {
        uint8_t b = 0;
        if (!Byte(&b)) return false;
        if ((b & 0x7f) > static_cast<uint8_t>(DataType::kFloat64))
          return Fail("bad dtype " + std::to_string(b));
        DataType dt = static_cast<DataType>(b & 0x7f);
        // The text format writes Prim[dtype] with a known dtype only.
        if (dt == DataType::kUnknown) return Fail("a primitive type needs a dtype");
        if (b & 0x80) {  // a known value: one dimension
          if (!Shape(&known, &ndim, &dims)) return false;
          if (!known || dims.size() != 1)
            return Fail("a primitive type's value must be one dimension");
          types_.push_back(PrimTypeNode::MakeValue(dt, dims[0]));
          return true;
        }
        types_.push_back(PrimTypeNode::Make(dt));
        return true;
      }
      default: {  // kShapeType
        if (!Shape(&known, &ndim, &dims)) return false;
        types_.push_back(known ? ShapeTypeNode::Make(std::move(dims))
                               : ShapeTypeNode::MakeRank(ndim));
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
        bool b = false;
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
    if ((k < static_cast<uint8_t>(NodeKind::kVar) ||
         k > static_cast<uint8_t>(NodeKind::kPrimExpr)) &&
        k != static_cast<uint8_t>(NodeKind::kLocalFn))
      return Fail(k <= static_cast<uint8_t>(NodeKind::kShapeType) ||
                          k == static_cast<uint8_t>(NodeKind::kFuncType)
                      ? "a type in the node table (types have their own)"
                      : "bad node kind " + std::to_string(k));
    kind_ = k;
    std::string_view s;
    Type type;
    uint64_t n;
    switch (static_cast<NodeKind>(k)) {
      case NodeKind::kVar: {
        bool df = false;
        uint64_t number;
        Symbol prefix;
        if (!SymbolRef(&prefix) || !Var(&number) || !TypeRef(&type) || !Flag(&df)) return false;
        if (number > uint64_t{NameHint::kNoNumber})
          return Fail("variable name number out of range");
        NameHint name = NameHint::FromParts(
            prefix, number == 0 ? NameHint::kNoNumber : static_cast<uint32_t>(number - 1));
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
        DataType dt = DataType::kUnknown;
        if (!DType(&dt)) return false;
        if (dt == DataType::kFloat64) {
          double d;
          if (!F64(&d)) return false;
          nodes_.push_back(PrimValueNode::Float(d));
        } else if (dt == DataType::kBool) {
          bool b = false;
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
        std::shared_ptr<const TensorBytes> data;
        if (version_ >= 3) {
          uint64_t off;
          if (!TypeRef(&type) || !Var(&off) || !Var(&n)) return false;
          if (Status st = internal::CheckConstantType(type); !st.ok()) return Fail(st.message());
          if (n > data_size_ || off > data_size_ - n)
            return Fail("the constant's " + std::to_string(n) + " bytes at offset " +
                        std::to_string(off) + " run past the tensor data (" +
                        std::to_string(data_size_) + " bytes from byte " +
                        std::to_string(data_offset_) + ")");
          if (n && off % kTensorAlignment)
            return Fail("the constant's data offset " + std::to_string(off) +
                        " is not a multiple of 64");
          const char* at = data_ + off;
          // Borrowed in place when the memory is aligned as the file is
          // (a mapping is); else (or without a keepalive) copied.
          if (keepalive_ && n && reinterpret_cast<uintptr_t>(at) % kTensorAlignment == 0)
            data = std::make_shared<const TensorBytes>(at, n, keepalive_);
          else
            data = CopyTensorBytes({at, n});
        } else {
          if (!TypeRef(&type) || !Count(&n, "data byte")) return false;
          if (Status st = internal::CheckConstantType(type); !st.ok()) return Fail(st.message());
          data = CopyTensorBytes({reinterpret_cast<const char*>(p_), n});
          p_ += n;
        }
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
        nodes_.push_back(CallNode::MakeUnchecked(std::move(callee), std::move(args),
                                                 std::move(attrs), std::move(sinfo),
                                                 std::move(type)));
        return true;
      }
      case NodeKind::kIf: {
        Expr cond;
        SeqExpr then_body, else_body;
        if (!NodeRef(id, &cond) || !NodeRef(id, &then_body) || !NodeRef(id, &else_body) ||
            !TypeRef(&type))
          return false;
        nodes_.push_back(IfNode::MakeUnchecked(std::move(cond), std::move(then_body),
                                               std::move(else_body), std::move(type)));
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
        bool df = false;
        std::vector<Binding> bindings;
        if (!Flag(&df) || !Count(&n, "binding") || !NodeRefs(id, n, &bindings)) return false;
        nodes_.push_back(BindingBlockNode::Make(std::move(bindings), df));
        return true;
      }
      case NodeKind::kLocalFn: {
        std::vector<plir::Var> params;
        SeqExpr body;
        if (!Count(&n, "parameter") || !NodeRefs(id, n, &params) || !TypeRef(&type) ||
            !NodeRef(id, &body))
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
          nodes_.push_back(FunctionNode::Make(std::string(s), std::move(params), std::move(type),
                                              std::move(body), std::move(attrs)));
        else
          nodes_.push_back(ExternFuncNode::Make(std::string(s), std::move(params), std::move(type),
                                                std::move(attrs)));
        next_var_index_ = 0;  // the next item's variables
        return true;
      }
    }
  }

  const uint8_t* base_;
  size_t size_;
  int version_;
  std::shared_ptr<const void> keepalive_;
  bool verify_tensor_data_;
  bool memory_ahead_;
  // Version 3: the tensor data.
  const char* data_ = nullptr;
  uint64_t data_offset_ = 0, data_size_ = 0;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t n_strings_ = 0;
  const uint8_t* ends_ = nullptr;
  const char* blob_ = nullptr;
  std::vector<Type> types_;
  std::vector<uint32_t> type_sizes_;  // tree sizes of types_
  std::vector<uint32_t> scratch_sizes_;
  std::vector<Attrs> attr_sets_;
  std::vector<Symbol> symbols_;       // by string index, once interned
  std::vector<uint8_t> have_symbol_;  // 1 where symbols_ is filled
  std::vector<Ref<Node>> nodes_;
  uint32_t next_var_index_ = 0;  // dense variable numbers, per item
  // Where an error was found: the section, the record's index, its kind.
  Section where_ = kStrings;
  uint64_t index_ = 0;
  int kind_ = -1;
  std::string error_;
};

}  // namespace

StatusOr<Module> ReadV2(std::string_view bytes) {
  return Reader(bytes, 2, nullptr, false, true).Read();
}
StatusOr<Module> ReadV3(std::string_view bytes, std::shared_ptr<const void> keepalive,
                        bool verify_tensor_data, bool memory_ahead) {
  return Reader(bytes, 3, std::move(keepalive), verify_tensor_data, memory_ahead).Read();
}

}  // namespace plir::internal::binary

namespace plir {

StatusOr<Module> LoadBinary(std::string_view bytes) { return LoadBinary(bytes, {}); }

Status VerifyBinaryTensorData(std::string_view bytes) {
  BinaryLoadOptions o;
  o.keepalive = std::make_shared<int>(0);  // views into `bytes`, dropped before returning
  o.verify_tensor_data = true;
  return LoadBinary(bytes, o).status();
}

StatusOr<Module> LoadBinary(std::string_view bytes, const BinaryLoadOptions& options) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kBinaryMagic, 8) != 0)
    return InvalidArgument("not a PLIR binary module (bad magic)");
  if (bytes.size() < 12) return InvalidArgument("corrupt binary module: truncated header");
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version < kOldestBinaryFormatVersion || version > kNewestBinaryFormatVersion)
    return InvalidArgument("binary module format version " + std::to_string(version) +
                           "; this PLIR reads versions " +
                           std::to_string(kOldestBinaryFormatVersion) + " to " +
                           std::to_string(kNewestBinaryFormatVersion));
  size_t header = version == 1   ? 32
                  : version == 2 ? internal::binary::kPreambleSize
                  : version == 3 ? internal::binary::kV3PreambleSize
                                 : internal::binary::kV4TableAt + 8;
  if (bytes.size() < header)
    return InvalidArgument("corrupt binary module: truncated header (" +
                           std::to_string(bytes.size()) + " bytes; version " +
                           std::to_string(version) + " needs " + std::to_string(header) + ")");
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
    return internal::binary::ReadV1(payload, checksum);
  }
  if (version == 3)  // checksums: see ReadTensorDataEntry
    return internal::binary::ReadV3(bytes, options.keepalive, options.verify_tensor_data);
  if (version == 4) return internal::binary::ReadV4(bytes, options);
  uint64_t sum = Fnv1a64(payload);
  if (sum != checksum) return InvalidArgument("corrupt binary module: checksum mismatch");
  return internal::binary::ReadV2(bytes);
}

}  // namespace plir
