// server/http_server.cpp — see http_server.h. The only file that includes Boost.Beast.
#include "server/http_server.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <optional>
#include <system_error>
#include <vector>

#include "base/escape.h"
#include "server/api_key.h"

namespace skillbox::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;

/// What every connection shares: the bounds, the handler, the counters.
struct Shared {
  size_t max_body_bytes = 0;
  size_t max_header_bytes = 0;
  size_t max_target_bytes = 0;
  std::chrono::milliseconds idle_timeout{0};
  size_t max_connections = 0;
  Handler handler;
  ClientGone gone;
  std::atomic<size_t> connections{0};
  std::atomic<size_t> open_requests{0};
  std::atomic<bool> closing{false};  // draining: no keep-alive, no new connection
};

/// One log line per request on stderr, written whole: request id, method and path, status, tenant, time.
void log_request(const std::string& id, const std::string& method, std::string_view target, unsigned status,
                 const std::string& tenant, const std::string& outcome, Clock::time_point started) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  // The path only: a query string is never read, and may hold what a client thought was a key.
  const std::string_view path = target.substr(0, std::min<size_t>(target.find('?'), 256));
  std::string line = "skillbox serve: request_id=" + id + " \"" + base::escape_text(method) + " " +
                     base::escape_text(path) + "\" status=" + std::to_string(status) +
                     " tenant=" + (tenant.empty() ? "-" : tenant) +
                     (outcome.empty() ? "" : " outcome=" + outcome) + " ms=" + std::to_string(ms) + "\n";
  (void)std::fwrite(line.data(), 1, line.size(), stderr);
}

