// The text-format printer (the format: docs/text-format.md).
//
// Output is deterministic, prints a type on every binding and parameter and
// a return type on every function, and makes variable names unique within a
// function (%lv1, %lv1_1). Printing is iterative: any nesting depth.
#ifndef PLIR_IR_TEXT_PRINTER_H_
#define PLIR_IR_TEXT_PRINTER_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "ir/status.h"

namespace plir {

struct PrintOptions {
  // Print the `#[version = "1"]` first line.
  bool version_header = true;
  // Constants with more elements than this print as a hex payload.
  size_t max_inline_elements = 64;
  // Threads for printing items in parallel (0: DefaultThreads()). The output
  // does not depend on it.
  int threads = 0;
};

std::string PrintModule(const Module& m, const PrintOptions& options = {});
// The text of PrintModule(m), handed to `sink` in order, piece by piece, as
// it is printed: a module of one item (or with one thread) an item at a
// time, a large one in pieces of about a megabyte; others in windows of
// items printed in parallel, each item whole. So a whole module's text is
// never held at once. The first error `sink` returns stops the printing and is returned.
Status PrintModuleTo(const Module& m, const std::function<Status(std::string_view)>& sink,
                     const PrintOptions& options = {});
// The text of PrintModule(m) in pieces (one per item, with its separators),
// so that a large module can be written out without one concatenated copy.
std::vector<std::string> PrintModuleParts(const Module& m, const PrintOptions& options = {});
// Prints one item (`def` or `extern`), without a trailing newline.
std::string PrintItem(const Item& item, const PrintOptions& options = {});
// Prints an expression on its own (variables named by their hints, made unique).
std::string PrintExpr(const Expr& e, const PrintOptions& options = {});

}  // namespace plir

#endif  // PLIR_IR_TEXT_PRINTER_H_
