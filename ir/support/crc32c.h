// CRC-32C (Castagnoli), the checksum of binary module format version 3.
//
// On x86-64 CPUs with SSE4.2 (checked at run time) it runs on the crc32
// instruction, 8 bytes at a time; elsewhere a table-driven loop computes the
// same value. As published (RFC 3720, iSCSI): reflected polynomial
// 0x82f63b78, initial value and final xor 0xffffffff.
// Crc32c("") == 0, Crc32c("123456789") == 0xe3069283.
#ifndef PLIR_IR_SUPPORT_CRC32C_H_
#define PLIR_IR_SUPPORT_CRC32C_H_

#include <cstdint>
#include <string_view>

namespace plir {

// The CRC-32C of `bytes`, continuing from `crc` (the CRC of what came
// before, 0 to start): Crc32c(b, Crc32c(a)) == Crc32c(a + b).
uint32_t Crc32c(std::string_view bytes, uint32_t crc = 0);
// The same without the crc32 instruction (for tests and other CPUs).
uint32_t Crc32cPortable(std::string_view bytes, uint32_t crc = 0);
// True iff Crc32c runs on the CPU's crc32 instruction.
bool Crc32cIsHardware();

}  // namespace plir

#endif  // PLIR_IR_SUPPORT_CRC32C_H_
