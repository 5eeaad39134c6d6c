// server/api.h — the HTTP API of `skillbox serve` (docs/server.md "API"): routing, authentication,
// admission, and the work of each route on the RunQueue.
//
//   GET  /healthz                 200 while the process lives (no key)
//   GET  /readyz                  200 while accepting; 503 while draining, or while the database
//                                 (serve --database) cannot be used (no key)
//   GET  /metrics                 Prometheus text (server/metrics.h), for the operator's metrics key only
//   GET  /v1/skills               the tenant's skills
//   GET  /v1/skills/{id}          one skill: manifest, exports, effective limits and permissions
//   PUT  /v1/skills/{id}          upload a skill (JSON map of files, or a tar) as a new version
//   POST /v1/skills/{id}/run      one run: the RunResult JSON of skillbox/json.h, whatever the outcome;
//                                 with Accept: application/x-ndjson, the `--json-stream` lines as they come
//                                 with ?async=true, queued instead (Idempotency-Key: one run per
//                                 key): 202 and the run's record (server/async_runs.h)
//   GET  /v1/runs/{id}            an async run's record: its state and, once ended, its result
//   POST /v1/run                  one run of a skill sent with the request (inline code)
//   GET  /v1/skills/{id}/tools    an OpenHuman bundle's tools
//   POST /v1/skills/{id}/tools/{tool}/call   one of its tools (as `skillbox call`)
//   POST /v1/skills/{id}/hooks/{hook}        one of its hooks (as `skillbox hook`)
//   GET  /v1/skills/{id}/store    the skill's store keys, read-only (server/data_view.h)
//   GET  /v1/skills/{id}/store/{key}         one stored value
//   GET  /v1/skills/{id}/workspace           the workspace's top folder, read-only
//   GET  /v1/skills/{id}/workspace/{path}    a workspace folder's listing or a file's bytes
//   GET|POST|DELETE /mcp          MCP over Streamable HTTP: the tenant's skills as tools
//   (server/mcp_endpoint.h)
//
// The key (Authorization: Bearer KEY) alone names the tenant; nothing else a client sends (the query
// string, other headers, the id) can reach another tenant's skills folder, data directory or runs.
//
// Admission (docs/server.md "Admission"): every request that reads skills or runs one waits in its
// tenant's queue on the RunQueue, except the async runs' own requests (queueing one, reading its
// record), which are short ledger work on two threads of their own (at most 256 waiting; beyond, 503),
// so that a tenant whose runs fill its lane can still queue more and read how they went; the time it waited
// counts against its run's timeout, and a client that closes its connection takes its request out of the
// queue, or cancels its run. A run is admitted only within its tenant's quotas per minute (server/quota.h),
// checked before it is queued.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "server/api_key.h"
#include "server/async_runs.h"
#include "server/config.h"
#include "server/http_types.h"
#include "server/mcp_endpoint.h"
#include "server/metrics.h"
#include "server/quota.h"
#include "server/run_queue.h"
#include "server/skill_catalog.h"
#include "server/skill_uploads.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

class Database;

class Api {
 public:
  /// `runner`, `queue`, `metrics` and `draining` must outlive the Api; the queue has one lane per
  /// tenant of `config`, in order, and so has `metrics`. Cancelling `cancel` cancels every run (the
  /// server does when the drain timeout passes). `database`, when not null (serve --database), holds
  /// every tenant's store, workspace and bindings, decides /readyz with the drain, and outlives the Api.
  Api(const ServerConfig& config, Runner& runner, RunQueue& queue, Metrics& metrics,
      const std::atomic<bool>& draining, CancelToken cancel, const Database* database = nullptr);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  /// Serves one request (server/http_types.h Handler): answers at once, or queues the work on the
  /// RunQueue and answers from there.
  void handle(HttpRequest request, const Respond& respond, const RespondStream& stream);

  /// Ends every MCP session (their calls cancelled) and waits for their calls to answer. Before the
  /// RunQueue goes: an MCP request keeps its run thread until answered.
  void shutdown_mcp();

