// Descriptor hygiene: after close_fds_except only the kept descriptors remain, by close_range and by
// the /proc listing fallback, including descriptors far above the kept one and below it.
#include "isolation/fd_hygiene.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "isolation/child_process.h"

namespace skillbox::isolation::testing {
namespace {

// Opens inherited-looking descriptors around `sock`: a pipe, /dev/null at 0..2 (if free) and high
// numbers; returns false if setup failed.
bool open_clutter() {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return false;
  const int null_fd = open("/dev/null", O_RDONLY);  // no O_CLOEXEC: inherited across exec too
  if (null_fd < 0) return false;
  if (dup2(null_fd, 200) != 200 || dup2(null_fd, 900) != 900) return false;
  return true;
}

std::string fds_text(const std::vector<int>& fds) {
  std::string text;
  for (const int fd : fds) text += std::to_string(fd) + " ";
  return text;
}

using Closer = Status (*)(std::span<const int>);

void expect_only_socket_left(Closer closer) {
  const ChildOutcome outcome = run_in_child([closer](int sock) {
    if (!open_clutter()) return 2;
    const int keep[] = {sock};
    if (const Status status = closer(std::span<const int>(keep)); !status) {
      send_text(sock, describe(status.error()));
      return 3;
    }
    Result<std::vector<int>> left = list_open_fds();
    if (!left) return 4;
    send_text(sock, fds_text(left.value()) + "| " + std::to_string(sock));
    return 0;
  });
  ASSERT_TRUE(outcome.exited) << signal_name(outcome.signal);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.output;
  const size_t bar = outcome.output.find("| ");
  ASSERT_NE(bar, std::string::npos);
  EXPECT_EQ(outcome.output.substr(0, bar), outcome.output.substr(bar + 2) + " ");
}

TEST(IsolationFdHygiene, CloseRangeLeavesOnlyTheKeptDescriptor) {
  expect_only_socket_left(&close_fds_except);
}

TEST(IsolationFdHygiene, ProcListingFallbackLeavesOnlyTheKeptDescriptor) {
  expect_only_socket_left(&close_fds_except_by_listing);
}

TEST(IsolationFdHygiene, KeepsSeveralAndDuplicates) {
  const ChildOutcome outcome = run_in_child([](int sock) {
    if (!open_clutter()) return 2;
    const int keep[] = {900, sock, 900, 200};
    if (!close_fds_except(keep).ok()) return 3;
    Result<std::vector<int>> left = list_open_fds();
    if (!left) return 4;
    std::vector<int> expected{sock, 200, 900};
    std::sort(expected.begin(), expected.end());
    return left.value() == expected ? 0 : 5;
  });
  ASSERT_TRUE(outcome.exited);
  EXPECT_EQ(outcome.exit_code, 0);
}

TEST(IsolationFdHygiene, InvalidKeepSetClosesNothing) {
  // Validated before anything is closed, so this can run in the test process itself.
  const int negative[] = {-1};
  const Status bad = close_fds_except(negative);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().step, Step::close_fds);
  EXPECT_EQ(bad.error().sys_errno, EINVAL);
  std::array<int, kMaxKeptFds + 1> too_many{};
  EXPECT_FALSE(close_fds_except(too_many).ok());
  EXPECT_FALSE(close_fds_except_by_listing(negative).ok());
  EXPECT_GE(fcntl(0, F_GETFD), 0) << "stdin must still be open";
}

TEST(IsolationFdHygiene, ListsAnotherProcessesDescriptors) {
  Result<std::vector<int>> mine = list_open_fds(getpid());
  ASSERT_TRUE(mine.ok());
  Result<std::vector<int>> self = list_open_fds();
  ASSERT_TRUE(self.ok());
  EXPECT_FALSE(mine.value().empty());
}

}  // namespace
}  // namespace skillbox::isolation::testing
