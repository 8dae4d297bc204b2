// libFuzzer target for the text parser. Any input must give a module or a
// clean error, the same with and without the raw scan of bindings; a parsed
// module must verify or fail cleanly (VerifyParsedModule with the errors of
// VerifyModule), print, and re-parse to an equal module.
//
// Build and run (see tools/fuzz.sh):
//   tools/fuzz.sh parser 60     # 60 seconds, corpus in testing/fuzz/corpus/parser
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  plir::StatusOr<plir::Module> m = plir::ParseModule(text);
  // The raw scan of bindings (on by default) gives the tokenizing parser's
  // module or its error, word for word.
  plir::ParseOptions tokens_only;
  tokens_only.scan_bindings = false;
  plir::StatusOr<plir::Module> ref = plir::ParseModule(text, tokens_only);
  if (m.ok() != ref.ok() || (!m.ok() && m.status().message() != ref.status().message()) ||
      (m.ok() && plir::PrintModule(*m) != plir::PrintModule(*ref))) {
    std::fprintf(stderr, "the scan and the tokenizing parser disagree:\n%s\n%s\n",
                 m.ok() ? "ok" : m.status().message().c_str(),
                 ref.ok() ? "ok" : ref.status().message().c_str());
    std::abort();
  }
  if (!m.ok()) {
    // Errors must carry a position.
    if (m.status().message().rfind("<input>:", 0) != 0 &&
        m.status().code() != plir::StatusCode::kResourceExhausted) {
      std::fprintf(stderr, "error without position: %s\n", m.status().message().c_str());
      std::abort();
    }
    return 0;
  }
  // VerifyParsedModule leaves out only a check the parser rules out: on a
  // parsed module it finds what VerifyModule finds.
  std::vector<plir::VerifyError> full = plir::VerifyModule(*m),
                                 parsed = plir::VerifyParsedModule(*m, plir::VerifyOptions());
  bool same = full.size() == parsed.size();
  for (size_t i = 0; same && i < full.size(); ++i)
    same = full[i].ToString() == parsed[i].ToString();
  if (!same) {
    std::fprintf(stderr, "VerifyParsedModule and VerifyModule disagree on a parsed module\n");
    std::abort();
  }
  std::string printed = plir::PrintModule(*m);
  plir::StatusOr<plir::Module> again = plir::ParseModule(printed);
  if (!again.ok() || !plir::StructuralEqual(*m, *again)) {
    std::fprintf(stderr, "round trip failed:\n%s\n%s\n", printed.c_str(),
                 again.ok() ? "not equal" : again.status().message().c_str());
    std::abort();
  }
  return 0;
}
