// JSON and binary serialization of modules.
//
// Both formats store every node once, however often it is shared, children
// before parents (see docs/serialization.md); loading shares them again, and
// variables keep their identity (a variable and all its uses are one node).
// Loading validates everything it reads: corrupt or truncated input is an
// error, never a crash, and no allocation is sized by a count or length
// before that count is checked against the input's size.
#ifndef PLIR_IR_SERIALIZE_SERIALIZE_H_
#define PLIR_IR_SERIALIZE_SERIALIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/module.h"
#include "ir/status.h"
#include "ir/support/fnv.h"

namespace plir {

inline constexpr int kJsonFormatVersion = 1;
// SaveBinary writes this version; LoadBinary reads it and version 1.
inline constexpr int kBinaryFormatVersion = 2;
inline constexpr int kOldestBinaryFormatVersion = 1;
// The first 8 bytes of every binary module.
inline constexpr char kBinaryMagic[8] = {'\x89', 'P', 'L', 'I', 'R', '\r', '\n', '\x1a'};

std::string SaveJson(const Module& m);
StatusOr<Module> LoadJson(std::string_view text);

std::string SaveBinary(const Module& m);
StatusOr<Module> LoadBinary(std::string_view bytes);

// The binary format's checksum is Fnv1a64 (ir/support/fnv.h). Reading a file
// in any format: ir/serialize/module_file.h.

}  // namespace plir

#endif  // PLIR_IR_SERIALIZE_SERIALIZE_H_
