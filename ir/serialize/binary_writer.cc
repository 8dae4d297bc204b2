// Versions 2 and 3 of the binary format: the writer (layout: binary_internal.h).
#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/internal/pointer_map.h"
#include "ir/internal/radix_sort.h"
#include "ir/op.h"
#include "ir/serialize/binary_internal.h"
#include "ir/serialize/node_table.h"
#include "ir/serialize/serialize.h"
#include "ir/support/crc32c.h"
#include "ir/support/fnv.h"
#include "ir/support/huge_pages.h"
#include "ir/support/uninitialized_string.h"
#include "ir/var_map.h"

namespace plir::internal::binary {

const Node* NodeChild(const Node* n, size_t i) {
  switch (n->kind()) {
    case NodeKind::kTuple: {
      const auto& f = static_cast<const TupleNode*>(n)->fields();
      return i < f.size() ? f[i].get() : nullptr;
    }
    case NodeKind::kTupleGetItem:
      return i == 0 ? static_cast<const TupleGetItemNode*>(n)->tuple().get() : nullptr;
    case NodeKind::kCall: {
      auto* c = static_cast<const CallNode*>(n);
      if (i == 0) return c->callee().get();
      return i - 1 < c->args().size() ? c->args()[i - 1].get() : nullptr;
    }
    case NodeKind::kIf: {
      auto* f = static_cast<const IfNode*>(n);
      return i == 0   ? static_cast<const Node*>(f->cond().get())
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
      return i == 0   ? static_cast<const Node*>(b->var().get())
             : i == 1 ? b->value().get()
                      : nullptr;
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
    default:
      return nullptr;
  }
}

namespace {

// The node section: most of a file (15 MB of a 22 MB 1M-op module), written
// into chunks that become pieces of the output as they are, so that growing
// it copies nothing (a string's doublings copied, and faulted in, twice its
// size). Each record reserves its largest size first; the appends after it
// do not check for room (a string's push_back checks every byte). A chunk
// is not zeroed when made (UninitializedString): only what was written is
// kept (Trim), and zeroing was a pass over every fresh chunk before the
// records' own (6.5% of the samples of the binary round trip of 1M ops in
// 1,000 functions, `perf record`). The chunks grow from 64 KiB to 4 MiB,
// unless the writer expects a section of a quarter of a huge page or more
// (Expect): then they are 2 and 4 MiB from the first, which plir-opt's
// operator new puts on huge pages (cli/huge_page_new.cc). A version 4
// shard of a 1M-op module in 1,000 functions writes about 0.9 MiB of
// nodes; in chunks of 64 KiB to 1 MiB that was 5.3K of the round trip's
// 12.9K page faults (`perf record -e page-faults`), and one huge chunk a
// shard took the round trip from 372 to 276 ms run after run (medians of 8
// interleaved runs of each build), from 381 to 372 ms with 3 s of idle
// before each run (bench/RESULTS.md). A small module's section stays in
// small chunks: a huge page is 2 MiB of RSS however little is written.
class ChunkOut {
 public:
  static constexpr size_t kFirstChunk = size_t{64} << 10;
  static constexpr size_t kChunk = size_t{4} << 20;

  void UsePool(ChunkPool* pool) { pool_ = pool; }
  // The section will be about `bytes` long: from a quarter of a huge page
  // on, the chunks start at a huge page. Call before the first write.
  void Expect(size_t bytes) {
    if (bytes >= kHugePageBytes / 4) next_chunk_ = std::max(next_chunk_, kHugePageBytes);
  }

  void Reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) [[unlikely]]
      NewChunk(n);
  }
  void Byte(uint8_t b) { *p_++ = static_cast<char>(b); }
  void Var(uint64_t v) { p_ = PutVarint(p_, v); }
  void Signed(int64_t v) { Var(ZigZag(v)); }
  void F64(double d) {
    std::memcpy(p_, &d, 8);
    p_ += 8;
  }
  void Append(std::string_view bytes) {
    Reserve(bytes.size());
    std::memcpy(p_, bytes.data(), bytes.size());
    p_ += bytes.size();
  }
  size_t size() const { return done_ + static_cast<size_t>(p_ - begin_); }
  // The chunks, trimmed to what was written.
  std::vector<std::string> Take() {
    Trim();
    return std::move(chunks_);
  }

 private:
  void Trim() {
    if (chunks_.empty()) return;
    size_t used = static_cast<size_t>(p_ - begin_);
    chunks_.back().resize(used);
    done_ += used;
    p_ = begin_ = end_ = nullptr;
  }
  void NewChunk(size_t n) {
    Trim();
    const size_t want = std::max(n, next_chunk_);
    std::string& c = chunks_.emplace_back(pool_ ? pool_->Take(want) : UninitializedString(want));
    next_chunk_ = std::min(2 * next_chunk_, kChunk);
    p_ = begin_ = c.data();
    end_ = begin_ + c.size();
  }
  ChunkPool* pool_ = nullptr;  // where chunks come from (else made fresh)
  std::vector<std::string> chunks_;
  char* p_ = nullptr;
  char* begin_ = nullptr;
  char* end_ = nullptr;
  size_t done_ = 0;  // bytes in the chunks before the last
  size_t next_chunk_ = kFirstChunk;
};

class Writer {
 public:
  Writer(int version, bool verified, ChunkPool* pool = nullptr)
      : version_(version), verified_(verified) {
    nodes_.UsePool(pool);
  }

