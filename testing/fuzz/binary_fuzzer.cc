// libFuzzer target for the binary loader: any bytes give a module or a clean
// error; a loaded module saves back to bytes that load to an equal module,
// and what the loader proved of it (LoadFacts) holds.
//
// Random mutations almost never keep the checksum right, so each input is
// also loaded with its header resealed (magic, payload length and checksum
// made to agree with the bytes, as version 1, 2, 3 or 4 wrote them): that is what
// lets the fuzzer reach the sections behind the header.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/support/crc32c.h"
#include "ir/verifier.h"

namespace {

void LoadAndRoundTrip(std::string_view bytes) {
  plir::LoadFacts facts;
  auto m = plir::LoadBinary(bytes, {}, &facts);
  if (!m.ok()) return;
  // What the loader proves holds: no variable bound in two items, so the
  // verifier's check across items finds nothing.
  if (facts.bindings_unshared && plir::VerifyModule(*m).empty() !=
                                     plir::VerifyParsedModule(*m, plir::VerifyOptions()).empty()) {
    std::fprintf(stderr, "the loader proved the bindings unshared, and they are not\n");
    std::abort();
  }
  auto again = plir::LoadBinary(plir::SaveBinary(*m));
  if (!again.ok() || !plir::StructuralEqual(*m, *again, /*map_free_vars=*/true)) {
    std::fprintf(stderr, "binary round trip failed\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  LoadAndRoundTrip(bytes);
  if (size < 32) return 0;
  std::string sealed(bytes);
  std::memcpy(&sealed[0], plir::kBinaryMagic, 8);
  uint32_t version;
  std::memcpy(&version, &sealed[8], 4);
  version = version == 1 || version == 3 || version == 4 ? version : 2;
  std::memcpy(&sealed[8], &version, 4);
  uint64_t len = size - 32;
  std::memcpy(&sealed[16], &len, 8);
  if (version == 4) {  // CRC-32C of the shard table (its shards carry their own)
    uint64_t k = 0;
    if (size >= 40) std::memcpy(&k, &sealed[32], 8);
    uint64_t first = k <= 1024 ? (40 + 8 * k + 63) / 64 * 64 : 0;
    if (first == 0 || first > size) return 0;
    uint64_t sum = plir::Crc32c(std::string_view(sealed).substr(32, first - 32));
    std::memcpy(&sealed[24], &sum, 8);
    LoadAndRoundTrip(sealed);
    return 0;
  }
  if (version == 3) {  // CRC-32C of the tensor data, and of bytes 32 to it
    uint64_t off = 0;
    if (size >= 144) std::memcpy(&off, &sealed[120], 8);
    if (off < 32 || off > size) return 0;
    uint64_t data = plir::Crc32c(std::string_view(sealed).substr(off));
    uint64_t sum = plir::Crc32c(std::string_view(sealed).substr(32, off - 32));
    std::memcpy(&sealed[136], &data, 8);
    std::memcpy(&sealed[24], &sum, 8);
    LoadAndRoundTrip(sealed);
    return 0;
  }
  // Version 1 files carry FNV-1a-64 with the offset basis PLIR used for them.
  uint64_t h =
      version == 1 ? 1469598103934665603ull : plir::Fnv1a64(std::string_view(sealed).substr(32));
  if (version == 1)
    for (size_t i = 32; i < size; ++i)
      h = (h ^ static_cast<unsigned char>(sealed[i])) * 0x100000001b3ull;
  std::memcpy(&sealed[24], &h, 8);
  LoadAndRoundTrip(sealed);
  return 0;
}
