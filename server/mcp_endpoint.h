// server/mcp_endpoint.h — `/mcp` on `skillbox serve`: the MCP Streamable HTTP transport (MCP revisions
// 2025-06-18 and 2025-11-25, "Transports" > "Streamable HTTP"; docs/mcp.md "Over HTTP").
//
// Each POST carries one JSON-RPC message (a batch is refused: MCP removed batching in 2025-06-18). A
// notification or a response is accepted with 202 and no body. A request is answered on its own POST:
// with one `application/json` response when the answer is all there is, or with a `text/event-stream`
// whose events are the call's notifications (log lines, progress) and then the response, after which the
// stream ends. Nothing is sent on a stream that does not relate to its request. No resumption (no event
// ids; Last-Event-ID is ignored).
//
// GET with `Accept: text/event-stream` and `Mcp-Session-Id` opens the session's server-initiated stream:
// it carries the messages that belong to no request (notifications/tools/list_changed), and an SSE
// comment every kKeepAlivePeriod so that proxies and clients see it alive. One per session: a second GET
// while the first is open gets 409 (as the official TypeScript SDK's server answers); one whose client
// went away is replaced. The stream ends with its session (DELETE, expiry) and when the server drains.
//
// Tools follow the tenant's skills folder and its uploads (PUT and DELETE /v1/skills/{id}): their
// fingerprint (mcp/watch.h: every file's path, size, inode and mtime; each upload's current digest) is
// compared on each initialize, tools/list and tools/call, and every kToolsCheckPeriod by the sweeper;
// when it changed (and, for the sweeper, held still for one period), the skills are listed again (once
// per tenant, shared by its sessions) and each session whose tools differ sends list_changed.
//
// Sessions: `initialize` creates one (an mcp::Session serving the tenant's skills as tools, as
// `skillbox mcp` serves folders) and its response carries `Mcp-Session-Id`, 192 random bits from
// libsodium as 48 hex digits. Later requests without the header get 400, with an id that is unknown,
// ended, expired or another tenant's get 404 (the same answer: an id never says whose it is). DELETE
// ends a session and cancels its calls. A tenant holds at most McpConfig::max_sessions_per_tenant; a
// session unused for McpConfig::session_idle_timeout_ms ends.
//
// Admission: every request (not notifications or responses) waits in its tenant's lane of the RunQueue
// like a /v1 request and keeps its run thread until it is answered, so calls over MCP share the tenant's
// max_concurrent_runs, max_queued_runs and weight with its /v1 runs; refused, it gets 429 or 503 with
// Retry-After and a JSON-RPC error (-32000) in the body.
//
// A client that disconnects from a POST's stream does not cancel its call (the spec of both revisions:
// "disconnection SHOULD NOT be interpreted as the client cancelling its request"); the call runs to
// its end and its messages are dropped. notifications/cancelled, DELETE and the session's expiry cancel.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "mcp/session.h"
#include "server/config.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/quota.h"
#include "server/run_queue.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

/// What the endpoint needs of one tenant (its lane on the RunQueue and its series in the Metrics are
/// `index`).
struct McpTenant {
  size_t index = 0;
  std::string id;
  std::filesystem::path skills_dir;
  std::filesystem::path data_dir;                // its uploaded skills (server/skill_uploads.h) are tools too
  std::shared_ptr<const TenantContext> context;  // its data directory and ceilings
  size_t max_concurrent_runs = 4;
  size_t max_queued_runs = 8;
  QuotaConfig quota;  // a tools/call is a run: it takes from the tenant's quotas as /v1 runs do
};

class McpEndpoint {
 public:
  /// `runner`, `queue`, `metrics` and `quotas` must outlive the endpoint.
  McpEndpoint(const McpConfig& config, Runner& runner, RunQueue& queue, Metrics& metrics, Quotas& quotas,
              std::vector<McpTenant> tenants);
  /// shutdown().
  ~McpEndpoint();
  McpEndpoint(const McpEndpoint&) = delete;
  McpEndpoint& operator=(const McpEndpoint&) = delete;

  /// The answer to a request whose Origin header is present and not allowed (403), or, on a listener
  /// without authentication, whose Host is not a loopback name (403); nullopt when it may go on.
  /// Checked before authentication: a browser page of another origin gets nowhere.
  [[nodiscard]] std::optional<HttpResponse> refuse_origin(const HttpRequest& request) const;

