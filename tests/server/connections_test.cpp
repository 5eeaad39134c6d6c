// What the server does with many connections (server/http_server.cpp): 1,000 slowloris clients, each
// dripping a header byte every 250 ms and never finishing, neither delay another client nor outlive
// header_timeout_ms; one address is held to max_connections_per_address while another is still served.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "serve_support.h"
#include "server/api_key.h"

namespace skillbox::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kKey = "connections-key-0123456789";

/// A config for one tenant "t" with a skill "greet", with `extra` top-level keys.
std::string write_config(const TempDir& tmp, const std::string& extra) {
  write_skill(tmp.path() / "skills" / "greet", "greet", "export default () => 'hi'");
  write_file(tmp.path() / "serve.toml", "listen = [\"127.0.0.1:0\"]\n" + extra +
                                            "\n[tenants.t]\nkey_sha256 = [\"" +
                                            server::key_hash_hex(server::hash_api_key(kKey)) +
                                            "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n");
  return (tmp.path() / "serve.toml").string();
}

/// Raises the soft descriptor limit to the hard one (the server, started after, inherits it); returns the
/// soft limit now.
rlim_t raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &r);
    (void)::getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// An authenticated GET /v1/skills on a fresh connection (a run-thread request, as every API call is):
/// its seconds, or a test failure when it is not 200.
double timed_listing(const std::string& url) {
  const auto start = Clock::now();
  const HttpReply r = http("GET", url + "/v1/skills", kKey);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(r.status, 200) << r.body;
  return seconds;
}

/// One slowloris connection.
struct Slow {
  int fd = -1;
  Clock::time_point first_byte;
  Clock::time_point closed;  // when the client saw the server close it
  bool open = true;
};

