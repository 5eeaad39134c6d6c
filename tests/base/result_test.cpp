// skillbox/result.h: one result type for every layer.
#include "skillbox/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace skillbox {
namespace {

struct Oops {
  int code = 0;
};

Result<int> half(int n) {
  if (n % 2 != 0) return Error{"odd: " + std::to_string(n)};
  return n / 2;
}

TEST(Result, HoldsAValueOrAnError) {
  Result<int> r = half(8);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(*r, 4);
  EXPECT_EQ(r.value(), 4);

  Result<int> e = half(3);
  EXPECT_FALSE(e.ok());
  EXPECT_FALSE(static_cast<bool>(e));
  EXPECT_EQ(e.error().message, "odd: 3");
}

TEST(Result, ArrowAndMoveOut) {
  Result<std::string> r = std::string("abc");
  EXPECT_EQ(r->size(), 3u);
  r->push_back('d');
  const std::string taken = std::move(*r);
  EXPECT_EQ(taken, "abcd");

  Result<std::unique_ptr<int>> p = std::make_unique<int>(7);  // move-only values work
  ASSERT_TRUE(p);
  EXPECT_EQ(**p, 7);
}

TEST(Result, CustomErrorType) {
  Result<std::string, Oops> r = Oops{42};
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, 42);
  r = std::string("fine");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "fine");
}

TEST(Result, VoidResult) {
  Result<void, Oops> fine;
  EXPECT_TRUE(fine.ok());
  Result<void, Oops> bad = Oops{1};
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, 1);
}

#ifndef NDEBUG
TEST(ResultDeathTest, MisuseAssertsInDebugBuilds) {
  EXPECT_DEATH((void)*half(3), "ok\\(\\)");
  EXPECT_DEATH((void)half(2).error(), "!ok\\(\\)");
  EXPECT_DEATH((void)Result<void>().error(), "!ok\\(\\)");
}
#else
TEST(Result, MisuseThrowsInReleaseBuilds) {
  EXPECT_THROW((void)*half(3), std::bad_variant_access);
  EXPECT_THROW((void)half(2).error(), std::bad_variant_access);
}
#endif

}  // namespace
}  // namespace skillbox