  /// Serves one request to /mcp for tenant `tenant` (an index; already authenticated). Does not block:
  /// requests go to the RunQueue.
  void handle(size_t tenant, HttpRequest request, const Respond& respond, const RespondStream& stream);

  /// The tenants from now on (a SIGHUP reload), each at its `index`. A session keeps the tenant context
  /// and tools it started with; a tenant that is gone can no longer authenticate, so its sessions are
  /// unreachable and expire. Any thread.
  void set_tenants(std::vector<McpTenant> tenants);
  /// Ends every session, cancelling their calls, and returns once each call has answered. New
  /// initialize requests are refused from then on. Idempotent; any thread but an I/O or run thread.
  void shutdown();
  /// Asks for shutdown() from a thread of the endpoint (for a CancelToken callback). Any thread.
  void cancel_all();

 private:
  struct Route;
  struct Conversation;
  struct Listing;
  void listen(size_t tenant, const HttpRequest& request, const Respond& respond, const RespondStream& stream);
  /// The tenant's tools as its skills folder holds them now (listed again only when it changed).
  std::shared_ptr<const Listing> listing(size_t tenant);
  /// Gives `c` the tenant's current tools when they changed since it was last given them.
  void refresh_tools(Conversation& c);
  void check_tools(std::map<size_t, std::string>& pending);
  void keep_alive(bool draining);
  /// What admit() and serve() need to know of a request beyond the HTTP request.
  struct Asked {
    nlohmann::json id;
    bool initialize = false;
    bool refresh_tools = false;           // tools/list and tools/call: served with the tenant's skills of now
    bool call = false;                    // tools/call: a run, which the tenant's quotas admit
    RunQueue::Clock::time_point arrived;  // a call's timeout counts from here
  };
  void admit(size_t tenant, HttpRequest request, const Respond& respond, const RespondStream& stream,
             const std::shared_ptr<Conversation>& conversation, Asked asked);
  void serve(size_t tenant, const HttpRequest& request, const Respond& respond, const RespondStream& stream,
             std::shared_ptr<Conversation> conversation, const Asked& asked);
  std::shared_ptr<Conversation> open(size_t tenant, std::string& error, unsigned& status);
  /// What the session of `c` does around each tools/call: the request's audit facts (skill, digest,
  /// tool, permissions, usage, origins, outcome) and the CPU quota's charge.
  mcp::CallHooks call_hooks(size_t tenant, Conversation* c);
  std::shared_ptr<Conversation> find(size_t tenant, const std::string& session_id);
  void end(const std::string& key);
  void sweep();

  const McpConfig config_;
  Runner& runner_;
  RunQueue& queue_;
  Metrics& metrics_;
  Quotas& quotas_;
  /// The tenant at lane `index`, and the Runner that counts its calls' runs in the metrics.
  [[nodiscard]] std::shared_ptr<const McpTenant> tenant_at(size_t index) const;
  [[nodiscard]] Runner* metered_at(size_t index) const;
  mutable base::Mutex tenants_mu_;  // after mu_ when both are held (sweep), never before it
  /// By lane index (McpTenant::index); a tenant removed by a reload stays, unreachable.
  std::vector<std::shared_ptr<const McpTenant>> tenants_ SKILLBOX_GUARDED_BY(tenants_mu_);
  std::vector<std::unique_ptr<Runner>> metered_ SKILLBOX_GUARDED_BY(tenants_mu_);
  /// The last listing of each tenant's tools, by lane index. Listing runs bundles: one at a time.
  base::Mutex listing_mu_;
  std::map<size_t, std::shared_ptr<const Listing>> listings_ SKILLBOX_GUARDED_BY(listing_mu_);

  base::Mutex mu_;
  std::condition_variable wake_;
  /// Open sessions by the hex SHA-256 of their id (a lookup's timing then says nothing about the id).
  std::map<std::string, std::shared_ptr<Conversation>> sessions_ SKILLBOX_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Conversation>> ending_ SKILLBOX_GUARDED_BY(mu_);  // closed by sweep()
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  bool cancel_all_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::thread sweeper_;
};

}  // namespace skillbox::server
