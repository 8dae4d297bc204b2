// libFuzzer target for the ONNX importer: any bytes give a module or a
// clean error naming the file; an imported module verifies and satisfies
// the signature contract (num_input within the parameters, one weight per
// parameter after them). Replayed by `bazel test //frontends/onnx:importer_fuzz_test`
// over fuzz_corpus/ (node-test models) and mutations of it; for open-ended
// runs build it with clang -fsanitize=fuzzer (tools/fuzz.sh's recipe, with
// frontends/onnx/*.cc and -lonnx -lonnx_proto -lprotobuf).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "frontends/onnx/importer.h"
#include "ir/verifier.h"

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "onnx importer fuzzer: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  plir::onnx_import::ImportOptions options;
  options.base_dir = "/nonexistent";  // no external data from fuzzed paths
  auto r = plir::onnx_import::ImportModelBytes(bytes, "fuzz.onnx", options);
  if (!r.ok()) {
    if (r.status().message().rfind("fuzz.onnx: ", 0) != 0)
      Die("an error that does not name the file: " + r.status().message());
    return 0;
  }
  plir::Status v = plir::Verify(r->module);
  if (!v.ok()) Die("an imported module that does not verify: " + v.message());
  plir::Function f = r->module.LookupFunction("main");
  if (!f) Die("no @main");
  const plir::AttrValue* n = f->attrs().Get("num_input");
  if (!n || n->as_int() != r->num_input) Die("num_input attribute and result disagree");
  if (r->num_input + static_cast<int64_t>(r->weights.size()) !=
      static_cast<int64_t>(f->params().size()))
    Die("parameters are not the inputs followed by one per weight");
  for (size_t i = 0; i < r->weights.size(); ++i)
    if (f->params()[r->num_input + i]->name_hint() != r->weights[i].first)
      Die("a weight's name is not its parameter's");
  return 0;
}
