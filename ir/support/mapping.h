// MapReadOnly: a read-only private mapping of part of a file, owned by a
// shared_ptr (unmapped when its last holder goes), so that tensors and
// modules viewing it keep it alive. Used by the any-format loader, the
// supervisor's child result and the safetensors reader.
#ifndef PLIR_IR_SUPPORT_MAPPING_H_
#define PLIR_IR_SUPPORT_MAPPING_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace plir {

// Maps `length` bytes of `fd` from `offset` (a multiple of the page size).
// `populate`: read the pages in now (MAP_POPULATE), not when first used.
// Null if mmap failed (errno says why).
std::shared_ptr<const void> MapReadOnly(int fd, size_t length, uint64_t offset = 0,
                                        bool populate = false);

}  // namespace plir

#endif  // PLIR_IR_SUPPORT_MAPPING_H_