/// True when the peer of `socket` is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x.y.z).
template <class Socket>
bool peer_is_loopback(const Socket& socket) {
  beast::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return false;
  const asio::ip::address a = peer.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

/// The ResponseStream of one streamed response: hands each part to its connection's I/O strand.
/// `post` is empty once the request is over.
class ChunkStream final : public ResponseStream {
 public:
  explicit ChunkStream(std::function<void(std::optional<std::string>)> post) : post_(std::move(post)) {}
  void write(std::string bytes) override {
    if (!gone_.load()) post_(std::move(bytes));
  }
  void end() override {
    if (!ended_.exchange(true)) post_(std::nullopt);
  }
  [[nodiscard]] bool gone() const override { return gone_.load(); }
  void mark_gone() { gone_ = true; }

 private:
  std::function<void(std::optional<std::string>)> post_;  // a part, or nullopt for the end
  std::atomic<bool> gone_{false};
  std::atomic<bool> ended_{false};
};

/// One connection: read a request, hand it to the handler, write the response, repeat while kept alive.
template <class Protocol>
class Session : public std::enable_shared_from_this<Session<Protocol>> {
  using Stream = beast::basic_stream<Protocol, asio::any_io_executor, beast::unlimited_rate_policy>;

 public:
  Session(typename Protocol::socket&& socket, std::shared_ptr<Shared> shared, std::string listener_tenant)
      : stream_(std::move(socket)), shared_(std::move(shared)), listener_tenant_(std::move(listener_tenant)) {
    ++shared_->connections;
  }
  ~Session() { --shared_->connections; }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(shared_->max_header_bytes));
    parser_->body_limit(shared_->max_body_bytes);
    // The whole request must arrive within the timeout (slow-request attack): one deadline for the
    // composed read, not one per read_some.
    stream_.expires_after(shared_->idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::on_read, this->shared_from_this()));
  }

  void on_read(beast::error_code ec, size_t /*bytes*/) {
    stream_.expires_never();
    if (!ec) return handle();
    // An error of the HTTP parser is the client's malformed request: it gets an answer. Anything else
    // (end of stream, a reset, the timeout) leaves nobody to answer.
    const bool parse_error = ec.category() == http::make_error_code(http::error::bad_target).category();
    if (!parse_error || ec == http::error::end_of_stream || ec == http::error::partial_message)
      return close();
    started_ = Clock::now();
    request_id_ = random_hex(16);
    method_ = "-";
    target_.clear();
    if (ec == http::error::body_limit) {
      return fail(413, "payload_too_large",
                  "the request body is larger than " + std::to_string(shared_->max_body_bytes) +
                      " bytes (max_body_bytes)");
    }
    if (ec == http::error::header_limit) {
      return fail(431, "headers_too_large",
                  "the request line and headers are larger than " +
                      std::to_string(shared_->max_header_bytes) + " bytes (max_header_bytes)");
    }
    return fail(400, "bad_request", "malformed HTTP request: " + ec.message());
  }

  void handle() {
    started_ = Clock::now();
    request_id_ = random_hex(16);
    http::request<http::string_body>& req = parser_->get();
    method_ = std::string(req.method_string());
    target_ = std::string(req.target());
    keep_alive_ = req.keep_alive();
    if (target_.size() > shared_->max_target_bytes) {
      return fail(414, "uri_too_long",
                  "the request target is longer than " + std::to_string(shared_->max_target_bytes) +
                      " bytes (max_target_bytes)");
    }
    HttpRequest request{.request_id = request_id_,
                        .method = method_,
                        .target = target_,
                        .authorization = std::string(req[http::field::authorization]),
                        .body = std::move(req.body()),
                        .headers = {},
                        .listener_tenant = listener_tenant_};
    for (const auto& field : req) {
      if (field.name() == http::field::authorization) continue;
      std::string name(field.name_string());
      for (char& c : name) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      request.headers.emplace_back(std::move(name), std::string(field.value()));
    }
    ++shared_->open_requests;
    auto self = this->shared_from_this();
    watching_ = true;
    shared_->handler(
        std::move(request),
        [self](HttpResponse response) {
          asio::post(self->stream_.get_executor(),
                     [self, response = std::move(response)]() mutable { self->write(std::move(response)); });
        },
        [self](HttpResponse head) -> std::shared_ptr<ResponseStream> {
          auto chunks = std::make_shared<ChunkStream>([self](std::optional<std::string> part) {
            asio::post(self->stream_.get_executor(),
                       [self, part = std::move(part)]() mutable { self->on_part(std::move(part)); });
          });
          asio::post(self->stream_.get_executor(), [self, chunks, head = std::move(head)]() mutable {
            self->write_head(std::move(head), chunks);
          });
          return chunks;
        });
    if (watching_) watch();
  }

  /// Waits for the socket to turn readable while the request is served: end-of-file or an error then
  /// means the client went away (its run is cancelled); bytes mean a pipelined request, which is no
  /// sign of leaving, and end the watch.
  void watch() {
    stream_.socket().async_wait(
        Protocol::socket::wait_read, [self = this->shared_from_this()](beast::error_code ec) {
          if (ec || !self->watching_) return;
          char byte = 0;
          const ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n > 0) return;
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            return self->watch();
          }
          self->watching_ = false;
          if (self->chunks_) self->chunks_->mark_gone();
          if (self->shared_->gone) self->shared_->gone(self->request_id_);
        });
  }

  /// Starts a streamed response (RespondStream): the head, then each part as a chunk; the watch for the
  /// client's leaving goes on until the last chunk.
  void write_head(const HttpResponse& head, const std::shared_ptr<ChunkStream>& chunks) {
    chunks_ = chunks;
    status_ = head.status;
    tenant_ = head.tenant;
    auto message =
        std::make_shared<http::response<http::empty_body>>(static_cast<http::status>(head.status), 11);
    message->set(http::field::server, "skillbox");
    message->set(http::field::content_type,
                 head.content_type.empty() ? "application/json" : head.content_type);
    message->set("X-Request-Id", request_id_);
    for (const auto& [name, value] : head.headers) message->set(name, value);
    keep_ = keep_alive_ && !shared_->closing.load();
    message->keep_alive(keep_);
    message->chunked(true);
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*message);
    stream_.expires_after(shared_->idle_timeout);
    http::async_write_header(
        stream_, *serializer,
        [self = this->shared_from_this(), message, serializer](beast::error_code ec, size_t) {
          self->stream_.expires_never();
          self->head_written_ = true;
          if (ec) self->broken();
          self->pump();
        });
  }

  /// A part of the streamed body, or its end (nullopt), on the I/O strand.
  void on_part(std::optional<std::string> part) {
    if (!part) {
      end_requested_ = true;
    } else if (!broken_) {
      parts_.push_back(std::move(*part));
    }
    pump();
  }

  /// Writes the next queued part, or the last chunk once the end was asked for and nothing is left.
  void pump() {
    if (!head_written_ || chunk_writing_ || finished_) return;
    if (!parts_.empty()) {
      auto data = std::make_shared<std::string>(std::move(parts_.front()));
      parts_.pop_front();
      chunk_writing_ = true;
      stream_.expires_after(shared_->idle_timeout);
      asio::async_write(stream_, http::make_chunk(asio::buffer(*data)),
                        [self = this->shared_from_this(), data](beast::error_code ec, size_t) {
                          self->stream_.expires_never();
                          self->chunk_writing_ = false;
                          if (ec) self->broken();
                          self->pump();
                        });
      return;
    }
    if (!end_requested_) return;
    if (broken_) return finish_stream(false);
    chunk_writing_ = true;
    stream_.expires_after(shared_->idle_timeout);
    asio::async_write(stream_, http::make_chunk_last(),
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        self->stream_.expires_never();
                        self->chunk_writing_ = false;
                        self->finish_stream(!ec);
                      });
  }

  void broken() {
    broken_ = true;
    parts_.clear();
    if (chunks_) chunks_->mark_gone();
  }

  void finish_stream(bool ok) {
    finished_ = true;
    if (watching_) {
      watching_ = false;
      beast::error_code ignored;
      stream_.socket().cancel(ignored);
    }
    log_request(request_id_, method_, target_, status_, tenant_, "", started_);
    --shared_->open_requests;
    chunks_.reset();  // it holds this connection through its post_: the cycle ends here
    head_written_ = end_requested_ = broken_ = finished_ = false;
    if (!ok || !keep_) return close();
    read();
  }

  /// Answers a request that never reached the handler, and closes the connection after it (the rest
  /// of the request, if any, is not read).
  void fail(unsigned status, std::string_view code, const std::string& message) {
    keep_alive_ = false;
    ++shared_->open_requests;
    write(error_response(status, code, message));
  }

  void write(HttpResponse response) {
    if (watching_) {
      watching_ = false;
      beast::error_code ignored;
      stream_.socket().cancel(ignored);  // ends the watch's wait
    }
    auto message =
        std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), 11);
    message->set(http::field::server, "skillbox");
    const bool json = response.content_type.empty();
    // A JSON response without a body (202 Accepted, 204 No Content) has no body at all.
    const bool bodiless = json && response.body.empty();
    if (!bodiless) message->set(http::field::content_type, json ? "application/json" : response.content_type);
    message->set("X-Request-Id", request_id_);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    const bool keep = keep_alive_ && !shared_->closing.load();
    message->keep_alive(keep);
    message->body() = json && !bodiless ? std::move(response.body) + "\n" : std::move(response.body);
    // 204 carries no Content-Length at all (RFC 9110, 8.6).
    if (response.status != 204) message->prepare_payload();
    log_request(request_id_, method_, target_, response.status, response.tenant, response.outcome, started_);
    stream_.expires_after(shared_->idle_timeout);
    http::async_write(stream_, *message,
                      [self = this->shared_from_this(), message, keep](beast::error_code ec, size_t /*n*/) {
                        --self->shared_->open_requests;
                        self->stream_.expires_never();
                        if (ec || !keep) return self->close();
                        self->read();
                      });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(asio::socket_base::shutdown_send, ignored);
  }

  Stream stream_;
  std::shared_ptr<Shared> shared_;
  const std::string listener_tenant_;  // auth = "none" listener: the tenant it serves
  // A streamed response in progress (write_head .. finish_stream), I/O strand only.
  std::shared_ptr<ChunkStream> chunks_;
  std::deque<std::string> parts_;
  bool head_written_ = false;
  bool chunk_writing_ = false;
  bool end_requested_ = false;
  bool broken_ = false;
  bool finished_ = false;
  bool keep_ = false;
  unsigned status_ = 200;
  std::string tenant_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = false;
  bool watching_ = false;  // the request is with the handler and the socket is watched for its close
  std::string request_id_;
  std::string method_;
  std::string target_;
  Clock::time_point started_;
};