  /// Claims no more async runs, and gives back those claimed but not started (server/async_runs.h).
  /// When the server drains, and before the RunQueue goes.
  void stop_async();

  /// Runs the async runs' requests already accepted (their answers go out), then takes no more. Before
  /// the HTTP server goes.
  void shutdown_ledger_work();

  /// Serves `config`'s tenants, keys, skill folders, data directories, ceilings and quotas from the
  /// next request on (a SIGHUP reload). Requests already admitted keep the tenant they started with. A
  /// tenant that is gone no longer authenticates; a new one gets a lane and metric series. `config`
  /// has been checked (config_problems). Any thread.
  void reload(const ServerConfig& config);

  /// The client of `request_id` closed its connection (server/http_types.h ClientGone): a request
  /// still queued is withdrawn and answered 499 (nobody reads it; the log line says
  /// outcome=cancelled), a run in progress is cancelled through its CancelToken (its result, outcome
  /// `cancelled`, is logged the same way). Unknown or finished requests are ignored. Any thread.
  void client_gone(const std::string& request_id);

 private:
  struct Tenant;
  struct Tenancy;
  struct Route;
  class LedgerWork;
  /// A request on the RunQueue, found by its request id when its client goes.
  struct Pending {
    uint64_t ticket = 0;
    CancelToken cancel;  // the run's own token: the client's leaving, or the drain, cancels it
    Respond respond;
    size_t tenant = 0;
    std::string tenant_id;
    bool is_run = false;
  };
  [[nodiscard]] static std::optional<KeyHash> presented_key(const HttpRequest& request);
  [[nodiscard]] std::shared_ptr<const Tenancy> tenancy() const;
  std::shared_ptr<const Tenancy> build_tenancy(const ServerConfig& config) SKILLBOX_REQUIRES(tenancy_mu_);
  static std::shared_ptr<const Tenant> authenticate(const Tenancy& tenancy, const HttpRequest& request);
  [[nodiscard]] HttpResponse metrics(const Tenancy& tenancy, const HttpRequest& request) const;
  void admit(const std::shared_ptr<const Tenant>& tenant, const Route& route, HttpRequest request,
             const Respond& respond, const RespondStream& stream);
  /// The answer to a request of `tenant` that admission refused (`admission` is not `queued`).
  [[nodiscard]] HttpResponse refusal(const Tenant& tenant, RunQueue::Admission admission) const;
  /// 429 quota_exceeded for `refused`, counted as shed.
  [[nodiscard]] HttpResponse quota_refusal(const Tenant& tenant, const Quotas::Refusal& refused) const;
  void handle_mcp(const Tenancy& tenancy, HttpRequest request, const Respond& respond,
                  const RespondStream& stream);
  static std::vector<McpTenant> mcp_tenants(const Tenancy& tenancy);
  /// 503 while draining, counted as shed for `tenant` when the request authenticated (else null).
  [[nodiscard]] HttpResponse draining(const Tenant* tenant) const;
  /// The answer of `route`, or std::nullopt when it went out through `stream` (a streamed run; `stream`
  /// is empty unless the client asked for one).
  std::optional<HttpResponse> serve(const Tenant& tenant, const Route& route, const HttpRequest& request,
                                    RunQueue::Clock::duration waited, const CancelToken& cancel,
                                    const RespondStream& stream) const;
  /// One run of `skill`; `digest` is the skill's, for the audit.
  std::optional<HttpResponse> run(const Tenant& tenant, const Skill& skill, const HttpRequest& request,
                                  RunQueue::Clock::duration waited, const CancelToken& cancel,
                                  const RespondStream& stream, const std::string& digest) const;
  /// The routes of one skill found in the tenant's catalog (all but list, upload and inline runs).
  std::optional<HttpResponse> serve_skill(const Tenant& tenant, const Route& route, const FoundSkill& found,
                                          const HttpRequest& request, RunQueue::Clock::duration waited,
                                          const CancelToken& cancel, const RespondStream& stream) const;
  HttpResponse upload(const Tenant& tenant, const Route& route, const HttpRequest& request) const;
  /// Checks a run request (body, limits, Idempotency-Key) and stores it in the tenant's ledger, claimed
  /// by this replica when `claim`: what the ledger did, or the error answer (nothing stored).
  Result<state::Enqueued, HttpResponse> store_run(const Tenant& tenant, const Route& route,
                                                  const FoundSkill& found, const HttpRequest& request,
                                                  bool claim) const;
  /// POST /v1/skills/{id}/run with an Idempotency-Key: the run is stored claimed and run at once; the
  /// same key again answers with its stored answer (or 409 while it still runs).
  std::optional<HttpResponse> keyed_run(const Tenant& tenant, const Route& route, const FoundSkill& found,
                                        const HttpRequest& request, RunQueue::Clock::duration waited,
                                        const CancelToken& cancel, const RespondStream& stream) const;
  /// POST /v1/skills/{id}/run?async=true: stores the run in the tenant's ledger; 202.
  HttpResponse enqueue(const Tenant& tenant, const Route& route, const FoundSkill& found,
                       const HttpRequest& request) const;
  /// GET /v1/runs/{id}.
  HttpResponse run_record(const Tenant& tenant, const Route& route) const;
  /// Runs an async run a claim took (AsyncRuns::Execute) for the tenant called `tenant` now.
  HttpResponse execute_async(const std::string& tenant, const state::ClaimedRun& run,
                             const CancelToken& cancel);
  /// DELETE /v1/skills/{id}: the tenant's uploaded skill (delete_upload); 204.
  HttpResponse remove_upload(const Tenant& tenant, const Route& route) const;
  std::optional<HttpResponse> inline_run(const Tenant& tenant, const HttpRequest& request,
                                         RunQueue::Clock::duration waited, const CancelToken& cancel,
                                         const RespondStream& stream) const;
  std::optional<HttpResponse> bundle(const Tenant& tenant, const Route& route, const FoundSkill& found,
                                     const HttpRequest& request, RunQueue::Clock::duration waited,
                                     const CancelToken& cancel, const RespondStream& stream) const;
  /// `tenant` with its store, workspace, database and bindings in the throwaway folder `data_dir`
  /// (credentials, env and ceilings kept): for inline skills and tool listings, which keep no state.
  static Tenant scratch_tenant(const Tenant& tenant, const std::filesystem::path& data_dir);

