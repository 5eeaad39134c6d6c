// cli/fixture_server.h — a loopback HTTP/1.1 server that answers from `skillbox test` fixtures.
//
// One server stands in for one origin of the test file ("https://api.example.com"): the run's origin
// map sends the skill's requests for that origin here, with the same path and query. A request that
// matches a fixture (method and path-with-query, exactly) gets its response; any other gets 404 and is
// remembered as a miss, so the test can fail naming the request it had no answer for. Nothing here
// ever connects anywhere: the server only accepts, on 127.0.0.1, one connection at a time.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "skillbox/result.h"

namespace skillbox::cli {

struct FixtureResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // never Content-Length or Connection
  std::string body;
};

struct FixtureRoute {
  std::string method;  // upper case
  std::string target;  // path and query as sent: "/v1/weather?city=Paris"
  FixtureResponse response;
};

class FixtureServer {
 public:
  /// Listens on 127.0.0.1 (a free port) and serves `routes` on a thread of its own until destroyed.
  /// `origin` ("https://api.example.com") is only used to name misses.
  static Result<std::unique_ptr<FixtureServer>> start(std::string origin, std::vector<FixtureRoute> routes);
  ~FixtureServer();
  FixtureServer(const FixtureServer&) = delete;
  FixtureServer& operator=(const FixtureServer&) = delete;

  /// "http://127.0.0.1:PORT": the origin-map target.
  [[nodiscard]] std::string address() const;
  /// Requests no fixture matched, as "GET https://api.example.com/v1/x", in arrival order.
  [[nodiscard]] std::vector<std::string> misses() const;
  /// How many requests arrived (matched or not).
  [[nodiscard]] size_t requests() const;

 private:
  FixtureServer(std::string origin, std::vector<FixtureRoute> routes, int listen_fd, int wake_read,
                int wake_write, int port);
  void serve();
  void handle(int fd);

  std::string origin_;
  std::vector<FixtureRoute> routes_;
  int listen_fd_;
  int wake_read_;
  int wake_write_;
  int port_;
  mutable std::mutex mutex_;
  std::vector<std::string> misses_;
  size_t requests_ = 0;
  std::thread thread_;
};

}  // namespace skillbox::cli
