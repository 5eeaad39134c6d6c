// capabilities/http/http_capability.cpp — libcurl multi transfers on a host I/O thread, with the
// policy checked before the transfer (start) and during it (socket, header and body callbacks).
#include "capabilities/http/http_capability.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/file_read.h"
#include "capabilities/http/address_check.h"
#include "capabilities/http/request_check.h"
#include "capabilities/http/url_check.h"
#include "skillbox/version.h"

namespace skillbox::capabilities {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;
using Clock = std::chrono::steady_clock;
using http::Header;

/// Largest response header block of one response, in bytes. libcurl caps single header lines; this
/// caps their sum, so a server cannot grow the reply without bound through headers.
constexpr size_t kMaxResponseHeaderBytes = size_t{256} * 1024;
/// How long the I/O thread sleeps in curl_multi_poll when libcurl has no timer due; new requests and
/// cancel_all() wake it earlier with curl_multi_wakeup.
constexpr int kIdlePollMs = 1000;

ErrorReply error(ErrorCode code, const std::string& message) {
  return ErrorReply{code, "http: " + message};
}

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// CA bundles are PEM text of a few hundred KiB; the cap bounds a misconfigured path such as /dev/zero.
constexpr uint64_t kMaxCaFileBytes = uint64_t{64} * 1024 * 1024;

// "address:port" of a socket address, IPv6 in brackets; empty for other families.
std::string endpoint_text(const sockaddr* sa, socklen_t len) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in in{};
    std::memcpy(&in, sa, sizeof in);
    inet_ntop(AF_INET, &in.sin_addr, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(in.sin_port));
  }
  if (sa->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, sa, sizeof in6);
    inet_ntop(AF_INET6, &in6.sin6_addr, ip, sizeof ip);
    return "[" + std::string(ip) + "]:" + std::to_string(ntohs(in6.sin6_port));
  }
  return {};
}

