// tests/support/http_test_server.cpp — threaded loopback HTTP/1.1 server with optional TLS (OpenSSL).
#include "support/http_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

namespace skillbox::testing {
namespace {

using namespace std::chrono_literals;

constexpr size_t kMaxRequestHead = size_t{256} * 1024;

std::string percent_decode(std::string_view s) {
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::map<std::string, std::string> parse_query(std::string_view target) {
  std::map<std::string, std::string> q;
  const size_t qm = target.find('?');
  if (qm == std::string_view::npos) return q;
  std::string_view rest = target.substr(qm + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view kv = rest.substr(0, amp);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos)
      q[std::string(kv)] = "";
    else
      q[std::string(kv.substr(0, eq))] = percent_decode(kv.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return q;
}

std::string gzip_zeros(size_t n) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::string zeros(size_t{64} * 1024, '\0');
  std::string out;
  char buf[64 * 1024];
  size_t left = n;
  int flush = Z_NO_FLUSH;
  do {
    const size_t chunk = std::min(left, zeros.size());
    left -= chunk;
    flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    zs.next_in = reinterpret_cast<Bytef*>(zeros.data());
    zs.avail_in = static_cast<uInt>(chunk);
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof buf;
      deflate(&zs, flush);
      out.append(buf, sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0);
  } while (flush != Z_FINISH);
  deflateEnd(&zs);
  return out;
}

// One accepted connection, plain or TLS. Sockets have 100 ms send/receive timeouts so every loop can
// notice the server stopping.
class Conn {
 public:
  Conn(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Conn() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  bool counted = false;  // the current request is counted in in_flight

  enum : int { kClosed = 0, kTimeout = -1, kError = -2 };

  // > 0 bytes read; kClosed when the peer closed; kTimeout when nothing arrived yet.
  int read_some(char* buf, int n) {
    if (ssl_ == nullptr) {
      const ssize_t r = ::recv(fd_, buf, static_cast<size_t>(n), 0);
      if (r > 0) return static_cast<int>(r);
      if (r == 0) return kClosed;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return kTimeout;
      return kClosed;  // reset counts as closed
    }
    ERR_clear_error();
    const int r = SSL_read(ssl_, buf, n);
    if (r > 0) return r;
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return kTimeout;
    if (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) && r < 0)
      return kTimeout;
    return kClosed;
  }

  // False when the peer is gone or the server stops.
  bool write_all(std::string_view data, const std::atomic<bool>& stopping) {
    while (!data.empty()) {
      if (stopping) return false;
      int w = 0;
      if (ssl_ == nullptr) {
        const ssize_t r = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
        if (r < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
          return false;
        }
        w = static_cast<int>(r);
      } else {
        ERR_clear_error();
        const int r = SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 20)));
        if (r <= 0) {
          const int e = SSL_get_error(ssl_, r);
          if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) continue;
          if (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
          return false;
        }
        w = r;
      }
      data.remove_prefix(static_cast<size_t>(w));
    }
    return true;
  }

  // Waits up to `slice` for the peer to close. True if it did.
  bool closed_within(std::chrono::milliseconds slice) {
    pollfd p{fd_, POLLIN, 0};
    if (ssl_ == nullptr || SSL_pending(ssl_) == 0) {
      if (::poll(&p, 1, static_cast<int>(slice.count())) <= 0) return false;
    }
    char buf[4096];
    const int r = read_some(buf, sizeof buf);
    return r == kClosed || r == kError;  // data from the client is ignored
  }

 private:
  int fd_;
  SSL* ssl_;
};

struct Request {
  std::string method, target, path, body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::map<std::string, std::string> query;
  bool close = false;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

struct HttpTestServer::Impl {
  HttpTestServerOptions options;
  int listen_fd = -1;
  uint16_t port = 0;
  SSL_CTX* ssl_ctx = nullptr;
  std::atomic<bool> stopping{false};
  std::thread acceptor;

  mutable std::mutex mu;
  mutable std::condition_variable changed;
  std::vector<std::thread> workers;
  uint64_t connections = 0, requests = 0, client_closes = 0, in_flight = 0, peak = 0, gate_permits = 0;
  uint64_t at_barrier = 0, barrier_generation = 0;
  std::vector<RecordedRequest> recorded;

  void bump(uint64_t& counter, int64_t by = 1) {
    std::lock_guard lock(mu);
    counter = static_cast<uint64_t>(static_cast<int64_t>(counter) + by);
    if (&counter == &in_flight && in_flight > peak) peak = in_flight;
    changed.notify_all();
  }

