// The soak: N mixed invocations in one WorkerRunner — ok runs, skill errors, every limit, crashes from
// the test trigger, denied fs and http calls, and store writes each acknowledged to a loopback server —
// leave the supervisor's descriptors, threads and RSS flat, no zombie, no temporary file, and every
// acknowledged write in the store.
//
// N comes from SKILLBOX_SOAK_N (default 2,000: the ctest worker.soak, part of the test command);
// scripts/soak.sh N runs it with a larger N and prints the report lines ("soak: ...").
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/sanitizer.h"
#include "base/unique_fd.h"
#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "worker_test_support.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

int soak_count() {
  const char* text = std::getenv("SKILLBOX_SOAK_N");
  if (text == nullptr || *text == '\0') return 2'000;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  return (end != nullptr && *end == '\0' && n >= 100 && n <= 10'000'000) ? static_cast<int>(n) : 2'000;
}

/// Files under `dir` whose name marks them as temporary (workspace writes: ".skillbox-tmp-...",
/// owner files: ".owner-tmp-...", SQLite's journals).
int temporary_files(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find("tmp-") != std::string::npos || name.ends_with("-journal")) ++n;
  }
  return n;
}

/// The acknowledging server: HTTP/1.1 on 127.0.0.1, one thread, one connection at a time (the soak's
/// invocations are sequential), "Connection: close". It records the target and body of each POST and
/// answers 200 "ok" to it, 404 to anything else. One thread and one listening socket for the whole
/// soak, so it does not move the process's thread and descriptor counts; and the record goes to a
/// file, not memory, so it does not move the process's RSS either (kept in a vector, 20,000 acks of a
/// 100,000-run soak were 1.3 MiB of growth that was the test's, not the supervisor's).
class AckServer {
 public:
  explicit AckServer(const std::filesystem::path& record)
      : listener_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), record_path_(record) {
    record_ = std::fopen(record.c_str(), "w");
    if (record_ == nullptr) throw std::runtime_error("AckServer: cannot create " + record.string());
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!listener_ || ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::listen(listener_.get(), 64) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("AckServer: cannot listen on 127.0.0.1");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~AckServer() {
    stop_ = true;
    thread_.join();
    std::fclose(record_);
  }
  AckServer(const AckServer&) = delete;
  AckServer& operator=(const AckServer&) = delete;

  [[nodiscard]] std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  /// {target, body} of each POST, in arrival order.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> posts() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream lines(read_bytes(record_path_));
    for (std::string line; std::getline(lines, line);) {
      const size_t sp = line.find(' ');
      if (sp != std::string::npos) out.emplace_back(line.substr(0, sp), line.substr(sp + 1));
    }
    return out;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listener_.get(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      base::UniqueFd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (c) handle(c.get());
    }
  }
  void handle(int fd) {
    std::string in;
    char buf[4096];
    size_t head_end = std::string::npos;
    size_t need = 0;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return;  // a stuck client: drop it
      const ssize_t got = ::read(fd, buf, sizeof buf);
      if (got <= 0) return;
      in.append(buf, static_cast<size_t>(got));
      if (head_end == std::string::npos) {
        head_end = in.find("\r\n\r\n");
        if (head_end == std::string::npos) continue;
        std::string head = in.substr(0, head_end);
        for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const size_t cl = head.find("content-length:");
        need = cl == std::string::npos ? 0 : std::stoul(head.substr(cl + 15));
      }
      if (in.size() >= head_end + 4 + need) break;
    }
    const std::string line = in.substr(0, in.find("\r\n"));
    const bool post = line.starts_with("POST ");
    if (post) {
      const size_t sp = line.find(' ', 5);
      std::lock_guard<std::mutex> lock(mu_);
      // One line per POST: the target has no space (it is a request-target) and the body is a number.
      const std::string entry = line.substr(5, sp - 5) + " " + in.substr(head_end + 4, need) + "\n";
      (void)std::fwrite(entry.data(), 1, entry.size(), record_);
      (void)std::fflush(record_);
    }
    const std::string reply =
        post ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
             : "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)!::write(fd, reply.data(), reply.size());
  }

  base::UniqueFd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::filesystem::path record_path_;
  std::FILE* record_ = nullptr;
  std::thread thread_;
};

