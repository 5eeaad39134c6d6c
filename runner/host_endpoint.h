// runner/host_endpoint.h — host composition: the capabilities that serve one invocation.
//
// A HostEndpoint is the bus::Endpoint backed by capabilities in this process. It decides which
// capability answers which request type (an exhaustive visit: a new request type does not compile
// until it is routed here) and builds each capability lazily on its first request, so a skill that
// never touches the store never opens SQLite (start-up is the hot path). Capabilities receive only the
// typed request and the invocation's policy. In-process, the runner hands a HostEndpoint to the
// engine; in worker mode the supervisor answers the worker's request frames with one.
//
// Ownership: the HostEndpoint owns every capability of its invocation, the run's log and the usage
// counters. Threading: send(), take_logs() and report() run on one thread (the JS thread in-process,
// the supervisor's frame loop in worker mode); the http capability completes its requests on its I/O
// thread into the CompletionSink given at construction, until cancel_all().
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "bus/endpoint.h"
#include "bus/memory_budget.h"
#include "bus/messages.h"
#include "bus/stop_token.h"
#include "runner/live_run.h"
#include "skillbox/policy.h"
#include "skillbox/skillbox.h"
#include "state/backends.h"

namespace skillbox::runner {

/// The origins one invocation's http requests went to ("https://api.example.com", as
/// capabilities::HttpTuning::on_hop names them), each once, in the order first used: the audit's record
/// of whom a run contacted. Filled from the http capabilities' I/O threads, read after the run.
class ContactedOrigins {
 public:
  /// Origins kept; beyond it the list ends with "..." (max_requests and max_redirects bound a run's
  /// hops far below it unless a manifest raises them).
  static constexpr size_t kMaxOrigins = 256;
  /// Adds `origin` unless it is there. Any thread.
  void add(const std::string& origin);
  /// The origins so far. Any thread.
  [[nodiscard]] std::vector<std::string> list() const;

 private:
  mutable base::Mutex mu_;
  std::vector<std::string> origins_ SKILLBOX_GUARDED_BY(mu_);
};

/// What the capabilities of one invocation need to know about it. Plain values only.
struct InvocationContext {
  std::string skill_id;
  Policy policy;
  std::shared_ptr<const state::Backends> state;  // the tenant's state (TenantContext::state), never null
  std::map<std::string, std::string> env;        // values env.get may return (only granted names)
  std::filesystem::path extra_ca_file;           // tests only: additional trusted CA (PEM)
  // OpenHuman bundles (docs/openhuman.md): the operator's credentials for this skill, and the bundle's
  // setup modes (for the hosts an auth credential is bound to by default).
  std::optional<SkillCredentials> credentials;
  std::vector<BundleSetupMode> setup_modes;
  // The operator's origin map (HostOptions::origin_map), normalized by parse_origin_mapping.
  std::vector<std::pair<std::string, std::string>> origin_map;
  // Endpoints ("127.0.0.1:8080", "[::1]:8080") of loopback origin-map targets the operator trusts
  // (HostOptions::trust_loopback_origin_map_targets): exempt from the private-address refusal.
  std::vector<std::string> trusted_endpoints;
  // The skill's format: requests of the OpenHuman API (db, events, credentials) are refused for any
  // other (a hostile worker could send them for a plain skill).
  SkillFormat format = SkillFormat::skillbox;
  // limits.memory_mb of the run, in bytes: bounds the bundle database's image and values.
  uint64_t memory_bytes = Limits{}.memory_bytes;
  // Where the http capabilities record each origin they contact (null: nowhere).
  std::shared_ptr<ContactedOrigins> contacted = nullptr;
};

class HostEndpoint final : public bus::Endpoint {
 public:
  /// Serves the invocation described by `context`; asynchronous replies go to `sink`, which must
  /// outlive this object (or cancel_all() must have returned before it goes away). `stop` says when
  /// the invocation is ending (a limit tripped or its deadline passed); it must outlive this object.
  /// `budget` (may be null: nothing counted) is the invocation's memory budget: every host buffer the
  /// capabilities hold for it is reserved there first (docs/limits.md "Host memory is part of the
  /// budget"); it must outlive this object.
  HostEndpoint(InvocationContext context, bus::CompletionSink& sink,
               const bus::StopToken& stop = bus::StopToken::never(), bus::MemoryBudget* budget = nullptr);
  ~HostEndpoint() override;  // cancel_all()
  HostEndpoint(const HostEndpoint&) = delete;
  HostEndpoint& operator=(const HostEndpoint&) = delete;