  void accept_loop();
  void serve(int fd);
  bool read_request(Conn& c, std::string& buffer, Request& req);
  bool handle(Conn& c, const Request& req);
  bool respond(Conn& c, int status, std::string_view reason, const std::vector<std::string>& headers,
               std::string_view body, bool close);
  void wait_for_close(Conn& c);
  // The request on `c` stops counting as in flight: called as its answer starts, so a client that
  // sends its next request the moment it has the answer never sees the old one still counted.
  void leave(Conn& c) {
    if (!c.counted) return;
    c.counted = false;
    bump(in_flight, -1);
  }
};

HttpTestServer::HttpTestServer(HttpTestServerOptions options) : impl_(std::make_unique<Impl>()) {
  // A client that goes away must not kill the test process. signal() fails only for an invalid
  // signal number.
  (void)std::signal(SIGPIPE, SIG_IGN);
  Impl& s = *impl_;
  s.options = std::move(options);
  if (s.options.tls) {
    s.ssl_ctx = SSL_CTX_new(TLS_server_method());
    BIO* cb = BIO_new_mem_buf(s.options.cert_pem.data(), static_cast<int>(s.options.cert_pem.size()));
    BIO* kb = BIO_new_mem_buf(s.options.key_pem.data(), static_cast<int>(s.options.key_pem.size()));
    X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    if (s.ssl_ctx == nullptr || cert == nullptr || key == nullptr ||
        SSL_CTX_use_certificate(s.ssl_ctx, cert) != 1 || SSL_CTX_use_PrivateKey(s.ssl_ctx, key) != 1)
      throw std::runtime_error("test server: TLS set-up failed");
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(cb);
    BIO_free(kb);
  }
  const int family = s.options.ipv6 ? AF_INET6 : AF_INET;
  s.listen_fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s.listen_fd < 0) throw std::runtime_error("test server: socket failed");
  int one = 1;
  ::setsockopt(s.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (s.options.ipv6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *a;
  }
  if (::bind(s.listen_fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(s.listen_fd, 128) != 0)
    throw std::runtime_error("test server: bind/listen failed");
  if (::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    throw std::runtime_error("test server: getsockname failed");
  s.port = ntohs(s.options.ipv6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  s.acceptor = std::thread([&s] { s.accept_loop(); });
}

HttpTestServer::~HttpTestServer() {
  Impl& s = *impl_;
  s.stopping = true;
  {
    std::lock_guard lock(s.mu);
    s.changed.notify_all();
  }
  if (s.acceptor.joinable()) s.acceptor.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(s.mu);
    workers.swap(s.workers);
  }
  for (auto& w : workers) w.join();
  ::close(s.listen_fd);
  if (s.ssl_ctx != nullptr) SSL_CTX_free(s.ssl_ctx);
}

void HttpTestServer::Impl::accept_loop() {
  while (!stopping) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    timeval tv{0, suseconds_t{100} * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::lock_guard lock(mu);
    ++connections;
    changed.notify_all();
    workers.emplace_back([this, fd] { serve(fd); });
  }
}

void HttpTestServer::Impl::serve(int fd) {
  SSL* ssl = nullptr;
  if (ssl_ctx != nullptr) {
    ssl = SSL_new(ssl_ctx);
    SSL_set_fd(ssl, fd);
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      ERR_clear_error();
      const int r = SSL_accept(ssl);
      if (r == 1) break;
      const int e = SSL_get_error(ssl, r);
      const bool again = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ||
                         (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK));
      if (!again || stopping || std::chrono::steady_clock::now() > give_up) {
        Conn dead(fd, ssl);  // frees and closes; handshake failures are what some tests expect
        return;
      }
    }
  }
  Conn c(fd, ssl);
  std::string buffer;
  while (!stopping) {
    Request req;
    if (!read_request(c, buffer, req)) return;
    {
      std::lock_guard lock(mu);
      ++requests;
      ++in_flight;
      if (in_flight > peak) peak = in_flight;
      recorded.push_back({req.method, req.target, req.headers, req.body});
      changed.notify_all();
    }
    c.counted = true;
    const bool keep = handle(c, req);
    leave(c);
    if (!keep || req.close) return;
  }
}

bool HttpTestServer::Impl::read_request(Conn& c, std::string& buffer, Request& req) {
  size_t head_end = 0;
  char buf[16384];
  while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
    if (stopping || buffer.size() > kMaxRequestHead) return false;
    const int r = c.read_some(buf, sizeof buf);
    if (r == Conn::kTimeout) continue;
    if (r <= 0) return false;
    buffer.append(buf, static_cast<size_t>(r));
  }
  const std::string head = buffer.substr(0, head_end);
  buffer.erase(0, head_end + 4);
  size_t line_end = head.find("\r\n");
  const std::string request_line = head.substr(0, line_end);
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return false;
  req.method = request_line.substr(0, sp1);
  req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  req.path = req.target.substr(0, req.target.find('?'));
  req.query = parse_query(req.target);
  size_t content_length = 0;
  while (line_end != std::string::npos && line_end < head.size()) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string line =
        head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    const std::string lname = lower(name);
    if (lname == "content-length") content_length = std::stoul(value);
    if (lname == "connection" && lower(value) == "close") req.close = true;
    req.headers.emplace_back(std::move(name), std::move(value));
  }
  while (buffer.size() < content_length) {
    if (stopping) return false;
    const int r = c.read_some(buf, sizeof buf);
    if (r == Conn::kTimeout) continue;
    if (r <= 0) return false;
    buffer.append(buf, static_cast<size_t>(r));
  }
  req.body = buffer.substr(0, content_length);
  buffer.erase(0, content_length);
  return true;
}