  BinaryParts Save(const Item* items, size_t n, std::vector<const VarNode*>* vars) {
    // One item cannot share a variable with another, nor can the items of
    // a verified module (the verifier rejects a variable bound in two
    // items, or used outside its own): their variables need no list for
    // the check below.
    track_vars_ = !verified_ && (vars || n > 1);
    size_t expected = 0;  // variables
    for (size_t i = 0; i < n; ++i)
      if (auto* f = As<FunctionNode>(items[i])) expected += VarIndexBound(*f);
    // One allocation for the list (a doubling series faulted in and copied
    // twice its size).
    if (track_vars_) emitted_vars_.reserve(expected);
    // A binding is a few records of a few bytes (a variable, a call, the
    // binding itself): 15 bytes of the node section on average in the
    // 1M-op programs of bench/peer_compare.py.
    nodes_.Expect(expected * 15);
    for (size_t i = 0; i < n; ++i) {
      item_vars_.Clear();
      // Sized up front: a dense array grown by doubling faulted in and
      // copied twice its size (1M variables: 16 MB).
      if (auto* f = As<FunctionNode>(items[i])) item_vars_.Expect(VarIndexBound(*f));
      items_.Var(Flatten(items[i].get()));
    }
    if (vars) {
      // The caller checks (these and other runs' variables together).
      *vars = std::move(emitted_vars_);
    } else if (!exact_vars_ && track_vars_ && AnyVariableEmittedTwice()) {
      // A variable shared by two items (an ill-formed module): write again,
      // keeping every variable in the module-wide table, so that its
      // identity survives the round trip.
      Writer exact(version_, false);
      exact.exact_vars_ = true;
      return exact.Save(items, n, nullptr);
    }
    return AssembleParts(n);
  }

