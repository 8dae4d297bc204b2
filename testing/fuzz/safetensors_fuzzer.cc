// libFuzzer target for the safetensors reader: any bytes give a header or a
// clean error naming the file; an accepted header is checked independently
// (ranges tile the data section, each range is exactly dtype x shape, names
// are distinct), so a reader bug that lets a lying header through aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "interpreter/safetensors.h"

namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "safetensors fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto h = plir::ParseSafetensors(bytes, "fuzz.safetensors");
  if (!h.ok()) {
    if (h.status().message().rfind("fuzz.safetensors: ", 0) != 0)
      Die("an error that does not name the file");
    return 0;
  }
  if (h->data_start + h->data_size != size) Die("header and data do not add up to the file");
  uint64_t cursor = 0;
  std::set<std::string> names;
  for (const plir::SafetensorsEntry& e : h->entries) {
    if (!names.insert(e.name).second) Die("a duplicate name was accepted");
    if (e.name == "__metadata__") Die("__metadata__ accepted as a tensor");
    if (plir::SafetensorsDtypeName(e.dtype).empty()) Die("an unknown dtype was accepted");
    if (e.begin != cursor || e.end < e.begin) Die("ranges that do not tile the data were accepted");
    unsigned __int128 want = plir::DataTypeSize(e.dtype);
    for (int64_t d : e.shape) {
      if (d < 0) Die("a negative dimension was accepted");
      want *= static_cast<uint64_t>(d);
      if (want > size) break;
    }
    if (want != e.size()) Die("a range that is not dtype x shape was accepted");
    cursor = e.end;
  }
  if (cursor != h->data_size) Die("data outside every tensor was accepted");
  return 0;
}
