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

struct HttpResponse {
  unsigned status = 200;
  std::string body;  // JSON text (a newline is added on the wire)
  /// Extra headers (Retry-After, Allow, WWW-Authenticate). Content-Type (application/json),
  /// Content-Length and X-Request-Id are set by the HTTP layer.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string tenant;  // for the log line only: the tenant the request authenticated as
};

/// Sends the response of one request. Call exactly once, from any thread.
using Respond = std::function<void(HttpResponse)>;
/// Serves one request; must not block (long work goes to the RunQueue).
using Handler = std::function<void(HttpRequest, Respond)>;

/// `{"error":{"code":CODE,"message":MESSAGE}}` with `status`; every error of the API has this shape.
/// `message` may hold any bytes (ill-formed UTF-8 is replaced).
[[nodiscard]] HttpResponse error_response(unsigned status, std::string_view code, std::string_view message);

}  // namespace skillbox::server
