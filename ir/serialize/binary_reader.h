// Internal to ir/serialize/: the reader of binary versions 2 and 3 (one
// file's sections; layout: binary_internal.h). binary_reader.cc reads the
// sections, the types and the attribute sets; binary_nodes.cc reads the node
// records. The small readers every record uses are inline here.
#ifndef PLIR_IR_SERIALIZE_BINARY_READER_H_
#define PLIR_IR_SERIALIZE_BINARY_READER_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "ir/serialize/binary_internal.h"
#include "ir/status.h"
#include "ir/symbol.h"
#include "ir/type.h"

namespace plir::internal::binary {

class FileReader {
 public:
  FileReader(std::string_view file, int version, std::shared_ptr<const void> keepalive,
             bool verify_tensor_data, bool memory_ahead)
      : base_(reinterpret_cast<const uint8_t*>(file.data())),
        size_(file.size()),
        version_(version),
        keepalive_(std::move(keepalive)),
        verify_tensor_data_(verify_tensor_data),
        memory_ahead_(memory_ahead) {}

  ~FileReader() { ReleaseTable(); }
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  StatusOr<Module> Read();

  // After a successful Read: no variable is bound in two items (the
  // file's records prove it; see bindings_shared_ below).
  bool bindings_unshared() const { return !bindings_shared_; }

 private:
  // The structure checksum computed on a helper thread while the records
  // are read (Read, in binary_reader.cc, says when). Joined by Read, or by
  // the reader's destruction on the way out of an exception.
  struct ChecksumAside {
    std::thread thread;
    uint32_t crc = 0;   // written by the thread
    uint64_t want = 0;  // the header's field (a CRC in its low 32 bits)
    ~ChecksumAside() {
      if (thread.joinable()) thread.join();
    }
  };
  static constexpr size_t kChecksumAsideBytes = size_t{4} << 20;
  StatusOr<Module> ReadSections();
  Status ChecksumMismatch() const {
    return Corrupt("checksum mismatch (bytes 32 to " + std::to_string(data_offset_) + ")");
  }

  // Version 3: the tensor-data entry after the section table; checks the
  // structure checksum (the bytes from 32 to the data; or starts it on
  // aside_) and, if asked, the data's.
  Status ReadTensorDataEntry();

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
      // Two and three bytes (a variable's number, a reference far back in
      // a large function: most long ones) from one load, without the loop.
      // (Little-endian, as the rest of the reader.)
      uint32_t w;
      std::memcpy(&w, p, 4);
      if (!(w & 0x8000)) {
        p_ = p + 2;
        *v = (w & 0x7f) | (w >> 1 & 0x3f80);
        return true;
      }
      if (!(w & 0x800000)) {
        p_ = p + 3;
        *v = (w & 0x7f) | (w >> 1 & 0x3f80) | (w >> 2 & 0x1fc000);
        return true;
      }
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
  // `kBinds`: the slot binds the variable it names (a VarBinding's variable,
  // a parameter). `kAdopt`: the first reference may take over the table's
  // (below); false where the record's node may drop what it was given
  // (SeqExprNode::Make merges adjacent blocks and drops empty ones), which
  // would free a node the table still names for later references.
  template <typename T, bool kBinds = false, bool kAdopt = true>
  bool NodeRef(uint32_t id, Ref<T>* out) {
    uint64_t back;
    if (!Var(&back)) return false;
    if (back == 0 || back > id) [[unlikely]]
      return FailBack(back);
    const uintptr_t entry = reinterpret_cast<uintptr_t>(nodes_[id - back]);
    const Node* n = reinterpret_cast<const Node*>(entry & ~kMarks);
    if (kBinds || (entry & kHoldsBinding)) {
      if (entry & kTaken) bindings_shared_ = true;
      nodes_[id - back] = reinterpret_cast<const Node*>(entry | kTaken);
      record_binds_ = true;
    }
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
    // The first reference takes over the table's; later ones count.
    uint64_t& word = owned_[(id - back) >> 6];
    const uint64_t bit = uint64_t{1} << ((id - back) & 63);
    if (kAdopt && (word & bit)) {
      word &= ~bit;
      *out = Ref<T>::Adopt(static_cast<const T*>(n));
    } else {
      *out = Ref<T>(static_cast<const T*>(n));
    }
    return true;
  }
  template <typename T, bool kBinds = false, bool kAdopt = true>
  bool NodeRefs(uint32_t id, uint64_t n, std::vector<Ref<T>>* out) {
    out->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      Ref<T> r;
      if (!NodeRef<T, kBinds, kAdopt>(id, &r)) return false;
      out->push_back(std::move(r));
    }
    return true;
  }

