#include "ir/support/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace plir {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli polynomial

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ kPoly : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = MakeTable();

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(std::string_view bytes, uint32_t crc) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t c = ~crc;
  for (; n && (reinterpret_cast<uintptr_t>(p) & 7); --n)
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
  for (; n >= 32; n -= 32, p += 32) {
    uint64_t w[4];
    std::memcpy(w, p, 32);
    c = _mm_crc32_u64(c, w[0]);
    c = _mm_crc32_u64(c, w[1]);
    c = _mm_crc32_u64(c, w[2]);
    c = _mm_crc32_u64(c, w[3]);
  }
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
  }
  for (; n; --n) c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
  return ~static_cast<uint32_t>(c);
}
#endif

}  // namespace

uint32_t Crc32cPortable(std::string_view bytes, uint32_t crc) {
  uint32_t c = ~crc;
  for (char ch : bytes) c = kTable[(c ^ static_cast<uint8_t>(ch)) & 0xff] ^ (c >> 8);
  return ~c;
}

bool Crc32cIsHardware() {
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("sse4.2");
  return hw;
#else
  return false;
#endif
}

uint32_t Crc32c(std::string_view bytes, uint32_t crc) {
#if defined(__x86_64__)
  if (Crc32cIsHardware()) return Crc32cSse42(bytes, crc);
#endif
  return Crc32cPortable(bytes, crc);
}

}  // namespace plir