bool HttpTestServer::Impl::respond(Conn& c, int status, std::string_view reason,
                                   const std::vector<std::string>& headers, std::string_view body,
                                   bool close) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  for (const auto& h : headers) out += h + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  out += body;
  leave(c);
  return c.write_all(out, stopping) && !close;
}

void HttpTestServer::Impl::wait_for_close(Conn& c) {
  while (!stopping) {
    if (c.closed_within(50ms)) {
      bump(client_closes);
      return;
    }
  }
}

bool HttpTestServer::Impl::handle(Conn& c, const Request& req) {
  const auto q = [&](const char* key, const std::string& fallback = "") {
    auto it = req.query.find(key);
    return it == req.query.end() ? fallback : it->second;
  };
  const std::string& p = req.path;
  if (p == "/plain")
    return respond(c, 200, "OK", {"Content-Type: text/plain"}, "hello from the test server", false);
  if (p == "/json")
    return respond(c, 200, "OK", {"Content-Type: application/json"}, R"({"ok":true,"n":42,"s":"caf\u00e9"})",
                   false);
  if (p == "/echo") {
    nlohmann::json j;
    j["method"] = req.method;
    j["target"] = req.target;
    j["headers"] = nlohmann::json::array();
    for (const auto& [n, v] : req.headers) j["headers"].push_back({n, v});
    j["body"] = req.body;
    return respond(c, 200, "OK", {"Content-Type: application/json"}, j.dump(), false);
  }
  if (p == "/status") {
    const int code = std::stoi(q("code", "200"));
    // q("body") and q("type") replace the default body and Content-Type when given.
    return respond(c, code, "Custom Reason", {"Content-Type: " + q("type", "text/plain")},
                   q("body", "status " + std::to_string(code)), false);
  }
  if (p == "/headers")
    return respond(c, 200, "OK",
                   {"X-One: 1", "X-Multi: a", "X-Multi: b", "Set-Cookie: a=1; Path=/", "X-Mixed-CASE: Yes"},
                   "h", false);
  if (p == "/deep") {  // JSON nested n deep
    const size_t n = std::stoul(q("n", "100000"));
    return respond(c, 200, "OK", {"Content-Type: application/json"},
                   std::string(n, '[') + std::string(n, ']'), false);
  }
  if (p == "/text") {  // q("body") as given, text/plain
    return respond(c, 200, "OK", {"Content-Type: text/plain; charset=utf-8"}, q("body"), false);
  }
  if (p == "/binary") {
    std::string body(256, '\0');
    for (size_t i = 0; i < 256; ++i) body[i] = static_cast<char>(i);
    return respond(c, 200, "OK", {"Content-Type: application/octet-stream"}, body, false);
  }
  if (p == "/bytes") {
    const size_t n = std::stoul(q("n", "0"));
    if (q("chunked") != "1") return respond(c, 200, "OK", {}, std::string(n, 'x'), false);
    std::string out = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (size_t left = n; left > 0;) {
      const size_t chunk = std::min<size_t>(left, 4096);
      char size_line[32];
      // At most "1000\r\n" (chunk <= 4096); the length is not needed.
      (void)std::snprintf(size_line, sizeof size_line, "%zx\r\n", chunk);
      out += size_line + std::string(chunk, 'x') + "\r\n";
      left -= chunk;
    }
    out += "0\r\n\r\n";
    leave(c);
    return c.write_all(out, stopping);
  }
  if (p == "/redirect") {
    const int code = std::stoi(q("code", "302"));
    return respond(c, code, "Redirect", {"Location: " + q("to")}, "redirecting", false);
  }
  if (p == "/chain") {
    const int n = std::stoi(q("n", "0"));
    if (n <= 0) return respond(c, 200, "OK", {}, "end of chain", false);
    return respond(c, 302, "Found", {"Location: /chain?n=" + std::to_string(n - 1)}, "", false);
  }
  if (p == "/declared") {
    if (!c.write_all("HTTP/1.1 200 OK\r\nContent-Length: " + q("n", "1000000000") + "\r\n\r\n0123456789",
                     stopping))
      return false;
    wait_for_close(c);
    return false;
  }
  if (p == "/stream") {  // N bytes of 's' with Content-Length, written 64 KiB at a time (never held whole)
    const uint64_t n = std::stoull(q("n", "0"));
    if (!c.write_all("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(n) + "\r\n\r\n", stopping))
      return false;
    const std::string block(size_t{64} * 1024, 's');
    for (uint64_t left = n; left > 0;) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(left, block.size()));
      if (!c.write_all(std::string_view(block).substr(0, k), stopping)) {
        if (!stopping) bump(client_closes);
        return false;
      }
      left -= k;
    }
    return false;  // closes the connection after the body
  }
  if (p == "/forever") {
    if (!c.write_all("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", stopping)) return false;
    const std::string chunk = "4000\r\n" + std::string(0x4000, 'f') + "\r\n";
    while (c.write_all(chunk, stopping)) {
    }
    if (!stopping) bump(client_closes);
    return false;
  }
  if (p == "/gzip") {
    const std::string body = gzip_zeros(std::stoul(q("n", "1000")));
    return respond(c, 200, "OK", {"Content-Encoding: gzip", "Content-Type: application/octet-stream"}, body,
                   false);
  }
  if (p == "/drip") {
    const auto interval = std::chrono::milliseconds(std::stoi(q("interval_ms", "100")));
    if (!c.write_all("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", stopping)) return false;
    for (;;) {
      if (!c.write_all("d", stopping)) break;
      if (c.closed_within(interval)) break;
    }
    if (!stopping) bump(client_closes);
    return false;
  }
  if (p == "/hang") {
    wait_for_close(c);
    return false;
  }
  if (p == "/gate") {
    std::unique_lock lock(mu);
    while (gate_permits == 0 && !stopping) {
      lock.unlock();
      const bool gone = c.closed_within(20ms);
      lock.lock();
      if (gone) {
        ++client_closes;
        changed.notify_all();
        return false;
      }
      changed.wait_for(lock, 20ms);
    }
    if (stopping) return false;
    --gate_permits;
    lock.unlock();
    return respond(c, 200, "OK", {}, "through the gate", false);
  }
  if (p == "/barrier") {
    const uint64_t n = std::stoul(q("n", "2"));
    std::unique_lock lock(mu);
    const uint64_t generation = barrier_generation;
    ++at_barrier;
    if (at_barrier >= n) {
      at_barrier = 0;
      ++barrier_generation;
      changed.notify_all();
    }
    const bool met =
        changed.wait_for(lock, 60s, [&] { return barrier_generation != generation || stopping; });
    lock.unlock();
    if (!met || stopping) return respond(c, 504, "Barrier Timeout", {}, "barrier not met", true);
    if (q("then") == "hang") {
      wait_for_close(c);
      return false;
    }
    return respond(c, 200, "OK", {}, "met " + std::to_string(n), false);
  }
  return respond(c, 404, "Not Found", {}, "no such route", false);
}

