#include "frontends/onnx/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

namespace plir::onnx_import {

DataType DataTypeFromOnnx(int32_t t) {
  switch (t) {
    case onnx::TensorProto::FLOAT:
      return DataType::kFloat32;
    case onnx::TensorProto::UINT8:
      return DataType::kUInt8;
    case onnx::TensorProto::INT8:
      return DataType::kInt8;
    case onnx::TensorProto::UINT16:
      return DataType::kUInt16;
    case onnx::TensorProto::INT16:
      return DataType::kInt16;
    case onnx::TensorProto::INT32:
      return DataType::kInt32;
    case onnx::TensorProto::INT64:
      return DataType::kInt64;
    case onnx::TensorProto::BOOL:
      return DataType::kBool;
    case onnx::TensorProto::FLOAT16:
      return DataType::kFloat16;
    case onnx::TensorProto::DOUBLE:
      return DataType::kFloat64;
    case onnx::TensorProto::UINT32:
      return DataType::kUInt32;
    case onnx::TensorProto::UINT64:
      return DataType::kUInt64;
    case onnx::TensorProto::BFLOAT16:
      return DataType::kBFloat16;
    default:
      return DataType::kUnknown;
  }
}

std::string OnnxTypeName(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return "type " + std::to_string(t);
}

namespace {

template <typename T>
void Put(std::string* out, size_t i, T v) {
  std::memcpy(out->data() + i * sizeof(T), &v, sizeof(T));
}

StatusOr<std::string> ReadExternal(const onnx::TensorProto& p, const std::string& base_dir,
                                   const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = std::atoll(kv.value().c_str());
    else if (kv.key() == "length")
      length = std::atoll(kv.value().c_str());
  }
  if (location.empty() || location.find("..") != std::string::npos || location[0] == '/')
    return InvalidArgument(what +
                           ": external data needs a relative location inside the model's folder");
  std::string path = base_dir.empty() ? location : base_dir + "/" + location;
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(what + ": cannot open external data file " + path);
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  if (offset < 0 || offset > size)
    return InvalidArgument(what + ": external data offset out of range in " + path);
  if (length < 0) length = size - offset;
  if (length > size - offset)
    return InvalidArgument(what + ": external data length out of range in " + path);
  std::string data(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(data.data(), length);
  if (!in) return InvalidArgument(what + ": cannot read external data from " + path);
  return data;
}

}  // namespace

StatusOr<Tensor> TensorFromProto(onnx::TensorProto& p, const std::string& base_dir,
                                 const std::string& what) {
  DataType dt = DataTypeFromOnnx(p.data_type());
  if (dt == DataType::kUnknown)
    return Unimplemented(what + ": element type " + OnnxTypeName(p.data_type()) +
                         " is not supported");
  Tensor t;
  t.dtype = dt;
  unsigned __int128 n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0) return InvalidArgument(what + ": negative dimension " + std::to_string(d));
    t.shape.push_back(d);
    n *= static_cast<uint64_t>(d);
    if (n > (static_cast<unsigned __int128>(1) << 48))
      return InvalidArgument(what + ": tensor too large");
  }
  size_t count = static_cast<size_t>(n);
  size_t esize = DataTypeSize(dt);
  size_t bytes = count * esize;
  if (static_cast<int64_t>(bytes) > MaxTensorBytes())
    return ResourceExhausted(what + ": " + std::to_string(bytes) +
                             " bytes is more than the tensor size limit");
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    PLIR_ASSIGN_OR_RETURN(std::string data, ReadExternal(p, base_dir, what));
    if (data.size() != bytes)
      return InvalidArgument(what + ": external data has " + std::to_string(data.size()) +
                             " bytes, expected " + std::to_string(bytes));
    t.data = std::make_shared<const TensorBytes>(std::move(data));
    return t;
  }
  if (p.has_raw_data()) {
    if (p.raw_data().size() != bytes)
      return InvalidArgument(what + ": raw_data has " + std::to_string(p.raw_data().size()) +
                             " bytes, expected " + std::to_string(bytes));
    // Moved out of the message, not copied (one copy of the weights).
    std::string s;
    s.swap(*p.mutable_raw_data());
    if (dt == DataType::kBool)
      for (char& c : s) c = c != 0;
    t.data = std::make_shared<const TensorBytes>(std::move(s));
    return t;
  }
  auto mismatch = [&](size_t have) {
    return InvalidArgument(what + ": holds " + std::to_string(have) + " values, its shape needs " +
                           std::to_string(count));
  };
  {  // the value count first, so that a lying shape allocates nothing
    size_t have = 0;
    switch (dt) {
      case DataType::kFloat32:
        have = p.float_data_size();
        break;
      case DataType::kFloat64:
        have = p.double_data_size();
        break;
      case DataType::kInt64:
        have = p.int64_data_size();
        break;
      case DataType::kUInt32:
      case DataType::kUInt64:
        have = p.uint64_data_size();
        break;
      default:
        have = p.int32_data_size();
        break;
    }
    if (have != count) return mismatch(have);
  }
  auto out = std::make_unique<std::string>(bytes, '\0');
  switch (dt) {
    case DataType::kFloat32:
      if (static_cast<size_t>(p.float_data_size()) != count) return mismatch(p.float_data_size());
      for (size_t i = 0; i < count; ++i) Put<float>(out.get(), i, p.float_data(i));
      break;
    case DataType::kFloat64:
      if (static_cast<size_t>(p.double_data_size()) != count) return mismatch(p.double_data_size());
      for (size_t i = 0; i < count; ++i) Put<double>(out.get(), i, p.double_data(i));
      break;
    case DataType::kInt64:
      if (static_cast<size_t>(p.int64_data_size()) != count) return mismatch(p.int64_data_size());
      for (size_t i = 0; i < count; ++i) Put<int64_t>(out.get(), i, p.int64_data(i));
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      if (static_cast<size_t>(p.uint64_data_size()) != count) return mismatch(p.uint64_data_size());
      for (size_t i = 0; i < count; ++i) {
        if (dt == DataType::kUInt32)
          Put<uint32_t>(out.get(), i, static_cast<uint32_t>(p.uint64_data(i)));
        else
          Put<uint64_t>(out.get(), i, p.uint64_data(i));
      }
      break;
    default:  // int32_data holds the 8-, 16- and 32-bit types, bool, float16 and bfloat16 bits
      if (static_cast<size_t>(p.int32_data_size()) != count) return mismatch(p.int32_data_size());
      for (size_t i = 0; i < count; ++i) {
        int32_t v = p.int32_data(i);
        switch (esize) {
          case 1:
            (*out)[i] = dt == DataType::kBool ? (v != 0) : static_cast<char>(v);
            break;
          case 2:
            Put<uint16_t>(out.get(), i, static_cast<uint16_t>(v));
            break;
          default:
            Put<int32_t>(out.get(), i, v);
            break;
        }
      }
      break;
  }
  t.data = std::make_shared<const TensorBytes>(std::move(*out));
  return t;
}

StatusOr<Tensor> ReadTensorProtoFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  onnx::TensorProto p;
  if (!p.ParseFromString(ss.str()))
    return InvalidArgument(path + ": not a TensorProto (malformed protobuf)");
  std::string dir =
      path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  return TensorFromProto(p, dir, path);
}

}  // namespace plir::onnx_import
