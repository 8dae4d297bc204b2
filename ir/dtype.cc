#include "ir/dtype.h"

#include <cmath>
#include <cstring>

namespace plir {
namespace {
struct DTypeInfo {
  DataType type;
  std::string_view name;
  int size;
};
constexpr DTypeInfo kTypes[] = {
    {DataType::kBool, "bool", 1},         {DataType::kInt8, "int8", 1},
    {DataType::kInt16, "int16", 2},       {DataType::kInt32, "int32", 4},
    {DataType::kInt64, "int64", 8},       {DataType::kUInt8, "uint8", 1},
    {DataType::kUInt16, "uint16", 2},     {DataType::kUInt32, "uint32", 4},
    {DataType::kUInt64, "uint64", 8},     {DataType::kFloat16, "float16", 2},
    {DataType::kBFloat16, "bfloat16", 2}, {DataType::kFloat32, "float32", 4},
    {DataType::kFloat64, "float64", 8},
};
}  // namespace

std::string_view DataTypeName(DataType t) {
  for (const auto& info : kTypes)
    if (info.type == t) return info.name;
  return "unknown";
}

std::optional<DataType> ParseDataType(std::string_view name) {
  for (const auto& info : kTypes)
    if (info.name == name) return info.type;
  return std::nullopt;
}

int DataTypeSize(DataType t) {
  for (const auto& info : kTypes)
    if (info.type == t) return info.size;
  return 0;
}

bool IsFloat(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat32 ||
         t == DataType::kFloat64;
}
bool IsInt(DataType t) { return t >= DataType::kInt8 && t <= DataType::kUInt64; }
bool IsUnsigned(DataType t) { return t >= DataType::kUInt8 && t <= DataType::kUInt64; }

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return sign | 0x7c00u | (mant ? 0x200u : 0u);  // inf/nan
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00u;  // overflow to inf
  if (e <= 0) {
    if (e < -10) return sign;  // underflow to zero
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return sign | half;
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into exp
  return sign | half;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace plir
