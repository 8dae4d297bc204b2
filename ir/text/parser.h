// The text-format parser (the format: docs/text-format.md).
//
// Every error reports "file:line:column: message" (what was expected and what
// was found), followed by the offending source line and a caret. The parser
// never crashes or hangs on any input, and limits nesting to
// kMaxNestingDepth levels (deeper input is a clean error).
#ifndef PLIR_IR_TEXT_PARSER_H_
#define PLIR_IR_TEXT_PARSER_H_

#include <functional>
#include <string>
#include <string_view>

#include "ir/module.h"
#include "ir/status.h"
#include "ir/text_rules.h"  // kMaxNestingDepth

namespace plir {

struct ParseOptions {
  // Name used in error messages.
  std::string filename = "<input>";
  // Threads for parsing function bodies (0: DefaultThreads()). The result
  // does not depend on it.
  int threads = 0;
  // When set, called with byte ranges [begin, end) of the text that the
  // parser is done with: it reads them again only to quote a line in an
  // error message, or to parse a body once more without the raw scan of
  // bindings (below) when a value read after it failed (input with an
  // error in that body).
  // Called from the parsing threads, possibly at once. A caller whose text
  // is a private file mapping gives the pages back (MADV_DONTNEED: they
  // read back from the file if touched again).
  std::function<void(size_t begin, size_t end)> done_with;
  // When set, receives how many bindings of the result were parsed by the
  // threads of a large block: when the bodies parse on one thread (one
  // body, or little text), a block's bindings of the form
  // the printer writes (`%name: Type = value;` on a line) parse on up to
  // `threads` threads (tests and benchmarks read it).
  size_t* parallel_bindings = nullptr;
  // Bindings of that form are found by a raw byte scan and their types
  // parsed once per spelling (faster than tokenizing them, on one thread
  // too); a body on which that fails is parsed again without it. False:
  // the tokenizing parser alone (tests compare the two).
  bool scan_bindings = true;
};

StatusOr<Module> ParseModule(std::string_view text, const ParseOptions& options = {});
// Parses a single type, e.g. "Tensor[(2, n), float32]".
StatusOr<Type> ParseType(std::string_view text, const ParseOptions& options = {});

}  // namespace plir

#endif  // PLIR_IR_TEXT_PARSER_H_