TEST(Connections, AThousandSlowlorisClientsDelayNobodyAndAreCutOffAtTheHeaderTimeout) {
  constexpr size_t kSlow = 1000;
  constexpr int kHeaderTimeoutMs = 6000;
  const rlim_t limit = raise_descriptor_limit();
  // The test holds kSlow descriptors and the server (a child, same limit) as many.
  if (limit < kSlow + 200) {
    GTEST_SKIP() << "the descriptor limit (RLIMIT_NOFILE hard limit " << limit << ") is below the "
                 << kSlow + 200 << " this test needs; raise it (ulimit -Hn) to run it";
  }
  TempDir tmp;
  // The per-address cap is set high here: all the clients are 127.0.0.1, and the cap has its own test.
  ServeProcess server({"--config", write_config(tmp,
                                                "max_connections = 1100\nmax_connections_per_address = 1100\n"
                                                "header_timeout_ms = " +
                                                    std::to_string(kHeaderTimeoutMs) + "\n")});
  ASSERT_FALSE(server.url.empty());

  std::vector<double> baseline;
  for (int i = 0; i < 15; ++i) baseline.push_back(timed_listing(server.url));

  std::vector<Slow> slow(kSlow);
  for (Slow& s : slow) {
    s.fd = connect_raw(server.url);
    ASSERT_GE(s.fd, 0);
    s.first_byte = Clock::now();
    ASSERT_TRUE(send_all(s.fd, "GET /v1/skills HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
  }
  std::atomic<size_t> open_count{kSlow};
  std::atomic<bool> stop{false};
  // One byte of header to each open connection every 250 ms; a connection that turns readable has been
  // closed by the server (it never answers a request that never ends).
  std::thread drip([&] {
    while (!stop.load() && open_count.load() > 0) {
      for (Slow& s : slow) {
        if (!s.open) continue;
        pollfd p{s.fd, POLLIN, 0};
        char byte = 'a';
        const bool readable = ::poll(&p, 1, 0) > 0;
        if ((readable && ::read(s.fd, &byte, 1) <= 0) ||
            (!readable && ::send(s.fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)) {
          s.closed = Clock::now();
          s.open = false;
          --open_count;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });

  // Requests of another client while every slow connection is open (samples taken after the first one
  // closed do not count: the attack was over for them).
  std::vector<double> loaded;
  for (int i = 0; i < 15 && open_count.load() == kSlow; ++i) {
    const double seconds = timed_listing(server.url);
    if (open_count.load() == kSlow) loaded.push_back(seconds);
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(kHeaderTimeoutMs) + std::chrono::seconds(60);
  while (open_count.load() > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  drip.join();

  ASSERT_GE(loaded.size(), 5u) << "too few requests completed while all " << kSlow
                               << " slow connections were open; the machine is too slow for this test";
  // Generous: a slowloris attack that worked would hold the others for the header timeout, thousands of
  // times the baseline.
  EXPECT_LE(median(loaded), 25 * median(baseline))
      << "baseline median " << median(baseline) << " s, under attack " << median(loaded) << " s";
  EXPECT_EQ(open_count.load(), 0u) << "slow connections still open a minute after the header timeout";
  size_t early = 0;
  for (const Slow& s : slow) {
    if (!s.open && s.closed - s.first_byte < std::chrono::milliseconds(kHeaderTimeoutMs * 9 / 10)) ++early;
    ::close(s.fd);
  }
  EXPECT_EQ(early, 0u) << "slow connections closed before the header timeout (refused, not held)";
  EXPECT_EQ(http("GET", server.url + "/v1/skills", kKey).status, 200);
}

/// How long `fd` stays open before the server closes it without a byte of answer (up to 60 s); -1 s when
/// an answer came instead.
std::chrono::milliseconds time_to_close(int fd) {
  const auto start = Clock::now();
  const std::string reply = read_reply(fd);
  if (!reply.empty()) return std::chrono::milliseconds(-1000);
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

TEST(Connections, EachPhaseOfARequestHasItsOwnDeadline) {
  TempDir tmp;
  // Deadlines far apart, so that which one closed a connection shows in when it closed.
  ServeProcess server({"--config", write_config(tmp,
                                                "idle_timeout_ms = 1000\nheader_timeout_ms = 4000\n"
                                                "body_timeout_ms = 2000\n")});
  ASSERT_FALSE(server.url.empty());
  const int idle = connect_raw(server.url);  // sends nothing
  ASSERT_GE(idle, 0);
  const auto idle_closed = time_to_close(idle);
  EXPECT_GE(idle_closed, std::chrono::milliseconds(900));
  EXPECT_LT(idle_closed, std::chrono::milliseconds(3500)) << "not closed at the idle timeout";
  ::close(idle);

  const int slow_body = connect_raw(server.url);  // all headers, half the body
  ASSERT_GE(slow_body, 0);
  ASSERT_TRUE(send_all(slow_body, std::string("POST /v1/skills/greet/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                              "Authorization: Bearer ") +
                                      kKey + "\r\nContent-Length: 100\r\n\r\n{\"input\":"));
  const auto body_closed = time_to_close(slow_body);
  EXPECT_GE(body_closed, std::chrono::milliseconds(1800));
  EXPECT_LT(body_closed, std::chrono::milliseconds(3900)) << "not closed at the body timeout";
  ::close(slow_body);

  // A request whose phases each keep their deadline is served, however long it took altogether.
  const int patient = connect_raw(server.url);
  ASSERT_GE(patient, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(send_all(patient, "GET /healthz HTTP/1.1\r\n"));
  std::this_thread::sleep_for(
      std::chrono::milliseconds(1500));  // past the idle timeout, within the header one
  ASSERT_TRUE(send_all(patient, "Host: 127.0.0.1\r\n\r\n"));
  const std::string reply = read_reply(patient);
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200"));
  // It says how long it keeps the connection for the next request, so that a client closes first.
  EXPECT_NE(reply.find("\r\nKeep-Alive: timeout=1\r\n"), std::string::npos) << reply;
  ::close(patient);
}

/// A keep-alive GET /healthz on `fd`: true when it is answered 200.
bool healthy(int fd) {
  return send_all(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") &&
         read_reply(fd).starts_with("HTTP/1.1 200");
}

TEST(Connections, OneAddressIsHeldToItsCapWhileAnotherIsServed) {
  TempDir tmp;
  ServeProcess server({"--config", write_config(tmp, "max_connections_per_address = 4\n")});
  ASSERT_FALSE(server.url.empty());
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(connect_raw(server.url));
    ASSERT_GE(held.back(), 0);
    EXPECT_TRUE(healthy(held.back())) << "connection " << i + 1 << " of 4";
  }
  const int fifth = connect_raw(server.url);
  ASSERT_GE(fifth, 0);
  (void)send_all(fifth, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(read_reply(fifth), "") << "the fifth connection from 127.0.0.1 was served";
  ::close(fifth);

  const int other = connect_raw(server.url, "127.0.0.2");
  ASSERT_GE(other, 0);
  EXPECT_TRUE(healthy(other)) << "127.0.0.2 was refused because of 127.0.0.1's connections";
  ::close(other);

  // A connection that ends frees its place (the server sees it close at once; a few tries for that).
  ::close(held.back());
  held.pop_back();
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    const int again = connect_raw(server.url);
    served = healthy(again);
    ::close(again);
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(served) << "127.0.0.1 was not served again after one of its connections closed";
  for (const int fd : held) {
    EXPECT_TRUE(healthy(fd)) << "a held connection stopped being served";
    ::close(fd);
  }
}

}  // namespace
}  // namespace skillbox::testing
