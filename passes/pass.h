// Passes: named Module -> Module transformations with typed options.
//
// A pass is registered once (PassRegistry) as a PassDef: its PassInfo (name,
// one-line description, options schema with defaults, minimum opt level,
// required and provided properties) and a run function. A module pass maps
// the whole module; a function pass maps each function independently, and the
// pass manager may run it over functions in parallel. Passes receive `const`
// IR and return new IR (sharing what they did not change) or an error value.
#ifndef PLIR_PASSES_PASS_H_
#define PLIR_PASSES_PASS_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/module.h"
#include "ir/status.h"

namespace plir {

enum class OptionType {
  kInt,
  kFloat,
  kBool,
  kString,
  kIntList,
  kFloatList,
  kBoolList,
  kStringList
};
const char* OptionTypeName(OptionType t);

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::kString;
  AttrValue default_value;
  std::string description;
  // Inclusive bounds of a kInt option (or of each element of a kIntList);
  // a value outside is an error when options are resolved, before the pass
  // runs. Unset: any int64.
  std::optional<int64_t> min = std::nullopt;
  std::optional<int64_t> max = std::nullopt;
};

// Resolved option values of one pass instance: every option of the schema
// has a value (given or default).
class PassOptions {
 public:
  PassOptions() = default;
  explicit PassOptions(std::map<std::string, AttrValue> values) : values_(std::move(values)) {}

  // Precondition: `name` is in the schema with the matching type.
  int64_t GetInt(const std::string& name) const { return values_.at(name).as_int(); }
  double GetFloat(const std::string& name) const;
  bool GetBool(const std::string& name) const { return values_.at(name).as_bool(); }
  const std::string& GetString(const std::string& name) const {
    return values_.at(name).as_string();
  }
  std::vector<std::string> GetStringList(const std::string& name) const;
  std::vector<int64_t> GetIntList(const std::string& name) const;
  const AttrValue* Find(const std::string& name) const;
  const std::map<std::string, AttrValue>& values() const { return values_; }
  bool operator==(const PassOptions& o) const;

 private:
  std::map<std::string, AttrValue> values_;
};

enum class PassKind { kModule, kFunction };

struct PassInfo {
  std::string name;         // CamelCase, unique: "DeadCodeElimination"
  std::string description;  // one line, printed by --list-passes
  PassKind kind = PassKind::kModule;
  std::vector<OptionSpec> options;
  int min_opt_level = 0;
  std::vector<std::string> requires_properties;  // an earlier pass must provide these
  std::vector<std::string> provides_properties;  // this pass establishes these
  std::string origin = "core";                   // who registered it: "plugin foo (path)"

  const OptionSpec* FindOption(const std::string& name) const;
  // Checks `given` against the schema (names, types; ints widen to floats)
  // and fills defaults. Errors name the pass and the option.
  StatusOr<PassOptions> ResolveOptions(const std::map<std::string, AttrValue>& given) const;
};

class PassContext;

// What a running pass sees besides its input.
struct PassCallContext {
  const Module& module;  // the whole input module (for lookups)
  const PassOptions& options;
  PassContext& context;
};

using ModulePassFn = std::function<StatusOr<Module>(const Module&, const PassCallContext&)>;
// Returns the (possibly identical) function; it must keep its name.
using FunctionPassFn = std::function<StatusOr<Function>(const Function&, const PassCallContext&)>;

struct PassDef {
  PassInfo info;
  ModulePassFn module_fn;      // for PassKind::kModule
  FunctionPassFn function_fn;  // for PassKind::kFunction
};

// An instrument observes each pass run. Returning an error from AfterPass
// fails the pipeline at that pass.
class Instrument {
 public:
  virtual ~Instrument() = default;
  virtual void BeforePass(const PassInfo& /*pass*/, const Module& /*input*/) {}
  virtual Status AfterPass(const PassInfo& /*pass*/, const Module& /*input*/,
                           const Module& /*output*/) {
    return Status::Ok();
  }
  // Called once when the pipeline ends (reports, summaries).
  virtual void Finish() {}
};

// The context a pipeline runs under.
class PassContext {
 public:
  int opt_level = 2;
  std::set<std::string> required;  // run whatever the opt level
  std::set<std::string> disabled;  // never run (unless required)
  std::map<std::string, AttrValue> config;
  std::vector<std::shared_ptr<Instrument>> instruments;
  int num_threads = 0;  // for function passes; 0: DefaultThreads() (plir-opt --threads)

  // Returns true iff a pass with this name and effective minimum opt level
  // runs: required passes always run, then disabled ones never, then those
  // whose minimum opt level is at most opt_level.
  bool ShouldRun(const std::string& pass, int min_opt_level) const;

  // Thread-safe diagnostics from passes (warnings); plir-opt prints them.
  void Warn(const std::string& pass, const std::string& message);
  std::vector<std::string> TakeWarnings();

 private:
  std::mutex mu_;
  std::vector<std::string> warnings_;
};

}  // namespace plir

#endif  // PLIR_PASSES_PASS_H_
