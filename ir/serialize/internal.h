// Internal to ir/serialize/: entry points shared between its files.
#ifndef PLIR_IR_SERIALIZE_INTERNAL_H_
#define PLIR_IR_SERIALIZE_INTERNAL_H_

#include <string_view>

#include "ir/module.h"
#include "ir/status.h"

namespace plir::internal {

// Loads JSON; `padded`: `text` is followed by simdjson's padding of
// readable bytes, so it parses in place without a copy.
StatusOr<Module> LoadJsonText(std::string_view text, bool padded);

}  // namespace plir::internal

#endif  // PLIR_IR_SERIALIZE_INTERNAL_H_
