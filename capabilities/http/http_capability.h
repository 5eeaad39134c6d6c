// capabilities/http/http_capability.h — mediated network access (`openhuman.http`) through libcurl.
//
// One HttpCapability serves the HTTP requests of one invocation. Each request is checked against the
// invocation's `permissions.http` policy in C++ before any socket exists (URL, allowlist, method,
// headers, body size, request count), and again during the transfer: every address libcurl is about to
// connect to is classified (capabilities/http/address_check.h), every redirect hop is re-parsed and
// re-checked against the whole policy, and the decoded response body is cut off the moment it passes
// the cap. docs/http.md describes the rules and the reasons for them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bus/endpoint.h"
#include "bus/memory_budget.h"
#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/policy.h"

namespace skillbox::capabilities {

/// Transport settings that are not part of a skill's manifest. The defaults are the production
/// values; tests lower them to exercise each limit quickly.
struct HttpTuning {
  /// Longest time to establish a connection (TCP + TLS), in milliseconds; never more than the
  /// request's total timeout.
  uint64_t connect_timeout_ms = 10'000;
  /// Low-speed limit: a transfer averaging fewer than `low_speed_bytes_per_sec` bytes per second over
  /// `low_speed_time_s` seconds is aborted as Timeout (defends against servers that drip bytes to
  /// hold a slot; libcurl CURLOPT_LOW_SPEED_LIMIT/TIME).
  uint64_t low_speed_bytes_per_sec = 1;
  uint64_t low_speed_time_s = 30;
  /// Tests only: libcurl CURLOPT_RESOLVE entries ("host:port:address") that pin a name to an address
  /// without DNS. Connect-time address checks still apply to the pinned address.
  std::vector<std::string> resolve;
  /// Endpoints ("127.0.0.1:8080", "[::1]:8080") exempt from the private-address refusal, so a loopback
  /// server can stand in for a public host while everything else stays refused: tests, and the
  /// operator's trusted origin-map targets (HostOptions::trust_loopback_origin_map_targets).
  std::vector<std::string> exempt_endpoints;
  /// Origins ("https://api.example.com:443": scheme, host and port, normalized) no redirect hop may go
  /// to: the `from` side of the operator's origin map. Their first hop was rewritten to the mapped
  /// target before it got here; a redirect back to one would reach its real address.
  std::vector<std::string> mapped_origins;
  /// The origin map seen from its other side: {target, original}, the target normalized like
  /// mapped_origins ("http://127.0.0.1:8080") and the original as the operator wrote it
  /// ("https://api.example.com"). A URL or host of a target is shown as its original
  /// in the response's url and in every error message, so the skill, and whoever reads its errors,
  /// sees the URL it asked for and never the stand-in's loopback address.
  std::vector<std::pair<std::string, std::string>> shown_origins;
  /// Told, on the I/O thread, the origin of each hop a transfer begins (its first, and each redirect
  /// followed): "scheme://host" with ":port" unless the scheme's default, a stand-in shown as its
  /// original. Never a path or a query. The run's record of the origins it contacted (the audit).
  std::function<void(const std::string& origin)> on_hop;
};

/// Runs the HTTP requests of one invocation on a host I/O thread (one libcurl multi handle, started
/// on the first request that passes the checks), enforcing the policy before and during each transfer.
///
/// Replies: start() returns a refusal synchronously, or std::nullopt and later calls
/// sink.complete(id, reply) exactly once from the I/O thread: HttpResponseReply for any HTTP status,
/// ErrorReply for PermissionDenied (policy, connect-time address check, redirect hop), PayloadTooLarge
/// (request body, response body/headers), Timeout (total, connect, low-speed), NetworkError (DNS,
/// connect, TLS, protocol, too many redirects), InvalidArgument (malformed URL/method/header),
/// QuotaExceeded (permissions.http.max_requests). sink.complete must not call back into this object.
///
/// Counters: counters.http_bytes_in counts decoded response body bytes accepted, http_bytes_out
/// request body bytes sent (each redirect hop that resends the body counts again).
class HttpCapability {
 public:
  /// `extra_ca_file`: tests only, a PEM CA trusted in addition to the system bundle (empty: none).
  /// `stop` (must outlive this object): once it is requested, every transfer in flight is aborted
  /// (its connection closed) and every waiting request fails with Timeout; the I/O thread wakes at
  /// the token's deadline for that, so a transfer does not outlive the invocation's deadline.
  /// `memory` (may be null: nothing counted; must outlive this object) is the invocation's memory
  /// budget (bus/memory_budget.h): response headers and body are reserved there before they grow (a
  /// declared Content-Length at once), and a response that does not fit fails with PayloadTooLarge
  /// naming limits.memory_mb; the reply holds its reservation until it is freed.
  HttpCapability(HttpPolicy policy, std::filesystem::path extra_ca_file, bus::CompletionSink& sink,
                 bus::BusCounters& counters, HttpTuning tuning = {},
                 const bus::StopToken& stop = bus::StopToken::never(), bus::MemoryBudget* memory = nullptr);
  ~HttpCapability();  // cancel_all()
  HttpCapability(const HttpCapability&) = delete;
  HttpCapability& operator=(const HttpCapability&) = delete;

  /// Starts a request. Policy refusals complete synchronously (returned); otherwise returns
  /// std::nullopt and the reply arrives through sink.complete(id, ...). At most
  /// `policy.max_concurrent` requests are in flight at once; further ones wait in FIFO order. The
  /// total timeout of a request starts when it leaves that queue and covers all redirect hops.
  /// `held`: the request's payload as counted by the Endpoint; kept until the transfer ends.
  std::optional<bus::Reply> start(uint64_t id, bus::HttpRequest request, bus::HostBytes held = {});

  /// Aborts every pending and queued request, closes their connections and stops the I/O thread.
  /// When it returns no sink.complete() call is running or will ever be made; later start() calls
  /// are refused. Idempotent. Must not be called from inside sink.complete().
  void cancel_all();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
