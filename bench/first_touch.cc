// What the first write to fresh memory costs on this machine: the floor
// under any run that builds its data in memory it has not touched before,
// such as plir-opt's nodes (about 112 MB for the 1M-op programs of
// bench/peer_compare.py).
//
//   first_touch MB [--small-pages] [--idle SECONDS] [--repeat N]
//
// Maps MB of anonymous memory (2 MiB-aligned and advised MADV_HUGEPAGE, as
// plir-opt's node slabs and large blocks are; with --small-pages, plain
// 4 KiB pages), writes one byte a page, then memsets the whole range (a
// second pass over memory already mapped), and prints both times. Each
// repeat is a fresh mapping, unmapped after it. --idle sleeps before each
// repeat: on a VM whose balloon reports free pages to the host (virtio
// free page reporting, as on the 2-CPU EPYC VM this project is measured
// on), memory a process freed seconds ago has gone back to the host, and
// the first write to it faults there too (bench/RESULTS.md).
//
// Not Google Benchmark: the point is the first touch of memory, which a
// benchmark loop measures once and then reuses, and the state of the
// host between runs, which a process of its own, started when the caller
// chooses, controls.
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr size_t kHuge = size_t{2} << 20;

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int Usage() {
  std::fprintf(stderr, "usage: first_touch MB [--small-pages] [--idle SECONDS] [--repeat N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  char* end = nullptr;
  const unsigned long mb = std::strtoul(argv[1], &end, 10);
  if (*end || mb == 0 || mb > (1ul << 20)) return Usage();
  bool small = false;
  double idle = 0;
  long repeat = 1;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--small-pages") {
      small = true;
    } else if (a == "--idle" && i + 1 < argc) {
      idle = std::strtod(argv[++i], &end);
      if (*end || idle < 0) return Usage();
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::strtol(argv[++i], &end, 10);
      if (*end || repeat < 1) return Usage();
    } else {
      return Usage();
    }
  }
  const size_t bytes = mb << 20;
  for (long r = 0; r < repeat; ++r) {
    if (idle > 0) std::this_thread::sleep_for(std::chrono::duration<double>(idle));
    void* m =
        mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::perror("first_touch: mmap");
      return 1;
    }
    char* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1));
    if (!small && madvise(p, bytes, MADV_HUGEPAGE) != 0) std::perror("first_touch: madvise");
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t at = 0; at < bytes; at += 4096) p[at] = 1;
    const auto t1 = std::chrono::steady_clock::now();
    std::memset(p, 2, bytes);
    const auto t2 = std::chrono::steady_clock::now();
    const double first = Seconds(t0, t1), again = Seconds(t1, t2);
    std::printf(
        "%lu MB, %s pages: first write %.1f ms (%.2f GB/s), memset after %.1f ms (%.1f GB/s)\n", mb,
        small ? "4 KiB" : "huge", first * 1e3, bytes / first / 1e9, again * 1e3,
        bytes / again / 1e9);
    std::fflush(stdout);
    munmap(m, bytes + kHuge);
  }
  return 0;
}