  /// bus::Endpoint. log, fs, store and env reply synchronously; http returns std::nullopt unless
  /// refused at once. The note of a refused env name goes to the run's log. Counts every request in
  /// counters().host_calls. A request with no type (a valueless variant) is an IoError reply. Once
  /// `stop` is requested, every request is answered ErrorReply{Timeout} without reaching any
  /// capability ("nothing happens after a limit"); the capabilities also check `stop` between the
  /// steps of a long operation (fs recursive remove, appends; http transfers are aborted). The payload
  /// of a request (log text, write data, http body and headers, store value) is counted in the budget
  /// while a capability works on it; one that does not fit is refused with PayloadTooLarge.
  std::optional<bus::Reply> send(uint64_t request_id, bus::Request request) override;
  /// bus::Endpoint: cancels the pending http requests; none completes after this returns.
  void cancel_all() override;

  /// Streams this invocation's log lines and host-call events to `live` (the embedder's Observer) as
  /// they are accepted, from send()'s thread. `live` must outlive this object. Call before the first
  /// send(); without it nothing is streamed.
  void observe(LiveRun& live) { live_ = &live; }

  /// Log lines accepted so far (escaped, truncated, within the run's budget), moved out.
  std::vector<LogEntry> take_logs();

  /// Copies what the host side measured into `result`: usage.host_calls, usage.http_bytes_in,
  /// usage.http_bytes_out, usage.host_peak_bytes (the budget's), the log lines (take_logs()) and the
  /// events. Call after the engine finished (after cancel_all()), so no counter moves any more.
  void report(RunResult& result);

  /// Requires `skill_dir` to own the invocation's skill id (docs/manifest.md "Identity"): the first
  /// store, fs or env request binds the id to it (state::BindingRegistry::bind), and every such request of a
  /// folder that does not own the id is refused (PermissionDenied, with the rebind command). Without
  /// this call no identity is checked (tests of the capabilities alone).
  void require_owner(std::filesystem::path skill_dir) { skill_dir_ = std::move(skill_dir); }

  /// Worker mode: the worker runs the bundle's database itself (docs/openhuman.md "db"). From then on
  /// a DbRequest is refused (it is never legitimate from a worker) and one DbOpenRequest is answered
  /// with the database's bytes, under the skill's database lease. Call before the first send().
  void serve_db_in_worker() { db_in_worker_ = true; }

  /// Ends the invocation's use of the bundle database: in-process the engine's changes are taken from
  /// it; in worker mode `worker_image` is what the worker's result frame carried. The new bytes are
  /// written to DATA/skills/<id>/db.sqlite (atomically) only when `outcome` is ok or error; after a
  /// limit, a crash or a cancellation the database stays as it was. Then the lease is released.
  /// The error says why the database could not be written, if it could not. Call once, after the
  /// engine has finished, on send()'s thread.
  Result<void> finish_db(Outcome outcome, std::optional<bus::Bytes> worker_image = std::nullopt);

  [[nodiscard]] const bus::BusCounters& counters() const { return counters_; }
  [[nodiscard]] const InvocationContext& context() const { return context_; }

 private:
  struct Capabilities;   // the lazily created capability objects (host_endpoint.cpp)
  struct RedactingSink;  // http replies pass the credential vault on their way to sink_
  struct Router;         // the exhaustive visitor

  InvocationContext context_;
  bus::CompletionSink& sink_;
  const bus::StopToken& stop_;
  bus::MemoryBudget* budget_;
  bus::BusCounters counters_;
  std::unique_ptr<Capabilities> caps_;
  LiveRun* live_ = nullptr;   // see observe()
  size_t logs_streamed_ = 0;  // entries of the log capability already given to live_
  std::unique_ptr<RedactingSink> http_sink_;
  std::vector<Event> events_;
  size_t event_bytes_ = 0;
  std::filesystem::path skill_dir_;
  std::optional<bus::ErrorReply> identity_;  // why the id is not this folder's (checked once: bound_)
  bool bound_ = false;
  bool db_in_worker_ = false;
  base::OneThread sender_;  // send(), take_logs(), report() and finish_db() run on one thread
};

}  // namespace skillbox::runner
