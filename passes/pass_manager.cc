#include "passes/pass_manager.h"

#include <re2/re2.h>

#include <atomic>
#include <exception>
#include <set>
#include <thread>

#include "ir/parallel.h"
#include "ir/structural.h"

namespace plir {

StatusOr<PipelineStep> MakePassStep(const PassRegistry& registry, const std::string& pass,
                                    const std::map<std::string, AttrValue>& options) {
  auto def = registry.Lookup(pass);
  if (!def) return NotFound("unknown pass " + pass);
  PLIR_ASSIGN_OR_RETURN(PassOptions resolved, def->info.ResolveOptions(options));
  PipelineStep step;
  step.pass = pass;
  step.given_options = options;
  step.options = std::move(resolved);
  return step;
}

namespace {

// Calls `fn`, converting anything it throws into an error naming the pass.
template <typename T, typename F>
StatusOr<T> Guarded(const std::string& pass, F&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return Internal("pass " + pass + " threw an exception: " + e.what());
  } catch (...) {
    return Internal("pass " + pass + " threw an exception of unknown type");
  }
}

}  // namespace

namespace internal {
void SetWarningSink(std::vector<std::pair<std::string, std::string>>* sink);
}  // namespace internal

StatusOr<Module> PassManager::RunFunctionPass(const PassDef& pass, const PassOptions& options,
                                              const Module& module, PassContext& context) const {
  const std::string& name = pass.info.name;
  std::vector<size_t> funcs;
  for (size_t i = 0; i < module.items().size(); ++i)
    if (module.items()[i]->kind() == NodeKind::kFunction) funcs.push_back(i);
  std::vector<std::optional<StatusOr<Function>>> results(funcs.size());
  std::vector<std::vector<std::pair<std::string, std::string>>> warnings(funcs.size());
  PassCallContext call{module, options, context};
  auto work = [&](size_t j) {
    Function f = Downcast<FunctionNode>(module.items()[funcs[j]]);
    internal::SetWarningSink(&warnings[j]);
    results[j] = Guarded<Function>(name, [&] { return pass.function_fn(f, call); });
    internal::SetWarningSink(nullptr);
  };
  ParallelFor(funcs.size(), context.num_threads, [&](size_t j, size_t) { work(j); });
  // Warnings in function order, whatever order the threads ran in.
  for (auto& list : warnings)
    for (auto& [p, msg] : list) context.Warn(p, msg);
  // Assemble in module order: the result does not depend on scheduling.
  std::vector<Item> items = module.items();
  bool changed = false;
  for (size_t j = 0; j < funcs.size(); ++j) {
    StatusOr<Function>& r = *results[j];
    const std::string& fname = module.items()[funcs[j]]->name();
    if (!r.ok()) return r.status().WithPrefix("on @" + fname);
    if (!*r || (*r)->name() != fname)
      return Internal("pass " + name + " returned " + (*r ? "@" + (*r)->name() : "nothing") +
                      " for @" + fname + "; a function pass must keep the function's name");
    if (r->get() != items[funcs[j]].get()) {
      items[funcs[j]] = *r;
      changed = true;
    }
  }
  if (!changed) return module;
  return Module::Make(std::move(items));
}

StatusOr<Module> PassManager::RunPassBody(const PassDef& pass, const PassOptions& options,
                                          const Module& module, PassContext& context) const {
  if (pass.info.kind == PassKind::kFunction) return RunFunctionPass(pass, options, module, context);
  PassCallContext call{module, options, context};
  return Guarded<Module>(pass.info.name, [&] { return pass.module_fn(module, call); });
}

StatusOr<Module> PassManager::RunPass(const PassDef& pass, const PassOptions& options,
                                      const Module& module, PassContext& context) const {
  for (auto& inst : context.instruments) inst->BeforePass(pass.info, module);
  StatusOr<Module> result = RunPassBody(pass, options, module, context);
  if (!result.ok()) return result.status().WithPrefix("pass " + pass.info.name);
  for (auto& inst : context.instruments)
    PLIR_RETURN_IF_ERROR(inst->AfterPass(pass.info, module, *result));
  return result;
}

namespace {

constexpr char kGlobalSymbol[] = "global_symbol";

// `attrs` without `key`.
Attrs WithoutAttr(const Attrs& attrs, std::string_view key) {
  std::vector<Attrs::Entry> kept;
  for (const Attrs::Entry& e : attrs.entries())
    if (e.first.str() != key) kept.push_back(e);
  auto made = Attrs::Make(std::move(kept));
  return made.ok() ? *made : attrs;  // keys were distinct already
}

Item WithItemAttrs(const Item& item, Attrs attrs) {
  if (item->kind() == NodeKind::kFunction) {
    auto* f = static_cast<const FunctionNode*>(item.get());
    return FunctionNode::Make(f->name(), f->params(), f->ret_type(), f->body(), std::move(attrs));
  }
  return ExternFuncNode::Make(item->name(), item->params(), item->ret_type(), std::move(attrs));
}

}  // namespace