bool is_redirect_status(uint32_t status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// ---- the origin map, as the skill sees it (HttpTuning::shown_origins) -------------------------------

// The original origin that `url`'s origin stands in for, or nullptr when it stands in for none.
const std::string* original_origin(const HttpTuning& tuning, const http::ParsedUrl& url) {
  if (tuning.shown_origins.empty()) return nullptr;
  const std::string origin = url.scheme() + "://" + url.host() + ":" + std::to_string(url.port());
  for (const auto& [target, original] : tuning.shown_origins)
    if (target == origin) return &original;
  return nullptr;
}

// `text`, a URL of `url`'s origin (its text() or display()), with a stand-in's origin replaced by the
// original one: the URL the skill asked for.
std::string shown_url(const HttpTuning& tuning, const http::ParsedUrl& url, const std::string& text) {
  const std::string* original = original_origin(tuning, url);
  if (original == nullptr) return text;
  const size_t authority = text.find("://");
  const size_t rest =
      authority == std::string::npos ? std::string::npos : text.find_first_of("/?", authority + 3);
  return *original + (rest == std::string::npos ? std::string() : text.substr(rest));
}

// `url`'s origin as the skill named it: "https://api.example.com", the port only when not the
// scheme's default (HttpTuning::on_hop).
std::string shown_origin(const HttpTuning& tuning, const http::ParsedUrl& url) {
  const bool default_port =
      (url.scheme() == "https" && url.port() == 443) || (url.scheme() == "http" && url.port() == 80);
  return shown_url(
      tuning, url,
      url.scheme() + "://" + url.host() + (default_port ? "" : ":" + std::to_string(url.port())));
}

// `url`'s host, with ":port" when `with_port`, as the skill named it.
std::string shown_host(const HttpTuning& tuning, const http::ParsedUrl& url, bool with_port = false) {
  const auto text = [&](const http::ParsedUrl& u) {
    return with_port ? u.host() + ":" + std::to_string(u.port()) : u.host();
  };
  if (const std::string* original = original_origin(tuning, url))
    if (auto parsed = http::parse_url(*original + "/", nullptr)) return text(*parsed);
  return text(url);
}

// One request, across all its redirect hops. Owned by the I/O thread once queued.
struct Transfer {
  uint64_t id = 0;
  const HttpPolicy* policy = nullptr;
  const HttpTuning* tuning = nullptr;
  bus::BusCounters* counters = nullptr;
  std::string method;
  std::vector<Header> headers;
  bus::Bytes body;
  uint64_t timeout_ms = 0;
  http::ParsedUrl url;
  uint32_t redirects = 0;
  bool began = false;
  Clock::time_point deadline;

  // State of the current hop.
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  curl_slist* resolve_list = nullptr;
  uint64_t hop_timeout_ms = 0;
  bool connected = false;                  // a connection passed the pre-request check
  std::string connect_refusal;             // why an address was refused by the open-socket callback
  std::optional<ErrorReply> abort_reason;  // set by a callback that stopped the transfer
  bool follow = false;                     // the hop ended in a redirect we follow
  uint32_t status = 0;
  std::string status_text;
  std::vector<Header> response_headers;
  size_t response_header_bytes = 0;
  bool headers_done = false;
  bus::Bytes response_body;
  // Host memory of the invocation's budget (bus/memory_budget.h): the request's payload (charged by the
  // Endpoint), and the response's headers and body capacity, reserved before each grows.
  bus::HostBytes request_held;
  bus::HostBytes response_held;

  [[nodiscard]] const std::string* response_header(std::string_view lname) const {
    const std::string* found = nullptr;
    for (const auto& [n, v] : response_headers)
      if (n == lname) found = &v;  // the last one wins, as for Location in browsers
    return found;
  }

  void reset_response() {
    status = 0;
    status_text.clear();
    response_headers.clear();
    response_header_bytes = 0;
    headers_done = false;
    bus::Bytes().swap(response_body);  // frees the capacity its reservation counted
    response_held.reset();
  }

  ErrorReply memory_refusal(const char* what, uint64_t n) const {
    return error(ErrorCode::PayloadTooLarge, std::string("the response ") + what + " of " +
                                                 shown_url(*tuning, url, url.display()) +
                                                 " was cut off: " + response_held.budget()->refusal(n));
  }

  // Makes room for `need` body bytes in all, reserving the new capacity before the vector grows: while
  // it moves, the old and the new block both exist, and both are counted. Growth doubles (so a body
  // costs amortised O(1) per byte), capped at the policy's max_response_bytes; near the memory limit
  // it falls back to exactly `need`. False (abort_reason set) when even that does not fit.
  bool reserve_body(uint64_t need) {
    const uint64_t cap = response_body.capacity();
    if (need <= cap) return true;
    constexpr uint64_t kFirstBlock = uint64_t{64} * 1024;
    uint64_t next = std::max<uint64_t>(need, cap < kFirstBlock ? kFirstBlock : cap * 2);
    next = std::min<uint64_t>(next, std::max<uint64_t>(need, policy->max_response_bytes));
    if (!response_held.grow(next)) {
      next = need;
      if (!response_held.grow(next)) {
        abort_reason = memory_refusal("body", next);
        return false;
      }
    }
    try {
      response_body.reserve(static_cast<size_t>(next));
    } catch (...) {
      response_held.shrink(next);
      abort_reason = error(ErrorCode::IoError, "out of memory while reading the response body");
      return false;
    }
    response_held.shrink(cap);  // the old block is gone
    return true;
  }

  // ---- libcurl callbacks (run on the I/O thread, inside curl_multi_perform) ------------------------

  // Connect-time SSRF check: `address` is exactly what curl will connect() to, after DNS, after any
  // IPv4 spelling normalisation, for every address family and Happy-Eyeballs attempt.
  static curl_socket_t on_open_socket(void* p, curlsocktype /*purpose*/, curl_sockaddr* address) {
    auto* t = static_cast<Transfer*>(p);
    const sockaddr* sa = &address->addr;
    if (address->family != AF_INET && address->family != AF_INET6) {
      t->connect_refusal = "a non-IP address";
      return CURL_SOCKET_BAD;
    }
    if (!t->policy->allow_private_addresses && !t->exempt(endpoint_text(sa, address->addrlen))) {
      if (auto why = http::classify_sockaddr(sa, address->addrlen)) {
        t->connect_refusal = std::string(*why);
        return CURL_SOCKET_BAD;
      }
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  }

  // Second look at the connection the request is about to be sent on, reused ones included.
  static int on_prereq(void* p, char* primary_ip, char* /*local_ip*/, int primary_port, int /*local_port*/) {
    auto* t = static_cast<Transfer*>(p);
    const std::string ip = primary_ip == nullptr ? "" : primary_ip;
    const std::string endpoint =
        (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":" + std::to_string(primary_port);
    if (!t->policy->allow_private_addresses && !t->exempt(endpoint)) {
      if (auto why = http::classify_ip_text(ip)) {
        t->abort_reason = refusal(*t, *why);
        return CURL_PREREQFUNC_ABORT;
      }
    }
    t->connected = true;
    return CURL_PREREQFUNC_OK;
  }

  [[nodiscard]] bool exempt(const std::string& endpoint) const {
    const auto& list = tuning->exempt_endpoints;
    return !list.empty() && std::find(list.begin(), list.end(), endpoint) != list.end();
  }

  static ErrorReply refusal(const Transfer& t, std::string_view why) {
    return error(ErrorCode::PermissionDenied,
                 "refused to connect to " + shown_host(*t.tuning, t.url) + ": it resolved to " +
                     std::string(why) +
                     "; connecting to private addresses needs permissions.http.allow_private_addresses");
  }

  static size_t on_header(char* data, size_t size, size_t count, void* p) noexcept {
    auto* t = static_cast<Transfer*>(p);
    const size_t n = size * count;
    try {
      return t->header_line(std::string_view(data, n)) ? n : 0;
    } catch (...) {  // never let an exception cross libcurl's C frames
      t->abort_reason = error(ErrorCode::IoError, "out of memory while reading response headers");
      return 0;
    }
  }

  static size_t on_body(char* data, size_t size, size_t count, void* p) noexcept {
    auto* t = static_cast<Transfer*>(p);
    const size_t n = size * count;
    const uint64_t cap = t->policy->max_response_bytes;
    // Decoded bytes (CURLOPT_ACCEPT_ENCODING): a small gzip body cannot expand past the cap.
    if (t->response_body.size() + n > cap) {
      t->abort_reason =
          error(ErrorCode::PayloadTooLarge, "response body is larger than " + std::to_string(cap) +
                                                " bytes (permissions.http.max_response_bytes)");
      return 0;  // short write: libcurl aborts the transfer right here
    }
    if (!t->reserve_body(t->response_body.size() + n)) return 0;
    try {
      t->response_body.insert(t->response_body.end(), reinterpret_cast<const uint8_t*>(data),
                              reinterpret_cast<const uint8_t*>(data) + n);
    } catch (...) {
      t->abort_reason = error(ErrorCode::IoError, "out of memory while reading the response body");
      return 0;
    }
    t->counters->http_bytes_in.fetch_add(n, std::memory_order_relaxed);
    return n;
  }

  // Returns false to abort the transfer (abort_reason or follow set).
  bool header_line(std::string_view line) {
    if (line.size() >= 5 && line.substr(0, 5) == "HTTP/") {
      reset_response();  // a new response: 1xx interim ones are followed by the real one
      response_header_bytes = line.size();
      const size_t sp = line.find(' ');
      if (sp != std::string_view::npos && line.size() >= sp + 4) {
        const std::string_view code = line.substr(sp + 1, 3);
        for (char c : code) status = status * 10 + static_cast<uint32_t>(c >= '0' && c <= '9' ? c - '0' : 0);
        if (line.size() > sp + 4) status_text = std::string(trim(line.substr(sp + 4)));
      }
      return true;
    }
    response_header_bytes += line.size();
    if (response_header_bytes > kMaxResponseHeaderBytes) {
      abort_reason = error(ErrorCode::PayloadTooLarge,
                           "response headers exceed " + std::to_string(kMaxResponseHeaderBytes) + " bytes");
      return false;
    }
    if (!response_held.grow(line.size())) {  // kept (parsed) until the reply is freed
      abort_reason = memory_refusal("headers", line.size());
      return false;
    }
    if (headers_done) return true;  // trailers after a chunked body: not exposed
    if (line == "\r\n" || line == "\n") return end_of_headers();
    if (line.front() == ' ' || line.front() == '\t') {  // obsolete line folding: continue the last value
      if (!response_headers.empty()) {
        response_headers.back().second += ' ';
        response_headers.back().second += trim(line);
      }
      return true;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return true;  // not a header; libcurl is lenient too
    response_headers.emplace_back(http::ascii_lower(trim(line.substr(0, colon))),
                                  std::string(trim(line.substr(colon + 1))));
    return true;
  }

  bool end_of_headers() {
    if (status >= 100 && status < 200) return true;  // interim response; the real one follows
    headers_done = true;
    if (is_redirect_status(status) && response_header("location") != nullptr) {
      if (redirects >= policy->max_redirects) {
        abort_reason =
            error(ErrorCode::NetworkError, "too many redirects (permissions.http.max_redirects is " +
                                               std::to_string(policy->max_redirects) + ")");
        return false;
      }
      follow = true;  // skillbox follows it (on_done); the redirect body is never read
      return false;
    }
    // A declared length above the cap is refused before any body byte is read. Only for identity
    // bodies: with Content-Encoding the decoded size is what counts, and on_body watches that.
    const std::string* encoding = response_header("content-encoding");
    const bool identity = encoding == nullptr || http::ascii_lower(*encoding) == "identity";
    const std::string* length = response_header("content-length");
    if (identity && length != nullptr && method != "HEAD" && status != 204 && status != 304) {
      uint64_t declared = 0;
      bool digits = !length->empty() && length->size() <= 19;
      for (char c : *length) {
        if (c < '0' || c > '9') {
          digits = false;
          break;
        }
        declared = declared * 10 + static_cast<uint64_t>(c - '0');
      }
      if (digits && declared > policy->max_response_bytes) {
        abort_reason =
            error(ErrorCode::PayloadTooLarge, "response declares Content-Length " + *length + ", more than " +
                                                  std::to_string(policy->max_response_bytes) +
                                                  " bytes (permissions.http.max_response_bytes)");
        return false;
      }
      // A declared body is reserved whole before the first byte arrives: one that cannot fit the
      // invocation's memory is refused at once instead of after most of it was read.
      if (digits && !reserve_body(declared)) return false;
    }
    return true;
  }
};

}  // namespace

// ---- the capability -------------------------------------------------------------------------------

struct HttpCapability::Impl {
  Impl(HttpPolicy p, std::filesystem::path ca, bus::CompletionSink& s, bus::BusCounters& c, HttpTuning t,
       const bus::StopToken& st, bus::MemoryBudget* budget)
      : memory(budget),
        policy(std::move(p)),
        extra_ca_file(std::move(ca)),
        sink(s),
        counters(c),
        tuning(std::move(t)),
        stop_token(st),
        allowlist(policy.allow) {
    for (const std::string& m : policy.methods) {
      auto normalized = http::normalize_method(m);
      if (normalized) methods.push_back(std::move(*normalized));
    }
    max_concurrent = std::max<uint32_t>(1, policy.max_concurrent);
  }

  bus::MemoryBudget* const memory;  // the invocation's; null: nothing counted
  const HttpPolicy policy;
  const std::filesystem::path extra_ca_file;
  bus::CompletionSink& sink;
  bus::BusCounters& counters;
  const HttpTuning tuning;
  const bus::StopToken& stop_token;  // the invocation's: a limit reached ends every transfer
  const http::Allowlist allowlist;
  std::vector<std::string> methods;  // policy.methods, normalised like request methods
  const bool allow_narrowed = policy.allow_narrowed;
  // What a refusal names as the list a URL is not in.
  [[nodiscard]] std::string allow_source() const {
    return allow_narrowed ? "permissions.http.allow as narrowed for this run by --allow-http"
                          : "permissions.http.allow";
  }
  uint32_t max_concurrent = 1;
  uint32_t accepted = 0;  // requests that passed the checks (caller's thread only)

  // Shared between the caller's thread and the I/O thread.
  std::mutex mu;
  std::vector<std::unique_ptr<Transfer>> incoming;
  bool stop = false;
  bool ended = false;
  CURLM* multi = nullptr;
  std::thread io;

  // Completion delivery vs cancel_all(): complete() only runs under deliver_mu with cancelled false.
  std::mutex deliver_mu;
  bool cancelled = false;

  // I/O thread only.
  std::deque<std::unique_ptr<Transfer>> waiting;
  std::unordered_map<Transfer*, std::unique_ptr<Transfer>> active;
  bool ca_loaded = false;
  bool ca_failed = false;
  std::string ca_blob;

  std::optional<bus::Reply> start(uint64_t id, bus::HttpRequest request, bus::HostBytes held);
  void cancel_all();
  void run();
  void begin_hop(Transfer& t);
  bool configure(Transfer& t);
  bool configure_connection(Transfer& t);  // where it may connect, TLS, timeouts, callbacks
  bool configure_request(Transfer& t);     // headers, method, body, test-only name resolution
  void finish_hop(Transfer& t, CURLcode code);
  void follow_redirect(Transfer& t);
  void release_easy(Transfer& t);
  void complete(Transfer& t, bus::Reply reply);
  void stop_all();
  int poll_timeout_ms() const;
  void load_ca();
};

std::optional<bus::Reply> HttpCapability::Impl::start(uint64_t id, bus::HttpRequest request,
                                                      bus::HostBytes held) {
  {
    std::lock_guard lock(mu);
    if (ended) return error(ErrorCode::NetworkError, "the invocation has ended; no new requests can start");
  }
  auto method = http::normalize_method(request.method);
  if (!method) return error(method.error().code, method.error().message);

  auto parsed = http::parse_url(request.url, nullptr);
  if (!parsed) return error(parsed.error().code, parsed.error().message);
  http::ParsedUrl& url = *parsed;
  if (allowlist.empty())
    return error(ErrorCode::PermissionDenied,
                 allow_narrowed
                     ? "no network access is granted for this run (narrowed: --deny-net, or no overlap "
                       "of --allow-http with permissions.http.allow)"
                     : "no network access is granted (permissions.http.allow has no valid entry)");
  if (!allowlist.allows(url))
    return error(ErrorCode::PermissionDenied, url.display() + " is not in " + allow_source());

  const std::string& m = *method;
  if (std::find(methods.begin(), methods.end(), m) == methods.end())
    return error(ErrorCode::PermissionDenied, "method " + m + " is not in permissions.http.methods");

  auto headers = http::check_request_headers(request.headers);
  if (!headers) return error(headers.error().code, headers.error().message);

  if ((m == "GET" || m == "HEAD") && !request.body.empty())
    return error(ErrorCode::InvalidArgument, "a " + m + " request cannot have a body");
  if (request.body.size() > policy.max_request_bytes)
    return error(ErrorCode::PayloadTooLarge,
                 "request body is " + std::to_string(request.body.size()) + " bytes, more than " +
                     std::to_string(policy.max_request_bytes) + " (permissions.http.max_request_bytes)");
  if (request.timeout_ms && *request.timeout_ms == 0)
    return error(ErrorCode::InvalidArgument, "timeoutMs must be at least 1");
  if (accepted >= policy.max_requests)
    return error(ErrorCode::QuotaExceeded, "this invocation already made " + std::to_string(accepted) +
                                               " requests (permissions.http.max_requests is " +
                                               std::to_string(policy.max_requests) + ")");

  auto t = std::make_unique<Transfer>();
  t->id = id;
  t->policy = &policy;
  t->tuning = &tuning;
  t->counters = &counters;
  t->method = m;
  t->headers = std::move(*headers);
  t->body = std::move(request.body);
  t->timeout_ms = std::min(request.timeout_ms.value_or(policy.timeout_ms), policy.timeout_ms);
  t->url = std::move(url);
  t->request_held = std::move(held);
  t->response_held = bus::HostBytes(memory);

  std::lock_guard lock(mu);
  if (ended) return error(ErrorCode::NetworkError, "the invocation has ended; no new requests can start");
  ++accepted;
  incoming.push_back(std::move(t));
  if (multi == nullptr) {
    global_init_once();
    multi = curl_multi_init();
    if (multi == nullptr) {
      incoming.clear();
      return error(ErrorCode::IoError, "libcurl could not create a multi handle");
    }
    io = std::thread([this] { run(); });
  } else {
    curl_multi_wakeup(multi);
  }
  return std::nullopt;
}

void HttpCapability::Impl::cancel_all() {
  {
    std::lock_guard lock(deliver_mu);  // waits for a complete() in progress
    cancelled = true;
  }
  {
    std::lock_guard lock(mu);
    ended = true;
    stop = true;
    incoming.clear();
    if (multi != nullptr) curl_multi_wakeup(multi);
  }
  if (io.joinable()) io.join();  // the I/O thread closed every connection before it returned
  if (multi != nullptr) {
    curl_multi_cleanup(multi);
    multi = nullptr;
  }
}

void HttpCapability::Impl::run() {
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (stop) break;
      for (auto& t : incoming) waiting.push_back(std::move(t));
      incoming.clear();
    }
    if (stop_token.stop_requested()) stop_all();
    while (active.size() < max_concurrent && !waiting.empty()) {
      std::unique_ptr<Transfer> t = std::move(waiting.front());
      waiting.pop_front();
      Transfer* raw = t.get();
      active.emplace(raw, std::move(t));
      begin_hop(*raw);
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      void* priv = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
      finish_hop(*static_cast<Transfer*>(priv), msg->data.result);
    }
    if (active.size() < max_concurrent && !waiting.empty()) continue;
    curl_multi_poll(multi, nullptr, 0, poll_timeout_ms(), nullptr);
  }
  // Cancelled: abort every transfer and close its connection now, so servers see the close.
  for (auto& [raw, t] : active) release_easy(*t);
  active.clear();
  waiting.clear();
}

// The invocation reached a limit: a transfer in flight is cancelled rather than finished (its
// connection is closed now, so the server sees no more of it), and nothing waiting starts.
void HttpCapability::Impl::stop_all() {
  const auto reply = [] {
    return error(ErrorCode::Timeout, "cancelled: the invocation reached a limit (or its deadline passed)");
  };
  while (!active.empty()) complete(*active.begin()->second, reply());
  while (!waiting.empty()) {
    std::unique_ptr<Transfer> t = std::move(waiting.front());
    waiting.pop_front();
    Transfer* raw = t.get();
    active.emplace(raw, std::move(t));
    complete(*raw, reply());
  }
}

// Sleeps no longer than the idle interval, nor past the invocation's deadline (the stop token is
// checked at every wake-up). Once stopped, nothing is left to wake for but cancel_all().
int HttpCapability::Impl::poll_timeout_ms() const {
  const Clock::time_point deadline = stop_token.deadline();
  if (deadline == Clock::time_point::max() || stop_token.stop_requested()) return kIdlePollMs;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, kIdlePollMs));
}

