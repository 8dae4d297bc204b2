// Test helpers that read the kernel's own account of this process's memory
// (/proc/self/smaps): whether a mapping was advised MADV_HUGEPAGE (its
// VmFlags include "hg"). Header-only, for tests of any package.
#ifndef PLIR_TESTING_PROC_SMAPS_H_
#define PLIR_TESTING_PROC_SMAPS_H_

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace plir::testing {

// The VmFlags line of the mapping that holds `p`, or "" if none does.
inline std::string VmFlagsOf(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' &&
        line.find(' ') != std::string::npos && line.find(':') > line.find(' ')) {
      inside = at >= lo && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

// Whether the mapping that holds `p` is advised MADV_HUGEPAGE.
inline bool AdvisedHugePages(const void* p) {
  return VmFlagsOf(p).find(" hg") != std::string::npos;
}

// Whether this kernel has transparent huge pages at all.
inline bool KernelHasThp() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  return std::getline(f, s) && !s.empty();
}

}  // namespace plir::testing

#endif  // PLIR_TESTING_PROC_SMAPS_H_
