// Tests of the workspace capability with the file system checked from the test. The Workspace section
// of docs/security.md is covered here at the capability level (and again through JS in
// tests/bindings/fs_test.cpp).
//
// These tests run as root on CI: a regression that followed a symlink could damage the host. Read
// attempts therefore go through symlinks to the real /etc; mutation attempts go through symlinks of
// the same shapes that point at decoy files in the test's own temporary directory.
#include "capabilities/fs/workspace.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/quote.h"
#include "base/unique_fd.h"
#include "capabilities/fs/workspace_path.h"

namespace skillbox::capabilities {
namespace {

namespace fs = std::filesystem;
using bus::ErrorCode;
using bus::ErrorReply;
using bus::Reply;
using namespace std::string_literals;

bus::Bytes bytes_of(std::string_view s) {
  return bus::Bytes(s.begin(), s.end());
}

std::string read_host(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_host(const fs::path& p, std::string_view content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

bool present(const fs::path& p) {
  struct stat st {};
  return lstat(p.c_str(), &st) == 0;
}

// Every entry below `dir`, relative, sorted: "what is on disk" in one comparable value.
std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    out.push_back(fs::relative(it->path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "skillbox-fs-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  fs::path data() const { return root_ / "data"; }
  fs::path ws() const { return data() / "skills" / "demo" / "workspace"; }
  fs::path outside() const { return root_ / "outside"; }

  /// Creates the workspace from the host side, so a test can plant entries before the first request.
  void prepare() { fs::create_directories(ws()); }

  std::unique_ptr<Workspace> open(FsMode mode = FsMode::readwrite, FsPolicy p = FsPolicy{}) {
    p.mode = mode;
    return std::make_unique<Workspace>(data(), "demo", p);
  }

  // Asserts `reply` is an error with `code` whose message contains `fragment` and never a host path.
  ::testing::AssertionResult is_error(const Reply& reply, ErrorCode code,
                                      std::string_view fragment = "") const {
    const auto* e = std::get_if<ErrorReply>(&reply);
    if (!e) return ::testing::AssertionFailure() << "not an error (reply index " << reply.index() << ")";
    if (e->code != code) {
      return ::testing::AssertionFailure() << "error " << bus::error_name(e->code) << " (expected "
                                           << bus::error_name(code) << "): " << e->message;
    }
    if (e->message.find(fragment) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << fragment << "\": " << e->message;
    }
    if (e->message.find(root_.string()) != std::string::npos ||
        e->message.find("/skills/") != std::string::npos) {
      return ::testing::AssertionFailure() << "message shows a host path: " << e->message;
    }
    return ::testing::AssertionSuccess();
  }

  static ::testing::AssertionResult is_ok(const Reply& reply) {
    if (std::holds_alternative<bus::OkReply>(reply)) return ::testing::AssertionSuccess();
    if (const auto* e = std::get_if<ErrorReply>(&reply)) {
      return ::testing::AssertionFailure() << bus::error_name(e->code) << ": " << e->message;
    }
    return ::testing::AssertionFailure() << "reply index " << reply.index();
  }

  fs::path root_;
};

// Short forms of the nine requests.
Reply read(Workspace& w, std::string p) {
  return w.handle(bus::FsReadFileRequest{std::move(p), bus::FsEncoding::binary});
}
Reply write(Workspace& w, std::string p, std::string_view d) {
  return w.handle(bus::FsWriteFileRequest{std::move(p), bytes_of(d), false});
}
Reply append(Workspace& w, std::string p, std::string_view d) {
  return w.handle(bus::FsWriteFileRequest{std::move(p), bytes_of(d), true});
}
Reply readdir(Workspace& w, std::string p) {
  return w.handle(bus::FsReaddirRequest{std::move(p)});
}
Reply stat_of(Workspace& w, std::string p) {
  return w.handle(bus::FsStatRequest{std::move(p)});
}
Reply exists(Workspace& w, std::string p) {
  return w.handle(bus::FsExistsRequest{std::move(p)});
}
Reply mkdir(Workspace& w, std::string p, bool recursive = false) {
  return w.handle(bus::FsMkdirRequest{std::move(p), recursive});
}
Reply remove(Workspace& w, std::string p, bool recursive = false) {
  return w.handle(bus::FsRemoveRequest{std::move(p), recursive});
}
Reply rename(Workspace& w, std::string a, std::string b) {
  return w.handle(bus::FsRenameRequest{std::move(a), std::move(b)});
}

std::string text(const Reply& r) {
  const auto* b = std::get_if<bus::BytesReply>(&r);
  if (!b) {
    const auto* e = std::get_if<ErrorReply>(&r);
    return "<" +
           (e ? std::string(bus::error_name(e->code)) + ": " + e->message
              : "reply " + std::to_string(r.index())) +
           ">";
  }
  return std::string(b->data.begin(), b->data.end());
}

std::vector<std::pair<std::string, bus::FsEntryType>> listing(const Reply& r) {
  std::vector<std::pair<std::string, bus::FsEntryType>> out;
  if (const auto* l = std::get_if<bus::FsReaddirReply>(&r)) {
    for (const auto& e : l->entries) out.emplace_back(e.name, e.type);
  }
  return out;
}

bool exists_value(const Reply& r) {
  const auto* b = std::get_if<bus::BoolReply>(&r);
  EXPECT_NE(b, nullptr);
  return b && b->value;
}

// All nine functions, each applied to one path (rename twice: the path as source and as target).
struct Function {
  const char* name;
  bool mutates;
  std::function<Reply(Workspace&, const std::string&)> call;
};
std::vector<Function> every_function() {
  return {
      {"readFile", false, [](Workspace& w, const std::string& p) { return read(w, p); }},
      {"writeFile", true, [](Workspace& w, const std::string& p) { return write(w, p, "x"); }},
      {"appendFile", true, [](Workspace& w, const std::string& p) { return append(w, p, "x"); }},
      {"readdir", false, [](Workspace& w, const std::string& p) { return readdir(w, p); }},
      {"stat", false, [](Workspace& w, const std::string& p) { return stat_of(w, p); }},
      {"exists", false, [](Workspace& w, const std::string& p) { return exists(w, p); }},
      {"mkdir", true, [](Workspace& w, const std::string& p) { return mkdir(w, p, false); }},
      {"mkdir recursive", true, [](Workspace& w, const std::string& p) { return mkdir(w, p, true); }},
      {"remove", true, [](Workspace& w, const std::string& p) { return remove(w, p, false); }},
      {"remove recursive", true, [](Workspace& w, const std::string& p) { return remove(w, p, true); }},
      {"rename from", true, [](Workspace& w, const std::string& p) { return rename(w, p, "renamed.txt"); }},
      {"rename to", true, [](Workspace& w, const std::string& p) { return rename(w, "a.txt", p); }},
  };
}

// ---- creation and modes -------------------------------------------------------------------------------

TEST_F(WorkspaceTest, IsCreated0700WithItsParentsOnFirstUse) {
  auto w = open();
  EXPECT_FALSE(present(data())) << "construction must not touch the disk";
  ASSERT_TRUE(exists_value(exists(*w, ".")));
  EXPECT_EQ(mode_of(data()), 0700u);
  EXPECT_EQ(mode_of(data() / "skills"), 0700u);
  EXPECT_EQ(mode_of(data() / "skills" / "demo"), 0700u);
  EXPECT_EQ(mode_of(ws()), 0700u);
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "hello")));
  EXPECT_EQ(mode_of(ws() / "a.txt"), 0600u);
  ASSERT_TRUE(is_ok(mkdir(*w, "d")));
  EXPECT_EQ(mode_of(ws() / "d"), 0700u);
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"a.txt", "d"}));
}

