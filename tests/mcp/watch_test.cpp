// mcp/watch.cpp: what counts as a change of a skill folder, and FolderWatch calling back once a change
// held still.
#include "mcp/watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace skillbox::mcp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct TempFolder {
  TempFolder() {
    path = fs::temp_directory_path() /
           ("skillbox-watch-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path / "lib");
  }
  ~TempFolder() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::trunc) << text;
  }
  fs::path path;
};

TEST(McpWatch, FingerprintChangesWithContentNamesAndSubfoldersOnly) {
  TempFolder f;
  f.write("skill.json", "{}");
  f.write("lib/a.js", "1");
  const std::string first = folder_fingerprint(f.path);
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(folder_fingerprint(f.path), first) << "reading changes nothing";
  f.write("lib/a.js", "12");
  const std::string second = folder_fingerprint(f.path);
  EXPECT_NE(second, first) << "a file below a subfolder changed size";
  fs::rename(f.path / "lib/a.js", f.path / "lib/b.js");
  EXPECT_NE(folder_fingerprint(f.path), second) << "a rename";
  EXPECT_EQ(folder_fingerprint(f.path / "missing"), "");
}

TEST(McpWatch, CallsBackOnceWhenAChangeHeldStill) {
  TempFolder f;
  f.write("index.js", "1");
  std::atomic<int> calls{0};
  FolderWatch watch({f.path}, 20ms, [&] { ++calls; });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls.load(), 0) << "nothing changed";
  f.write("index.js", "12");
  for (int i = 0; i < 200 && calls.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(calls.load(), 1);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls.load(), 1) << "one change, one call";
  watch.stop();
  f.write("index.js", "123");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls.load(), 1) << "stopped";
}

}  // namespace
}  // namespace skillbox::mcp
