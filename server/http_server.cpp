// server/http_server.cpp — see http_server.h. The only file that includes Boost.Beast.
#include "server/http_server.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <system_error>
#include <vector>

#include "base/escape.h"
#include "base/mutex.h"
#include "server/api_key.h"
#include "server/tls.h"

namespace skillbox::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;

/// What every connection shares: the bounds, the handler, the counters. The bounds are read and changed
/// on the I/O thread only (reconfigure posts there); the counters are touched wherever a Session dies.
struct Shared {
  Bounds bounds;
  Handler handler;
  ClientGone gone;
  Served served;
  std::atomic<size_t> connections{0};
  std::atomic<size_t> open_requests{0};
  std::atomic<bool> closing{false};  // draining: no keep-alive, no new connection
  base::Mutex address_mu;            // a Session may die on a run thread (the last Respond let go)
  std::map<std::string, size_t> per_address SKILLBOX_GUARDED_BY(address_mu);
  /// Where closing connections read the bytes they discard (Session::linger): one for all, since only
  /// the I/O thread reads, and nothing reads what is in it.
  std::array<char, 16384> discard{};

  /// Counts a new connection from `address` ("" for a UNIX socket: not counted); false when that
  /// address is at max_connections_per_address already (nothing counted then).
  bool admit_address(const std::string& address) {
    if (address.empty()) return true;
    base::MutexLock lock(address_mu);
    size_t& n = per_address[address];
    if (n >= bounds.max_connections_per_address) {
      if (n == 0) per_address.erase(address);
      return false;
    }
    ++n;
    return true;
  }
  void release_address(const std::string& address) {
    if (address.empty()) return;
    base::MutexLock lock(address_mu);
    const auto it = per_address.find(address);
    if (it != per_address.end() && --it->second == 0) per_address.erase(it);
  }
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

/// The answer to a request the parser refused (`ec`, an error of Beast's HTTP parser), or std::nullopt
/// when nobody is left to answer: the client closed, reset or timed out.
std::optional<HttpResponse> read_refusal(const beast::error_code& ec, const Bounds& bounds) {
  const bool parse_error = ec.category() == http::make_error_code(http::error::bad_target).category();
  if (!parse_error || ec == http::error::end_of_stream || ec == http::error::partial_message)
    return std::nullopt;
  if (ec == http::error::body_limit) {
    return error_response(413, "payload_too_large",
                          "the request body is larger than " + std::to_string(bounds.max_body_bytes) +
                              " bytes (max_body_bytes)");
  }
  if (ec == http::error::header_limit) {
    return error_response(431, "headers_too_large",
                          "the request line and headers are larger than " +
                              std::to_string(bounds.max_header_bytes) + " bytes (max_header_bytes)");
  }
  return error_response(400, "bad_request", "malformed HTTP request: " + ec.message());
}

/// The parsed request as the API sees it, or the refusal of a target above max_target_bytes (414).
std::optional<HttpResponse> to_request(http::request<http::string_body>& req, const Bounds& bounds,
                                       HttpRequest& out) {
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  if (out.target.size() > bounds.max_target_bytes) {
    return error_response(414, "uri_too_long",
                          "the request target is longer than " + std::to_string(bounds.max_target_bytes) +
                              " bytes (max_target_bytes)");
  }
  out.authorization = std::string(req[http::field::authorization]);
  for (const auto& field : req) {
    if (field.name() == http::field::authorization) continue;  // kept apart, never logged
    std::string name(field.name_string());
    for (char& c : name) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    out.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  out.body = std::move(req.body());
  return std::nullopt;
}

/// The client's IP address as text, the key of the per-address connection cap.
std::string peer_address(const asio::ip::tcp::socket& socket) {
  beast::error_code ec;
  const asio::ip::tcp::endpoint ep = socket.remote_endpoint(ec);
  return ec ? std::string("?") : ep.address().to_string();
}
/// A UNIX-socket client has no address: the socket file's mode decides who connects.
std::string peer_address(const asio::local::stream_protocol::socket& /*socket*/) {
  return {};
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
  void end_with(std::string outcome, RequestFacts facts) override {
    if (ended_.exchange(true)) return;
    {
      base::MutexLock lock(tail_mu_);
      tail_ = std::make_pair(std::move(outcome), std::move(facts));
    }
    post_(std::nullopt);
  }
  [[nodiscard]] bool gone() const override { return gone_.load(); }
  void mark_gone() { gone_ = true; }
  /// What end_with() gave, onto `head` (the I/O strand, after the end was posted).
  void apply_tail(HttpResponse& head) {
    base::MutexLock lock(tail_mu_);
    if (!tail_) return;
    auto& [outcome, facts] = *tail_;
    if (!outcome.empty()) head.outcome = std::move(outcome);
    if (!facts.route.empty()) head.facts.route = std::move(facts.route);
    if (!facts.skill.empty()) head.facts.skill = std::move(facts.skill);
    if (!facts.digest.empty()) head.facts.digest = std::move(facts.digest);
    if (!facts.export_name.empty()) head.facts.export_name = std::move(facts.export_name);
    if (!facts.usage_json.empty()) head.facts.usage_json = std::move(facts.usage_json);
    if (!facts.permissions_json.empty()) head.facts.permissions_json = std::move(facts.permissions_json);
    if (!facts.origins_json.empty()) head.facts.origins_json = std::move(facts.origins_json);
    tail_.reset();
  }

 private:
  base::Mutex tail_mu_;
  std::optional<std::pair<std::string, RequestFacts>> tail_ SKILLBOX_GUARDED_BY(tail_mu_);
  std::function<void(std::optional<std::string>)> post_;  // a part, or nullopt for the end
  std::atomic<bool> gone_{false};
  std::atomic<bool> ended_{false};
};

/// The first byte of every TLS connection: a handshake record (RFC 8446, 5.1: ContentType handshake).
constexpr unsigned char kTlsHandshakeRecord = 0x16;
/// How long a closing TLS connection waits for the client's close_notify after sending its own. A
/// client that never answers holds its connection slot this long.
constexpr std::chrono::milliseconds kTlsCloseTimeout{1000};
/// A connection closed by the server while the client may still be sending (a 413 before the body
/// was read, a refused request, the end of keep-alive) reads and discards what comes for this long, at
/// most kLingerBytes, before the socket closes: closing with unread bytes makes the kernel send a reset,
/// which can destroy the answer in flight before the client reads it (RFC 9112, 9.6).
constexpr std::chrono::milliseconds kLingerTimeout{2000};
constexpr size_t kLingerBytes = size_t{8} << 20;

/// One connection: wait for a request, read its headers, then its body, each phase under its own
/// deadline; hand it to the handler, write the response, repeat while kept alive. With `kTls`, the
/// connection first completes a TLS handshake (server/tls.h), under the header deadline.
template <class Protocol, bool kTls = false>
class Session : public std::enable_shared_from_this<Session<Protocol, kTls>> {
  using Plain = beast::basic_stream<Protocol, asio::any_io_executor, beast::unlimited_rate_policy>;
  using Stream = std::conditional_t<kTls, beast::ssl_stream<Plain>, Plain>;

 public:
  /// `address` has been counted by Shared::admit_address; the Session releases it when it dies.
  /// `listener_tenant` non-empty: the listener has no authentication and serves that tenant.
  /// `tls`: the listener's TLS context (kTls only), kept alive as long as the connection.
  Session(typename Protocol::socket&& socket, std::shared_ptr<Shared> shared, std::string address,
          std::string listener_tenant, std::shared_ptr<asio::ssl::context> tls = nullptr)
      : tls_(std::move(tls)),
        stream_(make_stream(std::move(socket), tls_.get())),
        shared_(std::move(shared)),
        address_(std::move(address)),
        listener_tenant_(std::move(listener_tenant)) {
    ++shared_->connections;
  }
  ~Session() {
    shared_->release_address(address_);
    --shared_->connections;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() {
    if constexpr (kTls) {
      await_hello();
    } else {
      read();
    }
  }

 private:
  static Stream make_stream(typename Protocol::socket&& socket, asio::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls);
    } else {
      return Stream(std::move(socket));
    }
  }

  /// The TCP (or UNIX) stream under TLS, if any: its deadline and its socket.
  Plain& lowest() { return beast::get_lowest_layer(stream_); }

  /// TLS, idle phase: waits for the client's first bytes as read() waits for a request's.
  void await_hello() {
    lowest().expires_after(shared_->bounds.idle_timeout);
    lowest().async_read_some(buffer_.prepare(kFirstRead),
                             [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                               if (ec) return self->close();
                               self->buffer_.commit(n);
                               self->handshake();
                             });
  }

  /// TLS handshake, under header_timeout from the client's first byte (a client that starts a
  /// handshake and never ends it is cut off, as a slowloris is). Bytes that do not start a handshake
  /// record are a plain HTTP request sent to the TLS port: answered 400 in plain HTTP, then closed.
  void handshake() {
    if (static_cast<const unsigned char*>(buffer_.data().data())[0] != kTlsHandshakeRecord)
      return refuse_plain();
    lowest().expires_after(shared_->bounds.header_timeout);
    // The handler also takes (error_code) alone: Beast 1.81 constrains a buffered handshake's handler to
    // that signature by mistake, then calls it with the bytes used as well.
    stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                            [self = this->shared_from_this()](beast::error_code ec, size_t used = 0) {
                              self->lowest().expires_never();
                              self->buffer_.consume(used);
                              if (ec || self->buffer_.size() > 0) return self->close_socket();
                              self->tls_up_ = true;
                              self->read();
                            });
  }