TEST_F(WorkspaceTest, ModeNoneRefusesEverythingWithoutTouchingTheDisk) {
  auto w = open(FsMode::none);
  for (const Function& f : every_function()) {
    EXPECT_TRUE(is_error(f.call(*w, "a.txt"), ErrorCode::PermissionDenied, "permissions.fs.mode is \"none\""))
        << f.name;
  }
  EXPECT_TRUE(is_error(read(*w, "a.txt"), ErrorCode::PermissionDenied,
                       "permissions.fs.mode is \"none\"; readFile needs \"read\" or \"readwrite\""));
  EXPECT_FALSE(present(data()));
}

TEST_F(WorkspaceTest, ReadOnlyRefusesEveryMutationAndChangesNothing) {
  prepare();
  write_host(ws() / "a.txt", "original");
  fs::create_directory(ws() / "d");
  const auto before = tree(ws());
  auto w = open(FsMode::read);
  for (const Function& f : every_function()) {
    if (!f.mutates) continue;
    for (const char* p : {"a.txt", "d", "new.txt"}) {
      EXPECT_TRUE(is_error(f.call(*w, p), ErrorCode::PermissionDenied, "permissions.fs.mode is \"read\"; "))
          << f.name;
    }
  }
  EXPECT_TRUE(is_error(write(*w, "a.txt", "x"), ErrorCode::PermissionDenied,
                       "permissions.fs.mode is \"read\"; writeFile needs \"write\" or \"readwrite\""));
  EXPECT_EQ(tree(ws()), before);
  EXPECT_EQ(read_host(ws() / "a.txt"), "original");
  // Reads work.
  EXPECT_EQ(text(read(*w, "a.txt")), "original");
  EXPECT_TRUE(exists_value(exists(*w, "d")));
}

TEST_F(WorkspaceTest, WriteOnlyRefusesReadListStatAndExists) {
  prepare();
  write_host(ws() / "a.txt", "secret");
  auto w = open(FsMode::write);
  for (const Function& f : every_function()) {
    if (f.mutates) continue;
    EXPECT_TRUE(
        is_error(f.call(*w, "a.txt"), ErrorCode::PermissionDenied, "permissions.fs.mode is \"write\"; "))
        << f.name;
  }
  EXPECT_TRUE(is_error(exists(*w, "a.txt"), ErrorCode::PermissionDenied,
                       "permissions.fs.mode is \"write\"; exists needs \"read\" or \"readwrite\""));
  // Mutations work.
  EXPECT_TRUE(is_ok(write(*w, "b.txt", "new")));
  EXPECT_EQ(read_host(ws() / "b.txt"), "new");
}

// ---- the nine functions -------------------------------------------------------------------------------