 private:
  // The file as pieces: the header (patched with the checksums), the string
  // table and the sections moved out of the writer, and for version 3 zeros
  // up to a multiple of 64 and each tensor's bytes viewed in place.
  BinaryParts AssembleParts(size_t n_items) {
    const bool v3 = version_ >= 3;
    uint64_t counts[kNumSections] = {string_ends_.size(), n_types_, n_attrs_, n_nodes_, n_items};
    uint64_t sizes[kNumSections] = {4 * string_ends_.size() + blob_.size(), types_.bytes.size(),
                                    attrs_.bytes.size(), nodes_.size(), items_.bytes.size()};
    size_t structure_end = v3 ? kV3PreambleSize : kPreambleSize;
    for (uint64_t sz : sizes) structure_end += sz;
    size_t data_offset = v3 && data_size_ ? AlignTensor(structure_end) : structure_end;
    size_t total = data_offset + (v3 ? data_size_ : 0);
    Out h;
    h.Raw(kBinaryMagic, 8);
    h.U32(v3 ? 3 : 2);
    h.U32(0);  // flags
    h.U64(total - kHeaderSize);
    h.U64(0);  // (structure) checksum, filled in below
    for (int s = 0; s < kNumSections; ++s) {
      h.U64(counts[s]);
      h.U64(sizes[s]);
    }
    if (v3) {
      h.U64(tensors_.size());
      h.U64(data_offset);
      h.U64(data_size_);
      h.U64(0);  // tensor-data checksum, filled in below
    }
    BinaryParts p;
    std::string& head = p.owned.emplace_back(std::move(h.bytes));
    p.pieces.push_back(head);
    // Version 3's tensor data: each tensor's bytes in place, after the
    // zeros that align it. Its checksum is in the header, which the
    // structure checksum covers: it comes first.
    static const std::string kZeros(kTensorAlignment, '\0');
    std::vector<std::string_view> data;
    if (v3) {
      uint32_t data_crc = 0;
      size_t at = data_offset;
      for (const TensorBytes* t : tensors_) {
        if (size_t pad = AlignTensor(at) - at) {
          data.push_back(std::string_view(kZeros).substr(0, pad));
          at += pad;
        }
        data.push_back(t->view());
        at += t->size();
      }
      for (std::string_view piece : data) data_crc = Crc32c(piece, data_crc);
      uint64_t data_sum = data_crc;
      std::memcpy(&head[kV3DataChecksumAt], &data_sum, 8);
    }
    // Version 2's FNV-1a covers everything after the header; version 3's
    // CRC-32C the structure, and a second one the tensor data.
    uint32_t crc = 0;
    uint64_t fnv = kFnv64OffsetBasis;
    auto sum = [&](std::string_view bytes) {
      if (v3)
        crc = Crc32c(bytes, crc);
      else
        fnv = Fnv1a64(bytes, fnv);
    };
    sum(std::string_view(head).substr(kHeaderSize));
    auto structure = [&](std::string&& bytes) {
      sum(bytes);
      p.pieces.push_back(p.owned.emplace_back(std::move(bytes)));
    };
    structure(
        std::string(reinterpret_cast<const char*>(string_ends_.data()), 4 * string_ends_.size()));
    structure(std::move(blob_));
    structure(std::move(types_.bytes));
    structure(std::move(attrs_.bytes));
    for (std::string& chunk : nodes_.Take()) structure(std::move(chunk));
    structure(std::move(items_.bytes));
    if (!v3) {
      std::memcpy(&head[24], &fnv, 8);
      return p;
    }
    if (data_offset > structure_end) structure(std::string(data_offset - structure_end, '\0'));
    uint64_t structure_sum = crc;
    std::memcpy(&head[24], &structure_sum, 8);
    p.pieces.insert(p.pieces.end(), data.begin(), data.end());
    return p;
  }

  // Version 3: the offset of `t` in the tensor data (each distinct tensor
  // once, at a multiple of kTensorAlignment).
  uint64_t TensorOffset(const TensorBytes& t) {
    if (t.empty()) return 0;
    if (const uint64_t* off = tensor_offset_.Find(&t)) return *off;
    uint64_t off = AlignTensor(data_size_);
    data_size_ = off + t.size();
    tensors_.push_back(&t);
    tensor_offset_.Insert(&t, off);
    return off;
  }

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