  /// Answers a plain HTTP request on a TLS port, in plain HTTP, and closes the connection: the client
  /// learns what to change instead of seeing a reset.
  void refuse_plain() {
    started_ = Clock::now();
    request_id_ = random_hex(16);
    method_ = "-";
    target_.clear();
    ++shared_->open_requests;
    auto message = make_message(
        error_response(400, "tls_required", "this port serves HTTPS only: use an https:// URL"), false);
    lowest().expires_after(shared_->bounds.idle_timeout);
    http::async_write(lowest(), *message,
                      [self = this->shared_from_this(), message](beast::error_code, size_t) {
                        --self->shared_->open_requests;
                        self->close_socket();
                      });
  }

  /// Idle phase: nothing of the next request has arrived yet (bytes a client pipelined are already in
  /// the buffer, and skip it).
  void read() {
    if (watch_reading_) {
      after_watch_ = &Session::read;  // TLS: one read at a time; the watch's own read ends first
      return;
    }
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(shared_->bounds.max_header_bytes));
    parser_->body_limit(shared_->bounds.max_body_bytes);
    if (buffer_.size() > 0) return read_header();
    lowest().expires_after(shared_->bounds.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kFirstRead),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->close();
                              self->buffer_.commit(n);
                              self->read_header();
                            });
  }

  /// Header phase: one deadline for the whole request line and headers, from their first byte, not one
  /// per read_some (slowloris: a byte every few seconds would otherwise hold the connection forever).
  void read_header() {
    lowest().expires_after(shared_->bounds.header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t /*n*/) { self->on_header(ec); });
  }

  /// Body phase: one deadline for the whole body, from the end of the headers (slow POST).
  void on_header(beast::error_code ec) {
    if (ec || parser_->is_done()) return on_read(ec);
    lowest().expires_after(shared_->bounds.body_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code e, size_t /*n*/) { self->on_read(e); });
  }

  void on_read(beast::error_code ec) {
    lowest().expires_never();
    if (!ec) return handle();
    // An error of the HTTP parser is the client's malformed request: it gets an answer. Anything else
    // (end of stream, a reset, a timeout) leaves nobody to answer.
    std::optional<HttpResponse> refusal = read_refusal(ec, shared_->bounds);
    if (!refusal) return close();
    started_ = Clock::now();
    request_id_ = random_hex(16);
    method_ = "-";
    target_.clear();
    return fail(std::move(*refusal));
  }

  void handle() {
    started_ = Clock::now();
    request_id_ = random_hex(16);
    http::request<http::string_body>& req = parser_->get();
    keep_alive_ = req.keep_alive();
    HttpRequest request{.request_id = request_id_,
                        .method = {},
                        .target = {},
                        .authorization = {},
                        .body = {},
                        .headers = {},
                        .listener_tenant = listener_tenant_};
    std::optional<HttpResponse> refusal = to_request(req, shared_->bounds, request);
    method_ = request.method;
    target_ = request.target;
    if (refusal) return fail(std::move(*refusal));
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
    if constexpr (kTls) return watch_tls();
    lowest().socket().async_wait(
        Protocol::socket::wait_read, [self = this->shared_from_this()](beast::error_code ec) {
          if (ec || !self->watching_) return;
          char byte = 0;
          const ssize_t n =
              ::recv(self->lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n > 0) return;
          if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            return self->watch();
          }
          self->watching_ = false;
          if (self->chunks_) self->chunks_->mark_gone();
          if (self->shared_->gone) self->shared_->gone(self->request_id_);
        });
  }

  /// The watch of a TLS connection: the socket's bytes are records, and a client that leaves sends one
  /// (close_notify) before its end of file, so the watch reads through TLS instead of peeking. Bytes
  /// read are a pipelined request, kept in the buffer for read(); end of file or an error is the
  /// client gone. write() ends the read by cancelling it; what waited for it (read(), close()) runs then.
  void watch_tls() {
    watch_reading_ = true;
    stream_.async_read_some(buffer_.prepare(kFirstRead),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->watch_reading_ = false;
                              self->buffer_.commit(n);
                              if (ec && ec != asio::error::operation_aborted && self->watching_) {
                                self->watching_ = false;
                                if (self->chunks_) self->chunks_->mark_gone();
                                if (self->shared_->gone) self->shared_->gone(self->request_id_);
                              }
                              if (self->after_watch_ != nullptr)
                                (self.get()->*std::exchange(self->after_watch_, nullptr))();
                            });
  }

  /// Starts a streamed response (RespondStream): the head, then each part as a chunk; the watch for the
  /// client's leaving goes on until the last chunk.
  void write_head(const HttpResponse& head, const std::shared_ptr<ChunkStream>& chunks) {
    chunks_ = chunks;
    status_ = head.status;
    tenant_ = head.tenant;
    head_ = head;  // its log and audit lines go out at the end, with what end_with() adds
    auto message =
        std::make_shared<http::response<http::empty_body>>(static_cast<http::status>(head.status), 11);
    message->set(http::field::server, "skillbox");
    message->set(http::field::content_type,
                 head.content_type.empty() ? "application/json" : head.content_type);
    message->set("X-Request-Id", request_id_);
    for (const auto& [name, value] : head.headers) message->set(name, value);
    keep_ = keep_alive_ && !shared_->closing.load();
    message->keep_alive(keep_);
    if (keep_) message->set("Keep-Alive", keep_alive_hint());
    message->chunked(true);
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*message);
    lowest().expires_after(shared_->bounds.idle_timeout);
    http::async_write_header(
        stream_, *serializer,
        [self = this->shared_from_this(), message, serializer](beast::error_code ec, size_t) {
          self->lowest().expires_never();
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
      lowest().expires_after(shared_->bounds.idle_timeout);
      asio::async_write(stream_, http::make_chunk(asio::buffer(*data)),
                        [self = this->shared_from_this(), data](beast::error_code ec, size_t) {
                          self->lowest().expires_never();
                          self->chunk_writing_ = false;
                          if (ec) self->broken();
                          self->pump();
                        });
      return;
    }
    if (!end_requested_) return;
    if (broken_) return finish_stream(false);
    chunk_writing_ = true;
    lowest().expires_after(shared_->bounds.idle_timeout);
    asio::async_write(stream_, http::make_chunk_last(),
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        self->lowest().expires_never();
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
      lowest().socket().cancel(ignored);
    }
    chunks_->apply_tail(head_);
    log_request(request_id_, method_, target_, status_, tenant_, head_.outcome, started_);
    if (shared_->served) shared_->served(request_id_, method_, head_);  // the audit line
    head_ = {};
    --shared_->open_requests;
    chunks_.reset();  // it holds this connection through its post_: the cycle ends here
    head_written_ = end_requested_ = broken_ = finished_ = false;
    if (!ok || !keep_) return close();
    read();
  }

  /// Answers a request that never reached the handler, and closes the connection after it (the rest
  /// of the request, if any, is not read).
  void fail(HttpResponse response) {
    keep_alive_ = false;
    ++shared_->open_requests;
    write(std::move(response));
  }

  void write(HttpResponse response) {
    if (watching_) {
      watching_ = false;
      beast::error_code ignored;
      lowest().socket().cancel(ignored);  // ends the watch's wait
    }
    const bool keep = keep_alive_ && !shared_->closing.load();
    auto message = make_message(std::move(response), keep);
    lowest().expires_after(shared_->bounds.idle_timeout);
    http::async_write(stream_, *message,
                      [self = this->shared_from_this(), message, keep](beast::error_code ec, size_t /*n*/) {
                        --self->shared_->open_requests;
                        self->lowest().expires_never();
                        if (ec || !keep) return self->close();
                        self->read();
                      });
  }

  /// "timeout=N": how long, in whole seconds, this connection stays open waiting for the next request
  /// (idle_timeout). A client that closes an idle connection before then (Node's http.Agent does)
  /// never sends a request on a connection the server is closing at that moment.
  std::string keep_alive_hint() const {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(shared_->bounds.idle_timeout).count();
    return "timeout=" + std::to_string(std::max<int64_t>(1, seconds));
  }

  /// The message of `response`, logged and told to the audit as it goes out.
  std::shared_ptr<http::response<http::string_body>> make_message(HttpResponse response, bool keep) {
    auto message =
        std::make_shared<http::response<http::string_body>>(static_cast<http::status>(response.status), 11);
    message->set(http::field::server, "skillbox");
    const bool json = response.content_type.empty();
    // A JSON response without a body (202 Accepted, 204 No Content) has no body at all.
    const bool bodiless = json && response.body.empty();
    if (!bodiless) message->set(http::field::content_type, json ? "application/json" : response.content_type);
    message->set("X-Request-Id", request_id_);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    message->keep_alive(keep);
    if (keep) message->set("Keep-Alive", keep_alive_hint());
    message->body() = json && !bodiless ? std::move(response.body) + "\n" : std::move(response.body);
    // 204 carries no Content-Length at all (RFC 9110, 8.6).
    if (response.status != 204) message->prepare_payload();
    log_request(request_id_, method_, target_, response.status, response.tenant, response.outcome, started_);
    if (shared_->served) shared_->served(request_id_, method_, response);
    return message;
  }

  /// Ends the connection: a TLS one sends close_notify first (once its watch's read is over).
  void close() {
    if constexpr (kTls) {
      if (watch_reading_) {
        after_watch_ = &Session::close;
        return;
      }
      if (tls_up_) {
        tls_up_ = false;
        lowest().expires_after(kTlsCloseTimeout);
        stream_.async_shutdown(
            [self = this->shared_from_this()](beast::error_code) { self->close_socket(); });
        return;
      }
    }
    close_socket();
  }

  /// Sends end of file, then lingers: the socket closes when the client closes its side, or after
  /// kLingerTimeout or kLingerBytes.
  void close_socket() {
    beast::error_code ignored;
    lowest().socket().shutdown(asio::socket_base::shutdown_send, ignored);
    lowest().expires_after(kLingerTimeout);
    linger(kLingerBytes);
  }

  /// Reads and discards up to `budget` more bytes; the session (and its socket) ends with the read.
  void linger(size_t budget) {
    lowest().async_read_some(asio::buffer(shared_->discard),
                             [self = this->shared_from_this(), budget](beast::error_code ec, size_t n) {
                               if (ec || n >= budget) return;
                               self->linger(budget - n);
                             });
  }

  /// Bytes read while waiting for a request: enough for most requests whole, so that the header phase
  /// often finds them all in the buffer.
  static constexpr size_t kFirstRead = 4096;

  std::shared_ptr<asio::ssl::context> tls_;  // before stream_, which refers to it
  Stream stream_;
  bool tls_up_ = false;                       // the handshake is done and no close_notify was sent
  bool watch_reading_ = false;                // TLS: the watch's read is in progress
  void (Session::*after_watch_)() = nullptr;  // TLS: what waits for the watch's read to end
  std::shared_ptr<Shared> shared_;
  std::string address_;                // the client's IP address, "" for a UNIX socket
  const std::string listener_tenant_;  // auth = "none" listener: the tenant it serves
  // A streamed response in progress (write_head .. finish_stream), I/O strand only.
  std::shared_ptr<ChunkStream> chunks_;
  HttpResponse head_;  // the streamed response's head, for its log and audit lines
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

  /// Serves TLS with `tls` from the next connection on (I/O thread); open connections keep theirs.
  void use_tls(std::shared_ptr<asio::ssl::context> tls) { tls_ = std::move(tls); }

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
    std::string address = peer_address(socket);
    if (refused || shared_->closing.load() ||
        shared_->connections.load() >= shared_->bounds.max_connections || !shared_->admit_address(address)) {
      beast::error_code ignored;
      socket.close(ignored);  // over a connection cap: closed at once, nothing read
    } else if constexpr (std::is_same_v<Protocol, asio::ip::tcp>) {
      if (tls_) {
        std::make_shared<Session<Protocol, true>>(std::move(socket), shared_, std::move(address),
                                                  listener_tenant_, tls_)
            ->start();
      } else {
        std::make_shared<Session<Protocol>>(std::move(socket), shared_, std::move(address), listener_tenant_)
            ->start();
      }
    } else {
      std::make_shared<Session<Protocol>>(std::move(socket), shared_, std::move(address), listener_tenant_)
          ->start();
    }
    accept();
  }

  asio::io_context& io_;
  typename Protocol::acceptor acceptor_;
  std::shared_ptr<Shared> shared_;
  asio::steady_timer retry_;
  const std::string listener_tenant_;
  std::shared_ptr<asio::ssl::context> tls_;  // TLS listeners: the context new connections get
};