TEST_F(WorkspaceTest, WriteAndReadBinaryTextEmptyAndLargeFiles) {
  auto w = open();
  const std::string binary = "\0\x01\xff\xfe\n\r\0end"s;
  ASSERT_TRUE(is_ok(write(*w, "bin.dat", binary)));
  EXPECT_EQ(read_host(ws() / "bin.dat"), binary);
  EXPECT_EQ(text(read(*w, "bin.dat")), binary);

  ASSERT_TRUE(is_ok(write(*w, "empty", "")));
  EXPECT_TRUE(present(ws() / "empty"));
  EXPECT_EQ(text(read(*w, "empty")), "");

  std::string large(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_TRUE(is_ok(write(*w, "large", large)));
  EXPECT_EQ(read_host(ws() / "large"), large);
  EXPECT_EQ(text(read(*w, "large")), large);

  ASSERT_TRUE(is_ok(write(*w, "bin.dat", "replaced")));
  EXPECT_EQ(read_host(ws() / "bin.dat"), "replaced");
  ASSERT_TRUE(is_ok(write(*w, "\xc3\xa4 \xf0\x9f\x93\x9d.txt", "utf8 name")));
  EXPECT_EQ(read_host(ws() / "\xc3\xa4 \xf0\x9f\x93\x9d.txt"), "utf8 name");
  ASSERT_TRUE(is_ok(write(*w, std::string(255, 'n'), "longest name")));
  EXPECT_EQ(read_host(ws() / std::string(255, 'n')), "longest name");
}

TEST_F(WorkspaceTest, AppendCreatesThenExtends) {
  auto w = open();
  ASSERT_TRUE(is_ok(append(*w, "log.txt", "one\n")));
  ASSERT_TRUE(is_ok(append(*w, "log.txt", "two\n")));
  ASSERT_TRUE(is_ok(append(*w, "log.txt", "")));
  EXPECT_EQ(read_host(ws() / "log.txt"), "one\ntwo\n");
  EXPECT_EQ(text(read(*w, "log.txt")), "one\ntwo\n");
}

TEST_F(WorkspaceTest, WritesNeedAnExistingParentDirectory) {
  auto w = open();
  EXPECT_TRUE(is_error(write(*w, "missing/a.txt", "x"), ErrorCode::NotFound,
                       "writeFile \"missing/a.txt\": the parent directory does not exist"));
  ASSERT_TRUE(is_ok(write(*w, "file", "x")));
  EXPECT_TRUE(is_error(write(*w, "file/a.txt", "x"), ErrorCode::NotFound, "not a directory"));
  EXPECT_TRUE(is_error(write(*w, ".", "x"), ErrorCode::InvalidArgument, "is a directory"));
  ASSERT_TRUE(is_ok(mkdir(*w, "d")));
  EXPECT_TRUE(is_error(write(*w, "d", "x"), ErrorCode::InvalidArgument, "writeFile \"d\": is a directory"));
  EXPECT_TRUE(is_error(append(*w, "d", "x"), ErrorCode::InvalidArgument, "appendFile \"d\": is a directory"));
  EXPECT_TRUE(fs::is_directory(ws() / "d"));
}

TEST_F(WorkspaceTest, ReadFileErrors) {
  auto w = open();
  EXPECT_TRUE(is_error(read(*w, "nope.txt"), ErrorCode::NotFound,
                       "readFile \"nope.txt\": no such file or directory"));
  ASSERT_TRUE(is_ok(mkdir(*w, "d")));
  EXPECT_TRUE(is_error(read(*w, "d"), ErrorCode::InvalidArgument, "is a directory"));
  EXPECT_TRUE(is_error(read(*w, "."), ErrorCode::InvalidArgument, "is a directory"));
  ASSERT_TRUE(is_ok(write(*w, "f", "x")));
  EXPECT_TRUE(is_error(read(*w, "f/g"), ErrorCode::NotFound));
}

TEST_F(WorkspaceTest, ReaddirIsSortedTypedAndHidesHostEntries) {
  prepare();
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "b.txt", "b")));
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "a")));
  ASSERT_TRUE(is_ok(mkdir(*w, "c")));
  ASSERT_TRUE(is_ok(write(*w, "C:\\x", "backslash")));
  ASSERT_EQ(symlink("/etc", (ws() / "link").c_str()), 0);
  ASSERT_EQ(mkfifo((ws() / "fifo").c_str(), 0600), 0);
  write_host(ws() / ".skillbox-tmp-0000000000000001", "leftover");
  write_host(ws() / "bad\xff", "not utf-8");
  using T = bus::FsEntryType;
  EXPECT_EQ(listing(readdir(*w, ".")), (std::vector<std::pair<std::string, T>>{{"C:\\x", T::file},
                                                                               {"a.txt", T::file},
                                                                               {"b.txt", T::file},
                                                                               {"c", T::directory},
                                                                               {"fifo", T::other},
                                                                               {"link", T::other}}));
  EXPECT_EQ(listing(readdir(*w, "c")).size(), 0u);
  EXPECT_TRUE(std::holds_alternative<bus::FsReaddirReply>(readdir(*w, "c/")));
  EXPECT_TRUE(
      is_error(readdir(*w, "a.txt"), ErrorCode::InvalidArgument, "readdir \"a.txt\": not a directory"));
  EXPECT_TRUE(is_error(readdir(*w, "fifo"), ErrorCode::InvalidArgument, "not a directory"));
  EXPECT_TRUE(is_error(readdir(*w, "nope"), ErrorCode::NotFound));
}

TEST_F(WorkspaceTest, StatReportsTypeSizeAndMtime) {
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "12345")));
  ASSERT_TRUE(is_ok(mkdir(*w, "d")));
  Reply r = stat_of(*w, "a.txt");
  ASSERT_TRUE(std::holds_alternative<bus::FsStatReply>(r)) << text(r);
  const auto& s = std::get<bus::FsStatReply>(r);
  EXPECT_EQ(s.type, bus::FsEntryType::file);
  EXPECT_EQ(s.size, 5u);
  struct stat st {};
  ASSERT_EQ(::stat((ws() / "a.txt").c_str(), &st), 0);
  EXPECT_DOUBLE_EQ(s.mtime_ms, static_cast<double>(st.st_mtim.tv_sec) * 1000.0 + st.st_mtim.tv_nsec / 1e6);
  r = stat_of(*w, "d");
  ASSERT_TRUE(std::holds_alternative<bus::FsStatReply>(r));
  EXPECT_EQ(std::get<bus::FsStatReply>(r).type, bus::FsEntryType::directory);
  EXPECT_EQ(std::get<bus::FsStatReply>(r).size, 0u);
  EXPECT_TRUE(std::holds_alternative<bus::FsStatReply>(stat_of(*w, ".")));
  EXPECT_TRUE(is_error(stat_of(*w, "nope"), ErrorCode::NotFound));
}

TEST_F(WorkspaceTest, ExistsIsTrueOrFalse) {
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "x")));
  EXPECT_TRUE(exists_value(exists(*w, "a.txt")));
  EXPECT_TRUE(exists_value(exists(*w, ".")));
  EXPECT_FALSE(exists_value(exists(*w, "b.txt")));
  EXPECT_FALSE(exists_value(exists(*w, "a.txt/b")));  // through a file: not there
  EXPECT_FALSE(exists_value(exists(*w, "x/y/z")));
}

TEST_F(WorkspaceTest, Mkdir) {
  auto w = open();
  EXPECT_TRUE(is_error(mkdir(*w, "a/b"), ErrorCode::NotFound, "the parent directory does not exist"));
  ASSERT_TRUE(is_ok(mkdir(*w, "a")));
  EXPECT_TRUE(is_error(mkdir(*w, "a"), ErrorCode::AlreadyExists, "mkdir \"a\": already exists"));
  EXPECT_TRUE(is_error(mkdir(*w, "."), ErrorCode::AlreadyExists));
  EXPECT_TRUE(is_ok(mkdir(*w, ".", true)));
  ASSERT_TRUE(is_ok(mkdir(*w, "a/b/c/d", true)));
  EXPECT_TRUE(fs::is_directory(ws() / "a/b/c/d"));
  EXPECT_EQ(mode_of(ws() / "a/b/c"), 0700u);
  EXPECT_TRUE(is_ok(mkdir(*w, "a/b/c/d", true)));  // already there: fine
  ASSERT_TRUE(is_ok(write(*w, "f", "x")));
  EXPECT_TRUE(is_error(mkdir(*w, "f", true), ErrorCode::AlreadyExists, "is not a directory"));
  EXPECT_TRUE(is_error(mkdir(*w, "f/g", true), ErrorCode::NotFound, "not a directory"));
  EXPECT_TRUE(is_error(mkdir(*w, "f"), ErrorCode::AlreadyExists));
  EXPECT_EQ(read_host(ws() / "f"), "x");
}

