// server/http_types.h — one HTTP request and its response as plain values: what the HTTP layer
// (server/http_server.cpp, Boost.Beast) hands the API (server/api.cpp) and gets back. The API never sees
// a socket or a Beast type.
#pragma once

#include <functional>
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
};

/// What the API learnt about a request, for its audit line (server/audit.h); empty fields are unknown or
/// do not apply. Never a secret or an input value.
struct RequestFacts {
  std::string route;             // the route matched, as a pattern: "POST /v1/skills/{id}/run"
  std::string skill;             // the skill id of the route (checked against the id rule when written)
  std::string export_name;       // a run's export, as asked ("" for the default)
  std::string usage_json;        // a run's usage object (skillbox/json.h)
  std::string permissions_json;  // the permissions the run had (audit.h permission_summary_json)
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

/// Sends the response of one request. Call exactly once, from any thread.
using Respond = std::function<void(HttpResponse)>;
/// Serves one request; must not block (long work goes to the RunQueue).
using Handler = std::function<void(HttpRequest, Respond)>;
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

}  // namespace skillbox::server