std::string endpoint_url(const asio::ip::tcp::endpoint& ep, bool tls = false) {
  const asio::ip::address a = ep.address();
  const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return (tls ? "https://" : "http://") + host + ":" + std::to_string(ep.port());
}

std::string error_text(const beast::error_code& ec) {
  return ec.message();
}

}  // namespace

struct HttpServer::Impl {
  asio::io_context io{1};
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::vector<std::function<void()>> closers;               // one per listener, run on the I/O thread
  std::vector<std::function<std::string()>> tls_reloaders;  // one per TLS listener, I/O thread
  std::vector<std::filesystem::path> socket_files;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{io.get_executor()};

  Result<std::string> listen_tcp(const Listener& l);
  Result<std::string> listen_unix(const Listener& l);
};

HttpServer::HttpServer(const ServerConfig& config, Handler handler, ClientGone gone, Served served)
    : impl_(std::make_unique<Impl>()) {
  Shared& s = *impl_->shared;
  s.bounds = Bounds::of(config);
  s.handler = std::move(handler);
  s.gone = std::move(gone);
  s.served = std::move(served);
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
  std::shared_ptr<asio::ssl::context> tls;
  if (!l.tls_cert.empty()) {
    Result<std::shared_ptr<asio::ssl::context>> made = make_tls_context(l.tls_cert, l.tls_key);
    if (!made)
      return Error{"cannot serve TLS on " + endpoint_url(ep).substr(7) + ": " + made.error().message};
    tls = std::move(*made);
  }
  asio::ip::tcp::acceptor acceptor(io);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) {
    const std::string url = endpoint_url(acceptor.local_endpoint(), tls != nullptr);
    auto a = std::make_shared<Acceptor<asio::ip::tcp>>(io, std::move(acceptor), shared,
                                                       l.auth_none ? l.tenant : std::string());
    if (tls) {
      a->use_tls(std::move(tls));
      tls_reloaders.emplace_back([a, l, url]() -> std::string {
        Result<std::shared_ptr<asio::ssl::context>> made = make_tls_context(l.tls_cert, l.tls_key);
        if (!made) return url + " keeps its certificate: " + made.error().message;
        a->use_tls(std::move(*made));
        return {};
      });
    }
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
  asio::signal_set signals(impl_->io, SIGINT, SIGTERM, SIGHUP);
  std::function<void(beast::error_code, int)> wait = [&](beast::error_code ec, int signal) {
    if (ec) return;
    on_signal(signal);
    signals.async_wait(wait);
  };
  signals.async_wait(wait);
  impl_->io.run();
}

