// NameTable: the parser's and printer's name-keyed tables. Values larger
// than a slot index live in a shared store behind per-prefix index arrays;
// small ones inline. Both layouts must agree with a plain map on any mix of
// numbered, unnumbered and far-numbered names.
#include "ir/internal/name_table.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace plir::internal {
namespace {

struct Big {  // larger than a slot index: the store layout
  int64_t a = 0;
  int64_t b = 0;
  std::string tag;
};

template <typename V, typename Make>
void AgreesWithMap(Make make) {
  NameTable<V> table;
  std::map<std::string, int> expected;
  std::mt19937 rng(7);
  const char* prefixes[] = {"v", "d", "lv", "x_"};
  for (int step = 0; step < 200000; ++step) {
    std::string name = prefixes[rng() % 4];
    switch (rng() % 8) {
      case 0:
        break;  // no number
      case 1:
        name += std::to_string(rng() % 100000000);
        break;  // far: the sparse map
      case 2:
        name += "0" + std::to_string(rng() % 10);
        break;  // leading zero: no number
      default:
        name += std::to_string(rng() % 300000);  // dense
    }
    NameHint n(name);
    int value = step;
    auto [got, inserted] = table.Insert(n, make(value));
    auto [it, inserted_expected] = expected.emplace(name, value);
    ASSERT_EQ(inserted, inserted_expected) << name;
    ASSERT_TRUE(got);
    V* found = table.Find(n);
    ASSERT_EQ(found, got) << name;
    ASSERT_EQ(*found, make(it->second)) << name;
  }
  EXPECT_EQ(table.size(), expected.size());
  for (const auto& [name, value] : expected) {
    V* found = table.Find(NameHint(name));
    ASSERT_TRUE(found) << name;
    EXPECT_EQ(*found, make(value)) << name;
  }
  EXPECT_EQ(table.Find(NameHint("never1")), nullptr);
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
  for (const auto& [name, value] : expected) ASSERT_EQ(table.Find(NameHint(name)), nullptr) << name;
}

bool operator==(const Big& x, const Big& y) { return x.a == y.a && x.b == y.b && x.tag == y.tag; }

TEST(NameTableTest, StoreLayoutAgreesWithAMap) {
  static_assert(sizeof(Big) > sizeof(uint32_t));
  AgreesWithMap<Big>([](int v) { return Big{v, -v, std::to_string(v)}; });
}

TEST(NameTableTest, InlineLayoutAgreesWithAMap) {
  AgreesWithMap<char>([](int v) { return static_cast<char>(v % 127); });
}

TEST(NameTableTest, StoredValuesStayPutWhileTheTableGrows) {
  // The store is chunked: a value's address survives later inserts (the
  // parser holds one across a definition's checks).
  NameTable<Big> table;
  Big* first = table.Insert(NameHint("v0"), Big{1, 2, "first"}).first;
  for (uint32_t i = 1; i < 100000; ++i) table.Insert(NameHint("v" + std::to_string(i * 3)), Big{});
  EXPECT_EQ(table.Find(NameHint("v0")), first);
  EXPECT_EQ(first->tag, "first");
}

// ChunkedStore: values by position across chunk borders (64, 64+128, ...),
// every address stable, and each value destroyed once by clear() and by
// the destructor.
TEST(ChunkedStoreTest, KeepsValuesInPlaceAndDestroysEachOnce) {
  auto live = std::make_shared<int>(0);
  struct Counted {
    std::shared_ptr<int> live;
    size_t id;
    Counted(std::shared_ptr<int> l, size_t i) : live(std::move(l)), id(i) { ++*live; }
    Counted(Counted&& o) noexcept : live(o.live), id(o.id) { ++*live; }
    ~Counted() { --*live; }
  };
  {
    ChunkedStore<Counted> store;
    std::vector<Counted*> at;
    for (int round = 0; round < 2; ++round) {
      at.clear();
      for (size_t i = 0; i < 5000; ++i) {
        store.push_back(Counted(live, i));
        at.push_back(&store.back());
      }
      EXPECT_EQ(store.size(), 5000u);
      EXPECT_EQ(*live, 5000);
      for (size_t i : {size_t{0}, size_t{63}, size_t{64}, size_t{191}, size_t{192}, size_t{4999}}) {
        EXPECT_EQ(&store[i], at[i]) << i;
        EXPECT_EQ(store[i].id, i);
      }
      if (round == 0) {
        store.clear();
        EXPECT_EQ(*live, 0);
        EXPECT_EQ(store.size(), 0u);
      }
    }
  }
  EXPECT_EQ(*live, 0);  // the destructor destroyed the second round
}

TEST(NameTableTest, ANameInTheMapBeforeItsSlotExistedIsFoundThere) {
  // "v70000" is past the dense limit of an empty table (it goes to the
  // map); once the table holds enough names its slot range covers 70000,
  // and the name must still be found once, with its first value.
  NameTable<Big> table;
  ASSERT_TRUE(table.Insert(NameHint("v70000"), Big{7, 0, "early"}).second);
  for (uint32_t i = 0; i < 40000; ++i) table.Insert(NameHint("d" + std::to_string(i)), Big{});
  auto [again, inserted] = table.Insert(NameHint("v70000"), Big{8, 0, "late"});
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again->tag, "early");
  EXPECT_EQ(table.Find(NameHint("v70000"))->tag, "early");
  EXPECT_EQ(table.size(), 40001u);
}

}  // namespace
}  // namespace plir::internal