void HttpCapability::Impl::load_ca() {
  ca_loaded = true;
  if (extra_ca_file.empty()) return;
  // CURLOPT_CAINFO holds one file, so the system bundle and the extra CA go in as one PEM blob.
  std::string system_bundle;
  if (CURL* probe = curl_easy_init()) {
    char* path = nullptr;
    if (curl_easy_getinfo(probe, CURLINFO_CAINFO, &path) == CURLE_OK && path != nullptr) {
      if (auto bundle = base::read_file(path, {.max_bytes = kMaxCaFileBytes}))
        system_bundle = std::move(*bundle);
    }
    curl_easy_cleanup(probe);
  }
  const auto extra = base::read_file(extra_ca_file.c_str(), {.max_bytes = kMaxCaFileBytes});
  if (!extra || extra->empty()) {
    ca_failed = true;
    return;
  }
  ca_blob = system_bundle + "\n" + *extra;
}

bool HttpCapability::Impl::configure(Transfer& t) {
  return configure_connection(t) && configure_request(t);
}

bool HttpCapability::Impl::configure_connection(Transfer& t) {
  CURL* e = t.easy;
  bool ok = true;
  auto check = [&ok](CURLcode rc) { ok = ok && rc == CURLE_OK; };

  // The parsed handle itself: libcurl connects to exactly what parse_url checked.
  check(curl_easy_setopt(e, CURLOPT_CURLU, t.url.handle()));
  check(curl_easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(&t)));
  check(curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L));
  // cancel_all() must not wait for a slow DNS lookup: without this, removing a transfer whose threaded
  // resolve is still running joins the resolver thread.
  check(curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L));
  check(curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https"));
  check(curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"));
  check(curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L));  // each hop is re-checked by follow_redirect
  // Proxies from the environment (http_proxy, ALL_PROXY, ...) would carry the request elsewhere.
  check(curl_easy_setopt(e, CURLOPT_PROXY, ""));
  check(curl_easy_setopt(e, CURLOPT_NOPROXY, "*"));
  check(curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L));
  check(curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L));
  check(curl_easy_setopt(e, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2)));
  if (!ca_blob.empty()) {
    curl_blob blob{ca_blob.data(), ca_blob.size(), CURL_BLOB_NOCOPY};  // ca_blob outlives every handle
    check(curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob));
  }
  check(curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""));  // every encoding libcurl can decode
  const std::string agent = std::string("skillbox/") + kVersion;
  check(curl_easy_setopt(e, CURLOPT_USERAGENT, agent.c_str()));

  check(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(t.hop_timeout_ms)));
  check(curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                         static_cast<long>(std::min(t.hop_timeout_ms, tuning.connect_timeout_ms))));
  check(curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(tuning.low_speed_bytes_per_sec)));
  check(curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, static_cast<long>(tuning.low_speed_time_s)));

  check(curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Transfer::on_open_socket));
  check(curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, static_cast<void*>(&t)));
  check(curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &Transfer::on_prereq));
  check(curl_easy_setopt(e, CURLOPT_PREREQDATA, static_cast<void*>(&t)));
  check(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::on_header));
  check(curl_easy_setopt(e, CURLOPT_HEADERDATA, static_cast<void*>(&t)));
  check(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::on_body));
  check(curl_easy_setopt(e, CURLOPT_WRITEDATA, static_cast<void*>(&t)));
  return ok;
}

