#include "passes/instruments.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string_view>
#include <unordered_set>

#include "ir/structural.h"
#include "ir/text/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/unified_diff.h"

namespace plir {

void TimingInstrument::BeforePass(const PassInfo& /*pass*/, const Module&) {
  start_ = std::chrono::steady_clock::now();
}

Status TimingInstrument::AfterPass(const PassInfo& pass, const Module&, const Module&) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  auto [it, inserted] = entries_.try_emplace(pass.name);
  if (inserted) order_.push_back(pass.name);
  it->second.runs++;
  it->second.seconds += s;
  return Status::Ok();
}

void TimingInstrument::Finish() {
  double total = 0;
  for (auto& [n, e] : entries_) total += e.seconds;
  std::vector<std::string> names = order_;
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return entries_[a].seconds > entries_[b].seconds;
  });
  *out_ << "===-------------------------------------------------------------===\n"
        << "  Pass execution timing report\n"
        << "===-------------------------------------------------------------===\n";
  char line[256];
  std::snprintf(line, sizeof line, "  Total: %.6f s\n  %12s  %7s  %5s  %s\n", total, "wall (s)",
                "share", "runs", "pass");
  *out_ << line;
  for (const std::string& n : names) {
    const Entry& e = entries_[n];
    std::snprintf(line, sizeof line, "  %12.6f  %6.1f%%  %5d  %s\n", e.seconds,
                  total > 0 ? 100.0 * e.seconds / total : 0.0, e.runs, n.c_str());
    *out_ << line;
  }
  entries_.clear();
  order_.clear();
}

void PrintIRInstrument::BeforePass(const PassInfo& pass, const Module& input) {
  if (all_before_ || before_.count(pass.name))
    *out_ << "// ----- IR before " << pass.name << " -----\n" << PrintModule(input);
}

Status PrintIRInstrument::AfterPass(const PassInfo& pass, const Module&, const Module& output) {
  if (all_after_ || after_.count(pass.name))
    *out_ << "// ----- IR after " << pass.name << " -----\n" << PrintModule(output);
  return Status::Ok();
}

Status PrintChangedInstrument::AfterPass(const PassInfo& pass, const Module& input,
                                         const Module& output) {
  if (output.same_as(input)) return Status::Ok();
  std::string diff = UnifiedDiff(PrintModule(input), PrintModule(output), "before " + pass.name,
                                 "after " + pass.name);
  if (!diff.empty()) *out_ << diff;
  return Status::Ok();
}

Status VerifyInstrument::AfterPass(const PassInfo& pass, const Module&, const Module& output) {
  Status s = Verify(output);
  if (!s.ok()) return FailedPrecondition("after pass " + pass.name + ": " + s.message());
  return Status::Ok();
}

namespace {

// The bytes of every constant under a node, hashed now. StructuralHash
// mixes in ConstantNode::DataHash(), which is computed once and kept in the
// node, so it cannot see a pass that writes into a constant's bytes through
// a const_cast (or, from Python, through ctypes): the proof that a pass left
// its input alone hashes the bytes afresh, before and after.
class FreshConstantHash : public IRVisitor {
 public:
  FreshConstantHash() { visit_types_ = false; }
  uint64_t hash = 0;

 protected:
  bool Enter(const Node* n, bool) override {
    if (!seen_.insert(n).second) return false;  // a DAG: each node once
    if (auto* c = As<ConstantNode>(n))
      hash = hash * 1099511628211ull ^ std::hash<std::string_view>()(c->data().view());
    return true;
  }

 private:
  std::unordered_set<const Node*> seen_;
};

uint64_t UnchangedHash(const Item& it) {
  FreshConstantHash bytes;
  bytes.Walk(it);
  return StructuralHash(it) ^ (bytes.hash * 0x9e3779b97f4a7c15ull);
}

}  // namespace

void InputUnchangedInstrument::BeforePass(const PassInfo&, const Module& input) {
  hashes_.clear();
  for (const Item& it : input.items()) hashes_.push_back(UnchangedHash(it));
}

Status PassRunBudget::AfterPass(const PassInfo& pass, const Module&, const Module&) {
  if (++runs_ <= max_runs_) return Status::Ok();
  return ResourceExhausted("pass-run budget spent: " + pass.name + " was pass run " +
                           std::to_string(runs_) + ", past the limit of " +
                           std::to_string(max_runs_) +
                           " (--max-pass-runs; repeats and nested repeats count every run)");
}

Status InputUnchangedInstrument::AfterPass(const PassInfo& pass, const Module& input,
                                           const Module&) {
  std::string changed;
  for (size_t i = 0; i < input.items().size() && i < hashes_.size(); ++i) {
    if (UnchangedHash(input.items()[i]) != hashes_[i]) {
      if (!changed.empty()) changed += ", ";
      changed += "@" + input.items()[i]->name();
    }
  }
  if (changed.empty()) return Status::Ok();
  return FailedPrecondition("pass " + pass.name + " (" + pass.origin +
                            ") modified its input module (changed: " + changed +
                            "); a pass must return new IR and leave its input unchanged");
}

}  // namespace plir