TEST_F(WorkspaceTest, Remove) {
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "x")));
  ASSERT_TRUE(is_ok(mkdir(*w, "empty")));
  ASSERT_TRUE(is_ok(mkdir(*w, "full/sub/deeper", true)));
  ASSERT_TRUE(is_ok(write(*w, "full/sub/f.txt", "x")));
  ASSERT_TRUE(is_ok(write(*w, "full/g.txt", "x")));

  EXPECT_TRUE(is_ok(remove(*w, "a.txt")));
  EXPECT_FALSE(present(ws() / "a.txt"));
  EXPECT_TRUE(is_error(remove(*w, "a.txt"), ErrorCode::NotFound));
  EXPECT_TRUE(is_ok(remove(*w, "empty")));
  EXPECT_FALSE(present(ws() / "empty"));
  EXPECT_TRUE(is_error(remove(*w, "full"), ErrorCode::NotEmpty, "pass {recursive: true}"));
  EXPECT_TRUE(fs::exists(ws() / "full/sub/f.txt"));
  EXPECT_TRUE(is_ok(remove(*w, "full", true)));
  EXPECT_FALSE(present(ws() / "full"));
  EXPECT_TRUE(is_error(remove(*w, ".", true), ErrorCode::InvalidArgument, "root cannot be removed"));
  EXPECT_TRUE(is_error(remove(*w, "a/..", true), ErrorCode::InvalidArgument, "root cannot be removed"));
  EXPECT_TRUE(fs::is_directory(ws()));
  EXPECT_EQ(tree(ws()), std::vector<std::string>{});
}

TEST_F(WorkspaceTest, Rename) {
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "A")));
  ASSERT_TRUE(is_ok(write(*w, "b.txt", "B")));
  ASSERT_TRUE(is_ok(mkdir(*w, "d")));
  ASSERT_TRUE(is_ok(mkdir(*w, "e")));
  ASSERT_TRUE(is_ok(mkdir(*w, "full")));
  ASSERT_TRUE(is_ok(write(*w, "full/x", "x")));

  EXPECT_TRUE(is_ok(rename(*w, "a.txt", "d/moved.txt")));
  EXPECT_EQ(read_host(ws() / "d/moved.txt"), "A");
  EXPECT_FALSE(present(ws() / "a.txt"));
  EXPECT_TRUE(is_ok(rename(*w, "d/moved.txt", "b.txt")));  // replaces a file
  EXPECT_EQ(read_host(ws() / "b.txt"), "A");
  EXPECT_TRUE(is_ok(rename(*w, "b.txt", "b.txt")));  // itself: no-op
  EXPECT_EQ(read_host(ws() / "b.txt"), "A");

  EXPECT_TRUE(is_error(rename(*w, "b.txt", "d"), ErrorCode::InvalidArgument, "rename \"d\": is a directory"));
  EXPECT_TRUE(is_error(rename(*w, "d", "b.txt"), ErrorCode::InvalidArgument, "is not a directory"));
  EXPECT_TRUE(is_error(rename(*w, "d", "full"), ErrorCode::NotEmpty));
  EXPECT_TRUE(is_error(rename(*w, "d", "d/inner"), ErrorCode::InvalidArgument, "into itself"));
  EXPECT_TRUE(is_error(rename(*w, "nope", "x"), ErrorCode::NotFound, "rename \"nope\""));
  EXPECT_TRUE(is_error(rename(*w, "b.txt", "nope/x"), ErrorCode::NotFound, "rename \"nope/x\""));
  EXPECT_TRUE(is_error(rename(*w, ".", "x"), ErrorCode::InvalidArgument));
  EXPECT_TRUE(is_error(rename(*w, "b.txt", "."), ErrorCode::InvalidArgument));
  EXPECT_TRUE(is_ok(rename(*w, "d", "e")));  // a directory replaces an empty directory
  EXPECT_TRUE(fs::is_directory(ws() / "e"));
  EXPECT_FALSE(present(ws() / "d"));
  EXPECT_EQ(read_host(ws() / "b.txt"), "A");
  EXPECT_EQ(read_host(ws() / "full/x"), "x");
}

// ---- paths --------------------------------------------------------------------------------------------

TEST_F(WorkspaceTest, PathsAreNormalisedAndStayInside) {
  auto w = open();
  ASSERT_TRUE(is_ok(mkdir(*w, "a/b", true)));
  ASSERT_TRUE(is_ok(write(*w, "./a//b/./c.txt", "c")));
  EXPECT_EQ(read_host(ws() / "a/b/c.txt"), "c");
  EXPECT_EQ(text(read(*w, "a/x/../b/c.txt")), "c");  // lexical: "x" need not exist
  // On Linux a backslash is an ordinary character: these are plain names in the workspace root.
  ASSERT_TRUE(is_ok(write(*w, "..\\..\\x", "1")));
  ASSERT_TRUE(is_ok(write(*w, "C:\\x", "2")));
  EXPECT_EQ(read_host(ws() / "..\\..\\x"), "1");
  EXPECT_EQ(read_host(ws() / "C:\\x"), "2");
  EXPECT_TRUE(is_error(write(*w, "~/x", "3"), ErrorCode::NotFound));  // no directory named "~"
  EXPECT_FALSE(present(root_ / "x"));
}

TEST_F(WorkspaceTest, MalformedPathsAreInvalidArgumentForEveryFunction) {
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "A")));
  const std::string cases[] = {
      "",
      "\xff",
      "a\xed\xa0\x80",
      std::string(256, 'n'),
      std::string(4097, 'a'),
      ".skillbox-tmp-0000000000000001",
  };
  for (const Function& f : every_function()) {
    for (const std::string& p : cases) {
      EXPECT_TRUE(is_error(f.call(*w, p), ErrorCode::InvalidArgument))
          << f.name << " " << base::quote(p, kMaxQuotedPathBytes);
    }
  }
  EXPECT_EQ(read_host(ws() / "a.txt"), "A");
}

// ---- docs/security.md: Workspace ---------------------------------------------------------------------

class WorkspaceSecurityTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    prepare();
    write_host(ws() / "a.txt", "inside");
    fs::create_directories(ws() / "sub");
    // The three symlinks of the case, to the real /etc (used for read attempts only).
    ASSERT_EQ(symlink("/etc", (ws() / "l1").c_str()), 0);
    ASSERT_EQ(symlink("../../", (ws() / "l2").c_str()), 0);
    ASSERT_EQ(symlink("/etc/passwd", (ws() / "l3").c_str()), 0);
    // Decoys of the same shapes for mutation attempts (see the top of this file).
    fs::create_directories(outside());
    write_host(outside() / "passwd", "root:x:0:0");
    ASSERT_EQ(symlink(outside().c_str(), (ws() / "m1").c_str()), 0);
    ASSERT_EQ(symlink("../../../../outside", (ws() / "m2").c_str()), 0);
    ASSERT_EQ(symlink((outside() / "passwd").c_str(), (ws() / "m3").c_str()), 0);
    ASSERT_EQ(symlink("../..", (ws() / "sub" / "up").c_str()), 0);
    ASSERT_EQ(read_host(ws() / "m2" / "passwd"), "root:x:0:0");  // the decoy resolves where intended
    passwd_before_ = read_host("/etc/passwd");
    outside_before_ = tree(outside());
    workspace_before_ = tree(ws());
  }

  // Nothing outside the workspace changed; the workspace lost or gained nothing.
  void expect_untouched() {
    EXPECT_EQ(read_host("/etc/passwd"), passwd_before_);
    EXPECT_EQ(tree(outside()), outside_before_);
    EXPECT_EQ(read_host(outside() / "passwd"), "root:x:0:0");
    EXPECT_EQ(tree(ws()), workspace_before_);
    EXPECT_EQ(read_host(ws() / "a.txt"), "inside");
    for (const char* link : {"l1", "l2", "l3", "m1", "m2", "m3"}) {
      EXPECT_TRUE(fs::is_symlink(ws() / link)) << link;
    }
  }

  // The next invocation in the same process behaves normally.
  void expect_next_invocation_works() {
    auto next = open();
    EXPECT_TRUE(is_ok(write(*next, "after.txt", "fine")));
    EXPECT_EQ(text(read(*next, "after.txt")), "fine");
    EXPECT_TRUE(is_ok(remove(*next, "after.txt")));
  }

  std::string passwd_before_;
  std::vector<std::string> outside_before_;
  std::vector<std::string> workspace_before_;
};

