// Element data types of tensors and primitive values.
#ifndef PLIR_IR_DTYPE_H_
#define PLIR_IR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace plir {

enum class DataType : uint8_t {
  kUnknown = 0,  // dtype not known (e.g. `Tensor` or `Tensor[ndim=2]`)
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

// Returns the spelling used by the text format ("float32"), or "unknown".
std::string_view DataTypeName(DataType t);
// Returns the dtype spelled `name`, or nullopt if `name` is not a dtype.
std::optional<DataType> ParseDataType(std::string_view name);
// Size in bytes of one element (bool is one byte); 0 for kUnknown.
int DataTypeSize(DataType t);
bool IsFloat(DataType t);  // float16, bfloat16, float32, float64
bool IsInt(DataType t);    // signed or unsigned integers (not bool)
bool IsUnsigned(DataType t);

// IEEE half and bfloat16 conversions (round to nearest even).
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBFloat16(float f);
float BFloat16ToFloat(uint16_t b);

}  // namespace plir

#endif  // PLIR_IR_DTYPE_H_
