// Per-request cost of skillbox's HTTP path against plain libcurl, to the same loopback server, each
// pair measured in the same benchmark run and reported as a ratio (counter `ratio` = skillbox time /
// libcurl time per request):
//
//   BM_Capability_vs_Curl/warm   one HttpCapability (one invocation) making sequential GETs on a kept
//                                connection, against one reused curl easy handle
//   BM_Capability_vs_Curl/cold   a new HttpCapability per GET (new I/O thread, new connection), against
//                                a new curl easy handle per GET (new connection)
//
// The server is a minimal keep-alive HTTP/1.1 responder in this file, so both sides see the same
// server cost. Absolute times depend on the machine; the ratio is what to watch.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/http/http_capability.h"

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
    std::lock_guard lock(mu_);
    ok_ = std::holds_alternative<bus::HttpResponseReply>(reply);
    done_ = true;
    cv_.notify_one();
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

// Arg 0: warm (shared connection and capability), 1: cold (new ones per request).
void BM_Capability_vs_Curl(benchmark::State& state) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const bool cold = state.range(0) == 1;
  constexpr int kBatch = 20;
  LoopbackServer server;
  const std::string url = server.url("/x");
  double curl_s = 0, skillbox_s = 0;
  int64_t requests = 0;

  CURL* shared_easy = new_easy(url);
  WaitSink sink;
  bus::BusCounters counters;
  skillbox::capabilities::HttpCapability shared_cap(policy_for(server), {}, sink, counters);
  uint64_t id = 0;

  for (auto _ : state) {
    auto t0 = Clock::now();
    for (int i = 0; i < kBatch; ++i) {
      CURL* e = cold ? new_easy(url) : shared_easy;
      if (curl_easy_perform(e) != CURLE_OK) state.SkipWithError("curl request failed");
      if (cold) curl_easy_cleanup(e);
    }
    auto t1 = Clock::now();
    for (int i = 0; i < kBatch; ++i) {
      if (cold) {
        bus::BusCounters c;
        skillbox::capabilities::HttpCapability cap(policy_for(server), {}, sink, c);
        if (cap.start(++id, get(url)) || !sink.wait()) state.SkipWithError("skillbox request failed");
      } else if (shared_cap.start(++id, get(url)) || !sink.wait()) {
        state.SkipWithError("skillbox request failed");
      }
    }
    auto t2 = Clock::now();
    curl_s += seconds(t1 - t0);
    skillbox_s += seconds(t2 - t1);
    requests += kBatch;
    state.SetIterationTime(seconds(t2 - t1) / kBatch);
  }
  curl_easy_cleanup(shared_easy);
  state.counters["curl_us"] = curl_s / static_cast<double>(requests) * 1e6;
  state.counters["skillbox_us"] = skillbox_s / static_cast<double>(requests) * 1e6;
  state.counters["ratio"] = skillbox_s / curl_s;
}
BENCHMARK(BM_Capability_vs_Curl)
    ->ArgName("cold")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