uint16_t HttpTestServer::port() const {
  return impl_->port;
}

std::string HttpTestServer::origin() const {
  return std::string(impl_->options.tls ? "https://" : "http://") +
         (impl_->options.ipv6 ? "[::1]" : "127.0.0.1") + ":" + std::to_string(impl_->port);
}

std::string HttpTestServer::url(std::string_view path) const {
  return origin() + std::string(path);
}

#define SKILLBOX_COUNTER(name, field)     \
  uint64_t HttpTestServer::name() const { \
    std::lock_guard lock(impl_->mu);      \
    return impl_->field;                  \
  }
SKILLBOX_COUNTER(connections, connections)
SKILLBOX_COUNTER(requests, requests)
SKILLBOX_COUNTER(client_closes, client_closes)
SKILLBOX_COUNTER(in_flight, in_flight)
SKILLBOX_COUNTER(peak_in_flight, peak)
#undef SKILLBOX_COUNTER

std::vector<RecordedRequest> HttpTestServer::recorded() const {
  std::lock_guard lock(impl_->mu);
  return impl_->recorded;
}

bool HttpTestServer::wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(impl_->mu);
  for (;;) {
    lock.unlock();
    if (pred()) return true;
    lock.lock();
    if (std::chrono::steady_clock::now() >= deadline) break;
    impl_->changed.wait_for(lock, 20ms);
  }
  lock.unlock();
  return pred();
}

void HttpTestServer::open_gate(unsigned n) {
  std::lock_guard lock(impl_->mu);
  impl_->gate_permits += n;
  impl_->changed.notify_all();
}

}  // namespace skillbox::testing