/// Accepts connections on one listening socket and starts a Session for each.
template <class Protocol>
class Acceptor : public std::enable_shared_from_this<Acceptor<Protocol>> {
 public:
  /// `listener_tenant` non-empty: the listener has no authentication (auth = "none") and serves that
  /// tenant; it then closes every connection whose peer is not a loopback address.
  Acceptor(asio::io_context& io, typename Protocol::acceptor&& acceptor, std::shared_ptr<Shared> shared,
           std::string listener_tenant)
      : io_(io),
        acceptor_(std::move(acceptor)),
        shared_(std::move(shared)),
        retry_(io),
        listener_tenant_(std::move(listener_tenant)) {}

  void accept() {
    acceptor_.async_accept(
        asio::make_strand(io_),
        [self = this->shared_from_this()](beast::error_code ec, typename Protocol::socket socket) {
          self->on_accept(ec, std::move(socket));
        });
  }

  void close() {
    beast::error_code ignored;
    acceptor_.close(ignored);
    retry_.cancel();
  }

 private:
  void on_accept(beast::error_code ec, typename Protocol::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // EMFILE and the like: try again a little later rather than spin on the error.
      retry_.expires_after(std::chrono::milliseconds(50));
      retry_.async_wait([self = this->shared_from_this()](beast::error_code e) {
        if (!e) self->accept();
      });
      return;
    }
    // An unauthenticated listener is for local tools only: a remote peer (a proxy, a forwarded port)
    // never gets in, whatever address the listener was bound to.
    bool refused = false;
    if constexpr (std::is_same_v<Protocol, asio::ip::tcp>) {
      refused = !listener_tenant_.empty() && !peer_is_loopback(socket);
    } else {
      refused = !listener_tenant_.empty();
    }
    if (refused || shared_->closing.load() || shared_->connections.load() >= shared_->max_connections) {
      beast::error_code ignored;
      socket.close(ignored);  // over the connection cap: closed at once, nothing read
    } else {
      std::make_shared<Session<Protocol>>(std::move(socket), shared_, listener_tenant_)->start();
    }
    accept();
  }

  asio::io_context& io_;
  typename Protocol::acceptor acceptor_;
  std::shared_ptr<Shared> shared_;
  asio::steady_timer retry_;
  const std::string listener_tenant_;
};

