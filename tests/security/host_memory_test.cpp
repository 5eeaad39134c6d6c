// Red-team regression (SECURITY-CASES "Host memory is part of the budget"): with memory_mb 16, eight
// concurrent 200 MB HTTP responses drove the host to 1.3 GiB, and readFile of a 1 GB workspace file to
// 965 MiB. Host buffers now count against the invocation's memory limit (bus/memory_budget.h): the
// process's peak RSS stays within the limit plus the fixed overhead named in docs/limits.md.
//
// Peak RSS (VmHWM) cannot be reset, so each measurement runs in a forked child: it warms up (the
// first run of a process loads libcurl, TLS and the thread pool), reads VmRSS, runs the invocation
// under test and reports VmHWM. The figure asserted is VmHWM - VmRSS before the run: an over-estimate
// if the warm-up peaked higher, never an under-estimate.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/sanitizer.h"
#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kMemoryLimit = 16 * kMiB;
/// docs/limits.md "Host memory is part of the budget": what an invocation may add to the process's
/// RSS beyond limits.memory_mb (thread stacks, libcurl and TLS buffers per transfer, allocator slack).
constexpr uint64_t kFixedOverhead = 24 * kMiB;

constexpr bool kSanitized = base::kAddressSanitizer;

uint64_t status_kb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(std::string(key).size()));
  }
  return 0;
}

struct Measured {
  uint64_t grown_bytes = 0;  // VmHWM after the run - VmRSS before it
  std::string report;        // what the child's `run` returned
};

/// Runs `warm_up` and then `run` in a forked child and reports how far the child's RSS peak rose
/// above its RSS before `run`.
Measured in_child(const std::function<void()>& warm_up, const std::function<std::string()>& run) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    warm_up();
    const uint64_t before = status_kb("VmRSS:");
    const std::string report = run();
    const uint64_t peak = status_kb("VmHWM:");
    const std::string out = std::to_string((peak - std::min(peak, before)) * 1024) + "\n" + report;
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the measuring child failed";
  Measured m;
  const size_t nl = text.find('\n');
  if (nl == std::string::npos) return m;
  m.grown_bytes = std::stoull(text.substr(0, nl));
  m.report = text.substr(nl + 1);
  return m;
}

std::string summary(const RunResult& r) {
  return std::string(to_string(r.outcome)) + " " + r.value_json + (r.error ? " " + r.error->message : "") +
         " host_peak=" + std::to_string(r.usage.host_peak_bytes) +
         " heap_peak=" + std::to_string(r.usage.heap_peak_bytes);
}

class HostMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "RSS figures mean nothing under AddressSanitizer";
  }
  HostOptions options() const {
    HostOptions o;
    o.data_dir = data_.path();
    o.env = std::map<std::string, std::string>{};
    return o;
  }

  TempDir data_;
};

// Eight concurrent 200 MB responses, declared (Content-Length) and streamed (chunked, no length), at
// memory_mb 16: each is refused with PayloadTooLarge naming limits.memory_mb once it would not fit,
// the run stays `ok`, and the process grows by at most the limit plus the fixed overhead.
TEST_F(HostMemory, EightConcurrentLargeResponsesStayWithinTheMemoryLimit) {
  HttpTestServer server;
  TempSkill skill({{"index.js",
                    "export default async (paths) => {\n"
                    "  const rs = await Promise.allSettled(paths.map((p) => openhuman.http.get(p)));\n"
                    "  return rs.map((r) => r.status === 'fulfilled' ? 'ok ' + r.value.body.length\n"
                    "                                           : r.reason.name + ': ' + r.reason.message);\n"
                    "};\n"}});
  skill.manifest().limits.memory_bytes = kMemoryLimit;
  skill.manifest().limits.timeout_ms = 60'000;
  HttpPolicy& http = skill.manifest().permissions.http;
  http.allow = {server.origin() + "/"};
  http.allow_private_addresses = true;  // the test server is on loopback
  http.max_concurrent = 8;
  http.max_requests = 64;
  http.max_response_bytes = 256 * kMiB;
  http.timeout_ms = 60'000;

  auto input = [&](const std::string& path) {
    nlohmann::json paths = nlohmann::json::array();
    for (int i = 0; i < 8; ++i) paths.push_back(server.url(path));
    return paths.dump();
  };
  const Measured m = in_child(
      [&] {
        InProcessRunner warm(options());
        (void)run(warm, skill, nlohmann::json::array({server.url("/plain")}).dump());
      },
      [&] {
        InProcessRunner runner(options());
        const RunResult declared = run(runner, skill, input("/stream?n=209715200"));
        const RunResult streamed = run(runner, skill, input("/forever"));
        return summary(declared) + "\n" + summary(streamed);
      });
  std::printf("[ measured ] 8 x 200 MB responses at memory_mb 16: peak RSS grew by %.1f MiB\n",
              static_cast<double>(m.grown_bytes) / static_cast<double>(kMiB));
  EXPECT_LE(m.grown_bytes, kMemoryLimit + kFixedOverhead) << m.report;
  // Every response was refused as too large for the memory limit; none was served half.
  EXPECT_EQ(m.report.find("\"ok "), std::string::npos) << m.report;
  EXPECT_NE(m.report.find("PayloadTooLarge: http: the response body of"), std::string::npos) << m.report;
  EXPECT_NE(m.report.find("limits.memory_mb"), std::string::npos) << m.report;
  EXPECT_EQ(m.report.rfind("ok [", 0), 0u) << m.report;
}