  // Str of an interned symbol (a variable's name prefix: a million
  // variables share a few), found by the symbol's address, not its bytes.
  uint32_t SymbolIndex(Symbol s) {
    if (const uint32_t* id = symbol_index_.Find(s.ptr())) return *id;
    uint32_t id = Str(s.str());
    symbol_index_.Insert(s.ptr(), id);
    return id;
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
        r.Var(d.is_const() ? static_cast<uint64_t>(d.value) << 1
                           : (uint64_t{Str(d.sym.str())} << 1) | 1);
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
      default:
        break;  // ObjectType: the kind alone
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
        case AttrValue::Kind::kInt:
          r.Signed(v.as_int());
          break;
        case AttrValue::Kind::kFloat:
          r.F64(v.as_float());
          break;
        case AttrValue::Kind::kBool:
          r.Byte(v.as_bool());
          break;
        case AttrValue::Kind::kString:
          r.Var(Str(v.as_string()));
          break;
        case AttrValue::Kind::kType:
          r.Var(type_ids[next_type++]);
          break;
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
        if (const uint32_t* id = SharedId(c))
          ids_.push_back(*id);
        else if (c->kind() != NodeKind::kVarBinding || !EmitCallBinding(c))
          stack_.push_back({c, 0, ids_.size()});
        continue;
      }
      uint32_t id = Emit(f.n, ids_.data() + f.ids_base);
      ids_.resize(f.ids_base);
      stack_.pop_back();
      if (stack_.empty()) return id;
      ids_.push_back(id);
    }
  }

  // The common binding, a new variable bound to a call whose callee and
  // operands are written already (`%v = add(%a, %b)`), written at once: the
  // same three records, in the same order, that the walk above writes
  // through three frames and eight NodeChild steps. Pushes the binding's
  // id; false (nothing written) for any other binding.
  bool EmitCallBinding(const Node* n) {
    auto* b = static_cast<const VarBindingNode*>(n);
    const Node* var = b->var().get();
    const Node* value = b->value().get();
    if (value->kind() != NodeKind::kCall || SharedId(var) || SharedId(value)) return false;
    auto* call = static_cast<const CallNode*>(value);
    const size_t base = ids_.size();
    const uint32_t* id = SharedId(call->callee().get());
    if (!id) return false;
    ids_.push_back(*id);
    for (const Expr& a : call->args()) {
      // (The variable itself, ill-formed, is not written yet: the walk
      // writes it first, so it takes the walk.)
      if (!(id = SharedId(a.get()))) {
        ids_.resize(base);
        return false;
      }
      ids_.push_back(*id);
    }
    const uint32_t kids[2] = {Emit(var, nullptr), Emit(call, ids_.data() + base)};
    ids_.resize(base);
    ids_.push_back(Emit(n, kids));
    return true;
  }

  // Writes the record of `n`, whose node children have ids `kids`.
  uint32_t Emit(const Node* n, const uint32_t* kids) {
    uint32_t id = n_nodes_++;
    ChunkOut& o = nodes_;
    auto ref = [&](size_t i) { o.Var(id - kids[i]); };
    auto type = [&](const Type& t) { o.Var(TypeIndex(t.get())); };
    // Room for the fixed fields of any record (at most 8 varints and a
    // float); a record with lists reserves 10 bytes an element more.
    constexpr size_t kFixed = 96;
    o.Reserve(kFixed);
    o.Byte(static_cast<uint8_t>(n->kind()));
    switch (n->kind()) {
      case NodeKind::kVar: {
        // The name as its parts (an interned prefix, which outlives the
        // writer, and the number + 1, 0 for none): a million generated names
        // share a few strings.
        auto* v = static_cast<const VarNode*>(n);
        NameHint h = v->hint();
        o.Var(SymbolIndex(h.prefix()));
        o.Var(h.number() == NameHint::kNoNumber ? 0 : uint64_t{h.number()} + 1);
        type(v->type());
        o.Byte(v->is_dataflow());
        break;
      }
      case NodeKind::kGlobalVar:
        o.Var(Str(static_cast<const GlobalVarNode*>(n)->name()));
        break;
      case NodeKind::kOp:
        o.Var(Str(static_cast<const OpNode*>(n)->name()));
        break;
      case NodeKind::kTuple: {
        size_t k = static_cast<const TupleNode*>(n)->fields().size();
        o.Reserve(kFixed + 10 * k);
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
        if (p->dtype() == DataType::kFloat64)
          o.F64(p->float_value());
        else if (p->dtype() == DataType::kBool)
          o.Byte(p->int_value() != 0);
        else
          o.Signed(p->int_value());
        break;
      }
      case NodeKind::kStringImm:
        o.Var(Str(static_cast<const StringImmNode*>(n)->value()));
        break;
      case NodeKind::kShapeExpr:
        type(static_cast<const ShapeExprNode*>(n)->type());
        break;  // Shape[(...)]: the values
      case NodeKind::kPrimExpr:
        type(static_cast<const PrimExprNode*>(n)->type());
        break;  // Prim[int64, value=...]
      case NodeKind::kConstant: {
        auto* c = static_cast<const ConstantNode*>(n);
        type(c->type());
        if (version_ >= 3) {  // the bytes live in the tensor data
          o.Var(TensorOffset(c->data()));
          o.Var(c->data().size());
          break;
        }
        o.Var(c->data().size());
        o.Append(c->data().view());
        break;
      }
      case NodeKind::kCall: {
        auto* c = static_cast<const CallNode*>(n);
        o.Reserve(kFixed + 10 * (c->args().size() + c->sinfo_args().size()));
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
        o.Reserve(kFixed + 10 * k);
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
        o.Reserve(kFixed + 10 * b->bindings().size());
        o.Byte(b->is_dataflow());
        o.Var(b->bindings().size());
        for (size_t i = 0; i < b->bindings().size(); ++i) ref(i);
        break;
      }
      case NodeKind::kLocalFn: {
        auto* f = static_cast<const LocalFnNode*>(n);
        size_t k = f->params().size();
        o.Reserve(kFixed + 10 * k);
        o.Var(k);
        for (size_t i = 0; i < k; ++i) ref(i);
        type(f->ret_type());
        ref(k);
        break;
      }
      case NodeKind::kFunction:
      case NodeKind::kExternFunc: {
        auto* f = static_cast<const ItemNode*>(n);
        size_t k = f->params().size();
        o.Reserve(kFixed + 10 * k);
        o.Var(Str(f->name()));
        o.Var(k);
        for (size_t i = 0; i < k; ++i) ref(i);
        type(f->ret_type());
        if (n->kind() == NodeKind::kFunction) ref(k);
        o.Var(AttrSet(f->attrs()));
        break;
      }
      default:
        break;  // types never reach the node table
    }
    if (n->kind() == NodeKind::kVar && !exact_vars_) {
      // Variables are per item: a table indexed by their dense number,
      // cleared per item, instead of the module-wide hash table.
      item_vars_.Insert(static_cast<const VarNode*>(n), id);
      if (track_vars_) emitted_vars_.push_back(static_cast<const VarNode*>(n));
    } else if (n->use_count() > 1) {
      node_ptr_.Insert(n, id);
    }
    return id;
  }

  std::string blob_;
  std::vector<uint32_t> string_ends_;
  std::unordered_map<std::string_view, uint32_t> string_index_;
  internal::PointerMap<uint32_t> symbol_index_;
  Out types_, attrs_, items_, scratch_;
  ChunkOut nodes_;
  uint32_t n_types_ = 0, n_attrs_ = 0, n_nodes_ = 0;
  internal::PointerMap<uint32_t> type_ptr_, attrs_ptr_, node_ptr_;
  VarMap<uint32_t> item_vars_;                // the current item's variables
  std::vector<const VarNode*> emitted_vars_;  // every variable record
  bool track_vars_ = true;                    // emitted_vars_ is kept
  bool exact_vars_ = false;                   // variables in node_ptr_ too (a variable spans items)
  int version_;
  bool verified_;  // the caller vouches that the module verifies
  // Version 3: the distinct tensors in file order, their offsets, the
  // data's size so far.
  std::vector<const TensorBytes*> tensors_;
  internal::PointerMap<uint64_t> tensor_offset_;
  uint64_t data_size_ = 0;

  // The id of `c` if it was already written and may be shared, else null.
  const uint32_t* SharedId(const Node* c) {
    if (c->use_count() <= 1) return nullptr;
    if (c->kind() == NodeKind::kVar && !exact_vars_)
      return item_vars_.Find(static_cast<const VarNode*>(c));
    return node_ptr_.Find(c);
  }
  // True iff some variable got two records (it appears in two items).
  bool AnyVariableEmittedTwice() { return AnyRepeated(emitted_vars_); }
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

}  // namespace

