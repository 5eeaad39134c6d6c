// `skillbox run` while the skill runs: log lines on stderr as they are written (human mode), NDJSON with
// --json-stream, and Ctrl-C (SIGINT) cancelling the run with its report and logs (exit 130). The command
// runs as a subprocess; each chunk of output is stamped with the time it arrived, so a test can tell
// output printed live from output printed at the end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Live {
  int exit_code = -1;
  std::string out;
  std::string err;
  Clock::time_point exited;
  /// When `needle` first appeared on stderr (or stdout), or Clock::time_point::max().
  Clock::time_point err_seen(const std::string& needle) const { return seen(err_times, needle); }
  Clock::time_point out_seen(const std::string& needle) const { return seen(out_times, needle); }

  std::vector<std::pair<size_t, Clock::time_point>> err_times;  // (length of err after a chunk, when)
  std::vector<std::pair<size_t, Clock::time_point>> out_times;

 private:
  Clock::time_point seen(const std::vector<std::pair<size_t, Clock::time_point>>& times,
                         const std::string& needle) const {
    const std::string& text = &times == &err_times ? err : out;
    const size_t at = text.find(needle);
    if (at == std::string::npos) return Clock::time_point::max();
    for (const auto& [len, when] : times)
      if (len >= at + needle.size()) return when;
    return Clock::time_point::max();
  }
};

/// Runs the CLI with `args`; `on_err(err_so_far, pid)` is called after every stderr chunk (to send a
/// signal when some text appeared). Kills it after 60 s.
Live run_live(const std::vector<std::string>& args, const fs::path& home,
              const std::function<void(const std::string&, pid_t)>& on_err = {}) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe failed";
    return {};
  }
  std::vector<std::string> storage = {SKILLBOX_CLI_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string home_env = "SKILLBOX_HOME=" + home.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::putenv(const_cast<char*>(home_env.c_str()));  // NOLINT(concurrency-mt-unsafe): one thread after fork
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Live r;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out[0], POLLIN, 0});
    if (err_open) fds.push_back({err[0], POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ADD_FAILURE() << "skillbox did not finish within 60 s";
      break;
    }
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      char buf[65536];
      const ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        (p.fd == out[0] ? out_open : err_open) = false;
        continue;
      }
      const bool is_err = p.fd == err[0];
      std::string& text = is_err ? r.err : r.out;
      text.append(buf, static_cast<size_t>(n));
      (is_err ? r.err_times : r.out_times).emplace_back(text.size(), Clock::now());
      if (is_err && on_err) on_err(r.err, pid);
    }
  }
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exited = Clock::now();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class LiveOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "skillbox-live-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    tmp_ = tmpl;
  }
  void TearDown() override { fs::remove_all(tmp_); }
  std::string skill(const std::string& code, const std::string& limits = "{}") {
    const fs::path dir = tmp_ / "skill";
    fs::create_directories(dir);
    std::ofstream(dir / "skill.json") << R"({"id": "live", "entry": "index.js", "limits": )" << limits << "}";
    std::ofstream(dir / "index.js") << code;
    return dir.string();
  }
  fs::path tmp_;
};

constexpr const char* kTwoLinesApart =
    "export default async () => {\n"
    "  console.log('first');\n"
    "  await new Promise((r) => setTimeout(r, 1200));\n"
    "  console.warn('second');\n"
    "  return 'done';\n"
    "}\n";

TEST_F(LiveOutput, HumanModePrintsEachLogLineWhileTheSkillRuns) {
  const Live r = run_live({"run", skill(kTwoLinesApart)}, tmp_ / "home");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "\"done\"\n");
  // The first line was on the terminal a timer's wait before the command ended; each line once.
  EXPECT_LE(r.err_seen("[info] first\n") + std::chrono::milliseconds(900), r.exited) << r.err;
  EXPECT_EQ(r.err.find("[info] first"), r.err.rfind("[info] first")) << r.err;
  EXPECT_LT(r.err.find("[info] first"), r.err.find("[warn] second")) << r.err;
  EXPECT_LT(r.err.find("[warn] second"), r.err.find("outcome: ok")) << r.err;
}

TEST_F(LiveOutput, QuietDropsTheOutcomeAndUsageLinesButKeepsLogsAndErrors) {
  const Live ok =
      run_live({"run", "-q", skill("export default () => { log('hi'); return 1; }")}, tmp_ / "home");
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "1\n");
  EXPECT_EQ(ok.err, "[info] hi\n");
  const Live bad = run_live({"run", "--quiet", skill("export default () => { throw new TypeError('no'); }")},
                            tmp_ / "home");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("error: TypeError: no"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("outcome:"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("usage:"), std::string::npos) << bad.err;
}

