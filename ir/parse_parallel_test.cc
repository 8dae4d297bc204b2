// A large dataflow block parsed on several threads (ir/text/parse_parallel.cc)
// gives the module a serial parse gives, and any error the serial parse
// reports, word for word.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/serialize/serialize.h"
#include "ir/structural.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "testing/random_module.h"

namespace plir {
namespace {

// One function: `n` bindings of the form the printer writes in a dataflow
// block, with `edit(i, line)` given the chance to change binding i's line.
// An ordinary block instead when `dataflow` is false.
std::string BlockText(int n, const std::function<void(int, std::string*)>& edit = nullptr,
                      bool dataflow = true) {
  std::string text =
      "def @main(%x: Tensor[(2), float32], %c: Tensor[(), float32]) -> Tensor[(2), float32] {\n";
  if (dataflow) text += "  dataflow {\n";
  for (int i = 0; i < n; ++i) {
    std::string prev = i ? "%v" + std::to_string(i - 1) : "%x";
    std::string line;
    switch (i % 5) {
      case 0:
        line = "%v" + std::to_string(i) + ": Tensor[(2), float32] = add(" + prev + ", %c);";
        break;
      case 1:  // a tuple, then its first field
        line = "%t" + std::to_string(i) + ": (Tensor[(2), float32], Tensor[(), float32]) = (" +
               prev + ", %c);\n    %v" + std::to_string(i) + ": Tensor[(2), float32] = %t" +
               std::to_string(i) + ".0;";
        break;
      case 2:  // attributes ('=' in the value) and a less specific annotation
        line = "%v" + std::to_string(i) + ": Tensor[ndim=1, float32] = nn.softmax(" + prev +
               ", axis=0);";
        break;
      case 3:  // a constant
        line = "%v" + std::to_string(i) + ": Tensor[(2), float32] = multiply(" + prev +
               ", const<Tensor[(2), float32]>[1.5, -2]);";
        break;
      default:
        line = "%v" + std::to_string(i) + ": Tensor[(2), float32] = subtract(" + prev + ", %x);";
    }
    if (edit) edit(i, &line);
    text += "    " + line + "\n";
  }
  std::string last = "%v" + std::to_string(n - 1);
  if (dataflow) text += "    output " + last + ";\n  }\n";
  text += "  " + last + "\n}\n";
  return text;
}

struct Parsed {
  StatusOr<Module> module;
  size_t parallel = 0;
};
// `scan`: ParseOptions::scan_bindings (false: the tokenizing parser alone,
// the reference every other parse is compared with).
Parsed Parse(const std::string& text, int threads, bool scan = true) {
  ParseOptions o;
  o.filename = "big.plir";
  o.threads = threads;
  o.scan_bindings = scan;
  size_t parallel = 0;
  o.parallel_bindings = &parallel;
  StatusOr<Module> m = ParseModule(text, o);
  return Parsed{std::move(m), parallel};
}

// The same module as the tokenizing parser's: printed, compared, and saved
// in binary (which keeps every variable's number), with the scan on one
// thread and on several.
void ExpectSameAsSerial(const std::string& text, size_t min_parallel) {
  Parsed serial = Parse(text, 1, /*scan=*/false);
  ASSERT_TRUE(serial.module.ok()) << serial.module.status().message();
  EXPECT_EQ(serial.parallel, 0u);
  EXPECT_EQ(Parse(text, 1).parallel, 0u);
  for (int threads : {1, 2, 3, 8}) {
    SCOPED_TRACE(threads);
    Parsed p = Parse(text, threads);
    ASSERT_TRUE(p.module.ok()) << p.module.status().message();
    if (threads > 1) EXPECT_GE(p.parallel, min_parallel);
    EXPECT_FALSE(FindFirstMismatch(*serial.module, *p.module));
    EXPECT_TRUE(PrintModule(*p.module, PrintOptions{.threads = 1}) ==
                PrintModule(*serial.module, PrintOptions{.threads = 1}));
    EXPECT_TRUE(SaveBinary(*p.module) == SaveBinary(*serial.module));
  }
}

TEST(ParseParallelTest, ALargeBlockParsesAsOnOneThread) {
  std::string text = BlockText(60000);  // 72,000 bindings: two windows
  ASSERT_GT(text.size(), size_t{1} << 20);
  ExpectSameAsSerial(text, 60000 + 60000 / 5);  // every binding, tuples too
  // An ordinary block: the same, with no dataflow variables.
  ExpectSameAsSerial(BlockText(30000, nullptr, /*dataflow=*/false), 36000);
  // The printer's own output of it, read back.
  Parsed p = Parse(text, 2);
  ASSERT_TRUE(p.module.ok());
  ExpectSameAsSerial(PrintModule(*p.module), 30000);
}

// Statements of another form end a window; the serial parser goes on from
// there and the next window starts after them.
TEST(ParseParallelTest, OtherFormsInTheBlockParseSerially) {
  auto with = [](int at, const std::string& extra) {
    return BlockText(30000, [&](int i, std::string* line) {
      if (i == at) *line = extra + "\n    " + *line;
    });
  };
  // No annotation.
  ExpectSameAsSerial(with(20000, "%u: Tensor[(2), float32] = add(%v19999, %c);\n    %w = %u;"),
                     20000);
  // An if (a nested scope), a comment, a call over two lines.
  ExpectSameAsSerial(with(20000,
                          "%b: Tensor[(), bool] = less(%c, %c);\n"
                          "    %w: Tensor[(2), float32] = if (%b) {\n      %v19999\n    } else {\n"
                          "      %x\n    };"),
                     20000);
  ExpectSameAsSerial(with(20000,
                          "// a comment\n    %w: Tensor[(2), float32] = add(%v19999,\n"
                          "      %c);"),
                     20000);
  // CRLF line ends throughout.
  std::string crlf;
  for (char c : BlockText(30000)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  ExpectSameAsSerial(crlf, 30000);
}

// Each error in a large block: the message of a serial parse, at the same
// line and column, whatever the threads.
TEST(ParseParallelTest, ErrorsAreTheSerialParsesErrors) {
  const std::vector<std::pair<int, std::string>> breaks = {
      {25003, "%v25003: Tensor[(2), float32] = add(%nope, %c);"},       // undefined
      {25003, "%v25003: Tensor[(2), float32] = add(%v25010, %c);"},     // used before defined
      {25003, "%v25003: Tensor[(2), float32] = add(%v25003, %c);"},     // itself
      {25003, "%v100: Tensor[(2), float32] = add(%v25002, %c);"},       // defined twice
      {25003, "%v25003: Tensor[(3), float32] = add(%v25002, %c);"},     // annotation
      {25003, "%v25003: Tensor[(2), floaty] = add(%v25002, %c);"},      // type
      {25003, "%v25003: Tensor[(2), float32] = add(%v25002 %c);"},      // syntax
      {25003, "%v25003: Tensor[(2), float32] = no.such.op(%v25002);"},  // op
      {29999, "%v29999: Tensor[(2), float32] = add(%v29998, %c)"},      // no ';'
  };
  for (const auto& [at, bad] : breaks) {
    SCOPED_TRACE(bad);
    for (bool dataflow : {true, false}) {
      std::string text = BlockText(
          30000,
          [&](int i, std::string* line) {
            if (i == at) *line = bad;
          },
          dataflow);
      Parsed serial = Parse(text, 1, /*scan=*/false);
      ASSERT_FALSE(serial.module.ok());
      EXPECT_NE(serial.module.status().message().find("big.plir:"), std::string::npos);
      for (int threads : {1, 2, 3}) {
        Parsed p = Parse(text, threads);
        ASSERT_FALSE(p.module.ok());
        EXPECT_EQ(p.module.status().message(), serial.module.status().message());
      }
    }
  }
  // Columns count characters: a name defined after a UTF-8 string on its
  // line, defined again later, is reported at the serial parse's column.
  {
    std::string text = BlockText(30000, [&](int i, std::string* line) {
      if (i == 25003)
        *line +=
            " %s: Object = call_packed(\"h\xc3\xa9llo\", 1, sinfo_args=[Object]);"
            " %u: Object = call_packed(\"x\", 1, sinfo_args=[Object]);";
      if (i == 28000) *line += " %u: Object = call_packed(\"y\", 1, sinfo_args=[Object]);";
    });
    Parsed serial = Parse(text, 1, /*scan=*/false);
    ASSERT_FALSE(serial.module.ok());
    EXPECT_NE(serial.module.status().message().find("already defined at"), std::string::npos);
    EXPECT_EQ(Parse(text, 1).module.status().message(), serial.module.status().message());
    EXPECT_EQ(Parse(text, 2).module.status().message(), serial.module.status().message());
  }
  // An error after the block, in the serial part.
  std::string text = BlockText(30000);
  text.replace(text.rfind("%v29999\n}"), 9, "%nope\n}");
  EXPECT_EQ(Parse(text, 2).module.status().message(),
            Parse(text, 1, /*scan=*/false).module.status().message());
}

// Random edits for the differential tests: a xorshift generator, and the
// bytes written in, those the raw scan and the lexer act on.
struct Edits {
  explicit Edits(uint64_t seed) : state(seed) {}
  uint64_t Next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  uint64_t state;
  static inline const std::string kBytes = "%:=;()[]{}\"\\/\n\r ,.<>x0";
};

// Differential fuzzing: random edits of a large block (bytes deleted,
// inserted or replaced by what the raw scan looks at) parse to the
// tokenizing parser's module, or fail with its message, with the scan on
// one thread and on two.
TEST(ParseParallelTest, EditedBlocksParseAsOnOneThread) {
  // Even rounds edit a dataflow block, odd ones an ordinary block.
  const std::string bases[2] = {BlockText(25000), BlockText(25000, nullptr, false)};
  Edits edits(0x9e3779b97f4a7c15ull);
  auto next = [&]() { return edits.Next(); };
  const std::string& bytes = Edits::kBytes;
  int failed = 0;
  for (int round = 0; round < 60; ++round) {
    const std::string& base = bases[round % 2];
    const size_t first = base.find('\n'), last = base.rfind("%v24999\n}");
    std::string text = base;
    for (int k = 0; k < 1 + round % 3; ++k) {
      size_t at = first + next() % (last - first);
      char c = bytes[next() % bytes.size()];
      switch (next() % 3) {
        case 0:
          text.erase(at, 1);
          break;
        case 1:
          text.insert(at, 1, c);
          break;
        default:
          text[at] = c;
      }
    }
    SCOPED_TRACE(round);
    Parsed serial = Parse(text, 1, /*scan=*/false);
    if (!serial.module.ok()) ++failed;
    for (int threads : {1, 2}) {
      Parsed p = Parse(text, threads);
      ASSERT_EQ(p.module.ok(), serial.module.ok())
          << threads << (serial.module.ok() ? "" : serial.module.status().message());
      if (!serial.module.ok())
        EXPECT_EQ(p.module.status().message(), serial.module.status().message()) << threads;
      else
        EXPECT_TRUE(SaveBinary(*p.module) == SaveBinary(*serial.module)) << threads;
    }
  }
  EXPECT_GT(failed, 10);  // the edits reach the error paths
  EXPECT_LT(failed, 60);  // and some still parse
}

// Every construct of the format (testing/random_module.h: ifs, tuples,
// constants inline and in hex, symbolic dims, calls of functions and
// externs, attributes, strings), as printed and with bytes edited: the scan
// gives the tokenizing parser's module or its error message.
TEST(ParseParallelTest, RandomModulesParseAsWithoutTheScan) {
  Edits edits(0x452821e638d01377ull);
  auto next = [&]() { return edits.Next(); };
  const std::string& bytes = Edits::kBytes;
  int failed = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    testing::RandomModuleOptions o;
    o.seed = seed;
    o.num_bindings = 400;
    o.local_functions = seed % 2 == 0;
    std::string text = PrintModule(testing::GenerateRandomModule(o), PrintOptions{.threads = 1});
    for (int edit = 0; edit < 4; ++edit) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", edit " + std::to_string(edit));
      Parsed serial = Parse(text, 1, /*scan=*/false);
      if (!serial.module.ok()) ++failed;
      Parsed p = Parse(text, 2);
      ASSERT_EQ(p.module.ok(), serial.module.ok())
          << (serial.module.ok() ? "" : serial.module.status().message());
      if (!serial.module.ok())
        EXPECT_EQ(p.module.status().message(), serial.module.status().message());
      else
        EXPECT_TRUE(SaveBinary(*p.module) == SaveBinary(*serial.module));
      size_t at = next() % text.size();
      text[at] = bytes[next() % bytes.size()];  // the next round's text
    }
  }
  EXPECT_GT(failed, 20);
}

}  // namespace
}  // namespace plir