std::vector<std::string> HttpServer::reload_tls() {
  std::vector<std::string> problems;
  for (const auto& reload : impl_->tls_reloaders) {
    if (std::string problem = reload(); !problem.empty()) problems.push_back(std::move(problem));
  }
  return problems;
}

void HttpServer::stop_accepting() {
  impl_->shared->closing = true;
  asio::post(impl_->io, [impl = impl_.get()] {
    for (const auto& close : impl->closers) close();
  });
}

std::optional<std::variant<HttpRequest, HttpResponse>> parse_request(std::string_view bytes,
                                                                     const Bounds& bounds) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(bounds.max_header_bytes));
  parser.body_limit(bounds.max_body_bytes);
  parser.eager(true);
  beast::error_code ec;
  while (!parser.is_done()) {
    const size_t used = parser.put(asio::buffer(bytes.data(), bytes.size()), ec);
    bytes.remove_prefix(used);
    // need_more: the request goes on past the bytes. The parser may then be given only a longer
    // buffer (it remembers how far it looked), never the same bytes again.
    if (ec == http::error::need_more || (!ec && used == 0 && !parser.is_done())) return std::nullopt;
    if (ec) {
      std::optional<HttpResponse> refusal = read_refusal(ec, bounds);
      if (!refusal) return std::nullopt;
      return std::move(*refusal);
    }
  }
  HttpRequest request{.request_id = {},
                      .method = {},
                      .target = {},
                      .authorization = {},
                      .body = {},
                      .headers = {},
                      .listener_tenant = {}};
  if (std::optional<HttpResponse> refusal = to_request(parser.get(), bounds, request))
    return std::move(*refusal);
  return request;
}

Bounds Bounds::of(const ServerConfig& c) {
  return Bounds{.max_body_bytes = c.max_body_bytes,
                .max_header_bytes = c.max_header_bytes,
                .max_target_bytes = c.max_target_bytes,
                .idle_timeout = std::chrono::milliseconds(c.idle_timeout_ms),
                .header_timeout = std::chrono::milliseconds(c.header_timeout_ms),
                .body_timeout = std::chrono::milliseconds(c.body_timeout_ms),
                .max_connections = c.max_connections,
                .max_connections_per_address = c.max_connections_per_address};
}

void HttpServer::reconfigure(const ServerConfig& config) {
  asio::post(impl_->io, [shared = impl_->shared, bounds = Bounds::of(config)] { shared->bounds = bounds; });
}

size_t HttpServer::open_requests() const {
  return impl_->shared->open_requests.load();
}

void HttpServer::stop() {
  impl_->io.stop();
}

}  // namespace skillbox::server