TEST_F(WorkspaceSecurityTest, EveryAccessThroughASymlinkIsPermissionDenied) {
  auto w = open();
  for (const Function& f : every_function()) {
    const std::vector<std::string> paths =
        f.mutates ? std::vector<std::string>{"m1",     "m1/passwd", "m1/new", "m2",           "m2/passwd",
                                             "m2/new", "m3",        "sub/up", "sub/up/a.txt", "sub/up/new"}
                  : std::vector<std::string>{"l1", "l1/passwd", "l2",          "l2/etc/passwd",
                                             "l3", "sub/up",    "sub/up/a.txt"};
    for (const std::string& p : paths) {
      EXPECT_TRUE(is_error(f.call(*w, p), ErrorCode::PermissionDenied, "symbolic link"))
          << f.name << " " << p;
    }
  }
  // Writing "through" the real ones must not even create a file in /etc.
  EXPECT_TRUE(is_error(write(*w, "l1/skillbox-must-not-exist", "x"), ErrorCode::PermissionDenied));
  EXPECT_TRUE(is_error(mkdir(*w, "l1/skillbox-must-not-exist", true), ErrorCode::PermissionDenied));
  EXPECT_FALSE(present("/etc/skillbox-must-not-exist"));
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(WorkspaceSecurityTest, TraversalSpellingsNeverLeaveTheWorkspace) {
  auto w = open();
  for (const Function& f : every_function()) {
    for (const char* p : {"../x", "a/../../x", "/etc/passwd", "//etc/passwd", "////etc/passwd", "./../x",
                          "a/./..//../x", "../../../../outside/passwd", "sub/../../a.txt"}) {
      EXPECT_TRUE(is_error(f.call(*w, p), ErrorCode::PermissionDenied)) << f.name << " " << p;
    }
  }
  expect_untouched();
  // The spellings that are ordinary names stay inside: absent here, created here.
  for (const char* p : {"..\\..\\x", "C:\\x", "~/x"}) {
    EXPECT_TRUE(is_error(read(*w, p), ErrorCode::NotFound)) << p;
  }
  EXPECT_TRUE(is_ok(write(*w, "..\\..\\x", "ok")));
  EXPECT_TRUE(present(ws() / "..\\..\\x"));
  EXPECT_FALSE(present(root_ / "x"));
  EXPECT_TRUE(is_ok(remove(*w, "..\\..\\x")));
  expect_next_invocation_works();
}

TEST_F(WorkspaceSecurityTest, EveryFunctionRefusesEtcPasswdAndRenameChecksBothPaths) {
  auto w = open();
  for (const Function& f : every_function()) {
    EXPECT_TRUE(
        is_error(f.call(*w, "/etc/passwd"), ErrorCode::PermissionDenied, "\"/etc/passwd\": absolute paths"))
        << f.name;
  }
  EXPECT_TRUE(is_error(rename(*w, "a.txt", "../a.txt"), ErrorCode::PermissionDenied, "rename \"../a.txt\""));
  EXPECT_TRUE(is_error(rename(*w, "../a.txt", "a.txt"), ErrorCode::PermissionDenied, "rename \"../a.txt\""));
  EXPECT_TRUE(is_error(rename(*w, "a.txt", "/tmp/a.txt"), ErrorCode::PermissionDenied));
  EXPECT_TRUE(is_error(rename(*w, "a.txt", "m1/a.txt"), ErrorCode::PermissionDenied));
  EXPECT_TRUE(is_error(rename(*w, "a.txt", "m3"), ErrorCode::PermissionDenied));
  EXPECT_FALSE(present(data() / "skills" / "demo" / "a.txt"));
  EXPECT_FALSE(present("/tmp/a.txt"));
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(WorkspaceSecurityTest, EmbeddedNulIsRejected) {
  auto w = open();
  for (const Function& f : every_function()) {
    EXPECT_TRUE(is_error(f.call(*w, "notes.txt\0/../../../etc/passwd"s), ErrorCode::InvalidArgument, "NUL"))
        << f.name;
    EXPECT_TRUE(is_error(f.call(*w, "a.txt\0"s), ErrorCode::InvalidArgument, "NUL")) << f.name;
  }
  EXPECT_TRUE(is_error(rename(*w, "a.txt", "b\0c"s), ErrorCode::InvalidArgument, "\"b\\x00c\""));
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(WorkspaceSecurityTest, ReadOnlyAndWriteOnlyHoldForHostilePathsToo) {
  auto ro = open(FsMode::read);
  auto wo = open(FsMode::write);
  for (const Function& f : every_function()) {
    Workspace& w = f.mutates ? *ro : *wo;
    for (const std::string& p : {"a.txt"s, "/etc/passwd"s, "../x"s, "l1/passwd"s, "notes.txt\0x"s}) {
      EXPECT_TRUE(is_error(f.call(w, p), ErrorCode::PermissionDenied, "permissions.fs.mode")) << f.name;
    }
  }
  expect_untouched();
  expect_next_invocation_works();
}

TEST_F(WorkspaceSecurityTest, SpecialFilesAreNeverOpenedForReading) {
  ASSERT_EQ(mkfifo((ws() / "fifo").c_str(), 0600), 0);
  auto w = open();
  // A FIFO with no writer would block an open for reading forever; it must be refused at once.
  EXPECT_TRUE(is_error(read(*w, "fifo"), ErrorCode::PermissionDenied, "not a regular file"));
  EXPECT_TRUE(is_error(stat_of(*w, "fifo"), ErrorCode::PermissionDenied, "not a regular file or directory"));
  EXPECT_TRUE(is_error(write(*w, "fifo", "x"), ErrorCode::PermissionDenied, "not a regular file"));
  EXPECT_TRUE(is_error(append(*w, "fifo", "x"), ErrorCode::PermissionDenied, "not a regular file"));
  EXPECT_TRUE(exists_value(exists(*w, "fifo")));
  EXPECT_TRUE(is_ok(remove(*w, "fifo")));
  EXPECT_FALSE(present(ws() / "fifo"));
  expect_next_invocation_works();
}

TEST_F(WorkspaceSecurityTest, RecursiveRemoveDeletesLinksNotTheirTargets) {
  ASSERT_EQ(symlink(outside().c_str(), (ws() / "sub" / "to-outside").c_str()), 0);
  ASSERT_EQ(symlink((outside() / "passwd").c_str(), (ws() / "sub" / "to-file").c_str()), 0);
  auto w = open();
  ASSERT_TRUE(is_ok(remove(*w, "sub", true)));
  EXPECT_FALSE(present(ws() / "sub"));
  EXPECT_EQ(tree(outside()), outside_before_);
  EXPECT_EQ(read_host(outside() / "passwd"), "root:x:0:0");
  expect_next_invocation_works();
}

// Symlink swap race: another process keeps replacing a directory of the workspace with a symlink to
// a directory outside. Resolution and open happen in one openat2 call, so no read ever returns the
// outside file's content and no write ever lands outside.
TEST_F(WorkspaceSecurityTest, SymlinkSwapRaceNeverReachesOutside) {
  fs::create_directories(ws() / "d");
  write_host(ws() / "d" / "f.txt", "inside");
  write_host(outside() / "f.txt", "SECRET");
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const std::string d = (ws() / "d").string();
    const std::string parked = (ws() / "d.parked").string();
    while (!stop.load()) {
      if (::rename(d.c_str(), parked.c_str()) != 0) continue;
      (void)symlink(outside().c_str(), d.c_str());
      std::this_thread::yield();  // let the reader meet the symlink state...
      (void)unlink(d.c_str());
      (void)::rename(parked.c_str(), d.c_str());
      std::this_thread::yield();  // ...and the real directory
    }
  });
  auto w = open();
  // Read until both states were met (so the race really ran), with a generous cap.
  int inside_reads = 0;
  int refused_reads = 0;
  int secret_reads = 0;
  for (int i = 0; i < 200'000 && (inside_reads < 20 || refused_reads < 20); ++i) {
    Reply r = read(*w, "d/f.txt");
    const std::string content = text(r);
    if (content == "SECRET") ++secret_reads;
    if (content == "inside") ++inside_reads;
    if (is_error(r, ErrorCode::PermissionDenied, "symbolic link")) ++refused_reads;
    // Writes (each one fsyncs, so fewer) race the swap too; they land inside or fail.
    if (i % 50 == 0) (void)write(*w, "d/f.txt", "inside");
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(secret_reads, 0);
  EXPECT_EQ(read_host(outside() / "f.txt"), "SECRET");
  EXPECT_EQ(tree(outside()), (std::vector<std::string>{"f.txt", "passwd"}));
  EXPECT_GE(inside_reads, 20);
  EXPECT_GE(refused_reads, 20);
  expect_next_invocation_works();
}

// ---- quotas -------------------------------------------------------------------------------------------

FsPolicy quotas(uint64_t bytes, uint64_t files, uint64_t file_bytes) {
  FsPolicy p;
  p.quota_bytes = bytes;
  p.max_files = files;
  p.max_file_bytes = file_bytes;
  return p;
}

TEST_F(WorkspaceTest, PerFileMaximum) {
  auto w = open(FsMode::readwrite, quotas(1000, 100, 10));
  ASSERT_TRUE(is_ok(write(*w, "a", "0123456789")));
  EXPECT_TRUE(is_error(write(*w, "a", "0123456789x"), ErrorCode::QuotaExceeded,
                       "writeFile \"a\": the file would be 11 bytes; permissions.fs.max_file_bytes is 10"));
  EXPECT_EQ(read_host(ws() / "a"), "0123456789");
  ASSERT_TRUE(is_ok(write(*w, "b", "01234")));
  ASSERT_TRUE(is_ok(append(*w, "b", "56789")));
  EXPECT_TRUE(is_error(append(*w, "b", "!"), ErrorCode::QuotaExceeded,
                       "appendFile \"b\": the file would be 11 bytes"));
  EXPECT_EQ(read_host(ws() / "b"), "0123456789");
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"a", "b"}));  // no temporaries left behind
}

TEST_F(WorkspaceTest, TotalBytes) {
  auto w = open(FsMode::readwrite, quotas(20, 100, 100));
  ASSERT_TRUE(is_ok(write(*w, "a", std::string(10, 'a'))));
  ASSERT_TRUE(is_ok(write(*w, "b", std::string(10, 'b'))));  // exactly at the quota
  EXPECT_TRUE(is_error(write(*w, "c", "c"), ErrorCode::QuotaExceeded,
                       "the workspace would hold 21 bytes; permissions.fs.quota_bytes is 20"));
  EXPECT_FALSE(present(ws() / "c"));
  EXPECT_TRUE(is_error(append(*w, "a", "a"), ErrorCode::QuotaExceeded));
  EXPECT_EQ(read_host(ws() / "a"), std::string(10, 'a'));
  EXPECT_TRUE(is_error(write(*w, "a", std::string(11, 'A')), ErrorCode::QuotaExceeded));
  EXPECT_EQ(read_host(ws() / "a"), std::string(10, 'a'));
  ASSERT_TRUE(is_ok(write(*w, "a", std::string(10, 'A'))));  // same size: fits
  ASSERT_TRUE(is_ok(write(*w, "a", std::string(4, 'A'))));   // shrinking frees 6
  ASSERT_TRUE(is_ok(write(*w, "c", std::string(6, 'c'))));
  EXPECT_TRUE(is_error(write(*w, "d", "d"), ErrorCode::QuotaExceeded));
  ASSERT_TRUE(is_ok(remove(*w, "b")));  // removing frees 10
  ASSERT_TRUE(is_ok(write(*w, "d", std::string(10, 'd'))));
  ASSERT_TRUE(is_ok(rename(*w, "d", "c")));  // replacing c frees its 6
  ASSERT_TRUE(is_ok(write(*w, "e", std::string(6, 'e'))));
  EXPECT_TRUE(is_error(write(*w, "f", "f"), ErrorCode::QuotaExceeded));
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"a", "c", "e"}));
}