std::string Concatenate(const BinaryParts& p) {
  std::string file;
  file.reserve(p.size());
  for (std::string_view piece : p.pieces) file.append(piece);
  return file;
}

bool AnyRepeated(std::vector<const VarNode*>& vars) {
  if (vars.size() < 2) return false;
  internal::RadixSortByAddress(vars, [](const VarNode* v) { return v; });
  return std::adjacent_find(vars.begin(), vars.end()) != vars.end();
}

BinaryParts WriteItems(const Item* items, size_t n, int version, std::vector<const VarNode*>* vars,
                       bool verified, ChunkPool* pool) {
  return Writer(version, verified, pool).Save(items, n, verified ? nullptr : vars);
}

// A few chunks: as many as the shards written but not yet out, times their
// chunks (one or two each at 1M ops), stay for reuse; more are freed.
constexpr size_t kPooledChunks = 8;

std::string ChunkPool::Take(size_t n) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < free_.size(); ++i) {
      if (free_[i].capacity() < n) continue;
      std::string s = std::move(free_[i]);
      free_[i] = std::move(free_.back());
      free_.pop_back();
      // Back to its full length, the bytes past what its last writer kept
      // not written (the next writer overwrites what it keeps).
      ResizeUninitialized(s, s.capacity());
      return s;
    }
  }
  return UninitializedString(n);
}