  Runner& runner_;
  RunQueue& queue_;
  Metrics& metrics_;
  const std::atomic<bool>& draining_;
  CancelToken cancel_;
  const Database* const database_;
  mutable base::Mutex tenancy_mu_;
  /// What a request is served with: it takes this snapshot once, and keeps it to its end.
  std::shared_ptr<const Tenancy> tenancy_ SKILLBOX_GUARDED_BY(tenancy_mu_);
  /// Each tenant name ever served, and its lane on the RunQueue (and series in the Metrics).
  std::map<std::string, size_t> lanes_ SKILLBOX_GUARDED_BY(tenancy_mu_);
  /// The local async run ledger of each data directory ever served (without a database).
  std::map<std::filesystem::path, std::shared_ptr<state::RunLedger>> local_ledgers_
      SKILLBOX_GUARDED_BY(tenancy_mu_);
  base::Mutex pending_mu_;  // taken before the RunQueue's own lock, never after it
  std::map<std::string, Pending> pending_ SKILLBOX_GUARDED_BY(pending_mu_);
  mutable VersionPins pins_;  // uploaded versions that runs in progress use
  std::unique_ptr<McpEndpoint> mcp_;
  const uint32_t async_max_attempts_;        // [async] max_attempts, fixed at start
  std::unique_ptr<LedgerWork> ledger_work_;  // before async_: the claims' answers may still queue work
  std::unique_ptr<AsyncRuns> async_;         // made last, stopped first: it calls back into this Api
  CancelToken::Subscription mcp_cancel_;     // the drain's cancellation ends the MCP sessions
  /// The tenants' quotas per minute, by tenant name (so a reload keeps what was spent). Thread-safe;
  /// mutable because the run, a const member, pays its CPU time into it.
  mutable Quotas quotas_;
};

}  // namespace skillbox::server
