// server/http_types.h — one HTTP request and its response as plain values: what the HTTP layer
// (server/http_server.cpp, Boost.Beast) hands the API (server/api.cpp) and gets back. The API never sees
// a socket or a Beast type.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skillbox::server {

struct HttpRequest {
  std::string request_id;     // 32 hex digits, also in the X-Request-Id response header and the log
  std::string method;         // as sent, e.g. "GET"
  std::string target;         // as sent: path and query, never decoded
  std::string authorization;  // the Authorization header's value, or empty
  std::string body;           // at most ServerConfig::max_body_bytes
  /// Every header but Authorization, names in lower case, in the order sent.
  std::vector<std::pair<std::string, std::string>> headers;
  /// Set when the request came through a listener configured without authentication (`auth =
  /// "none"`, docs/server.md): the name of the one tenant that listener serves. Empty otherwise.
  std::string listener_tenant;

  /// The first header called `name` (lower case), or nullptr.
  [[nodiscard]] const std::string* header(std::string_view name) const {
    for (const auto& [n, v] : headers)
      if (n == name) return &v;
    return nullptr;
  }
  /// How many headers called `name` (lower case) were sent.
  [[nodiscard]] size_t header_count(std::string_view name) const {
    size_t n = 0;
    for (const auto& h : headers) n += h.first == name ? size_t{1} : size_t{0};
    return n;
  }
};

/// What the API learnt about a request, for its audit line (server/audit.h); empty fields are unknown or
/// do not apply. Never a secret or an input value.
struct RequestFacts {
  std::string route;             // the route matched, as a pattern: "POST /v1/skills/{id}/run"
  std::string skill;             // the skill id of the route (checked against the id rule when written)
  std::string digest;            // the skill's digest (server/skill_digest.h), when one was found
  std::string export_name;       // a run's export, as asked ("" for the default)
  std::string usage_json;        // a run's usage object (skillbox/json.h)
  std::string permissions_json;  // the permissions the run had (audit.h permission_summary_json)
  std::string origins_json;      // the origins a run contacted, a JSON array (server/origin_tap.h)
};

struct HttpResponse {
  unsigned status = 200;
  std::string body;  // JSON text (a newline is added on the wire), unless content_type says otherwise
  /// Empty: application/json. Anything else is sent as given, and the body as it is.
  std::string content_type;
  /// Extra headers (Retry-After, Allow, WWW-Authenticate). Content-Type, Content-Length and
  /// X-Request-Id are set by the HTTP layer.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string tenant;   // for the log line only: the tenant the request authenticated as
  std::string outcome;  // for the log line only: a run's outcome ("ok", "cancelled", ...), or empty
  RequestFacts facts;   // for the audit only
};

/// The body of a response sent in parts as they come (a `text/event-stream`), after its status and
/// headers went out. Any thread; parts go out in the order written.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  /// Queues `bytes` (one chunk on the wire). Dropped once the client is gone.
  virtual void write(std::string bytes) = 0;
  /// Ends the body (the last chunk). Later writes are dropped. Idempotent.
  virtual void end() = 0;
  /// end(), and the request's log line and audit line (written when the last chunk went out, or the
  /// client was found gone) carry `outcome` and `facts`, which were not known when the head went out
  /// (a streamed run's outcome and usage). Empty fields keep the head's.
  virtual void end_with(std::string outcome, RequestFacts facts) = 0;
  /// True once a write failed or the client closed its connection: nobody reads any more.
  [[nodiscard]] virtual bool gone() const = 0;
};

/// Sends the response of one request. Call exactly once, from any thread.
using Respond = std::function<void(HttpResponse)>;
/// Instead of Respond (exactly one of the two, once): sends `head` (its status and headers; its body is
/// ignored) with a chunked body written through the stream returned, whose end() completes the
/// request. Any thread.
using RespondStream = std::function<std::shared_ptr<ResponseStream>(HttpResponse head)>;
/// Serves one request; must not block (long work goes to the RunQueue). It answers through exactly one
/// of `respond` and `stream`, once.
using Handler = std::function<void(HttpRequest, Respond respond, RespondStream stream)>;
/// Told, on the I/O thread, that the client of the request `request_id` closed its connection before
/// the response was written (its Respond must still be called: the write then fails quietly). Must
/// not block.
using ClientGone = std::function<void(const std::string& request_id)>;

/// Told, on the I/O thread, of each request as its response goes out (refusals of the HTTP layer
/// included, with method "-" when the request line did not parse). Must not block for long.
using Served = std::function<void(std::string_view request_id, std::string_view method, const HttpResponse&)>;

/// `{"error":{"code":CODE,"message":MESSAGE}}` with `status`; every error of the API has this shape.
/// `message` may hold any bytes (ill-formed UTF-8 is replaced).
[[nodiscard]] HttpResponse error_response(unsigned status, std::string_view code, std::string_view message);
/// `r` with one more header (Retry-After, Allow, WWW-Authenticate).
[[nodiscard]] HttpResponse with_header(HttpResponse r, std::string name, std::string value);
/// A response with `status` and no body (202 Accepted, 204 No Content).
[[nodiscard]] HttpResponse empty_response(unsigned status);

}  // namespace skillbox::server
