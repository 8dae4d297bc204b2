// Pipeline debugging aids of plir-opt: --bisect-limit (LLVM's
// -opt-bisect-limit) and --dump-ir-dir (MLIR's --mlir-print-ir-tree-dir).
//
// Both count pass applications: one each time the pass manager runs a pass
// on the module, so a pass in a repeat group counts once per iteration and
// a function pass (or a step restricted to some functions) counts once per
// application, whatever the number of functions it covers. Passes the opt
// level or `disabled` leave out are not applications.
#ifndef PLIR_DRIVER_PASS_DEBUG_H_
#define PLIR_DRIVER_PASS_DEBUG_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "passes/pass.h"
#include "passes/registry.h"

namespace plir {

// Runs only the first `limit` pass applications; each later one returns
// its input. Prints "BISECT: running pass (K) NAME" or "BISECT: NOT running
// pass (K) NAME" for each, and the total at the end. To take effect, the
// pass manager must run on GatedRegistry()'s passes, and the gate must be
// the first instrument.
class BisectGate : public Instrument, public std::enable_shared_from_this<BisectGate> {
 public:
  BisectGate(int64_t limit, std::ostream* out) : limit_(limit), out_(out) {}
  // A registry with every pass of `from`, each of which runs only while the
  // gate is open.
  StatusOr<std::unique_ptr<PassRegistry>> GatedRegistry(const PassRegistry& from);

  void BeforePass(const PassInfo& pass, const Module& input) override;
  void Finish() override;
  bool running() const { return running_; }
  int64_t applications() const { return count_; }

 private:
  int64_t limit_;
  std::ostream* out_;
  int64_t count_ = 0;
  bool running_ = true;
};

// Writes the module before the pipeline (000_input.plir) and after each
// pass application K (K_NAME.plir, K three digits or more, NAME the pass
// name with anything but letters, digits, '_', '-' and '.' replaced by
// '_'). Applications a BisectGate skips are counted but not written.
class IrDumpInstrument : public Instrument {
 public:
  // Creates `dir` (and its parents) if needed and removes the files an
  // earlier dump left there (names of the form NNN_*.plir); then writes
  // 000_input.plir.
  static StatusOr<std::shared_ptr<IrDumpInstrument>> Create(const std::string& dir,
                                                            const Module& input,
                                                            const BisectGate* gate);
  Status AfterPass(const PassInfo& pass, const Module& input, const Module& output) override;

  // "007_Normalize.plir".
  static std::string FileName(int64_t index, const std::string& pass);

 private:
  IrDumpInstrument(std::string dir, const BisectGate* gate) : dir_(std::move(dir)), gate_(gate) {}
  std::string dir_;
  const BisectGate* gate_;
  int64_t count_ = 0;
};

}  // namespace plir

#endif  // PLIR_DRIVER_PASS_DEBUG_H_
