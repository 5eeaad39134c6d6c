// tests/support/http_test_server.h — a real HTTP/1.1 (and HTTPS) server on loopback for the tests.
//
// Each server listens on 127.0.0.1 (or ::1) on a port the kernel picks, serves each connection on its
// own thread (keep-alive supported) and counts what it saw, so tests can assert bytes and connections
// on the wire: "the server saw no connection" is connections() == 0 after a later control request
// shows the accept queue was drained. Routes (query parameters in brackets):
//
//   /plain                  200 text/plain "hello from the test server"
//   /json                   200 application/json {"ok":true,"n":42,"s":"caf\u00e9"}
//   /echo                   200 JSON {method, target, headers: [[name, value], ...], body}
//   /status?code=N          status N, body "status N" (or &body=TEXT, &type=CONTENT-TYPE)
//   /headers                200 with X-One, two X-Multi, Set-Cookie and X-Mixed-CASE headers
//   /binary                 the 256 byte values 0..255
//   /deep?n=N               JSON nested N deep: N '[' then N ']'
//   /text?body=B            200 text/plain with body B (percent-decoded)
//   /bytes?n=N[&chunked=1]  N bytes of 'x', with Content-Length or chunked
//   /redirect?to=URL[&code=C]  C (default 302) with Location: URL (percent-decoded)
//   /chain?n=K              K > 0: 302 to /chain?n=K-1; K == 0: 200 "end of chain"
//   /declared?n=N           Content-Length: N, 10 bytes, then waits for the client to close
//   /stream?n=N             N bytes of 's' with Content-Length, streamed (never held whole), then close
//   /forever                chunked 16 KiB chunks until the client closes
//   /gzip?n=N               Content-Encoding: gzip of N zero bytes (small on the wire)
//   /drip?interval_ms=M     1 byte every M ms (Content-Length 1e6) until the client closes
//   /hang                   never answers; waits for the client to close
//   /gate                   waits until the test calls open_gate(), then 200 "through the gate"
//   /barrier?n=N[&then=hang]  waits until N requests are inside at once, then 200 "met N" (504 after
//                           60 s); with then=hang it answers nothing and waits for the client to close
//
// "Waits for the client to close" ends by counting a client close (client_closes()).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace skillbox::testing {

struct HttpTestServerOptions {
  bool tls = false;      // serve HTTPS with cert_pem/key_pem
  std::string cert_pem;  // server certificate (TLS only)
  std::string key_pem;   // its key
  bool ipv6 = false;     // listen on [::1] instead of 127.0.0.1
};

/// One request as the server parsed it.
struct RecordedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;
};

class HttpTestServer {
 public:
  explicit HttpTestServer(HttpTestServerOptions options = {});
  ~HttpTestServer();  // closes every connection and joins every thread
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  [[nodiscard]] uint16_t port() const;
  /// "http://127.0.0.1:PORT" (https, [::1] as configured).
  [[nodiscard]] std::string origin() const;
  /// origin() + path.
  [[nodiscard]] std::string url(std::string_view path) const;

  [[nodiscard]] uint64_t connections() const;     // TCP connections accepted
  [[nodiscard]] uint64_t requests() const;        // requests parsed
  [[nodiscard]] uint64_t client_closes() const;   // client closed while the server waited/streamed
  [[nodiscard]] uint64_t in_flight() const;       // requests being handled now
  [[nodiscard]] uint64_t peak_in_flight() const;  // most requests handled at once
  [[nodiscard]] std::vector<RecordedRequest> recorded() const;

  /// Waits until `pred` holds (re-checked whenever a counter changes). Returns pred().
  bool wait_until(const std::function<bool()>& pred,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60)) const;
  /// Lets `n` more requests waiting at /gate through.
  void open_gate(unsigned n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::testing