TEST_F(LiveOutput, JsonStreamPrintsOneObjectPerLineAndEventThenTheResult) {
  const Live r = run_live({"run", "--json-stream", skill(kTwoLinesApart)}, tmp_ / "home");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<json> lines;
  std::istringstream in(r.out);
  for (std::string text; std::getline(in, text);) {
    json line = json::parse(text, nullptr, false);
    ASSERT_FALSE(line.is_discarded()) << "not JSON: " << text;
    lines.push_back(line);
  }
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0]["type"], "event");
  EXPECT_EQ(lines[0]["kind"], "started");
  EXPECT_EQ(lines[1]["type"], "log");
  EXPECT_EQ(lines[1]["level"], "info");
  EXPECT_EQ(lines[1]["message"], "first");
  EXPECT_EQ(lines[2]["type"], "log");
  EXPECT_EQ(lines[2]["message"], "second");
  // Monotonic, and a timer's wait apart.
  double last = -1;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    ASSERT_TRUE(lines[i]["t_ms"].is_number()) << lines[i];
    EXPECT_GE(lines[i]["t_ms"].get<double>(), last);
    last = lines[i]["t_ms"].get<double>();
  }
  EXPECT_GE(lines[2]["t_ms"].get<double>() - lines[1]["t_ms"].get<double>(), 1000.0);
  // Printed live: the first line reached the pipe long before the command ended.
  EXPECT_LE(r.out_seen("\"first\"") + std::chrono::milliseconds(900), r.exited);
  const json& result = lines.back();
  EXPECT_EQ(result["type"], "result");
  EXPECT_EQ(result["outcome"], "ok");
  EXPECT_EQ(result["value"], "done");
  EXPECT_EQ(result["logs"].size(), 2u);
  EXPECT_TRUE(result["usage"].contains("wall_ms"));
}

TEST_F(LiveOutput, JsonStreamReportsABadSkillAsAResultLine) {
  const Live r = run_live({"run", "--json-stream", (tmp_ / "missing").string()}, tmp_ / "home");
  EXPECT_EQ(r.exit_code, 2);
  const json line = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(line.is_discarded()) << r.out;
  EXPECT_EQ(line["type"], "result");
  EXPECT_EQ(line["outcome"], "invalid");
}

TEST_F(LiveOutput, JsonAndJsonStreamExcludeEachOther) {
  const Live r = run_live({"run", "--json", "--json-stream", skill("export default () => 1")}, tmp_ / "home");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
}

TEST_F(LiveOutput, CtrlCCancelsTheRunAndStillPrintsItsLogsAndReport) {
  bool sent = false;
  const std::string dir = skill("export default () => { console.log('spinning'); for (;;) {} }",
                                R"({"timeout_ms": 30000, "steps": 1000000000000})");
  const Live r = run_live({"run", dir}, tmp_ / "home", [&](const std::string& err, pid_t pid) {
    if (!sent && err.find("[info] spinning") != std::string::npos) {
      sent = true;
      ::kill(pid, SIGINT);
    }
  });
  ASSERT_TRUE(sent) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("\nskillbox: " + dir + ": cancelling the run (press Ctrl-C again to quit at once)\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("error: Cancelled:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("outcome: cancelled (exit 130)"), std::string::npos) << r.err;
}

// --watch runs again when a source file changes, not when a log or node_modules file does, and Ctrl-C
// while it waits stops it with exit 130.
TEST_F(LiveOutput, WatchRunsAgainWhenASourceChangesAndCtrlCStopsIt) {
  const std::string dir = skill("export default () => { console.log('version one'); return 1; }");
  int waits = 0;
  const Live r = run_live({"run", dir, "--watch"}, tmp_ / "home", [&](const std::string& err, pid_t pid) {
    size_t seen = 0;
    for (size_t at = err.find("watching "); at != std::string::npos; at = err.find("watching ", at + 1))
      ++seen;
    if (seen <= static_cast<size_t>(waits)) return;
    waits = static_cast<int>(seen);
    if (waits == 1) {
      // Not sources: these must not start a run. Then, well after the watcher's polling would have seen
      // them, the entry changes.
      std::ofstream(fs::path(dir) / "out.log") << "written by the user";
      fs::create_directories(fs::path(dir) / "node_modules/pkg");
      std::ofstream(fs::path(dir) / "node_modules/pkg/index.js") << "export default 1;";
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      std::ofstream(fs::path(dir) / "index.js")
          << "export default () => { console.log('version two'); return 2; }";
    } else if (waits == 2) {
      ::kill(pid, SIGINT);
    }
  });
  EXPECT_EQ(waits, 2) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  const size_t changed = r.err.find("a file changed; running again");
  ASSERT_NE(changed, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("a file changed", changed + 1), std::string::npos) << "one change, one rerun:\n"
                                                                          << r.err;
  EXPECT_LT(r.err.find("[info] version one"), changed) << r.err;
  EXPECT_GT(r.err.find("[info] version two"), changed) << r.err;
  EXPECT_NE(r.err.find("stopped watching"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace skillbox
