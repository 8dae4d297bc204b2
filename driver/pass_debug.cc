#include "driver/pass_debug.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "driver/file_util.h"
#include "ir/text/printer.h"

namespace plir {

StatusOr<std::unique_ptr<PassRegistry>> BisectGate::GatedRegistry(const PassRegistry& from) {
  auto out = std::make_unique<PassRegistry>();
  std::shared_ptr<BisectGate> self = shared_from_this();
  for (const std::string& name : from.Names()) {
    std::shared_ptr<const PassDef> def = from.Lookup(name);
    if (!def) continue;
    PassDef gated = *def;
    if (def->module_fn)
      gated.module_fn = [self, def](const Module& m, const PassCallContext& c) -> StatusOr<Module> {
        if (!self->running()) return m;
        return def->module_fn(m, c);
      };
    if (def->function_fn)
      gated.function_fn = [self, def](const Function& f,
                                      const PassCallContext& c) -> StatusOr<Function> {
        if (!self->running()) return f;
        return def->function_fn(f, c);
      };
    PLIR_RETURN_IF_ERROR(out->Register(std::move(gated)));
  }
  return out;
}

void BisectGate::BeforePass(const PassInfo& pass, const Module&) {
  ++count_;
  running_ = count_ <= limit_;
  *out_ << "BISECT: " << (running_ ? "running" : "NOT running") << " pass (" << count_ << ") "
        << pass.name << "\n";
}

void BisectGate::Finish() {
  *out_ << "BISECT: " << count_ << " pass application" << (count_ == 1 ? "" : "s") << " in total, "
        << std::min(count_, limit_) << " run (--bisect-limit " << limit_ << ")\n";
  out_->flush();
}

std::string IrDumpInstrument::FileName(int64_t index, const std::string& pass) {
  char num[32];
  std::snprintf(num, sizeof num, "%03lld", static_cast<long long>(index));
  std::string safe;
  for (char c : pass.substr(0, 200)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    safe += ok ? c : '_';
  }
  if (safe.empty() || safe[0] == '.') safe = "_" + safe;
  return std::string(num) + "_" + safe + ".plir";
}

namespace {

bool IsDumpFile(const std::string& name) {
  size_t digits = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
  return digits >= 3 && digits < name.size() && name[digits] == '_' && name.size() > 5 &&
         name.compare(name.size() - 5, 5, ".plir") == 0;
}

}  // namespace

StatusOr<std::shared_ptr<IrDumpInstrument>> IrDumpInstrument::Create(const std::string& dir,
                                                                     const Module& input,
                                                                     const BisectGate* gate) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return InvalidArgument("--dump-ir-dir: cannot create the directory " + dir +
                           (ec ? ": " + ec.message() : ": a file of that name exists"));
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (IsDumpFile(name) && e.is_regular_file(ec)) fs::remove(e.path(), ec);
  }
  if (ec) return InvalidArgument("--dump-ir-dir: cannot clear " + dir + ": " + ec.message());
  std::string first = dir + "/" + FileName(0, "input");
  PLIR_RETURN_IF_ERROR(WriteFileAtomically(first, PrintModule(input)).WithPrefix("--dump-ir-dir"));
  return std::shared_ptr<IrDumpInstrument>(new IrDumpInstrument(dir, gate));
}

Status IrDumpInstrument::AfterPass(const PassInfo& pass, const Module&, const Module& output) {
  ++count_;
  if (gate_ && !gate_->running()) return Status::Ok();
  return WriteFileAtomically(dir_ + "/" + FileName(count_, pass.name), PrintModule(output))
      .WithPrefix("--dump-ir-dir");
}

}  // namespace plir
