// base/errno_text.h: strerror's text without strerror's shared buffer.
#include "base/errno_text.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <thread>

namespace skillbox::base {
namespace {

TEST(ErrnoText, SaysWhatStrerrorSays) {
  EXPECT_EQ(errno_text(ENOENT), "No such file or directory");
  EXPECT_EQ(errno_text(EACCES), "Permission denied");
  EXPECT_EQ(errno_text(4242), "Unknown error 4242");
}

TEST(ErrnoText, TwoThreadsGetTheirOwnText) {
  std::string other;
  std::thread thread([&other] {
    for (int i = 0; i < 1000; ++i) other = errno_text(100000 + i);
  });
  std::string mine;
  for (int i = 0; i < 1000; ++i) mine = errno_text(200000 + i);
  thread.join();
  EXPECT_EQ(other, "Unknown error 100999");
  EXPECT_EQ(mine, "Unknown error 200999");
}

}  // namespace
}  // namespace skillbox::base