  // --- records ------------------------------------------------------------
  bool Shape(bool* known, int* ndim, std::vector<Dim>* dims);

  bool ReadType();

  // A count, then that many references to earlier types (a tuple's
  // fields; a Callable type's parameters and return type); *size is the
  // tree size of a tuple of them.
  bool TypeList(std::vector<Type>* fields, uint32_t* size);

  bool ReadTypeRecord();

  bool ReadAttrValue(AttrValue* out, int depth);

  bool ReadAttrSet();

  bool ReadNode(uint32_t id);

  const uint8_t* base_;
  size_t size_;
  int version_;
  std::shared_ptr<const void> keepalive_;
  bool verify_tensor_data_;
  bool memory_ahead_;
  ChecksumAside aside_;  // started by ReadTensorDataEntry, if at all
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
  // The nodes by id. The table holds a reference to each node until the
  // first record that refers to it takes that reference over (owned_ has
  // its bit then cleared): a node is counted once less, and at the end only
  // the nodes nothing referred to (the items, or unused records) are
  // released, instead of a walk over every node of the module (3M
  // decrements on 1M ops). A failed read releases the same way.
  //
  // An entry's two low bits (node memory is 8-byte aligned) prove, as the
  // records are read, that no variable is bound in two items, which spares
  // plir-opt VerifyModule's check across items (a sort of every binding:
  // at 1M ops in 1,000 functions, a fifth of the binary round trip).
  // kHoldsBinding marks a record that binds a variable or refers to one
  // that does (a binding, a block, a body, an if, a local function, a call
  // or tuple holding one...); kTaken, one already referred to (a variable:
  // already bound). A second reference to such a record, or a second
  // binding of a variable, sets bindings_shared_. Otherwise every record
  // that binds, and every variable, has at most one path up to at most one
  // item (items refer only to functions, which nothing else refers to).
  // Conservative: a well-formed module never sets it (a variable bound
  // twice, even in one item, is an error of its own).
  static constexpr uintptr_t kHoldsBinding = 1, kTaken = 2, kMarks = 3;
  static_assert(alignof(Node) > kMarks, "a node's address has two low bits free");
  std::vector<const Node*> nodes_;
  std::vector<uint64_t> owned_;
  bool record_binds_ = false;  // the record being read binds or holds a binding
  bool bindings_shared_ = false;
  const Node* NodeAt(size_t id) const {
    return reinterpret_cast<const Node*>(reinterpret_cast<uintptr_t>(nodes_[id]) & ~kMarks);
  }
  void Push(Ref<Node> n) {
    if ((nodes_.size() & 63) == 0) owned_.push_back(0);
    owned_.back() |= uint64_t{1} << (nodes_.size() & 63);
    nodes_.push_back(reinterpret_cast<const Node*>(reinterpret_cast<uintptr_t>(n.release()) |
                                                   (record_binds_ ? kHoldsBinding : 0)));
    record_binds_ = false;
  }
  // Releases the table's remaining references and empties it.
  void ReleaseTable();
  // A call's operands while its record is read: CallNode::MakeUncheckedFrom
  // copies them into the node and clears these, so their buffers serve every
  // call (a vector each was an allocation and a free per call).
  std::vector<Expr> call_args_;
  std::vector<Type> call_sinfo_;
  uint32_t next_var_index_ = 0;  // dense variable numbers, per item
  // Where an error was found: the section, the record's index, its kind.
  Section where_ = kStrings;
  uint64_t index_ = 0;
  int kind_ = -1;
  std::string error_;
};

}  // namespace plir::internal::binary

#endif  // PLIR_IR_SERIALIZE_BINARY_READER_H_
