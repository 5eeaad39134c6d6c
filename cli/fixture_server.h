// cli/fixture_server.h — a loopback HTTP/1.1 server that answers from `skillbox test` fixtures.
//
// One server stands in for one origin of the test file ("https://api.example.com"): the run's origin
// map sends the skill's requests for that origin here, with the same path and query. A request that
// matches a fixture (cli/fixture_match.h: method, path with query, and the headers and body the fixture
// names) gets its response; any other gets 404 and is remembered as a miss, with the fixture that came
// closest and how the request differed from it, so the test can fail naming both. Messages name the
// origin the skill asked for, never this server's loopback address. Nothing here ever connects
// anywhere: the server only accepts, on 127.0.0.1, one connection at a time.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/fixture_match.h"
#include "skillbox/result.h"

namespace skillbox::cli {

struct FixtureResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // never Content-Length or Connection
  std::string body;
};

struct FixtureRoute {
  FixtureRequest request;
  FixtureResponse response;
};

/// A request no fixture matched.
struct FixtureMiss {
  std::string request;  // "POST https://api.example.com/v1/x"
  /// The closest fixture, "http[1] POST https://api.example.com/v1/x", and how the request differed
  /// from it (fixture_differences); both empty when the origin has no fixture at all.
  std::string closest;
  std::vector<std::string> differences;
};

class FixtureServer {
 public:
  /// Listens on 127.0.0.1 (a free port) and serves `routes` on a thread of its own until destroyed.
  /// `origin` ("https://api.example.com") is only used to name requests in misses and 404 bodies.
  static Result<std::unique_ptr<FixtureServer>> start(std::string origin, std::vector<FixtureRoute> routes);
  ~FixtureServer();
  FixtureServer(const FixtureServer&) = delete;
  FixtureServer& operator=(const FixtureServer&) = delete;

  /// "http://127.0.0.1:PORT": the origin-map target.
  [[nodiscard]] std::string address() const;
  /// Requests no fixture matched, in arrival order.
  [[nodiscard]] std::vector<FixtureMiss> misses() const;
  /// How many requests arrived (matched or not).
  [[nodiscard]] size_t requests() const;

 private:
  FixtureServer(std::string origin, std::vector<FixtureRoute> routes, int listen_fd, int wake_read,
                int wake_write, int port);
  void serve();
  void handle(int fd);

  std::string origin_;
  std::vector<FixtureRequest> fixtures_;  // fixtures_[i] is answered by answers_[i]
  std::vector<FixtureResponse> answers_;
  int listen_fd_;
  int wake_read_;
  int wake_write_;
  int port_;
  mutable std::mutex mutex_;
  std::vector<FixtureMiss> misses_;
  size_t requests_ = 0;
  std::thread thread_;
};

}  // namespace skillbox::cli
