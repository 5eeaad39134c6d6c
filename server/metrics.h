// server/metrics.h — the server's counters and histograms, and `GET /metrics` in the Prometheus text
// exposition format (version 0.0.4: https://prometheus.io/docs/instrumenting/exposition_formats/).
//
//   skillbox_runs_total{tenant,outcome}            counter    runs that ended, by outcome (skillbox/json.h
//   names) skillbox_run_duration_seconds{tenant}          histogram  time in Runner::run, for runs that
//   started skillbox_queue_wait_seconds{tenant}            histogram  time queued before a run thread took
//   the request skillbox_runs_in_flight{tenant}                gauge      runs on a run thread now
//   skillbox_runs_queued{tenant}                   gauge      requests waiting for a run thread now
//   skillbox_requests_shed_total{tenant,reason}    counter    requests refused at admission
//   skillbox_worker_crashes_total{tenant}          counter    runs whose worker process died (outcome
//   crashed)
//   skillbox_mcp_sessions{tenant}                  gauge      MCP sessions open on /mcp now
//   skillbox_mcp_calls_total{tenant}               counter    MCP tools/call runs started (their outcomes
//   are in skillbox_runs_total)
//
// Every series of every tenant is written from the start (zeros included), so rates work from the
// first scrape. Tenant names follow the skill-id rule, so they need no escaping; they are escaped anyway.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "server/quota.h"
#include "server/run_queue.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

/// Why a request was refused before it reached a run thread (the `reason` label).
enum class ShedReason : uint8_t {
  tenant_queue_full,  // 429: the tenant's own bound (max_concurrent_runs running, max_queued_runs waiting)
  server_busy,        // 503: queue_limit requests wait server-wide
  draining,           // 503: after SIGINT/SIGTERM
  runs_per_minute,    // 429 quota_exceeded: the tenant's runs_per_minute quota is spent
  cpu_seconds_per_minute,  // 429 quota_exceeded: the tenant's cpu_seconds_per_minute quota is spent
};

/// The reason a quota's refusal is counted under (the same for /v1 runs and MCP calls).
[[nodiscard]] inline ShedReason shed_reason(const Quotas::Refusal& refused) {
  return refused.quota == Quotas::Refusal::Quota::runs_per_minute ? ShedReason::runs_per_minute
                                                                  : ShedReason::cpu_seconds_per_minute;
}

class Metrics {
 public:
  /// Series for each tenant of `tenants` (names), indexed as given.
  explicit Metrics(const std::vector<std::string>& tenants);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  /// Adds series for one more tenant (a tenant a reloaded config brings); returns its index. Any thread.
  size_t add_tenant(const std::string& name);

  /// A run of tenant `tenant` ended with `outcome`; `ran` is false when it ended without starting
  /// (cancelled or timed out while queued), and then `seconds` is not observed. Any thread.
  void run_ended(size_t tenant, Outcome outcome, bool ran, double seconds);
  /// A request of `tenant` waited `seconds` in the queue before a run thread took it. Any thread.
  void queue_waited(size_t tenant, double seconds);
  /// A request of `tenant` was refused for `reason`. Any thread.
  void shed(size_t tenant, ShedReason reason);
  /// An MCP session of `tenant` opened (+1) or ended (-1). Any thread.
  void mcp_sessions(size_t tenant, int delta);
  /// An MCP tools/call of `tenant` started its run. Any thread.
  void mcp_call(size_t tenant);

  /// The exposition text, with the gauges from `counts` (one per tenant, as RunQueue::counts()).
  [[nodiscard]] std::string render(const std::vector<RunQueue::LaneCounts>& counts) const;

 private:
  struct Tenant;
  Tenant& at(size_t tenant) const;
  mutable base::Mutex mu_;  // guards the list; each Tenant's counters are atomics
  std::vector<std::unique_ptr<Tenant>> tenants_ SKILLBOX_GUARDED_BY(mu_);
};

}  // namespace skillbox::server
