// Versions 2 and 3 of the binary format: the reader (layout: binary_internal.h),
// and LoadBinary, which reads every version.
#include "ir/serialize/binary_reader.h"

#include <cstring>
#include <functional>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "ir/internal/node_memory_ahead.h"
#include "ir/internal/pointer_map.h"
#include "ir/internal/radix_sort.h"
#include "ir/op.h"
#include "ir/parallel.h"
#include "ir/serialize/binary_internal.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"
#include "ir/support/crc32c.h"
#include "ir/support/fnv.h"
#include "ir/var_map.h"
namespace plir::internal::binary {

// The structure checksum of a large file loaded on its own (one function of
// 1M ops: 26 MB) is computed on a helper thread while this one reads the
// records, instead of before them: it was 13-17 ms of the binary round trip
// on the critical path, most of it the first touch of the mapping's pages,
// which the helper now takes before the records reach them
// (bench/RESULTS.md). The records are read as they would be from any file
// whose checksum matches (a reader must never trust a matching checksum
// anyway: anyone can write one); a mismatch is still the error reported,
// ahead of anything the records hold, and the module read is dropped. A
// version 4 shard (memory_ahead_ false: its neighbours keep the cores busy),
// a small file, or a load that checks the tensor data too, checks first,
// as before.
StatusOr<Module> FileReader::Read() {
  StatusOr<Module> m = ReadSections();
  if (aside_.thread.joinable()) {
    aside_.thread.join();
    if (uint64_t{aside_.crc} != aside_.want) return ChecksumMismatch();
  }
  return m;
}

StatusOr<Module> FileReader::ReadSections() {
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
  // The table of nodes by id. A version 4 shard's is a megabyte or two, and
  // a thread loads several shards in turn: it reuses its last table's
  // buffer (kept below) instead of faulting in a fresh one each time.
  static thread_local std::vector<const Node*> spare_table;
  nodes_.swap(spare_table);
  nodes_.reserve(counts[kNodes]);
  owned_.reserve(counts[kNodes] / 64 + 1);
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
    NodeKind k = NodeAt(id)->kind();
    if (k != NodeKind::kFunction && k != NodeKind::kExternFunc)
      return Corrupt("item " + std::to_string(index_) + " is a " + NodeKindName(k) +
                     ", not a function or extern");
    items.push_back(Ref<ItemNode>(static_cast<const ItemNode*>(NodeAt(id))));
  }
  PLIR_RETURN_IF_ERROR(SectionEnd());
  ReleaseTable();
  // Kept for the thread's next shard up to 4 MiB; a larger table (one large
  // function's) is freed here as before.
  if (nodes_.capacity() <= (size_t{4} << 20) / sizeof(nodes_[0])) nodes_.swap(spare_table);
  types_.clear();
  attr_sets_.clear();
  auto m = Module::Make(std::move(items));
  if (!m.ok()) return Corrupt(m.status().message());
  return m;
}

void FileReader::ReleaseTable() {
  for (size_t w = 0; w < owned_.size(); ++w)
    for (uint64_t bits = owned_[w]; bits; bits &= bits - 1)
      Ref<Node>::Adopt(NodeAt(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));  // and drop
  owned_.clear();
  nodes_.clear();
}

Status FileReader::ReadTensorDataEntry() {
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
  const std::string_view structure = view(kHeaderSize, data_offset_ - kHeaderSize);
  if (memory_ahead_ && !verify_tensor_data_ && structure.size() >= kChecksumAsideBytes &&
      DefaultThreads() >= 2) {
    aside_.want = checksum;
    try {
      aside_.thread = std::thread([a = &aside_, structure] { a->crc = Crc32c(structure); });
    } catch (const std::system_error&) {  // no thread to be had: here, first
    }
  }
  if (!aside_.thread.joinable() && Crc32c(structure) != checksum) return ChecksumMismatch();
  if (verify_tensor_data_ && Crc32c(view(data_offset_, data_size_)) != data_checksum)
    return Corrupt("tensor data checksum mismatch (bytes " + std::to_string(data_offset_) + " to " +
                   std::to_string(size_) + ")");
  data_ = reinterpret_cast<const char*>(base_) + data_offset_;
  return Status::Ok();
}

bool FileReader::Shape(bool* known, int* ndim, std::vector<Dim>* dims) {
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

bool FileReader::ReadType() {
  size_t before = types_.size();
  if (!ReadTypeRecord()) return false;
  if (type_sizes_.size() == before) type_sizes_.push_back(1);  // not a tuple
  return true;
}

bool FileReader::TypeList(std::vector<Type>* fields, uint32_t* size) {
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

bool FileReader::ReadTypeRecord() {
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

bool FileReader::ReadAttrValue(AttrValue* out, int depth) {
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

bool FileReader::ReadAttrSet() {
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

namespace {

StatusOr<Module> ReadWith(FileReader& r, LoadFacts* facts) {
  StatusOr<Module> m = r.Read();
  if (facts) facts->bindings_unshared = m.ok() && r.bindings_unshared();
  return m;
}

}  // namespace

StatusOr<Module> ReadV2(std::string_view bytes, LoadFacts* facts) {
  FileReader r(bytes, 2, nullptr, false, true);
  return ReadWith(r, facts);
}
StatusOr<Module> ReadV3(std::string_view bytes, std::shared_ptr<const void> keepalive,
                        bool verify_tensor_data, bool memory_ahead, LoadFacts* facts) {
  FileReader r(bytes, 3, std::move(keepalive), verify_tensor_data, memory_ahead);
  return ReadWith(r, facts);
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
  return LoadBinary(bytes, options, nullptr);
}

StatusOr<Module> LoadBinary(std::string_view bytes, const BinaryLoadOptions& options,
                            LoadFacts* facts) {
  if (facts) *facts = LoadFacts();
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
    return internal::binary::ReadV3(bytes, options.keepalive, options.verify_tensor_data, true,
                                    facts);
  if (version == 4) return internal::binary::ReadV4(bytes, options, facts);
  uint64_t sum = Fnv1a64(payload);
  if (sum != checksum) return InvalidArgument("corrupt binary module: checksum mismatch");
  return internal::binary::ReadV2(bytes, facts);
}

}  // namespace plir
