// Internal: the node table of the JSON format and of binary format version 1.
// (Binary version 2 has its own tables, binary_format.cc.)
//
// A module is written as a table of node records in post-order (children
// before parents), each node once however often it is shared, then the list
// of item ids. Reading builds the nodes in table order, so no recursion is
// needed in either direction and sharing survives the round trip.
#ifndef PLIR_IR_INTERNAL_NODE_TABLE_H_
#define PLIR_IR_INTERNAL_NODE_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/module.h"

namespace plir::internal {

// One attribute in a record; a type value refers to a node id.
struct RecordAttr {
  std::string key;
  AttrValue::Kind kind = AttrValue::Kind::kInt;
  int64_t i = 0;
  double f = 0;
  std::string s;
  uint32_t type_id = 0;
  std::vector<RecordAttr> list;  // kList elements; kMap entries (each with its key)
};

struct DimRecord {
  int64_t value = 0;
  std::string sym;  // empty for constants
};

// The scalar fields of a node; which ones are meaningful depends on `kind`.
struct Record {
  NodeKind kind = NodeKind::kObjectType;
  std::vector<uint32_t> children;  // ids, in the kind's order (see node_table.cc)
  DataType dtype = DataType::kUnknown;
  int32_t ndim = -1;
  bool flag = false;  // has_shape / has_values / dataflow
  std::vector<DimRecord> dims;
  std::string name;   // var, global, op, function names; string values
  int64_t i = 0;      // tuple index, int/bool value
  double f = 0;       // float value
  std::string bytes;  // constant data
  std::vector<RecordAttr> attrs;
  uint32_t n_args = 0;   // Call: number of arguments among children
  uint32_t n_sinfo = 0;  // Call: number of sinfo_args among children
};

// Receives records in post-order; returns nothing (ids are positions).
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void Write(const Record& r) = 0;
};

// Flattens `m` into `sink`; returns the ids of the module's items.
std::vector<uint32_t> FlattenModule(const Module& m, RecordSink& sink);

// Builds nodes from records in order (the binary version 1 reader; the JSON
// and version 2 readers build nodes straight from their input).
class NodeBuilder {
 public:
  // Adds the node for `r` (its children must already be built). Errors name
  // the record's index.
  Status Add(const Record& r);
  size_t size() const { return nodes_.size(); }
  // Assembles the module from item ids.
  StatusOr<Module> Finish(const std::vector<uint32_t>& items);

 private:
  StatusOr<Ref<Node>> Build(const Record& r);
  template <typename T>
  StatusOr<Ref<T>> Child(const Record& r, size_t i);
  StatusOr<Attrs> BuildAttrs(const std::vector<RecordAttr>& a);
  std::vector<Ref<Node>> nodes_;
  std::vector<uint32_t> type_sizes_;  // per node: its tree size if a type
};

// Loaders refuse a type whose tree (the type as printed, or as compared
// field by field) would have more than this many nodes. Files share types,
// so a few hundred hostile bytes could otherwise describe a tuple type whose
// tree is exponential in size.
inline constexpr uint64_t kMaxTypeTreeSize = uint64_t{1} << 24;

// The tree size of a tuple type whose fields have tree sizes `fields`, or
// an error naming the limit.
Status TupleTypeTreeSize(const std::vector<uint32_t>& fields, uint32_t* size);

// Checks `type` for a constant before ConstantNode::Make, whose error
// message would print any type, however large.
Status CheckConstantType(const Type& type);

// Writes `m` in binary format version 1, byte for byte as PLIR wrote it
// before version 2 (with its checksum's mistyped offset basis; see
// docs/serialization.md). For tests of the version 1 reader.
std::string SaveBinaryV1(const Module& m);

// Kind names used by the JSON format ("TensorType", "Call", ...).
const char* RecordKindName(NodeKind k);

}  // namespace plir::internal

#endif  // PLIR_IR_INTERNAL_NODE_TABLE_H_
