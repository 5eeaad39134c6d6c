// The workspace re-checks the invocation's stop token between the steps of a long mutation (issue 9,
// item 2): a recursive remove stops before its next unlink, a write or append before its rename. The
// Endpoint refuses requests once the token is set; these are the requests already running then.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <variant>

#include "bus/stop_token.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/store/store_test_util.h"

namespace skillbox::capabilities {
namespace {

namespace fs = std::filesystem;

FsPolicy readwrite() {
  FsPolicy p;
  p.mode = FsMode::readwrite;
  return p;
}

bus::Bytes bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

size_t entries_below(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(dir)) ++n;
  return n;
}

class WorkspaceStop : public ::testing::Test {
 protected:
  void SetUp() override {
    Workspace ws(data_.path(), "stopper", readwrite());
    ASSERT_TRUE(std::holds_alternative<bus::OkReply>(ws.handle(bus::FsMkdirRequest{"tree/sub", true})));
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(std::holds_alternative<bus::OkReply>(
          ws.handle(bus::FsWriteFileRequest{"tree/sub/f" + std::to_string(i), bytes("x"), false})));
    }
    ASSERT_TRUE(
        std::holds_alternative<bus::OkReply>(ws.handle(bus::FsWriteFileRequest{"log", bytes("old"), false})));
  }
  [[nodiscard]] fs::path root() const { return data_.path() / "skills" / "stopper" / "workspace"; }

  testing::TempDir data_;
};

TEST_F(WorkspaceStop, RecursiveRemoveStopsBeforeItsNextUnlinkAndLeavesAValidTree) {
  const size_t before = entries_below(root() / "tree");
  ASSERT_EQ(before, 21u);  // sub and its 20 files
  bus::StopToken stop;
  stop.raise();
  Workspace ws(data_.path(), "stopper", readwrite(), stop);
  const bus::Reply reply = ws.handle(bus::FsRemoveRequest{"tree", true});
  const auto* error = std::get_if<bus::ErrorReply>(&reply);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, bus::ErrorCode::Timeout);
  EXPECT_NE(error->message.find("partly removed"), std::string::npos) << error->message;
  EXPECT_EQ(entries_below(root() / "tree"), before);  // stopped before the first unlink

  // The tree is still a tree the next invocation can use, and its totals are right.
  Workspace next(data_.path(), "stopper", readwrite());
  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(next.handle(bus::FsRemoveRequest{"tree", true})));
  EXPECT_FALSE(fs::exists(root() / "tree"));
}

TEST_F(WorkspaceStop, AnAppendStoppedBeforeItsRenameLeavesTheOldContentAndNoTemporary) {
  const bus::StopToken stop(bus::StopToken::Clock::now());  // the deadline is now: already passed
  Workspace ws(data_.path(), "stopper", readwrite(), stop);
  const bus::Reply reply = ws.handle(bus::FsWriteFileRequest{"log", bytes(" and new"), true});
  const auto* error = std::get_if<bus::ErrorReply>(&reply);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, bus::ErrorCode::Timeout);
  EXPECT_NE(error->message.find("not changed"), std::string::npos) << error->message;
  EXPECT_EQ(testing::read_bytes(root() / "log"), "old");
  for (const auto& e : fs::directory_iterator(root()))
    EXPECT_EQ(e.path().filename().string().find(".skillbox-tmp-"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace skillbox::capabilities