TEST_F(WorkspaceTest, EntryCount) {
  auto w = open(FsMode::readwrite, quotas(1000, 3, 100));
  ASSERT_TRUE(is_ok(mkdir(*w, "d")));
  ASSERT_TRUE(is_ok(write(*w, "d/a", "a")));
  ASSERT_TRUE(is_ok(write(*w, "b", "b")));
  EXPECT_TRUE(is_error(write(*w, "c", "c"), ErrorCode::QuotaExceeded,
                       "would hold 4 entries; permissions.fs.max_files is 3"));
  EXPECT_TRUE(is_error(mkdir(*w, "e"), ErrorCode::QuotaExceeded));
  EXPECT_TRUE(is_error(mkdir(*w, "e/f", true), ErrorCode::QuotaExceeded));
  EXPECT_FALSE(present(ws() / "e"));
  ASSERT_TRUE(is_ok(write(*w, "b", "overwrite is not a new entry")));
  ASSERT_TRUE(is_ok(append(*w, "d/a", "append neither")));
  ASSERT_TRUE(is_ok(rename(*w, "b", "d/a")));  // replacing frees one entry
  ASSERT_TRUE(is_ok(write(*w, "c", "c")));
  ASSERT_TRUE(is_ok(remove(*w, "d", true)));  // frees two
  ASSERT_TRUE(is_ok(mkdir(*w, "x/y", true)));
  EXPECT_TRUE(is_error(mkdir(*w, "x/y/z", true), ErrorCode::QuotaExceeded));
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"c", "x", "x/y"}));
}

TEST_F(WorkspaceTest, QuotaHoldsAcrossInvocations) {
  {
    auto first = open(FsMode::readwrite, quotas(100, 100, 100));
    ASSERT_TRUE(is_ok(write(*first, "a", std::string(60, 'a'))));
  }
  auto second = open(FsMode::readwrite, quotas(100, 100, 100));
  EXPECT_TRUE(
      is_error(write(*second, "b", std::string(50, 'b')), ErrorCode::QuotaExceeded, "would hold 110 bytes"));
  // Files the host put there between invocations count too.
  write_host(ws() / "host.txt", std::string(30, 'h'));
  auto third = open(FsMode::readwrite, quotas(100, 100, 100));
  EXPECT_TRUE(
      is_error(write(*third, "b", std::string(11, 'b')), ErrorCode::QuotaExceeded, "would hold 101 bytes"));
  EXPECT_TRUE(is_ok(write(*third, "b", std::string(10, 'b'))));
}

TEST_F(WorkspaceTest, QuotaHoldsBetweenConcurrentInvocations) {
  auto one = open(FsMode::readwrite, quotas(100, 100, 100));
  auto two = open(FsMode::readwrite, quotas(100, 100, 100));
  ASSERT_TRUE(is_ok(write(*one, "a", std::string(10, 'a'))));  // both have now counted
  ASSERT_TRUE(is_ok(write(*two, "b", std::string(10, 'b'))));
  ASSERT_TRUE(is_ok(write(*one, "c", std::string(60, 'c'))));
  // `two` last counted 20 bytes; it must notice `one`'s 60 since.
  EXPECT_TRUE(
      is_error(write(*two, "d", std::string(30, 'd')), ErrorCode::QuotaExceeded, "would hold 110 bytes"));
  ASSERT_TRUE(is_ok(remove(*one, "c")));
  EXPECT_TRUE(is_ok(write(*two, "d", std::string(30, 'd'))));
}

TEST_F(WorkspaceTest, LoweredQuotaStillAllowsShrinkingAndRemoving) {
  prepare();
  write_host(ws() / "big", std::string(50, 'x'));
  write_host(ws() / "other", std::string(50, 'y'));
  auto w = open(FsMode::readwrite, quotas(40, 1, 100));
  EXPECT_TRUE(is_error(append(*w, "big", "x"), ErrorCode::QuotaExceeded));
  EXPECT_TRUE(is_ok(write(*w, "big", std::string(20, 'x'))));
  EXPECT_TRUE(is_ok(remove(*w, "other")));
  EXPECT_TRUE(is_ok(append(*w, "big", std::string(20, 'x'))));
  EXPECT_EQ(read_host(ws() / "big"), std::string(40, 'x'));
}

TEST_F(WorkspaceTest, ReadingAFileAboveTheMaximumIsPayloadTooLarge) {
  prepare();
  write_host(ws() / "huge", std::string(101, 'h'));  // placed by the host
  auto w = open(FsMode::readwrite, quotas(1000, 100, 100));
  EXPECT_TRUE(is_error(read(*w, "huge"), ErrorCode::PayloadTooLarge, "permissions.fs.max_file_bytes is 100"));
}

// ---- crash leftovers ----------------------------------------------------------------------------------

TEST_F(WorkspaceTest, LeftoverTemporariesAreHiddenNotCountedAndCleanedUp) {
  prepare();
  fs::create_directories(ws() / "d");
  // What a writer that died between creating its temporary file and renaming it leaves behind.
  write_host(ws() / ".skillbox-tmp-00000000deadbeef", std::string(500, 't'));
  write_host(ws() / "d" / ".skillbox-tmp-00000000cafef00d", std::string(500, 't'));
  auto w = open(FsMode::readwrite, quotas(600, 3, 1000));
  using T = bus::FsEntryType;
  EXPECT_EQ(listing(readdir(*w, ".")), (std::vector<std::pair<std::string, T>>{{"d", T::directory}}));
  EXPECT_EQ(listing(readdir(*w, "d")).size(), 0u);
  EXPECT_TRUE(is_error(exists(*w, ".skillbox-tmp-00000000deadbeef"), ErrorCode::InvalidArgument, "reserved"));
  EXPECT_TRUE(is_error(read(*w, "d/.skillbox-tmp-00000000cafef00d"), ErrorCode::InvalidArgument, "reserved"));
  // 1000 bytes of leftovers would exceed 600; they are not counted, and the first mutation
  // removes them.
  ASSERT_TRUE(is_ok(write(*w, "a", std::string(550, 'a'))));
  EXPECT_FALSE(present(ws() / ".skillbox-tmp-00000000deadbeef"));
  EXPECT_FALSE(present(ws() / "d" / ".skillbox-tmp-00000000cafef00d"));
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"a", "d"}));
  ASSERT_TRUE(is_ok(write(*w, "b", std::string(50, 'b'))));  // 2 + 1 entries, 600 bytes: full
  EXPECT_TRUE(is_error(write(*w, "c", ""), ErrorCode::QuotaExceeded, "entries"));
}