struct Sample {
  int fds = 0;
  int threads = 0;
  uint64_t rss = 0;
};

Sample sample() {
  return {fd_count(), thread_count(), rss_bytes()};
}

void report(const char* when, const Sample& s) {
  std::printf("soak: %-6s rss %.1f MiB, %d descriptors, %d threads\n", when,
              static_cast<double>(s.rss) / (1024.0 * 1024.0), s.fds, s.threads);
  std::fflush(stdout);
}

TEST(WorkerSoak, MixedInvocationsLeaveTheSupervisorFlatAndLoseNoWrite) {
  const int n = soak_count();
  TempDir data;
  TempDir scratch;  // the ack record: outside the data directory, whose temporary files are counted
  AckServer server(scratch.path() / "acks");
  HostOptions o;
  o.data_dir = data.path();
  o.env = std::map<std::string, std::string>{};
  o.worker_path = SKILLBOX_WALL_TEST_WORKER_PATH;  // has __crash()
  o.worker_pool_size = 2;
  WorkerRunner runner(o);
  TempSkill skill(
      {{"index.js",
        "export default async ({k, n, ack}) => {\n"
        "  if (k === 'ok') return 1;\n"
        "  if (k === 'error') throw new Error('no');\n"
        "  if (k === 'memory') { const a = []; for (;;) a.push('x'.repeat(1000) + a.length); }\n"
        "  if (k === 'steps') { for (;;) {} }\n"
        "  if (k === 'stack') { const f = () => f(); f(); }\n"
        "  if (k === 'timeout') return new Promise(() => setTimeout(() => {}, 60000));\n"
        "  if (k === 'crash') __crash();\n"
        "  if (k === 'fs-denied') {\n"
        "    try { await openhuman.fs.readFile('../../outside.txt'); return 'read'; }\n"
        "    catch (e) { return e.name; }\n"
        "  }\n"
        "  if (k === 'http-denied') {\n"
        "    try { await openhuman.http.get(ack.replace('/echo', '/plain')); return 'fetched'; }\n"
        "    catch (e) { return e.name; }\n"
        "  }\n"
        "  if (k === 'write') {\n"
        "    store.set('w' + n, n);\n"
        "    await openhuman.fs.writeFile('f' + (n % 8) + '.txt', String(n));\n"
        "    await openhuman.http.post(ack + '?n=' + n, String(n));\n"
        "    return 'acked';\n"
        "  }\n"
        "  if (k === 'read') {\n"
        "    const out = {};\n"
        "    for (const key of store.keys('w')) out[key] = store.get(key);\n"
        "    return out;\n"
        "  }\n"
        "};\n"}});
  Manifest& m = skill.manifest();
  m.limits.memory_bytes = 8ull * 1024 * 1024;
  m.limits.steps = 2'000'000;
  m.limits.timeout_ms = 5000;
  m.permissions.fs.mode = FsMode::readwrite;
  m.permissions.http.allow = {server.url("/echo")};
  m.permissions.http.allow_private_addresses = true;  // the acknowledging server is on loopback
  m.permissions.http.methods = {"GET", "POST"};
  m.permissions.store.max_keys = 1'000'000;
  m.permissions.store.quota_bytes = 1ull << 30;

  struct Kind {
    const char* key;
    Outcome outcome;
    const char* value;  // expected value_json when ok, else nullptr
  };
  const auto kind = [](int i) -> Kind {
    if (i % 100 == 9) return {"timeout", Outcome::timeout, nullptr};
    if (i % 100 == 19) return {"crash", Outcome::crashed, nullptr};
    if (i % 100 == 29) return {"fs-denied", Outcome::ok, "\"PermissionDenied\""};
    if (i % 100 == 39) return {"http-denied", Outcome::ok, "\"PermissionDenied\""};
    switch (i % 10) {
      case 1:
      case 4:
        return {"write", Outcome::ok, "\"acked\""};
      case 6:
        return {"error", Outcome::error, nullptr};
      case 7:
        return {"memory", Outcome::memory_limit, nullptr};
      case 8:
        return {"steps", Outcome::step_limit, nullptr};
      case 9:
        return {"stack", Outcome::stack_overflow, nullptr};
      default:
        return {"ok", Outcome::ok, "1"};
    }
  };
  const std::string ack = server.url("/echo");
  const auto one = [&](int i) {
    const Kind k = kind(i);
    const nlohmann::json input = {{"k", k.key}, {"n", i}, {"ack", ack}};
    Invocation inv{.skill = skill.skill(), .input_json = input.dump()};
    if (k.outcome == Outcome::timeout) inv.overrides.timeout_ms = 30;
    if (k.outcome == Outcome::step_limit) inv.overrides.steps = 200'000;  // steps do not key the pool
    const RunResult r = runner.run(inv);
    EXPECT_EQ(r.outcome, k.outcome) << i << " " << k.key << ": " << describe(r);
    if (k.value != nullptr && r.outcome == Outcome::ok) {
      EXPECT_EQ(r.value_json, k.value) << i << " " << k.key;
    }
  };
  const auto settle = [&] {
    // Let the pool refill and the zygote report every exit, so the counts compare like with like.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (runner.pooled_worker_pids().size() < 2 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  };

  const int warm = 200;
  for (int i = 0; i < warm; ++i) one(i);
  settle();
  const Sample start = sample();
  report("start", start);
  Sample middle;
  for (int i = warm; i < n; ++i) {
    if (i == warm + (n - warm) / 2) {
      settle();
      middle = sample();
      report("middle", middle);
    }
    one(i);
    if (::testing::Test::HasFailure()) break;
  }
  settle();
  const Sample end = sample();
  report("end", end);

  std::map<std::string, int> acknowledged;  // key -> the value the skill stored before its ack
  // Acknowledged writes: the server's record of each POST, whose body is the value written.
  for (const auto& [target, body] : server.posts()) {
    const size_t at = target.find("?n=");
    ASSERT_NE(at, std::string::npos) << target;
    acknowledged["w" + target.substr(at + 3)] = std::stoi(body);
  }
  Invocation read{.skill = skill.skill(), .input_json = R"({"k": "read"})"};
  const RunResult stored = runner.run(read);
  ASSERT_EQ(stored.outcome, Outcome::ok) << describe(stored);
  const auto values = nlohmann::json::parse(stored.value_json);
  int matching = 0;
  for (const auto& [key, value] : acknowledged) {
    if (values.contains(key) && values[key] == value) ++matching;
  }
  const int zombies = zombie_children();
  const int temporaries = temporary_files(data.path());
  std::printf("soak: %d invocations; zombies %d; temporary files %d; acknowledged writes %zu, stored %d\n", n,
              zombies, temporaries, acknowledged.size(), matching);

  EXPECT_GT(acknowledged.size(), static_cast<size_t>(n / 6));  // two in ten are writes
  EXPECT_EQ(matching, static_cast<int>(acknowledged.size()));
  EXPECT_EQ(end.fds, start.fds);
  EXPECT_EQ(end.threads, start.threads);
  // Under AddressSanitizer freed memory waits in the sanitizer's quarantine (256 MiB by default) before
  // it is reused, so the supervisor's RSS grows by up to that much whatever the code does; flatness is
  // measured in the default build, and the asan run looks for memory errors in the same loop.
  constexpr uint64_t kQuarantine = base::kAddressSanitizer ? 256ull * 1024 * 1024 : 0;
  EXPECT_LT(end.rss, start.rss + 16ull * 1024 * 1024 + kQuarantine)
      << "RSS grew from " << start.rss << " to " << end.rss;
  EXPECT_EQ(zombies, 0);
  EXPECT_EQ(temporaries, 0);
}

}  // namespace
}  // namespace skillbox::testing
