#include "testing/golden.h"

#include <filesystem>
#include <sstream>

#include "driver/pipeline.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "passes/instruments.h"
#include "passes/pass_manager.h"
#include "passes/properties.h"

namespace plir::testing {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool IsSeparator(const std::string& line) { return Trim(line) == kCaseSeparator; }

// The comment lines a case starts with (trimmed), up to its first code line.
std::vector<std::string> HeaderComments(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& l : Lines(text)) {
    std::string t = Trim(l);
    if (t.rfind("//", 0) != 0) {
      if (!t.empty()) break;
      continue;
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace

std::vector<GoldenCase> SplitCases(const std::string& text) {
  std::vector<GoldenCase> cases;
  GoldenCase current;
  int line_no = 0;
  auto finish = [&]() {
    for (const std::string& t : HeaderComments(current.text)) {
      std::string body = Trim(t.substr(2));
      if (body.rfind("RUN:", 0) == 0)
        current.run = Trim(body.substr(4));
      else if (body.rfind("PIPELINE:", 0) == 0)
        current.pipeline = Trim(body.substr(9));
      else if (body.rfind("EXPECT ERROR:", 0) == 0)
        current.expect_error = Trim(body.substr(13));
      else if (body.rfind("EXPECT PARSE ERROR:", 0) == 0)
        current.expect_parse_error = Trim(body.substr(19));
    }
    cases.push_back(current);
  };
  current.first_line = 1;
  for (const std::string& l : Lines(text)) {
    ++line_no;
    if (IsSeparator(l)) {
      finish();
      current = GoldenCase();
      current.first_line = line_no + 1;
      continue;
    }
    current.text += l + "\n";
  }
  finish();
  return cases;
}

StatusOr<CaseResult> RunCase(const GoldenCase& c, const std::string& case_file,
                             const std::vector<std::string>& default_passes, PluginLoader& loader) {
  CaseResult result;
  // Keep line numbers of the file in parse errors.
  std::string padded = std::string(c.first_line - 1, '\n') + c.text;
  ParseOptions po;
  po.filename = case_file;
  StatusOr<Module> input = ParseModule(padded, po);
  if (!c.expect_parse_error.empty()) {
    std::string header;
    for (const std::string& t : HeaderComments(c.text)) header += t + "\n";
    if (input.ok()) {  // rendered as a note; the runner reports the failure
      result.rendered = header + "// error: the input parsed\n";
      return result;
    }
    result.is_error = result.is_parse_error = true;
    result.error = input.status().message();
    // The first line (file:line:col: message); the caret lines are not kept.
    std::string first = result.error.substr(0, result.error.find('\n'));
    result.rendered = header + "// parse error: " + first + "\n";
    return result;
  }
  if (!input.ok()) return input.status();
  result.input = *input;

  std::vector<PipelineStep> steps;
  if (!c.pipeline.empty()) {
    std::string path = (std::filesystem::path(case_file).parent_path() / c.pipeline).string();
    auto p = LoadPipeline(path, loader);
    if (!p.ok()) return p.status();
    steps = p->steps;
  } else if (!c.run.empty()) {
    std::string name = case_file + ":" + std::to_string(c.first_line) + " (RUN)";
    auto p = LoadPipelineText(case_file, "version: 1\npasses: " + c.run + "\n", loader);
    if (!p.ok()) return Status(p.status().code(), name + ": " + p.status().message());
    steps = p->steps;
  } else {
    for (const std::string& pass : default_passes) {
      auto s = MakePassStep(PassRegistry::Global(), pass);
      if (!s.ok()) return s.status();
      // Errors about this step name the case (as plir-opt names the line).
      s->loc = SourceLoc{case_file, c.first_line, 1};
      steps.push_back(*s);
    }
    // The same check plir-opt makes: a pass that requires a property no
    // earlier pass provides is refused here too, not only by plir-opt.
    if (Status s = CheckProperties(steps, PassRegistry::Global()); !s.ok()) return s;
  }

  PassContext ctx;
  ctx.instruments.push_back(std::make_shared<InputUnchangedInstrument>());
  ctx.instruments.push_back(std::make_shared<VerifyInstrument>());
  uint64_t hash_before = StructuralHash(result.input);
  StatusOr<Module> out = PassManager().Run(steps, result.input, ctx);
  if (StructuralHash(result.input) != hash_before)
    return FailedPrecondition(case_file + ":" + std::to_string(c.first_line) +
                              ": the pipeline modified its input module");
  // Intent comments come first in the rendered section, then the result.
  std::string header;
  for (const std::string& t : HeaderComments(c.text)) header += t + "\n";
  for (const std::string& w : ctx.TakeWarnings()) header += "// warning: " + w + "\n";
  if (!out.ok()) {
    result.is_error = true;
    result.error = out.status().message();
    result.rendered = header + "// error: " + result.error + "\n";
    return result;
  }
  result.output = *out;
  PrintOptions print;
  print.version_header = false;
  result.rendered = header + PrintModule(result.output, print);
  return result;
}

std::string RenderExpected(const std::vector<std::string>& sections,
                           const std::string& plugin_name) {
  std::string out = std::string(kBannerPrefix) + "\n// Regenerate: bazel run //plugins/" +
                    plugin_name + ":update_goldens\n";
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i) out += std::string(kCaseSeparator) + "\n";
    out += sections[i];
  }
  return out;
}

std::vector<std::string> SplitExpected(const std::string& text) {
  std::vector<std::string> sections(1);
  std::vector<std::string> lines = Lines(text);
  size_t i = 0;
  while (i < lines.size() &&
         (lines[i].rfind(kBannerPrefix, 0) == 0 || lines[i].rfind("// Regenerate:", 0) == 0))
    ++i;
  for (; i < lines.size(); ++i) {
    if (IsSeparator(lines[i])) {
      sections.emplace_back();
      continue;
    }
    sections.back() += lines[i] + "\n";
  }
  return sections;
}

}  // namespace plir::testing