bool HttpCapability::Impl::configure_request(Transfer& t) {
  CURL* e = t.easy;
  bool ok = true;
  auto check = [&ok](CURLcode rc) { ok = ok && rc == CURLE_OK; };
  bool has_content_type = false;
  for (const auto& [name, value] : t.headers) {
    if (http::ascii_lower(name) == "content-type") has_content_type = true;
    // "Name;" is libcurl's spelling of a header with an empty value ("Name:" would delete it).
    std::string line = name;
    if (value.empty()) {
      line += ';';
    } else {
      line += ": ";
      line += value;
    }
    curl_slist* next = curl_slist_append(t.header_list, line.c_str());
    if (next == nullptr) return false;
    t.header_list = next;
  }
  const bool sends_body = !t.body.empty() || (t.method != "GET" && t.method != "HEAD" &&
                                              t.method != "DELETE" && t.method != "OPTIONS");
  // No "Expect: 100-continue" round trip; no invented form Content-Type for bodies.
  for (const char* line : {"Expect:", sends_body && !has_content_type ? "Content-Type:" : nullptr}) {
    if (line == nullptr) continue;
    curl_slist* next = curl_slist_append(t.header_list, line);
    if (next == nullptr) return false;
    t.header_list = next;
  }
  check(curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.header_list));

  static const char kEmpty[] = "";
  if (t.method == "HEAD") {
    check(curl_easy_setopt(e, CURLOPT_NOBODY, 1L));
  } else if (t.method == "GET") {
    check(curl_easy_setopt(e, CURLOPT_HTTPGET, 1L));
  } else {
    if (sends_body) {
      check(curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.body.size())));
      check(curl_easy_setopt(e, CURLOPT_POSTFIELDS,
                             t.body.empty() ? kEmpty : reinterpret_cast<const char*>(t.body.data())));
    }
    if (t.method != "POST") check(curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, t.method.c_str()));
  }

  if (!tuning.resolve.empty()) {
    // Tests only. The list must outlive the handle; it is rebuilt per hop and freed with it.
    curl_slist* list = nullptr;
    for (const std::string& r : tuning.resolve) {
      curl_slist* next = curl_slist_append(list, r.c_str());
      if (next == nullptr) {
        curl_slist_free_all(list);
        return false;
      }
      list = next;
    }
    t.resolve_list = list;
    check(curl_easy_setopt(e, CURLOPT_RESOLVE, list));
  }
  return ok;
}

