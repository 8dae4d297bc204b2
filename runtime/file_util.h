// File helpers for the command-line tools.
#ifndef PLIR_RUNTIME_FILE_UTIL_H_
#define PLIR_RUNTIME_FILE_UTIL_H_

#include <string>
#include <span>
#include <string_view>

#include "ir/status.h"

namespace plir {

// Reads a whole file ("-" reads standard input).
StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path` atomically: the data goes to a temporary file
// in the same directory, which is flushed and then renamed over `path`. On
// failure the temporary file is removed and `path` is left untouched. A
// `path` that exists and is not a regular file (/dev/null, a pipe) is written
// in place instead. An existing file keeps its mode; a symbolic link is
// followed, and the file it points to is replaced (the link stays).
Status WriteFileAtomically(const std::string& path, std::string_view contents);
// The same for contents in pieces, written in order (no concatenated copy).
Status WriteFileAtomically(const std::string& path, std::span<const std::string_view> parts);

}  // namespace plir

#endif  // PLIR_RUNTIME_FILE_UTIL_H_
