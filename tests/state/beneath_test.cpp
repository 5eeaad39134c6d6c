#include "state/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "capabilities/fs/workspace.h"

namespace skillbox::state {
namespace {

namespace fs = std::filesystem;

class BeneathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "skillbox-beneath-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(dir());
    fd_.reset(open(dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_);
  }
  void TearDown() override {
    // std::filesystem::remove_all names every entry by its full path, which fails beyond PATH_MAX:
    // empty deep trees with the walk first.
    class Deleter : public TreeVisitor {
     public:
      int entry(int dir, const std::string& name, const struct stat& st, bool& descend) override {
        descend = S_ISDIR(st.st_mode);
        return descend ? 0 : unlinkat(dir, name.c_str(), 0);
      }
      int leave(int dir, const std::string& name, const struct stat&) override {
        return unlinkat(dir, name.c_str(), AT_REMOVEDIR);
      }
    } deleter;
    if (fd_) {
      EXPECT_EQ(walk_tree(fd_.get(), deleter), 0);
    }
    fd_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path dir() const { return root_ / "dir"; }

  // Builds a chain of `depth` nested directories named "x" below dir() with mkdirat/openat, holding
  // two descriptors at a time (the way a skill could build it with mkdir and rename).
  void build_chain(int depth) {
    base::UniqueFd current(dup(fd_.get()));
    for (int i = 0; i < depth; ++i) {
      ASSERT_EQ(mkdirat(current.get(), "x", 0700), 0);
      current.reset(openat(current.get(), "x", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      ASSERT_TRUE(current);
    }
    const int f = openat(current.get(), "bottom.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(f, 0);
    ASSERT_EQ(write(f, "12345", 5), 5);
    close(f);
  }

  fs::path root_;
  base::UniqueFd fd_;
};

// Lowers the soft descriptor limit to what is open now plus `headroom`, restoring it afterwards.
class FdLimit {
 public:
  explicit FdLimit(rlim_t headroom) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlim_t open_now = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
      (void)e;
      ++open_now;
    }
    rlimit lowered = saved_;
    lowered.rlim_cur = open_now + headroom;
    setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~FdLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

class Counter : public TreeVisitor {
 public:
  int dirs = 0;
  int files = 0;
  int leaves = 0;
  uint64_t bytes = 0;
  int entry(int, const std::string&, const struct stat& st, bool& descend) override {
    if (S_ISDIR(st.st_mode)) ++dirs;
    if (S_ISREG(st.st_mode)) {
      ++files;
      bytes += static_cast<uint64_t>(st.st_size);
    }
    descend = true;
    return 0;
  }
  int leave(int, const std::string&, const struct stat&) override {
    ++leaves;
    return 0;
  }
};

TEST_F(BeneathTest, OpenBeneathRefusesEscapesAndSymlinks) {
  std::ofstream(dir() / "f.txt") << "x";
  ASSERT_EQ(symlink("/etc", (dir() / "l1").c_str()), 0);
  ASSERT_EQ(symlink("f.txt", (dir() / "inner").c_str()), 0);  // even a link that stays inside
  base::UniqueFd out;
  EXPECT_EQ(open_beneath(fd_.get(), "f.txt", O_RDONLY, out), 0);
  EXPECT_TRUE(out);
  EXPECT_EQ(open_beneath(fd_.get(), "/etc/passwd", O_RDONLY, out), EXDEV);
  EXPECT_EQ(open_beneath(fd_.get(), "../dir/f.txt", O_RDONLY, out), EXDEV);
  EXPECT_EQ(open_beneath(fd_.get(), "l1/passwd", O_RDONLY, out), ELOOP);
  EXPECT_EQ(open_beneath(fd_.get(), "l1", O_PATH, out), ELOOP);  // O_PATH gets no symlink fd either
  EXPECT_EQ(open_beneath(fd_.get(), "inner", O_RDONLY, out), ELOOP);
  EXPECT_EQ(open_beneath(fd_.get(), "missing", O_RDONLY, out), ENOENT);
  EXPECT_EQ(open_beneath(fd_.get(), "f.txt/x", O_RDONLY, out), ENOTDIR);
  base::UniqueFd self;
  ASSERT_EQ(open_beneath(fd_.get(), "f.txt", O_RDONLY, self), 0);
  EXPECT_NE(fcntl(self.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST_F(BeneathTest, ListDirectoryReadsLargeDirectoriesCompletely) {
  std::vector<std::string> expected;
  for (int i = 0; i < 600; ++i) {
    std::string name = "entry-" + std::to_string(i) + std::string(200, 'n');
    std::ofstream(dir() / name) << i;
    expected.push_back(name);
  }
  std::vector<DirectoryEntry> got;
  ASSERT_EQ(list_directory(fd_.get(), got), 0);
  std::vector<std::string> names;
  for (const auto& e : got) {
    names.push_back(e.name);
    EXPECT_TRUE(e.type == DT_REG || e.type == DT_UNKNOWN);
  }
  std::sort(names.begin(), names.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);  // 600 entries of ~230 bytes span several 32 KiB getdents64 calls
}

TEST_F(BeneathTest, WalkVisitsTreesDeeperThanTheDescriptorLimit) {
  build_chain(400);  // far deeper than the descriptors we leave it
  FdLimit limit(8);
  Counter counter;
  EXPECT_EQ(walk_tree(fd_.get(), counter), 0);
  EXPECT_EQ(counter.dirs, 400);
  EXPECT_EQ(counter.leaves, 400);
  EXPECT_EQ(counter.files, 1);
  EXPECT_EQ(counter.bytes, 5u);
}

TEST_F(BeneathTest, WalkDoesNotFollowSymlinks) {
  fs::create_directories(root_ / "outside" / "deep");
  std::ofstream(root_ / "outside" / "deep" / "big") << std::string(1000, 'b');
  ASSERT_EQ(symlink((root_ / "outside").c_str(), (dir() / "link").c_str()), 0);
  fs::create_directories(dir() / "a");
  std::ofstream(dir() / "a" / "f") << "12";
  Counter counter;
  ASSERT_EQ(walk_tree(fd_.get(), counter), 0);
  EXPECT_EQ(counter.dirs, 1);
  EXPECT_EQ(counter.files, 1);
  EXPECT_EQ(counter.bytes, 2u);
}

// The workspace's scan (quota accounting) and recursive remove use the walk: both work on a tree a
// skill could build beyond PATH_MAX, with few descriptors to spare.
TEST_F(BeneathTest, WorkspaceCountsAndRemovesVeryDeepTrees) {
  const fs::path data = root_ / "data";
  fs::create_directories(data / "skills" / "deep");
  fd_.reset();
  fs::remove(dir());
  fs::create_directories(data / "skills" / "deep" / "workspace");
  fd_.reset(open((data / "skills" / "deep" / "workspace").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  build_chain(2100);  // "x/" * 2100: the bottom is 4200 bytes deep, beyond PATH_MAX

  FsPolicy policy;
  policy.mode = FsMode::readwrite;
  policy.max_files = 2102;  // 2100 directories + bottom.txt + one more
  FdLimit limit(16);
  capabilities::Workspace w(data, "deep", policy);
  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(w.handle(bus::FsWriteFileRequest{"top.txt", {1}, false})));
  auto refused = w.handle(bus::FsWriteFileRequest{"more.txt", {1}, false});
  ASSERT_TRUE(std::holds_alternative<bus::ErrorReply>(refused));
  EXPECT_EQ(std::get<bus::ErrorReply>(refused).code, bus::ErrorCode::QuotaExceeded);
  EXPECT_EQ(
      std::get<bus::ErrorReply>(refused).message,
      "writeFile \"more.txt\": the workspace would hold 2103 entries; permissions.fs.max_files is 2102");

  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(w.handle(bus::FsRemoveRequest{"x", true})));
  EXPECT_FALSE(fs::exists(data / "skills" / "deep" / "workspace" / "x"));
  EXPECT_TRUE(
      std::holds_alternative<bus::OkReply>(w.handle(bus::FsWriteFileRequest{"more.txt", {1}, false})));
}

}  // namespace
}  // namespace skillbox::state