// ---- concurrency --------------------------------------------------------------------------------------

TEST_F(WorkspaceTest, ConcurrentWritersAlwaysLeaveOneCompleteContent) {
  const std::string a(size_t{64} * 1024, 'a');
  const std::string b(48 * 1024 + 3, 'b');
  {
    auto w = open();
    ASSERT_TRUE(is_ok(write(*w, "shared.txt", a)));
  }
  std::atomic<int> writers_done{0};
  std::atomic<int> failures{0};
  auto writer = [&](const std::string& content, bool use_append) {
    auto w = open();  // its own invocation
    for (int i = 0; i < 60; ++i) {
      if (!is_ok(write(*w, "shared.txt", content))) ++failures;
      if (use_append && !is_ok(append(*w, "log.txt", content.substr(0, 10)))) ++failures;
    }
    ++writers_done;
  };
  std::thread t1(writer, a, true);
  std::thread t2(writer, b, true);
  auto reader = open(FsMode::read);
  int reads = 0;
  std::string torn;  // the first read that was neither content (threads must be joined before failing)
  while (writers_done.load() < 2 || reads == 0) {
    std::string got = text(read(*reader, "shared.txt"));
    if (got != a && got != b && torn.empty()) torn = std::move(got);
    ++reads;
  }
  t1.join();
  t2.join();
  EXPECT_EQ(torn.substr(0, 100), "") << "torn read of " << torn.size() << " bytes";
  EXPECT_EQ(failures.load(), 0);
  const std::string final_content = read_host(ws() / "shared.txt");
  EXPECT_TRUE(final_content == a || final_content == b);
  // Appends from both invocations are all there: none lost to a read-modify-write race.
  EXPECT_EQ(read_host(ws() / "log.txt").size(), 2u * 60 * 10);
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"log.txt", "shared.txt"}));
}

TEST_F(WorkspaceTest, ConcurrentProcessesAlwaysLeaveOneCompleteContent) {
  const std::string a(size_t{32} * 1024, 'A');
  const std::string b(20 * 1024 + 1, 'B');
  std::vector<pid_t> children;
  for (const std::string* content : {&a, &b}) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto w = open();
      int bad = 0;
      for (int i = 0; i < 40; ++i) bad += is_ok(write(*w, "shared.txt", *content)) ? 0 : 1;
      _exit(bad == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  auto reader = open(FsMode::read);
  std::vector<int> statuses;
  while (statuses.size() < children.size()) {
    Reply r = read(*reader, "shared.txt");
    if (std::holds_alternative<bus::BytesReply>(r)) {
      const std::string got = text(r);
      ASSERT_TRUE(got == a || got == b) << "torn read of " << got.size() << " bytes: " << got.substr(0, 100);
    }
    int status = 0;
    if (waitpid(-1, &status, WNOHANG) > 0) statuses.push_back(status);
  }
  for (int status : statuses) EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string final_content = read_host(ws() / "shared.txt");
  EXPECT_TRUE(final_content == a || final_content == b);
  EXPECT_EQ(tree(ws()), (std::vector<std::string>{"shared.txt"}));
}

TEST_F(WorkspaceTest, AMutationWaitsBoundedlyForAnotherInvocationsLock) {
  auto w = open();
  ASSERT_TRUE(is_ok(write(*w, "a.txt", "first")));
  // Another invocation (here: the test) holds the workspace lock and never lets go.
  base::UniqueFd held(::open((data() / "skills" / "demo" / "workspace.lock").c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_GE(held.get(), 0);
  ASSERT_EQ(flock(held.get(), LOCK_EX), 0);
  EXPECT_TRUE(is_error(write(*w, "a.txt", "second"), ErrorCode::Timeout, "the workspace is busy"));
  EXPECT_EQ(text(read(*w, "a.txt")), "first");  // reads take no lock
  ASSERT_EQ(flock(held.get(), LOCK_UN), 0);
  EXPECT_TRUE(is_ok(write(*w, "a.txt", "second")));
  EXPECT_EQ(read_host(ws() / "a.txt"), "second");
}

// ---- host failures ------------------------------------------------------------------------------------

TEST_F(WorkspaceTest, AnUnopenableWorkspaceIsAnIoErrorWithoutHostPaths) {
  fs::create_directories(data() / "skills");
  write_host(data() / "skills" / "demo", "a file where the skill folder should be");
  auto w = open();
  EXPECT_TRUE(is_error(read(*w, "a.txt"), ErrorCode::IoError,
                       "readFile \"a.txt\": the workspace could not be opened"));
  EXPECT_TRUE(is_error(write(*w, "a.txt", "x"), ErrorCode::IoError, "could not be opened"));
  // A symlink where the workspace folder should be is not followed either.
  fs::remove(data() / "skills" / "demo");
  fs::create_directories(data() / "skills" / "demo");
  fs::create_directories(outside());
  ASSERT_EQ(symlink(outside().c_str(), ws().c_str()), 0);
  auto v = open();
  EXPECT_TRUE(is_error(write(*v, "a.txt", "x"), ErrorCode::IoError, "could not be opened"));
  EXPECT_EQ(tree(outside()), std::vector<std::string>{});
}

TEST_F(WorkspaceTest, InvalidSkillIdsNeverNameAnotherFolder) {
  for (const char* id : {"..", ".", "", "a/b"}) {
    Workspace w(data(), id, [] {
      FsPolicy p;
      p.mode = FsMode::readwrite;
      return p;
    }());
    EXPECT_TRUE(is_error(write(w, "a.txt", "x"), ErrorCode::IoError, "skill id")) << id;
  }
  EXPECT_EQ(tree(data()), std::vector<std::string>{});
}

}  // namespace
}  // namespace skillbox::capabilities