void HttpCapability::Impl::begin_hop(Transfer& t) {
  const Clock::time_point now = Clock::now();
  if (!t.began) {
    t.began = true;
    t.deadline = now + std::chrono::milliseconds(t.timeout_ms);
  }
  if (now >= t.deadline) {
    complete(t, error(ErrorCode::Timeout, "request timed out after " + std::to_string(t.timeout_ms) +
                                              " ms (timeoutMs, at most permissions.http.timeout_ms)"));
    return;
  }
  if (!ca_loaded) load_ca();
  if (ca_failed) {
    complete(t, error(ErrorCode::NetworkError, "the host's extra CA certificate could not be read"));
    return;
  }
  if (tuning.on_hop) tuning.on_hop(shown_origin(tuning, t.url));
  t.hop_timeout_ms = static_cast<uint64_t>(
      std::max<int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(t.deadline - now).count()));
  t.connected = false;
  t.connect_refusal.clear();
  t.abort_reason.reset();
  t.follow = false;
  t.reset_response();
  t.easy = curl_easy_init();
  if (t.easy == nullptr || !configure(t) || curl_multi_add_handle(multi, t.easy) != CURLM_OK) {
    release_easy(t);
    complete(t, error(ErrorCode::IoError, "libcurl could not set up the transfer"));
  }
}

