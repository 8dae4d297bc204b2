#include "passes/unified_diff.h"

#include <gtest/gtest.h>

namespace plir {
namespace {

TEST(UnifiedDiffTest, EqualTextsGiveNothing) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(UnifiedDiffTest, OneChangedLine) {
  std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(UnifiedDiff(a, b, "a", "b"),
            "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiffTest, InsertionsDeletionsAndSeparateHunks) {
  std::string a, b;
  for (int i = 0; i < 30; ++i) a += std::to_string(i) + "\n";
  b = a;
  b.replace(b.find("3\n"), 2, "");    // delete line "3"
  b.insert(b.find("25\n"), "new\n");  // insert before 25
  std::string d = UnifiedDiff(a, b, "a", "b", 1);
  EXPECT_EQ(d, "--- a\n+++ b\n@@ -3,3 +3,2 @@\n 2\n-3\n 4\n@@ -25,2 +24,3 @@\n 24\n+new\n 25\n");
}

}  // namespace
}  // namespace plir
