// Helpers for IR tests.
#ifndef PLIR_TESTING_IR_TEST_UTIL_H_
#define PLIR_TESTING_IR_TEST_UTIL_H_

#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/module.h"
#include "ir/status.h"

namespace plir::testing {

// Parses `text` or fails the current test (and returns an empty module).
Module ParseOrFail(const std::string& text);
// The binding of `%name` among the bindings of `body` or `f`'s body (and
// in their if branches, depth first), or null.
const VarBindingNode* FindBinding(const SeqExprNode& body, const std::string& name);
const VarBindingNode* FindBinding(const Function& f, const std::string& name);
// Reads a file relative to the test's runfiles directory.
std::string ReadTestFile(const std::string& path);
// Lists the files in `dir` (relative to runfiles) ending in `suffix`, sorted.
std::vector<std::string> ListTestFiles(const std::string& dir, const std::string& suffix);

}  // namespace plir::testing

#endif  // PLIR_TESTING_IR_TEST_UTIL_H_
