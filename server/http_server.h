// server/http_server.h — HTTP/1.1 with keep-alive on TCP and UNIX sockets, through Boost.Beast and
// Asio: no HTTP parsing of our own. One I/O thread (the one that calls run()) does all socket work;
// handlers answer from any thread.
//
// Every request gets a random 128-bit id (X-Request-Id on the response, and in its log line). What a
// client cannot do to the server: send a body above max_body_bytes (413, then the connection closes),
// a request line and headers above max_header_bytes (431), a target above max_target_bytes (414),
// wait longer than idle_timeout_ms to start a request or read a response, take longer than
// header_timeout_ms to send the request line and headers or body_timeout_ms to send the body (the
// connection closes: slow clients hold one connection each, never the I/O thread), or open more than
// max_connections at once, or max_connections_per_address from one IP address.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "server/config.h"
#include "server/http_types.h"
#include "skillbox/result.h"

namespace skillbox::server {

/// What the HTTP layer enforces on every connection (ServerConfig's keys of the same names).
struct Bounds {
  size_t max_body_bytes = 0;
  size_t max_header_bytes = 0;
  size_t max_target_bytes = 0;
  std::chrono::milliseconds idle_timeout{0};
  std::chrono::milliseconds header_timeout{0};
  std::chrono::milliseconds body_timeout{0};
  size_t max_connections = 0;
  size_t max_connections_per_address = 0;
  [[nodiscard]] static Bounds of(const ServerConfig& config);
};

/// One request read from `bytes` as a connection reads it (the same Beast parser, bounds and
/// refusals), without a socket: the request as the handler gets it (without its request_id), or the
/// response a connection sends without asking the handler (400, 413, 414, 431). std::nullopt when
/// `bytes` end before the request does (a connection would wait for more). For the request-path fuzz
/// target (fuzz/serve_request.cpp).
[[nodiscard]] std::optional<std::variant<HttpRequest, HttpResponse>> parse_request(std::string_view bytes,
                                                                                   const Bounds& bounds);

class HttpServer {
 public:
  /// `gone` is called when a client closes its connection while its request is being served: the
  /// connection is watched for end-of-file from the moment the request is read until its response is
  /// written (a client that half-closes its side counts as gone, as with nginx).
  /// `served` (optional) is told of every response written (the audit).
  HttpServer(const ServerConfig& config, Handler handler, ClientGone gone, Served served = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and listens on `listener` (before run()). Returns its URL: "http://127.0.0.1:8080" (the
  /// port actually bound, for port 0), "https://..." for a listener with TLS (server/tls.h), or
  /// "unix:/path". A UNIX socket file is made 0600; a stale socket file at the path is replaced,
  /// anything else there is an error. A TLS listener whose files do not load is an error.
  Result<std::string> listen(const Listener& listener);

  /// Reads each TLS listener's certificate and key files again (a SIGHUP: certificate rotation); new
  /// connections get them, open ones keep theirs. A listener whose files do not load keeps its old
  /// ones; the returned lines say which and why. I/O thread only (the signal handler of run()).
  std::vector<std::string> reload_tls();

  /// Takes the bounds of `config` (a reloaded config) for what comes next: new connections, and each
  /// open connection's next read or write. Any thread.
  void reconfigure(const ServerConfig& config);

  /// Runs the I/O loop on the calling thread until stop(). `on_signal` runs on that thread for each
  /// SIGINT, SIGTERM or SIGHUP received meanwhile.
  void run(const std::function<void(int signal)>& on_signal);

  /// Closes the listeners and stops keep-alive: each connection closes after its current response.
  /// Any thread.
  void stop_accepting();
  /// Requests read and not yet answered (written or failed). Any thread.
  [[nodiscard]] size_t open_requests() const;
  /// Ends run(); connections are dropped. Any thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::server
