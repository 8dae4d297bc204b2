// plir-opt's operator new (cli/huge_page_new.cc): blocks of 2 MiB or more
// get transparent huge pages once main has fixed glibc's mmap threshold.
#ifndef PLIR_CLI_HUGE_PAGE_NEW_H_
#define PLIR_CLI_HUGE_PAGE_NEW_H_

namespace plir::cli {

// Turns the advice on (call once, after mallopt(M_MMAP_THRESHOLD, ...) and
// before any thread starts). Returns false in sanitizer builds, which keep
// their own operator new.
bool EnableHugePageBlocks();

}  // namespace plir::cli

#endif  // PLIR_CLI_HUGE_PAGE_NEW_H_