StatusOr<Module> PassManager::RunPassOnFunctions(const PassDef& pass, const PassOptions& options,
                                                 const std::string& functions, const Module& module,
                                                 PassContext& context) const {
  const std::string& name = pass.info.name;
  // RE2, not std::regex: linear time and no recursion whatever the names
  // (std::regex_match(".*") overflows the stack on a 100k-character name).
  RE2 re(functions, RE2::Quiet);
  if (!re.ok())
    return InvalidArgument("pass " + name + ": functions: invalid regular expression '" +
                           functions + "': " + re.error());
  for (auto& inst : context.instruments) inst->BeforePass(pass.info, module);
  std::vector<Item> subset;
  std::set<std::string> selected, internal;
  for (const Item& item : module.items()) {
    if (item->kind() != NodeKind::kFunction) {
      subset.push_back(item);
      continue;
    }
    if (RE2::FullMatch(item->name(), re)) {
      selected.insert(item->name());
      if (item->attrs().Get(kGlobalSymbol)) {
        subset.push_back(item);
      } else {
        internal.insert(item->name());
        subset.push_back(WithItemAttrs(
            item, item->attrs().With(Symbol(kGlobalSymbol), AttrValue::String(item->name()))));
      }
    } else {
      // Hidden from the pass: a signature, so references to it stay valid.
      std::vector<Var> params;
      for (const Var& p : item->params())
        params.push_back(VarNode::Make(p->name_hint(), p->type()));
      subset.push_back(ExternFuncNode::Make(item->name(), std::move(params), item->ret_type()));
    }
  }
  Module result = module;
  if (selected.empty()) {
    context.Warn(name,
                 "functions: '" + functions + "' matches no function; the module is left as it is");
  } else {
    PLIR_ASSIGN_OR_RETURN(Module sub, Module::Make(std::move(subset)));
    StatusOr<Module> out = RunPassBody(pass, options, sub, context);
    if (!out.ok())
      return out.status().WithPrefix("pass " + name + " (on functions '" + functions + "')");
    if (!out->same_as(sub)) {
      for (const Item& item : out->items()) {
        const std::string& n = item->name();
        if (module.Contains(n) && !selected.count(n))
          continue;  // hidden, or an extern: kept as it was
        if (Item given = sub.Lookup(n); given && given.get() == item.get()) continue;  // unchanged
        Item merged = item;
        if (internal.count(n) && item->attrs().Get(kGlobalSymbol))
          merged = WithItemAttrs(item, WithoutAttr(item->attrs(), kGlobalSymbol));
        result = result.WithItem(merged);
      }
    }
  }
  for (auto& inst : context.instruments)
    PLIR_RETURN_IF_ERROR(inst->AfterPass(pass.info, module, result));
  return result;
}

StatusOr<Module> PassManager::RunSteps(const std::vector<PipelineStep>& steps, const Module& module,
                                       PassContext& context) const {
  Module m = module;
  for (const PipelineStep& step : steps) {
    switch (step.kind) {
      case PipelineStep::Kind::kExtensionPoint:
        break;
      case PipelineStep::Kind::kPass: {
        auto def = registry_.Lookup(step.pass);
        if (!def) return NotFound("unknown pass " + step.pass);
        int min_level = step.min_opt_level.value_or(def->info.min_opt_level);
        if (!context.ShouldRun(step.pass, min_level)) break;
        if (step.functions) {
          PLIR_ASSIGN_OR_RETURN(
              m, RunPassOnFunctions(*def, step.options, *step.functions, m, context));
        } else {
          PLIR_ASSIGN_OR_RETURN(m, RunPass(*def, step.options, m, context));
        }
        break;
      }
      case PipelineStep::Kind::kRepeat: {
        for (int i = 0; i < step.max_iterations; ++i) {
          Module before = m;
          PLIR_ASSIGN_OR_RETURN(m, RunSteps(step.steps, m, context));
          if (step.until_fixpoint && (m.same_as(before) || StructuralEqual(m, before))) break;
        }
        break;
      }
    }
  }
  return m;
}

StatusOr<Module> PassManager::Run(const std::vector<PipelineStep>& steps, const Module& module,
                                  PassContext& context,
                                  const std::function<void(size_t)>& on_top_level_step) const {
  StatusOr<Module> r = module;
  if (!on_top_level_step) {
    r = RunSteps(steps, module, context);
  } else {
    for (size_t i = 0; i < steps.size() && r.ok(); ++i) {
      on_top_level_step(i);
      r = RunSteps(std::vector<PipelineStep>{steps[i]}, *r, context);
    }
  }
  for (auto& inst : context.instruments) inst->Finish();
  return r;
}

}  // namespace plir
