// FNV-1a 64, the one definition every PLIR hash of bytes uses: the binary
// format's checksum, the module's name index, plir-run's output checksums
// and the plugin layout fingerprint (which mixes whole words the same way).
//
// As published (http://www.isthe.com/chongo/tech/comp/fnv/): for each byte,
// hash ^= byte, then hash *= prime, modulo 2^64.
// Fnv1a64("") == 0xcbf29ce484222325, Fnv1a64("a") == 0xaf63dc4c8601ec8c.
#ifndef PLIR_IR_SUPPORT_FNV_H_
#define PLIR_IR_SUPPORT_FNV_H_

#include <cstdint>
#include <string_view>

namespace plir {

inline constexpr uint64_t kFnv64OffsetBasis = 0xcbf29ce484222325ull;  // 14695981039346656037
inline constexpr uint64_t kFnv64Prime = 0x100000001b3ull;             // 1099511628211

// One step: mixes `v` (a byte, or a whole word for the layout fingerprint).
constexpr uint64_t Fnv1aMix(uint64_t h, uint64_t v) { return (h ^ v) * kFnv64Prime; }

// The hash of `bytes`, from `basis` (the standard offset basis unless a
// reader must check a checksum written with another: binary version 1).
constexpr uint64_t Fnv1a64(std::string_view bytes, uint64_t basis = kFnv64OffsetBasis) {
  uint64_t h = basis;
  for (char c : bytes) h = Fnv1aMix(h, static_cast<unsigned char>(c));
  return h;
}

}  // namespace plir

#endif  // PLIR_IR_SUPPORT_FNV_H_