void ChunkPool::Give(std::string s) {
  if (s.capacity() < ChunkOut::kFirstChunk) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < kPooledChunks) free_.push_back(std::move(s));
}
BinaryParts WriteParts(const Module& m, int version, bool verified) {
  if (version >= 4) return WriteSharded(m, 0, verified);
  const std::vector<Item> items = m.items();
  return WriteItems(items.data(), items.size(), version, nullptr, verified);
}

}  // namespace plir::internal::binary

namespace plir {

std::string SaveBinary(const Module& m) { return SaveBinary(m, BinarySaveOptions{}); }

std::string SaveBinary(const Module& m, const BinarySaveOptions& options) {
  return internal::binary::Concatenate(SaveBinaryParts(m, options));
}

size_t BinaryParts::size() const {
  size_t n = 0;
  for (std::string_view piece : pieces) n += piece.size();
  return n;
}

namespace {
int WrittenVersion(const BinarySaveOptions& options) {
  return options.version == 2 ? 2 : options.version == 4 ? 4 : 3;
}
}  // namespace

BinaryParts SaveBinaryParts(const Module& m, const BinarySaveOptions& options) {
  return internal::binary::WriteParts(m, WrittenVersion(options));
}

BinaryParts SaveVerifiedBinaryParts(const Module& m, const BinarySaveOptions& options) {
  return internal::binary::WriteParts(m, WrittenVersion(options), /*verified=*/true);
}

Status SaveVerifiedBinaryTo(const Module& m, const BinarySaveOptions& options,
                            const BinarySink& sink) {
  const int version = WrittenVersion(options);
  if (version >= 4) return internal::binary::WriteShardedTo(m, sink);
  const BinaryParts parts = internal::binary::WriteParts(m, version, /*verified=*/true);
  for (std::string_view piece : parts.pieces) PLIR_RETURN_IF_ERROR(sink.append(piece));
  return Status::Ok();
}

BinaryParts SaveBinaryShards(const Module& m, size_t shards) {
  return internal::binary::WriteSharded(m, std::max<size_t>(shards, 1));
}

}  // namespace plir