// readFile of a 1 GB (sparse) workspace file at memory_mb 16, with max_file_bytes allowing it: refused
// with PayloadTooLarge before anything is read; a file that fits is still read.
TEST_F(HostMemory, ReadFileOfAGigabyteFileStaysWithinTheMemoryLimit) {
  TempSkill skill({{"index.js",
                    "const fs = openhuman.fs;\n"
                    "export default async (name) => {\n"
                    "  try { return 'read ' + (await fs.readFile(name, {encoding: 'binary'})).length; }\n"
                    "  catch (e) { return e.name + ': ' + e.message; }\n"
                    "};\n"}});
  skill.manifest().limits.memory_bytes = kMemoryLimit;
  FsPolicy& fsp = skill.manifest().permissions.fs;
  fsp.mode = FsMode::readwrite;
  fsp.max_file_bytes = uint64_t{1} << 30;
  fsp.quota_bytes = uint64_t{2} << 30;
  const fs::path ws = data_.path() / "skills" / skill.manifest().id / "workspace";
  fs::create_directories(ws);
  fs::resize_file((std::ofstream(ws / "big.bin"), ws / "big.bin"), uint64_t{1} << 30);  // sparse
  fs::resize_file((std::ofstream(ws / "small.bin"), ws / "small.bin"), 4 * kMiB);

  const Measured m = in_child(
      [&] {
        InProcessRunner warm(options());
        (void)run(warm, skill, "\"small.bin\"");
      },
      [&] {
        InProcessRunner runner(options());
        return summary(run(runner, skill, "\"big.bin\"")) + "\n" +
               summary(run(runner, skill, "\"small.bin\""));
      });
  std::printf("[ measured ] readFile of 1 GB at memory_mb 16: peak RSS grew by %.1f MiB\n",
              static_cast<double>(m.grown_bytes) / static_cast<double>(kMiB));
  EXPECT_LE(m.grown_bytes, kMemoryLimit + kFixedOverhead) << m.report;
  EXPECT_NE(m.report.find("ok \"PayloadTooLarge: readFile \\\"big.bin\\\": the file is 1073741824 bytes"),
            std::string::npos)
      << m.report;
  EXPECT_NE(m.report.find("limits.memory_mb"), std::string::npos) << m.report;
  EXPECT_NE(m.report.find("ok \"read 4194304\""), std::string::npos) << m.report;
}

// Without a forked child: the run's usage reports the host bytes it held, and they never pass the limit
// together with the heap (the 4 MiB read is counted while it is held).
TEST_F(HostMemory, UsageReportsTheHostPeak) {
  TempSkill skill({{"index.js",
                    "const fs = openhuman.fs;\n"
                    "export default async () => {\n"
                    "  await fs.writeFile('a.bin', new Uint8Array(3 * 1024 * 1024));\n"
                    "  return (await fs.readFile('a.bin', {encoding: 'binary'})).length;\n"
                    "};\n"}});
  skill.manifest().limits.memory_bytes = kMemoryLimit;
  skill.manifest().permissions.fs.mode = FsMode::readwrite;
  InProcessRunner runner(options());
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "3145728");
  EXPECT_GE(r.usage.host_peak_bytes, 3u * kMiB);
  EXPECT_LE(r.usage.host_peak_bytes, kMemoryLimit);
}

}  // namespace
}  // namespace skillbox::testing