void HttpCapability::Impl::release_easy(Transfer& t) {
  if (t.easy != nullptr) {
    curl_multi_remove_handle(multi, t.easy);  // a no-op error if it was never added
    curl_easy_cleanup(t.easy);
    t.easy = nullptr;
  }
  curl_slist_free_all(t.header_list);
  t.header_list = nullptr;
  curl_slist_free_all(t.resolve_list);
  t.resolve_list = nullptr;
}

void HttpCapability::Impl::finish_hop(Transfer& t, CURLcode code) {
  curl_off_t uploaded = 0;
  curl_easy_getinfo(t.easy, CURLINFO_SIZE_UPLOAD_T, &uploaded);
  if (uploaded > 0)
    counters.http_bytes_out.fetch_add(static_cast<uint64_t>(uploaded), std::memory_order_relaxed);
  curl_off_t total_us = 0;
  curl_easy_getinfo(t.easy, CURLINFO_TOTAL_TIME_T, &total_us);
  release_easy(t);

  if (t.abort_reason) {
    complete(t, *t.abort_reason);
  } else if (t.follow) {
    follow_redirect(t);
  } else if (code == CURLE_OK) {
    bus::HttpResponseReply reply;
    reply.status = t.status;
    reply.status_text = std::move(t.status_text);
    reply.headers = std::move(t.response_headers);
    reply.body = std::move(t.response_body);
    reply.url = shown_url(tuning, t.url, t.url.text());
    reply.held = std::move(t.response_held);  // the body stays counted until the reply is freed
    complete(t, std::move(reply));
  } else if (!t.connect_refusal.empty() && !t.connected) {
    complete(t, Transfer::refusal(t, t.connect_refusal));
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    const uint64_t elapsed_ms = static_cast<uint64_t>(total_us / 1000);
    if (elapsed_ms + 50 >= t.hop_timeout_ms) {
      complete(t, error(ErrorCode::Timeout, "request timed out after " + std::to_string(t.timeout_ms) +
                                                " ms (timeoutMs, at most permissions.http.timeout_ms)"));
    } else if (!t.connected) {
      complete(t, error(ErrorCode::Timeout,
                        "could not connect to " + shown_host(tuning, t.url) + " within " +
                            std::to_string(std::min(t.hop_timeout_ms, tuning.connect_timeout_ms)) + " ms"));
    } else {
      complete(
          t, error(ErrorCode::Timeout, "transfer from " + shown_host(tuning, t.url) + " was slower than " +
                                           std::to_string(tuning.low_speed_bytes_per_sec) + " bytes/s for " +
                                           std::to_string(tuning.low_speed_time_s) + " s (low-speed limit)"));
    }
  } else {
    // curl_easy_strerror only: libcurl's error buffer can hold host paths (CA files).
    std::string what = curl_easy_strerror(code);
    if (code == CURLE_COULDNT_RESOLVE_HOST) what = "could not resolve host " + shown_host(tuning, t.url);
    if (code == CURLE_COULDNT_CONNECT)
      what = "could not connect to " + shown_host(tuning, t.url, /*with_port=*/true);
    if (code == CURLE_PEER_FAILED_VERIFICATION)
      what = "TLS certificate of " + shown_host(tuning, t.url) + " could not be verified";
    complete(t, error(ErrorCode::NetworkError,
                      "request to " + shown_url(tuning, t.url, t.url.display()) + " failed: " + what));
  }
}

