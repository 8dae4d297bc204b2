#include "interpreter/entry_inputs.h"

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <unordered_map>

#include "interpreter/safetensors.h"

namespace plir {

std::vector<ParamLeaf> EntryParamLeaves(const FunctionNode& f) {
  std::unordered_map<const VarNode*, std::unordered_map<int64_t, std::string>> field_names;
  if (auto* body = As<SeqExprNode>(f.body()))
    for (const Block& b : body->blocks())
      for (const Binding& x : b->bindings())
        if (auto* g = As<TupleGetItemNode>(x->value()))
          if (auto* v = As<VarNode>(g->tuple()))
            field_names[v].emplace(g->index(), x->var()->name_hint());
  std::vector<ParamLeaf> leaves;
  std::function<void(const Type&, const std::string&, const VarNode*)> add =
      [&](const Type& t, const std::string& name, const VarNode* param) {
        if (auto* tt = As<TupleTypeNode>(t)) {
          for (size_t k = 0; k < tt->fields().size(); ++k) {
            std::string n = name + "." + std::to_string(k);
            if (param) {
              auto it = field_names.find(param);
              if (it != field_names.end() && it->second.count(k)) n = it->second.at(k);
            }
            add(tt->fields()[k], n, nullptr);
          }
          return;
        }
        leaves.push_back({t, name});
      };
  for (const Var& p : f.params()) add(p->type(), p->name_hint(), p.get());
  return leaves;
}

namespace {

StatusOr<std::vector<int64_t>> StaticShape(const ParamLeaf& leaf, const std::string& function) {
  auto* tt = As<TensorTypeNode>(leaf.type);
  if (!tt || !tt->IsStatic() || tt->dtype() == DataType::kUnknown)
    return InvalidArgument("@" + function + ": parameter " + leaf.name + " has type " +
                           TypeToString(leaf.type) +
                           "; only a static tensor type can be generated (give its tensors in "
                           "a safetensors file)");
  PLIR_RETURN_IF_ERROR(CheckTensorSize(leaf.type, "parameter " + leaf.name));
  std::vector<int64_t> shape;
  for (const Dim& d : tt->shape()) shape.push_back(d.value);
  return shape;
}

StatusOr<Tensor> Generate(const ParamLeaf& leaf, const std::string& function, uint64_t seed,
                          uint64_t salt) {
  PLIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, StaticShape(leaf, function));
  DataType dt = As<TensorTypeNode>(leaf.type)->dtype();
  std::mt19937_64 rng(seed * 1000003 + salt);
  if (IsFloat(dt)) {
    std::uniform_real_distribution<double> dist(-1, 1);
    return MakeTensor(dt, shape, [&](int64_t) { return dist(rng); });
  }
  int64_t lo = dt == DataType::kBool || IsUnsigned(dt) ? 0 : -4;
  int64_t hi = dt == DataType::kBool ? 1 : 3;
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  return MakeIntTensor(dt, shape, [&](int64_t) { return dist(rng); });
}

// Checks a file's tensor against a parameter's declared type.
Status CheckEntry(const SafetensorsEntry& e, const ParamLeaf& leaf, const std::string& file) {
  auto* tt = As<TensorTypeNode>(leaf.type);
  bool ok = tt != nullptr;
  if (ok && tt->dtype() != DataType::kUnknown && tt->dtype() != e.dtype) ok = false;
  if (ok && tt->ndim() >= 0 && tt->ndim() != static_cast<int>(e.shape.size())) ok = false;
  if (ok && tt->has_shape())
    for (size_t i = 0; i < e.shape.size(); ++i)
      if (tt->shape()[i].is_const() && tt->shape()[i].value != e.shape[i]) ok = false;
  if (!ok)
    return InvalidArgument(file + ": tensor '" + e.name + "' is " + ShapeString(e.dtype, e.shape) +
                           ", but parameter " + leaf.name + " is " + TypeToString(leaf.type));
  return Status::Ok();
}

}  // namespace

std::string ShapeString(DataType dt, const std::vector<int64_t>& shape) {
  std::string s = std::string(DataTypeName(dt)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

ValueRef BuildValue(const Type& t, std::vector<Tensor>::iterator& next) {
  if (auto* tt = As<TupleTypeNode>(t)) {
    std::vector<ValueRef> fields;
    for (const Type& f : tt->fields()) fields.push_back(BuildValue(f, next));
    return Value::OfTuple(std::move(fields));
  }
  return Value::OfTensor(*next++);
}

StatusOr<EntryArgs> MakeEntryArgs(const FunctionNode& f, const EntryInputOptions& options) {
  std::vector<ParamLeaf> leaves = EntryParamLeaves(f);
  std::vector<Tensor> tensors;
  EntryArgs out;
  if (options.inputs_file.empty() && options.params_file.empty()) {
    for (size_t i = 0; i < leaves.size(); ++i) {
      PLIR_ASSIGN_OR_RETURN(Tensor t, Generate(leaves[i], f.name(), options.seed, i));
      tensors.push_back(std::move(t));
    }
    out.description = "random inputs (seed " + std::to_string(options.seed) + ")";
  } else {
    std::vector<std::unique_ptr<SafetensorsReader>> readers;
    for (const std::string& file : {options.inputs_file, options.params_file}) {
      if (file.empty()) continue;
      PLIR_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsReader> r, SafetensorsReader::Open(file));
      readers.push_back(std::move(r));
    }
    // (reader, entry) of every tensor of the files, in order.
    std::vector<std::pair<const SafetensorsReader*, size_t>> all;
    for (const auto& r : readers)
      for (size_t i = 0; i < r->entries().size(); ++i) all.push_back({r.get(), i});
    std::vector<std::pair<const SafetensorsReader*, size_t>> chosen;
    bool by_name = !leaves.empty();
    for (const ParamLeaf& leaf : leaves) {
      bool found = false;
      for (const auto& r : readers) {
        int64_t i = r->header().Find(leaf.name);
        if (i >= 0) {
          chosen.push_back({r.get(), static_cast<size_t>(i)});
          found = true;
          break;
        }
      }
      if (!found) by_name = false;
    }
    if (!by_name) {
      if (all.size() < leaves.size()) {
        std::string files = options.inputs_file;
        if (!options.params_file.empty())
          files += (files.empty() ? "" : " and ") + options.params_file;
        return InvalidArgument("@" + f.name() + " takes " + std::to_string(leaves.size()) +
                               " tensors, but " + files + " (" + std::to_string(all.size()) +
                               " tensors) do not name every parameter (tensors bind by name "
                               "when every name matches, else by index)");
      }
      chosen.assign(all.begin(), all.begin() + static_cast<long>(leaves.size()));
    }
    for (size_t i = 0; i < leaves.size(); ++i) {
      const auto& [reader, entry] = chosen[i];
      PLIR_RETURN_IF_ERROR(CheckEntry(reader->entries()[entry], leaves[i], reader->path()));
      PLIR_ASSIGN_OR_RETURN(Tensor t, reader->Read(entry));
      tensors.push_back(std::move(t));
    }
    std::string files = options.inputs_file;
    if (!options.params_file.empty()) files += (files.empty() ? "" : " and ") + options.params_file;
    out.description = "the tensors of " + files + ", bound by " + (by_name ? "name" : "index");
  }
  auto next = tensors.begin();
  for (const Var& p : f.params()) out.args.push_back(BuildValue(p->type(), next));
  return out;
}

}  // namespace plir
