// The contract of state::AuditSink (state/audit_sink.h) for every implementation, and the JSON-lines
// sink's file on disk.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "state/audit_sink.h"

namespace skillbox::state {
namespace {

namespace fs = std::filesystem;

/// A sink writing under `root`, and a way to read back what it recorded (one JSON object per record,
/// in the order they were recorded).
struct Backend {
  std::string name;
  std::function<std::shared_ptr<AuditSink>(const fs::path& root)> make;
  std::function<std::vector<nlohmann::json>(const fs::path& root)> read;
};

AuditRecord record_of(std::string skill, Outcome outcome) {
  AuditRecord r;
  r.tenant = "acme";
  r.skill_id = std::move(skill);
  r.export_name = "run";
  r.started = std::chrono::system_clock::now();
  r.outcome = outcome;
  if (outcome != Outcome::ok) r.error_name = "TypeError";
  r.usage.steps = 42;
  r.origins = {"https://api.example.com", "http://127.0.0.1:8080"};
  return r;
}

class AuditSinkContract : public ::testing::TestWithParam<Backend> {
 protected:
  [[nodiscard]] const fs::path& root() const { return dir_.path(); }
  testing::TempDir dir_;
};

TEST_P(AuditSinkContract, EachRecordComesBackWholeAndInOrder) {
  auto sink = GetParam().make(root());
  ASSERT_TRUE(sink->record(record_of("a", Outcome::ok)));
  ASSERT_TRUE(sink->record(record_of("b", Outcome::error)));
  const auto records = GetParam().read(root());
  ASSERT_EQ(records.size(), 2U);
  EXPECT_EQ(records[0]["skill"], "a");
  EXPECT_EQ(records[0]["outcome"], "ok");
  EXPECT_TRUE(records[0]["error"].is_null());
  EXPECT_EQ(records[1]["skill"], "b");
  EXPECT_EQ(records[1]["error"], "TypeError");
  EXPECT_EQ(records[1]["tenant"], "acme");
  EXPECT_EQ(records[1]["usage"]["steps"], 42);
  EXPECT_EQ(records[1]["origins"],
            nlohmann::json::array({"https://api.example.com", "http://127.0.0.1:8080"}));
}

TEST_P(AuditSinkContract, ConcurrentWritersInThreadsAndProcessesLoseAndMixNothing) {
  constexpr int kThreads = 4;
  constexpr int kProcesses = 3;
  constexpr int kEach = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto sink = GetParam().make(root());
      for (int i = 0; i < kEach; ++i)
        if (!sink->record(record_of("p" + std::to_string(p) + std::string(3000, 'x'), Outcome::ok))) _exit(1);
      _exit(0);
    }
    children.push_back(pid);
  }
  // Threads only once every child is forked: a fork while another thread holds a lock (malloc's)
  // would leave the child stuck on it.
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto sink = GetParam().make(root());
      for (int i = 0; i < kEach; ++i)
        ASSERT_TRUE(sink->record(record_of("t" + std::to_string(t), Outcome::ok)));
    });
  }
  for (std::thread& t : threads) t.join();
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto records = GetParam().read(root());  // throws on a line that is not whole JSON
  EXPECT_EQ(records.size(), static_cast<size_t>((kThreads + kProcesses) * kEach));
}

TEST_P(AuditSinkContract, AWriteThatFailsIsAnErrorNotACrash) {
  // RLIMIT_FSIZE 0 in a child: every append fails (EFBIG; SIGXFSZ ignored), and record() says so.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit none{0, 0};
    setrlimit(RLIMIT_FSIZE, &none);
    auto sink = GetParam().make(root());
    auto recorded = sink->record(record_of("a", Outcome::ok));
    _exit(recorded ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "record() reported the failed write";
  EXPECT_TRUE(GetParam().read(root()).empty());
}

std::vector<nlohmann::json> read_jsonl(const fs::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

INSTANTIATE_TEST_SUITE_P(Jsonl, AuditSinkContract,
                         ::testing::Values(Backend{"jsonl",
                                                   [](const fs::path& root) {
                                                     return make_jsonl_audit_sink(
                                                         root / "audit" / "audit.jsonl", /*sync=*/true);
                                                   },
                                                   [](const fs::path& root) {
                                                     return read_jsonl(root / "audit" / "audit.jsonl");
                                                   }}),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(JsonlAuditSink, TheFileIsPrivateAndEveryLineIsPlainAscii) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "audit" / "audit.jsonl";
  auto sink = make_jsonl_audit_sink(file, /*sync=*/false);
  AuditRecord r = record_of("notes", Outcome::ok);
  r.export_name = "tool:\n\x1b[31mred\xff";
  ASSERT_TRUE(sink->record(r));
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(file.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  const std::string text = testing::read_bytes(file);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line";
  for (unsigned char c : text.substr(0, text.size() - 1)) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
}

}  // namespace
}  // namespace skillbox::state
