// Per-request cost of `openhuman.http.get` against plain libcurl, to the same loopback server, each
// pair interleaved in one benchmark loop (so machine load hits both alike) and reported as ratios:
//
//   BM_HttpGet_vs_Curl/cold:0   one invocation awaiting N sequential openhuman.http.get calls on a
//                               kept connection, against one reused curl easy handle doing N GETs
//   BM_HttpGet_vs_Curl/cold:1   one invocation (fresh runtime, host API, I/O thread, connection) per
//                               GET, against a new curl easy handle (new connection) per GET
//   BM_Capability_vs_Curl/...   the same two comparisons for HttpCapability alone, without JS
//
// Counters: `*_us` wall time per request, `ratio` = skillbox / curl wall time; `cpu_ratio` compares
// process CPU time (all threads, the server's included for both sides), which the machine's other load
// disturbs less than wall time. The server is a minimal keep-alive HTTP/1.1 responder in this file.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/http/http_capability.h"
#include "skillbox/skillbox.h"

namespace {

namespace bus = skillbox::bus;
using Clock = std::chrono::steady_clock;

// Answers every request with a 2-byte body, keeping connections open. One thread polls the listening
// socket and every connection, so thousands of short connections (the cold case) cost no threads.
class LoopbackServer {
 public:
  LoopbackServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 256) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      std::abort();
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url(const char* path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  std::string origin() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  void loop() {
    static constexpr char kResponse[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok";
    std::vector<pollfd> fds{{fd_, POLLIN, 0}};
    std::vector<std::string> buffers{std::string()};
    char chunk[4096];
    while (!stop_) {
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      for (size_t i = fds.size(); i-- > 1;) {
        if (fds[i].revents == 0) continue;
        const ssize_t n = ::recv(fds[i].fd, chunk, sizeof chunk, 0);
        bool close_it = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
        if (n > 0) {
          std::string& buf = buffers[i];
          buf.append(chunk, static_cast<size_t>(n));
          size_t end;
          while (!close_it && (end = buf.find("\r\n\r\n")) != std::string::npos) {
            buf.erase(0, end + 4);
            close_it = ::send(fds[i].fd, kResponse, sizeof kResponse - 1, MSG_NOSIGNAL) < 0;
          }
        }
        if (close_it) {
          ::close(fds[i].fd);
          fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
          buffers.erase(buffers.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      if (fds[0].revents != 0) {
        int c;
        while ((c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
          fds.push_back({c, POLLIN, 0});
          buffers.emplace_back();
        }
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

size_t discard(char*, size_t size, size_t n, void*) {
  return size * n;
}

CURL* new_easy(const std::string& url) {
  CURL* e = curl_easy_init();
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &discard);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROXY, "");
  return e;
}

// Completion sink that lets the benchmark thread wait for one reply at a time.
class WaitSink : public bus::CompletionSink {
 public:
  void complete(uint64_t, bus::Reply reply) override {
    {
      std::lock_guard lock(mu_);
      ok_ = std::holds_alternative<bus::HttpResponseReply>(reply);
      done_ = true;
    }
    cv_.notify_one();  // after unlocking, as the engine's inbox does: the waiter can run at once
  }
  bool wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    done_ = false;
    return ok_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, ok_ = false;
};

skillbox::HttpPolicy policy_for(const LoopbackServer& server) {
  skillbox::HttpPolicy p;
  p.allow = {server.origin()};
  p.allow_private_addresses = true;
  p.max_requests = 1'000'000;
  return p;
}

bus::HttpRequest get(const std::string& url) {
  bus::HttpRequest r;
  r.url = url;
  return r;
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time of the whole process, in seconds.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Wall and CPU time of the baseline and the candidate, turned into counters.
struct Pair {
  double curl_wall = 0, curl_cpu = 0, skillbox_wall = 0, skillbox_cpu = 0;
  int64_t requests = 0;
  void report(benchmark::State& state) const {
    const auto n = static_cast<double>(requests);
    state.counters["curl_us"] = curl_wall / n * 1e6;
    state.counters["skillbox_us"] = skillbox_wall / n * 1e6;
    state.counters["ratio"] = skillbox_wall / curl_wall;
    state.counters["cpu_ratio"] = skillbox_cpu / curl_cpu;
  }
};

// The curl side of one batch: `batch` GETs, on one reused handle (warm) or a new handle each (cold).
void curl_batch(benchmark::State& state, CURL* shared, const std::string& url, bool cold, int batch) {
  for (int i = 0; i < batch; ++i) {
    CURL* e = cold ? new_easy(url) : shared;
    if (curl_easy_perform(e) != CURLE_OK) state.SkipWithError("curl request failed");
    if (cold) curl_easy_cleanup(e);
  }
}

// Arg cold 0: shared connection and capability; 1: new ones per request.
void BM_Capability_vs_Curl(benchmark::State& state) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const bool cold = state.range(0) == 1;
  constexpr int kBatch = 20;
  LoopbackServer server;
  const std::string url = server.url("/x");
  CURL* shared_easy = new_easy(url);
  WaitSink sink;
  bus::BusCounters counters;
  skillbox::capabilities::HttpCapability shared_cap(policy_for(server), {}, sink, counters);
  uint64_t id = 0;
  Pair pair;
  for (auto _ : state) {
    const auto w0 = Clock::now();
    const double c0 = process_cpu_seconds();
    curl_batch(state, shared_easy, url, cold, kBatch);
    const auto w1 = Clock::now();
    const double c1 = process_cpu_seconds();
    for (int i = 0; i < kBatch; ++i) {
      if (cold) {
        bus::BusCounters c;
        skillbox::capabilities::HttpCapability cap(policy_for(server), {}, sink, c);
        if (cap.start(++id, get(url)) || !sink.wait()) state.SkipWithError("skillbox request failed");
      } else if (shared_cap.start(++id, get(url)) || !sink.wait()) {
        state.SkipWithError("skillbox request failed");
      }
    }
    const auto w2 = Clock::now();
    const double c2 = process_cpu_seconds();
    pair.curl_wall += seconds(w1 - w0);
    pair.curl_cpu += c1 - c0;
    pair.skillbox_wall += seconds(w2 - w1);
    pair.skillbox_cpu += c2 - c1;
    pair.requests += kBatch;
    state.SetIterationTime(seconds(w2 - w1) / kBatch);
  }
  curl_easy_cleanup(shared_easy);
  pair.report(state);
}
BENCHMARK(BM_Capability_vs_Curl)
    ->ArgName("cold")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// A skill folder in the temp directory whose default export awaits `input.n` sequential GETs of
// `input.url` and returns the number of 200 answers.
class BenchSkill {
 public:
  explicit BenchSkill(const LoopbackServer& server) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "skillbox-httpbench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir_ = tmpl;
    std::ofstream(dir_ / "index.js")
        << "export default async function ({url, n}) {\n"
           "  let ok = 0;\n"
           "  for (let i = 0; i < n; i++) if ((await openhuman.http.get(url)).status === 200) ok++;\n"
           "  return ok;\n"
           "}\n";
    manifest_.id = "http-bench";
    manifest_.name = "http bench";
    manifest_.version = "1.0.0";
    manifest_.entry = "index.js";
    manifest_.permissions.http = policy_for(server);
  }
  ~BenchSkill() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  [[nodiscard]] skillbox::Skill skill() const { return {dir_, manifest_}; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  skillbox::Manifest manifest_;
};

// Arg cold 0: one invocation makes the whole batch; 1: one invocation per request.
void BM_HttpGet_vs_Curl(benchmark::State& state) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const bool cold = state.range(0) == 1;
  constexpr int kBatch = 20;
  LoopbackServer server;
  const std::string url = server.url("/x");
  BenchSkill skill(server);
  skillbox::HostOptions options;
  options.data_dir = skill.dir() / "data";
  skillbox::InProcessRunner runner(options);
  const auto invoke = [&](int n) {
    skillbox::Invocation inv{.skill = skill.skill(),
                             .export_name = "",
                             .input_json = "{\"url\":\"" + url + "\",\"n\":" + std::to_string(n) + "}",
                             .overrides = {}};
    const skillbox::RunResult r = runner.run(inv);
    if (r.outcome != skillbox::Outcome::ok || r.value_json != std::to_string(n))
      state.SkipWithError("skill run failed");
  };
  CURL* shared_easy = new_easy(url);
  Pair pair;
  for (auto _ : state) {
    const auto w0 = Clock::now();
    const double c0 = process_cpu_seconds();
    curl_batch(state, shared_easy, url, cold, kBatch);
    const auto w1 = Clock::now();
    const double c1 = process_cpu_seconds();
    if (cold) {
      for (int i = 0; i < kBatch; ++i) invoke(1);
    } else {
      invoke(kBatch);
    }
    const auto w2 = Clock::now();
    const double c2 = process_cpu_seconds();
    pair.curl_wall += seconds(w1 - w0);
    pair.curl_cpu += c1 - c0;
    pair.skillbox_wall += seconds(w2 - w1);
    pair.skillbox_cpu += c2 - c1;
    pair.requests += kBatch;
    state.SetIterationTime(seconds(w2 - w1) / kBatch);
  }
  curl_easy_cleanup(shared_easy);
  pair.report(state);
}
BENCHMARK(BM_HttpGet_vs_Curl)
    ->ArgName("cold")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
