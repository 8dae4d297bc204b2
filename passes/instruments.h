// Built-in instruments: timing, IR printing, diffs, verification, and the
// proof that a pass left its input alone.
#ifndef PLIR_PASSES_INSTRUMENTS_H_
#define PLIR_PASSES_INSTRUMENTS_H_

#include <chrono>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace plir {

// Accumulates wall time per pass and prints a report on Finish.
class TimingInstrument : public Instrument {
 public:
  explicit TimingInstrument(std::ostream* out) : out_(out) {}
  void BeforePass(const PassInfo& pass, const Module& input) override;
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;
  void Finish() override;

 private:
  struct Entry {
    int runs = 0;
    double seconds = 0;
  };
  std::ostream* out_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

// Prints the module before and/or after the chosen passes (or all).
class PrintIRInstrument : public Instrument {
 public:
  PrintIRInstrument(std::ostream* out, std::set<std::string> before, std::set<std::string> after,
                    bool all_before, bool all_after)
      : out_(out),
        before_(std::move(before)),
        after_(std::move(after)),
        all_before_(all_before),
        all_after_(all_after) {}
  void BeforePass(const PassInfo& pass, const Module& input) override;
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;

 private:
  std::ostream* out_;
  std::set<std::string> before_, after_;
  bool all_before_, all_after_;
};

// Prints a unified diff of the IR across each pass that changed it.
class PrintChangedInstrument : public Instrument {
 public:
  explicit PrintChangedInstrument(std::ostream* out) : out_(out) {}
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;

 private:
  std::ostream* out_;
};

// Runs the verifier after each pass; fails naming the pass.
class VerifyInstrument : public Instrument {
 public:
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;
};

// Proves that each pass left its input unchanged: hashes every item of the
// input before the pass and again after it, and fails naming the pass (and
// the items it changed) if any hash differs.
class InputUnchangedInstrument : public Instrument {
 public:
  void BeforePass(const PassInfo& pass, const Module& input) override;
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;

 private:
  std::vector<uint64_t> hashes_;
};

// A budget of pass runs for a whole pipeline, repeats and nested repeats
// included (plir-opt --max-pass-runs): the run that goes past it fails,
// naming the pass and the budget. Nested `repeat`s multiply, so a pipeline
// of a few lines can ask for 10^9 runs; this stops it after `max_runs`.
class PassRunBudget : public Instrument {
 public:
  static constexpr uint64_t kDefaultMaxRuns = 1000000;
  explicit PassRunBudget(uint64_t max_runs) : max_runs_(max_runs) {}
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;
  uint64_t runs() const { return runs_; }

 private:
  uint64_t max_runs_;
  uint64_t runs_ = 0;
};

}  // namespace plir

#endif  // PLIR_PASSES_INSTRUMENTS_H_
