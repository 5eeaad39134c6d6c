// base/unique_fd.h: one owner, closed exactly once.
#include "base/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>

namespace skillbox::base {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesOnDestruction) {
  int raw = -1;
  {
    UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    EXPECT_TRUE(static_cast<bool>(fd));
    raw = fd.get();
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, EmptyByDefaultAndForNegativeValues) {
  UniqueFd none;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.get(), -1);
  UniqueFd failed(-5);  // what a failed open() would hand over, whatever the value
  EXPECT_FALSE(failed);
  EXPECT_EQ(failed.get(), -1);
}

TEST(UniqueFd, MoveTransfersOwnership) {
  UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(b.get(), raw);
  UniqueFd c;
  c = std::move(b);
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(is_open(raw));
}

TEST(UniqueFd, ResetClosesTheOldDescriptorAndReleaseKeepsItOpen) {
  UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int first = fd.get();
  fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  EXPECT_NE(fd.get(), first);
  EXPECT_FALSE(is_open(first));
  const int second = fd.release();
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(is_open(second));
  ::close(second);
}

}  // namespace
}  // namespace skillbox::base
