// JSON and binary serialization of modules.
//
// Both formats store every node once, however often it is shared, children
// before parents (see docs/serialization.md); loading shares them again, and
// variables keep their identity (a variable and all its uses are one node).
// Loading validates everything it reads: corrupt or truncated input is an
// error, never a crash, and no allocation is sized by a count or length
// before that count is checked against the input's size.
#ifndef PLIR_IR_SERIALIZE_H_
#define PLIR_IR_SERIALIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/module.h"
#include "ir/status.h"

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

// FNV-1a, 64 bits, with the published parameters (offset basis
// 0xcbf29ce484222325, prime 0x100000001b3): the binary format's checksum.
// Fnv1a64("") == 0xcbf29ce484222325, Fnv1a64("a") == 0xaf63dc4c8601ec8c.
uint64_t Fnv1a64(std::string_view bytes);

enum class ModuleFormat { kText, kJson, kBinary };
// Detects the format of `contents` by magic (binary), a leading '{' (JSON),
// else text.
ModuleFormat DetectFormat(std::string_view contents);
// Loads a module in any format; `name` is used in messages.
StatusOr<Module> LoadModule(std::string_view contents, const std::string& name);

}  // namespace plir

#endif  // PLIR_IR_SERIALIZE_H_
