#include "ir/tensor_bytes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace plir {
namespace {

// An owned string is adopted, not copied: the heap buffer stays where it was.
TEST(TensorBytesTest, AdoptsAnOwnedString) {
  std::string s(1000, 'x');
  const char* where = s.data();
  TensorBytes b(std::move(s));
  EXPECT_EQ(b.data(), where);
  EXPECT_EQ(b.size(), 1000u);
  EXPECT_FALSE(b.borrowed());
  EXPECT_EQ(b.view(), std::string(1000, 'x'));
  TensorBytes short_one(std::string("ab"));  // a short string lives inside the object
  EXPECT_EQ(short_one.view(), "ab");
  EXPECT_TRUE(TensorBytes().empty());
  EXPECT_NE(TensorBytes().data(), nullptr);
}

// Borrowed bytes are read in place, and the keepalive is released when the
// last handle goes.
TEST(TensorBytesTest, BorrowsAndReleasesItsKeepalive) {
  auto memory = std::make_shared<std::vector<char>>(64, '\7');
  std::weak_ptr<std::vector<char>> watch = memory;
  std::shared_ptr<const TensorBytes> b = std::make_shared<const TensorBytes>(
      memory->data(), memory->size(), std::shared_ptr<const void>(memory));
  const char* where = memory->data();
  memory.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(b->borrowed());
  EXPECT_EQ(b->data(), where);
  EXPECT_EQ(b->size(), 64u);
  EXPECT_EQ(b->view(), std::string(64, '\7'));
  std::shared_ptr<const TensorBytes> copy = b;  // a copy is a handle
  b.reset();
  EXPECT_FALSE(watch.expired());
  copy.reset();
  EXPECT_TRUE(watch.expired());
}

// Equality is on contents, wherever the bytes live.
TEST(TensorBytesTest, EqualityIsOnContents) {
  std::string raw = "abcd";
  TensorBytes owned(std::string("abcd"));
  TensorBytes borrowed(raw.data(), raw.size(), nullptr);
  EXPECT_TRUE(owned == borrowed);
  EXPECT_FALSE(owned == TensorBytes(std::string("abce")));
  EXPECT_FALSE(owned == TensorBytes(std::string("abc")));
  EXPECT_EQ(*CopyTensorBytes(raw), owned);
  EXPECT_NE(CopyTensorBytes(raw)->data(), raw.data());
}

// A kernel writes its output through WritableTensorBytes, then shares it
// as const.
TEST(TensorBytesTest, WritableBytesAreOwned) {
  auto w = std::make_shared<WritableTensorBytes>(std::string(4, '\0'));
  std::memcpy(w->mutable_data(), "wxyz", 4);
  std::shared_ptr<const TensorBytes> shared = w;
  EXPECT_EQ(shared->view(), "wxyz");
  EXPECT_FALSE(shared->borrowed());
  EXPECT_EQ(shared->data(), w->mutable_data());
}

}  // namespace
}  // namespace plir
