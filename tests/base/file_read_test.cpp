// base/file_read.h: whole-file reads that are capped, never block on a FIFO without a writer, and take
// regular files only unless pipes are asked for.
#include "base/file_read.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "capabilities/store/store_test_util.h"

namespace skillbox::base {
namespace {

using testing::TempDir;
using testing::write_bytes;
using Clock = std::chrono::steady_clock;

TEST(FileRead, ReadsARegularFileWhole) {
  TempDir dir;
  const auto file = dir.path() / "a.txt";
  write_bytes(file, "hello\nworld\n");
  auto r = read_file(file.c_str(), {.max_bytes = 100});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "hello\nworld\n");
  write_bytes(file, "");
  r = read_file(file.c_str(), {.max_bytes = 100});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "");
}

TEST(FileRead, TheCapIsInclusiveAndNamedInTheError) {
  TempDir dir;
  const auto file = dir.path() / "a.txt";
  write_bytes(file, std::string(64, 'x'));
  auto exact = read_file(file.c_str(), {.max_bytes = 64});
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->size(), 64u);
  auto over = read_file(file.c_str(), {.max_bytes = 63});
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ReadErrc::too_large);
  EXPECT_EQ(over.error().max_bytes, 63u);
  EXPECT_EQ(over.error().message, "larger than 63 bytes");
}

TEST(FileRead, AFileWhoseSizeIsNotKnownIsStillCapped) {
  // /dev/zero is endless: refused as a device; a /proc file reports size 0 and is read to its end.
  auto zero = read_file("/dev/zero", {.max_bytes = 16});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, ReadErrc::not_regular);
  EXPECT_EQ(zero.error().file_type, static_cast<uint32_t>(S_IFCHR));
  auto proc = read_file("/proc/self/status", {.max_bytes = 8});
  ASSERT_FALSE(proc);
  EXPECT_EQ(proc.error().code, ReadErrc::too_large);
}

TEST(FileRead, MissingFilesAndFoldersFail) {
  TempDir dir;
  auto missing = read_file((dir.path() / "nope").c_str(), {.max_bytes = 10});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ReadErrc::open_failed);
  EXPECT_EQ(missing.error().sys_errno, ENOENT);
  EXPECT_EQ(missing.error().message, "cannot open: No such file or directory");
  auto folder = read_file(dir.path().c_str(), {.max_bytes = 10});
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().code, ReadErrc::not_regular);
  EXPECT_EQ(folder.error().file_type, static_cast<uint32_t>(S_IFDIR));
  EXPECT_EQ(folder.error().message, "not a regular file");
}

TEST(FileRead, AFifoIsRefusedAtOnceByDefault) {
  TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = Clock::now();
  auto r = read_file(fifo.c_str(), {.max_bytes = 10});  // no writer: a blocking open would hang here
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ReadErrc::not_regular);
  EXPECT_EQ(r.error().file_type, static_cast<uint32_t>(S_IFIFO));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
}

TEST(FileRead, ANamedFifoWithoutWriterFailsAfterTheBoundedWait) {
  TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = Clock::now();
  auto r = read_file(fifo.c_str(), {.max_bytes = 10, .allow_pipe = true, .fifo_wait_ms = 100});
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ReadErrc::no_writer);
  EXPECT_EQ(r.error().message, "a FIFO that no process writes to (nothing arrived within 100 ms)");
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_LT(waited, std::chrono::seconds(2));
}

TEST(FileRead, ANamedFifoWithAWriterIsReadToItsEnd) {
  TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the reader is already waiting
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "A=1\n", 4), 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a pause between writes is fine
    ASSERT_EQ(::write(fd, "B=2\n", 4), 4);
    ::close(fd);
  });
  auto r = read_file(fifo.c_str(), {.max_bytes = 100, .allow_pipe = true, .fifo_wait_ms = 5000});
  writer.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "A=1\nB=2\n");
}

TEST(FileRead, AnAnonymousPipeIsReadAndCapped) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(::write(fds[1], "abc", 3), 3);
  ::close(fds[1]);
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);  // what `<(cmd)` passes
  auto refused = read_file(path.c_str(), {.max_bytes = 10});
  EXPECT_FALSE(refused);
  auto r = read_file(path.c_str(), {.max_bytes = 10, .allow_pipe = true, .fifo_wait_ms = 0});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "abc");
  ::close(fds[0]);

  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(::write(fds[1], "0123456789!", 11), 11);
  ::close(fds[1]);
  auto big = read_fd(fds[0], 10);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, ReadErrc::too_large);
  ::close(fds[0]);
}

}  // namespace
}  // namespace skillbox::base