void HttpCapability::Impl::follow_redirect(Transfer& t) {
  const std::string* location = t.response_header("location");
  const std::string from = shown_url(tuning, t.url, t.url.display());
  auto next = http::parse_url(location == nullptr ? std::string_view() : std::string_view(*location), &t.url);
  if (!next) {
    complete(t, error(next.error().code, "redirect from " + from + " refused: " + next.error().message));
    return;
  }
  http::ParsedUrl& url = *next;
  if (!allowlist.allows(url)) {
    complete(t, error(ErrorCode::PermissionDenied, "redirect from " + from + " refused: " + url.display() +
                                                       " is not in " + allow_source()));
    return;
  }
  const std::string origin = url.scheme() + "://" + url.host() + ":" + std::to_string(url.port());
  if (std::find(tuning.mapped_origins.begin(), tuning.mapped_origins.end(), origin) !=
      tuning.mapped_origins.end()) {
    complete(t, error(ErrorCode::PermissionDenied,
                      "redirect from " + from + " refused: " + url.display() +
                          " is an origin the operator mapped to another (the origin map), whose real address "
                          "is never contacted"));
    return;
  }
  // Method rewriting as browsers do it (Fetch "HTTP-redirect fetch"): 303 turns everything but HEAD
  // into GET, 301/302 turn POST into GET; 307/308 keep method and body.
  const bool to_get =
      (t.status == 303 && t.method != "HEAD") || ((t.status == 301 || t.status == 302) && t.method == "POST");
  if (to_get) {
    t.method = "GET";
    t.body.clear();
    std::erase_if(t.headers, [](const Header& h) {
      const std::string n = http::ascii_lower(h.first);
      return n == "content-type" || n == "content-encoding" || n == "content-language" ||
             n == "content-location";
    });
  }
  if (std::find(methods.begin(), methods.end(), t.method) == methods.end()) {
    complete(t, error(ErrorCode::PermissionDenied, "redirect from " + from + " refused: method " + t.method +
                                                       " is not in permissions.http.methods"));
    return;
  }
  // Credentials stay with the origin they were written for.
  if (!url.same_origin(t.url))
    std::erase_if(t.headers, [](const Header& h) {
      const std::string n = http::ascii_lower(h.first);
      return n == "authorization" || n == "cookie";
    });
  t.url = std::move(url);
  ++t.redirects;
  begin_hop(t);
}

void HttpCapability::Impl::complete(Transfer& t, bus::Reply reply) {
  const uint64_t id = t.id;
  release_easy(t);
  active.erase(&t);  // destroys t
  std::lock_guard lock(deliver_mu);
  if (!cancelled) sink.complete(id, std::move(reply));
}

// ---- public surface -------------------------------------------------------------------------------

HttpCapability::HttpCapability(HttpPolicy policy, std::filesystem::path extra_ca_file,
                               bus::CompletionSink& sink, bus::BusCounters& counters, HttpTuning tuning,
                               const bus::StopToken& stop, bus::MemoryBudget* memory)
    : impl_(std::make_unique<Impl>(std::move(policy), std::move(extra_ca_file), sink, counters,
                                   std::move(tuning), stop, memory)) {}

HttpCapability::~HttpCapability() {
  cancel_all();
}

std::optional<bus::Reply> HttpCapability::start(uint64_t id, bus::HttpRequest request, bus::HostBytes held) {
  return impl_->start(id, std::move(request), std::move(held));
}

void HttpCapability::cancel_all() {
  impl_->cancel_all();
}

}  // namespace skillbox::capabilities
