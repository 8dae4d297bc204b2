// plir-opt --check-execution: runs the entry function in the interpreter
// before the pipeline and after every pass application, and fails at the
// first pass whose outputs differ from the original ones (beyond a
// tolerance), naming the first output that differs (its max abs error and
// where) and the first named binding whose value differs.
#ifndef PLIR_DRIVER_EXECUTION_CHECK_H_
#define PLIR_DRIVER_EXECUTION_CHECK_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interpreter/entry_inputs.h"
#include "interpreter/interpreter.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace plir {

// Two values agree when |a - b| <= atol + rtol * |a| element by element (a
// the original), NumPy's allclose; NaN agrees with NaN.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
};
// "RTOL" or "RTOL,ATOL" (non-negative numbers).
StatusOr<Tolerance> ParseTolerance(const std::string& text);

struct ExecutionCheckOptions {
  std::string entry = "main";
  EntryInputOptions inputs;
  Tolerance tolerance;
};

// How two values differ; empty `what` when they agree.
struct ValueDifference {
  std::string what;  // "max abs error 2 at index 3 ([1, 0]): 1.5 before, -0.5 after"
  double max_abs_error = 0;
};
ValueDifference CompareValues(const ValueRef& before, const ValueRef& after, const Tolerance& t);

// The first named binding, in the evaluation order of `before`'s entry,
// whose name (function and variable) both runs computed and whose value
// differs: "%y in @main: max abs error ...". Empty if there is none.
StatusOr<std::string> FirstDifferingBinding(const Module& before, const Module& after,
                                            const std::string& entry,
                                            const std::vector<ValueRef>& args, const Tolerance& t);

class ExecutionChecker : public Instrument {
 public:
  // Runs the entry of `input` (its outputs become the reference). Fails,
  // before any pass runs, when the entry cannot run: a missing entry, an
  // op without a kernel (named), inputs that cannot be made or read.
  static StatusOr<std::shared_ptr<ExecutionChecker>> Create(const Module& input,
                                                            ExecutionCheckOptions options);
  // How the inputs were made ("random inputs (seed 0)").
  const std::string& inputs_description() const { return args_.description; }

  // Re-runs the entry on `output` (unless the pass returned its input) and
  // compares with the reference.
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;
  int checks() const { return checks_; }

 private:
  ExecutionChecker(Module original, ExecutionCheckOptions options, EntryArgs args, ValueRef ref)
      : original_(std::move(original)),
        options_(std::move(options)),
        args_(std::move(args)),
        reference_(std::move(ref)) {}
  Module original_;
  ExecutionCheckOptions options_;
  EntryArgs args_;
  ValueRef reference_;
  int applications_ = 0;
  int checks_ = 0;
};

}  // namespace plir

#endif  // PLIR_DRIVER_EXECUTION_CHECK_H_