std::string endpoint_url(const asio::ip::tcp::endpoint& ep) {
  const asio::ip::address a = ep.address();
  const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return "http://" + host + ":" + std::to_string(ep.port());
}

std::string error_text(const beast::error_code& ec) {
  return ec.message();
}

}  // namespace

struct HttpServer::Impl {
  asio::io_context io{1};
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::vector<std::function<void()>> closers;  // one per listener, run on the I/O thread
  std::vector<std::filesystem::path> socket_files;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};

  Result<std::string> listen_tcp(const Listener& l);
  Result<std::string> listen_unix(const Listener& l);
};

HttpServer::HttpServer(const ServerConfig& config, Handler handler, ClientGone gone)
    : impl_(std::make_unique<Impl>()) {
  Shared& s = *impl_->shared;
  s.max_body_bytes = config.max_body_bytes;
  s.max_header_bytes = config.max_header_bytes;
  s.max_target_bytes = config.max_target_bytes;
  s.idle_timeout = std::chrono::milliseconds(config.idle_timeout_ms);
  s.max_connections = config.max_connections;
  s.handler = std::move(handler);
  s.gone = std::move(gone);
}

HttpServer::~HttpServer() {
  for (const std::filesystem::path& p : impl_->socket_files) {
    std::error_code ignored;
    std::filesystem::remove(p, ignored);
  }
}

Result<std::string> HttpServer::Impl::listen_tcp(const Listener& l) {
  beast::error_code ec;
  const asio::ip::tcp::endpoint ep(asio::ip::make_address(l.address, ec), l.port);
  if (ec) return Error{"not an IP address: " + l.address};
  asio::ip::tcp::acceptor acceptor(io);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) {
    const std::string url = endpoint_url(acceptor.local_endpoint());
    auto a = std::make_shared<Acceptor<asio::ip::tcp>>(io, std::move(acceptor), shared,
                                                       l.auth_none ? l.tenant : std::string());
    a->accept();
    closers.emplace_back([a] { a->close(); });
    return url;
  }
  return Error{"cannot listen on " + endpoint_url(ep).substr(7) + ": " + error_text(ec)};
}

Result<std::string> HttpServer::Impl::listen_unix(const Listener& l) {
  using Local = asio::local::stream_protocol;
  struct stat st {};
  if (::lstat(l.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return Error{"cannot listen on unix:" + l.path.string() + ": a file that is not a socket is there"};
    std::error_code ignored;
    std::filesystem::remove(l.path, ignored);  // a stale socket of an earlier run
  }
  beast::error_code ec;
  Local::acceptor acceptor(io);
  // umask-independent 0600: the socket is the tenants' door, not the machine's.
  const mode_t old_mask = ::umask(0177);
  acceptor.open(Local(), ec);
  if (!ec) acceptor.bind(Local::endpoint(l.path.string()), ec);
  ::umask(old_mask);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Error{"cannot listen on unix:" + l.path.string() + ": " + error_text(ec)};
  }
  socket_files.push_back(l.path);
  auto a = std::make_shared<Acceptor<Local>>(io, std::move(acceptor), shared,
                                             l.auth_none ? l.tenant : std::string());
  a->accept();
  closers.emplace_back([a] { a->close(); });
  return "unix:" + l.path.string();
}

Result<std::string> HttpServer::listen(const Listener& listener) {
  return listener.kind == Listener::Kind::tcp ? impl_->listen_tcp(listener) : impl_->listen_unix(listener);
}

void HttpServer::run(const std::function<void(int)>& on_signal) {
  asio::signal_set signals(impl_->io, SIGINT, SIGTERM);
  std::function<void(beast::error_code, int)> wait = [&](beast::error_code ec, int signal) {
    if (ec) return;
    on_signal(signal);
    signals.async_wait(wait);
  };
  signals.async_wait(wait);
  impl_->io.run();
}

void HttpServer::stop_accepting() {
  impl_->shared->closing = true;
  asio::post(impl_->io, [impl = impl_.get()] {
    for (const auto& close : impl->closers) close();
  });
}

size_t HttpServer::open_requests() const {
  return impl_->shared->open_requests.load();
}

void HttpServer::stop() {
  impl_->io.stop();
}

}  // namespace skillbox::server
