// server/api.cpp — see api.h.
#include "server/api.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/scratch_dir.h"
#include "base/skill_id.h"
#include "server/api_key.h"
#include "server/audit.h"
#include "server/code_request.h"
#include "server/data_view.h"
#include "server/database.h"
#include "server/held_answer.h"
#include "server/origin_tap.h"
#include "server/run_request.h"
#include "server/skill_catalog.h"
#include "server/skill_uploads.h"
#include "skillbox/json.h"
#include "state/backends.h"
#include "state/run_ledger.h"

namespace skillbox::server {

struct Api::Tenant {
  size_t index = 0;  // its lane on the RunQueue and its series in the Metrics
  TenantConfig config;
  std::shared_ptr<const TenantContext> context;
  /// Its store, workspace and bindings are in the database (serve --database), not its data directory.
  bool state_in_database = false;
  /// Its async runs: in the database, or in its data directory.
  std::shared_ptr<state::RunLedger> runs;
};

/// One config's tenants and operator keys, swapped whole by reload().
struct Api::Tenancy {
  std::vector<std::shared_ptr<const Tenant>> tenants;
  std::vector<KeyHash> metrics_keys;
};

struct Api::Route {
  enum class Kind : uint8_t {
    list,
    detail,
    run,
    upload,
    remove,
    inline_run,
    tools,
    call,
    hook,
    store_keys,
    store_value,
    workspace,
    run_record
  };
  Kind kind = Kind::list;
  std::string_view method;
  std::string id;            // as sent (never decoded); checked by find_skill before it meets a path
  std::string_view pattern;  // the route's path pattern, for the audit
  std::string arg{};         // the rest, undecoded: a tool or hook name, a store key, a workspace path
  std::string_view allow{};  // the methods of the path, for 405 (empty: `method`)
  [[nodiscard]] bool runs() const {
    return kind == Kind::run || kind == Kind::inline_run || kind == Kind::tools || kind == Kind::call ||
           kind == Kind::hook;
  }
};

namespace {

/// The error answer of a problem the catalog, the uploads or the request checks found.
HttpResponse problem_response(const SkillProblem& p) {
  return error_response(p.status, p.code, p.message);
}

/// 400 for an id the rule refuses, 409 for an id of the operator's skills folder (`what_to_do` ends the
/// message); nullopt when the tenant may upload or delete under `id`.
std::optional<HttpResponse> upload_id_problem(const TenantConfig& tenant, const std::string& id,
                                              std::string_view what_to_do) {
  if (!base::is_valid_skill_id(id)) {
    return error_response(400, "invalid_skill_id", "a skill id is " + std::string(base::kSkillIdRule));
  }
  std::error_code ec;
  if (std::filesystem::is_directory(tenant.skills_dir / id, ec)) {
    return error_response(
        409, "skill_id_taken",
        "\"" + id + "\" is a skill of the operator's skills folder; " + std::string(what_to_do));
  }
  return std::nullopt;
}

/// 403 for code the tenant may not send: `what` it tried, `key` the [tenants.NAME] code setting.
HttpResponse code_not_allowed(std::string_view code, std::string_view what, std::string_view key) {
  return error_response(403, code,
                        "this tenant may not " + std::string(what) + "; the operator sets code." +
                            std::string(key) + " = true in its [tenants.NAME] table (docs/server.md)");
}

/// The path of a request target: everything before '?'. The query string is never read: no key,
/// tenant or id can arrive through it.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

/// Whether the query of `target` asks for an async run: its parameter `async`, "true" or "false" (absent:
/// false). std::nullopt for another value. Other parameters are not read.
std::optional<bool> async_query(std::string_view target) {
  const size_t q = target.find('?');
  std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  std::optional<bool> async = false;
  while (!query.empty()) {
    const size_t amp = std::min(query.find('&'), query.size());
    const std::string_view param = query.substr(0, amp);
    query.remove_prefix(std::min(amp + 1, query.size()));
    if (param == "async=true") {
      async = true;
    } else if (param == "async=false") {
      async = false;
    } else if (param.starts_with("async=") || param == "async") {
      return std::nullopt;
    }
  }
  return async;
}

/// An Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) skillbox accepts: 1 to 255 visible
/// ASCII characters.
bool is_idempotency_key(std::string_view key) {
  if (key.empty() || key.size() > 255) return false;
  return std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

/// The JSON of an async run's record, as GET /v1/runs/{id} and the 202 answer show it.
std::string run_record_json(const state::RunRecord& r) {
  nlohmann::ordered_json out{{"id", r.id},
                             {"skill", r.skill_id},
                             {"state", std::string(state::to_string(r.state))},
                             {"attempts", r.attempts},
                             {"max_attempts", r.max_attempts},
                             {"created_at", rfc3339_utc(r.created_ms)}};
  if (r.started_ms) out["started_at"] = rfc3339_utc(*r.started_ms);
  if (r.ended_ms) out["ended_at"] = rfc3339_utc(*r.ended_ms);
  if (!r.result.empty()) {
    // completed: the run result; failed and dead: the error answer, whose `error` is shown.
    const nlohmann::ordered_json answer = base::json_text::parse_ordered(r.result);
    if (r.state == state::RunState::completed) {
      out["result"] = answer;
    } else if (answer.is_object() && answer.contains("error")) {
      out["error"] = answer["error"];
    } else {
      out["result"] = answer;
    }
  }
  return base::json_text::write(out);
}

/// The route of what follows /v1/skills/{id} (`rest`, "" or starting with '/'), or std::nullopt. A tool
/// or hook name is one segment; a store key and a workspace path are the whole rest (decoded later).
template <class Route>
std::optional<Route> match_skill_route(std::string id, std::string_view rest, std::string_view method) {
  using K = typename Route::Kind;
  if (rest.empty()) {
    constexpr std::string_view kAllow = "GET, PUT, DELETE";
    if (method == "PUT") return Route{K::upload, "PUT", std::move(id), "/v1/skills/{id}", {}, kAllow};
    if (method == "DELETE") return Route{K::remove, "DELETE", std::move(id), "/v1/skills/{id}", {}, kAllow};
    return Route{K::detail, "GET", std::move(id), "/v1/skills/{id}", {}, kAllow};
  }
  if (rest == "/run") return Route{K::run, "POST", std::move(id), "/v1/skills/{id}/run"};
  if (rest == "/tools") return Route{K::tools, "GET", std::move(id), "/v1/skills/{id}/tools"};
  if (rest == "/store") return Route{K::store_keys, "GET", std::move(id), "/v1/skills/{id}/store"};
  if (rest.starts_with("/store/")) {
    return Route{K::store_value, "GET", std::move(id), "/v1/skills/{id}/store/{key}",
                 std::string(rest.substr(7))};
  }
  if (rest == "/workspace" || rest.starts_with("/workspace/")) {
    const std::string_view path = rest.size() > 11 ? rest.substr(11) : std::string_view();
    return Route{K::workspace, "GET", std::move(id), "/v1/skills/{id}/workspace/{path}", std::string(path)};
  }
  if (rest.starts_with("/tools/") && rest.ends_with("/call") && rest.size() > 12) {
    const std::string_view tool = rest.substr(7, rest.size() - 12);
    if (tool.find('/') == std::string_view::npos)
      return Route{K::call, "POST", std::move(id), "/v1/skills/{id}/tools/{tool}/call", std::string(tool)};
  }
  if (rest.starts_with("/hooks/") && rest.size() > 7 && rest.find('/', 7) == std::string_view::npos) {
    return Route{K::hook, "POST", std::move(id), "/v1/skills/{id}/hooks/{hook}", std::string(rest.substr(7))};
  }
  return std::nullopt;
}

/// The route `path` names, or std::nullopt. Segments are matched exactly, undecoded: "%2e%2e" is an id
/// (which the id rule then refuses), and "/v1/skills/../x/run" has too many segments to be a route.
template <class Route>
std::optional<Route> match_route(std::string_view path, std::string_view method) {
  if (path == "/v1/run") return Route{Route::Kind::inline_run, "POST", {}, "/v1/run"};
  if (path.starts_with("/v1/runs/") && path.size() > 9 && path.find('/', 9) == std::string_view::npos) {
    return Route{Route::Kind::run_record, "GET", {}, "/v1/runs/{id}", std::string(path.substr(9))};
  }
  constexpr std::string_view prefix = "/v1/skills";
  if (!path.starts_with(prefix)) return std::nullopt;
  std::string_view rest = path.substr(prefix.size());
  if (rest.empty()) return Route{Route::Kind::list, "GET", {}, "/v1/skills"};
  if (rest.front() != '/') return std::nullopt;
  rest.remove_prefix(1);
  const size_t slash = std::min(rest.find('/'), rest.size());
  const std::string_view id = rest.substr(0, slash);
  if (id.empty()) return std::nullopt;
  return match_skill_route<Route>(std::string(id), rest.substr(slash), method);
}

/// This replica's name in the ledgers: host, process id and a random part (a restarted process with a
/// reused pid is still another owner).
std::string async_owner() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + random_hex(4);
}

HttpResponse json_ok(std::string body) {
  return HttpResponse{.status = 200,
                      .body = std::move(body),
                      .content_type = {},
                      .headers = {},
                      .tenant = {},
                      .outcome = {},
                      .facts = {}};
}

/// GET /healthz and /readyz. Not ready: draining, or the database (when there is one) cannot be used.
HttpResponse probe(std::string_view path, std::string_view method, bool draining, const Database* database) {
  if (method != "GET") {
    return with_header(error_response(405, "method_not_allowed", "use GET"), "Allow", "GET");
  }
  if (path == "/readyz" && draining) return error_response(503, "draining", "the server is shutting down");
  if (path == "/readyz" && database != nullptr) {
    // No key is needed here: the reason (host, user, what PostgreSQL said) is in the server's log only.
    if (database->problem()) {
      return error_response(503, "database_unavailable",
                            "not ready: the database cannot be used; the server's log says why");
    }
  }
  return json_ok(R"({"status":"ok"})");
}

HttpResponse unauthorized(const HttpRequest& request) {
  const bool missing = request.authorization.empty();
  return with_header(error_response(401, "unauthorized",
                                    missing ? "missing API key: send the header Authorization: Bearer KEY"
                                            : "the API key is not valid (send Authorization: Bearer KEY)"),
                     "WWW-Authenticate", "Bearer");
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// The result of a run whose timeout passed while it waited in the queue: it never started.
RunResult expired_in_queue(uint64_t timeout_ms, uint64_t waited_ms) {
  RunResult r;
  r.outcome = Outcome::timeout;
  r.error = ErrorInfo{.name = "TimeoutExceeded",
                      .message = "the wall-clock deadline passed (limit is " + std::to_string(timeout_ms) +
                                 " ms) while the request waited " + std::to_string(waited_ms) +
                                 " ms for a run thread; the run did not start",
                      .stack = {},
                      .code = {}};
  return r;
}

/// True when the request's Accept header lists application/x-ndjson (a streamed run), whatever else
/// it lists: a client that can read the stream asked for it.
bool wants_ndjson(const HttpRequest& request) {
  const std::string* accept = request.header("accept");
  if (accept == nullptr) return false;
  std::string_view rest = *accept;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view range = rest.substr(0, std::min(comma, rest.find(';')));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!range.empty() && (range.front() == ' ' || range.front() == '\t')) range.remove_prefix(1);
    while (!range.empty() && (range.back() == ' ' || range.back() == '\t')) range.remove_suffix(1);
    constexpr std::string_view kNdjson = "application/x-ndjson";
    if (range.size() != kNdjson.size()) continue;
    bool same = true;
    for (size_t i = 0; i < range.size() && same; ++i) {
      const char c = range[i];
      same = (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) == kNdjson[i];
    }
    if (same) return true;
  }
  return false;
}

/// Milliseconds from `origin` to `at`, to the microsecond (the `t_ms` of `--json-stream` lines).
double ms_since(RunQueue::Clock::time_point origin, Timestamp at) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(at - origin).count()) /
         1000.0;
}

/// Where a run's answer goes: one JSON response (200 with the `--json` object), or, when the client
/// asked for application/x-ndjson, a stream of `--json-stream` lines (skillbox/json.h): the log lines
/// and events as the runner reports them, then the result line. The stream's head goes out with its
/// first line, so a request that fails before its run starts still gets an ordinary error.
class RunAnswer {
 public:
  RunAnswer(const RespondStream& stream, std::string tenant, RequestFacts facts)
      : stream_(stream), tenant_(std::move(tenant)), facts_(std::move(facts)) {}
  ~RunAnswer() {
    if (out_) out_->end();  // an exception between start and finish: the client still sees the end
  }
  RunAnswer(const RunAnswer&) = delete;
  RunAnswer& operator=(const RunAnswer&) = delete;

  /// The observer that streams the run's lines, `origin` being its start; empty for a JSON answer.
  Observer observer(RunQueue::Clock::time_point origin) {
    if (!stream_) return {};
    start();
    std::shared_ptr<ResponseStream> out = out_;
    return Observer{.on_log =
                        [out, origin](const LogEntry& e, Timestamp at) {
                          out->write(to_json_stream_log(e, ms_since(origin, at)) + "\n");
                        },
                    .on_event =
                        [out, origin](const RunEvent& ev, Timestamp at) {
                          out->write(to_json_stream_event(ev, ms_since(origin, at)) + "\n");
                        }};
  }

  /// Answers with `result`: the response to send, or std::nullopt when it went out on the stream.
  /// `origins_json`: the origins the run contacted (a JSON array), "" for a run that never started.
  std::optional<HttpResponse> finish(const RunResult& result, std::string origins_json = {}) {
    facts_.usage_json = usage_json(result);
    facts_.origins_json = std::move(origins_json);
    const std::string outcome(to_string(result.outcome));
    if (!stream_) {
      HttpResponse r = json_ok(to_json(result));
      r.outcome = outcome;
      r.facts = std::move(facts_);
      return r;
    }
    start();
    out_->write(to_json_stream_result(result) + "\n");
    out_->end_with(outcome, std::move(facts_));
    out_.reset();
    return std::nullopt;
  }

 private:
  void start() {
    if (out_) return;
    HttpResponse head = json_ok({});
    head.content_type = "application/x-ndjson";
    head.tenant = tenant_;
    head.facts = facts_;
    out_ = stream_(std::move(head));
  }

  const RespondStream& stream_;
  std::string tenant_;
  RequestFacts facts_;
  std::shared_ptr<ResponseStream> out_;
};

}  // namespace

/// Two threads for the async runs' own requests (queueing a run, reading a record): ledger statements,
/// never a skill. At most kMaxWaiting wait; beyond, submit() refuses.
class Api::LedgerWork {
 public:
  static constexpr size_t kMaxWaiting = 256;
  LedgerWork() {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { work(); });
  }
  /// Runs what is queued, then joins.
  ~LedgerWork() {
    {
      base::MutexLock lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  LedgerWork(const LedgerWork&) = delete;
  LedgerWork& operator=(const LedgerWork&) = delete;
  [[nodiscard]] bool submit(std::function<void()> job) {
    {
      base::MutexLock lock(mu_);
      if (stopping_ || jobs_.size() >= kMaxWaiting) return false;
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
    return true;
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        base::MutexLock lock(mu_);
        lock.wait(cv_, [this] {
          mu_.assert_held();
          return stopping_ || !jobs_.empty();
        });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  base::Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_ SKILLBOX_GUARDED_BY(mu_);
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

/// What the MCP endpoint needs of each tenant of `tenancy`.
std::vector<McpTenant> Api::mcp_tenants(const Tenancy& tenancy) {
  std::vector<McpTenant> out;
  for (const auto& t : tenancy.tenants) {
    out.push_back(McpTenant{.index = t->index,
                            .id = t->config.id,
                            .skills_dir = t->config.skills_dir,
                            .data_dir = t->config.data_dir,
                            .context = t->context,
                            .max_concurrent_runs = t->config.max_concurrent_runs,
                            .max_queued_runs = t->config.max_queued_runs,
                            .quota = t->config.quota});
  }
  return out;
}

Api::Api(const ServerConfig& config, Runner& runner, RunQueue& queue, Metrics& metrics,
         const std::atomic<bool>& draining, CancelToken cancel, const Database* database)
    : runner_(runner),
      queue_(queue),
      metrics_(metrics),
      draining_(draining),
      cancel_(std::move(cancel)),
      database_(database),
      async_max_attempts_(config.async.max_attempts) {
  base::MutexLock lock(tenancy_mu_);
  // The queue and the metrics were made with one lane and one series per tenant, in order.
  for (size_t i = 0; i < config.tenants.size(); ++i) lanes_.emplace(config.tenants[i].id, i);
  tenancy_ = build_tenancy(config);
  mcp_ =
      std::make_unique<McpEndpoint>(config.mcp, runner_, queue_, metrics_, quotas_, mcp_tenants(*tenancy_));
  McpEndpoint* mcp = mcp_.get();
  mcp_cancel_ = cancel_.subscribe([mcp] { mcp->cancel_all(); });
  ledger_work_ = std::make_unique<LedgerWork>();
  async_ = std::make_unique<AsyncRuns>(
      // Twice the run threads: a claimed run waits in its lane while the threads finish others, so no
      // thread idles while the next claim is made (bench/async: 0.68x of sync throughput with one).
      queue_, config.async, async_owner(), 2 * config.run_threads,
      [this] {
        std::vector<AsyncRuns::Source> sources;
        for (const auto& t : tenancy()->tenants) {
          sources.push_back(AsyncRuns::Source{.lane = t->index, .tenant = t->config.id, .ledger = t->runs});
        }
        return sources;
      },
      [this](const AsyncRuns::Source& source, const state::ClaimedRun& run, const CancelToken& stop) {
        return execute_async(source.tenant, run, stop);
      },
      [](const std::string& line) {
        const std::string text = "skillbox serve: " + base::escape_text(line) + "\n";
        (void)std::fwrite(text.data(), 1, text.size(), stderr);
      });
}

std::shared_ptr<const Api::Tenancy> Api::build_tenancy(const ServerConfig& config) {
  auto next = std::make_shared<Tenancy>();
  next->metrics_keys = config.metrics_key_hashes;
  for (const TenantConfig& c : config.tenants) {
    auto t = std::make_shared<Tenant>();
    t->index = lanes_.at(c.id);
    t->config = c;
    std::shared_ptr<TenantContext> context = local_tenant(c.id, c.data_dir, c.credentials);
    context->ceilings = c.ceilings;
    context->env = c.env;
    context->origin_map = c.origin_map;
    // The operator named these targets, as with `skillbox call --map-origin`: a loopback one is trusted.
    context->trust_loopback_origin_map_targets = !c.origin_map.empty();
    // Every version of an uploaded skill owns its id (server/skill_uploads.h).
    auto state = std::make_shared<state::Backends>(
        database_ != nullptr ? database_->tenant_state(c.id, *context->state) : *context->state);
    t->state_in_database = database_ != nullptr;
    if (database_ != nullptr) {
      t->runs = database_->run_ledger(c.id);
    } else {
      // One ledger per file for the life of the server: a reload keeps the one runs in progress use.
      std::shared_ptr<state::RunLedger>& ledger = local_ledgers_[c.data_dir];
      if (!ledger) ledger = state::make_local_run_ledger(state::DataLayout(c.data_dir));
      t->runs = ledger;
    }
    state->bindings = upload_bindings(state->bindings, c.data_dir);
    context->state = std::move(state);
    t->context = std::move(context);
    next->tenants.push_back(std::move(t));
  }
  return next;
}

void Api::reload(const ServerConfig& config) {
  base::MutexLock lock(tenancy_mu_);
  for (const TenantConfig& c : config.tenants) {
    const LaneConfig lane{
        .weight = c.weight, .max_running = c.max_concurrent_runs, .max_queued = c.max_queued_runs};
    const auto it = lanes_.find(c.id);
    if (it != lanes_.end()) {
      queue_.configure_lane(it->second, lane);
    } else {
      const size_t index = queue_.add_lane(lane);
      [[maybe_unused]] const size_t series = metrics_.add_tenant(c.id);
      assert(series == index);
      lanes_.emplace(c.id, index);
    }
  }
  tenancy_ = build_tenancy(config);
  mcp_->set_tenants(mcp_tenants(*tenancy_));
}

std::shared_ptr<const Api::Tenancy> Api::tenancy() const {
  base::MutexLock lock(tenancy_mu_);
  return tenancy_;
}

Api::~Api() {
  ledger_work_.reset();  // its enqueues wake async_
  async_.reset();
  mcp_cancel_.reset();
}

void Api::shutdown_mcp() {
  mcp_->shutdown();
}

void Api::stop_async() {
  async_->stop_claiming();
}

void Api::shutdown_ledger_work() {
  ledger_work_.reset();
}

void Api::handle(HttpRequest request, const Respond& answer, const RespondStream& answer_stream) {
  const std::string_view path = path_of(request.target);
  const std::optional<Route> route = match_route<Route>(path, request.method);
  // Every answer names its route and skill for the audit, whichever branch gives it.
  std::string pattern = route ? std::string(route->pattern) : std::string();
  if (path == "/healthz" || path == "/readyz" || path == "/metrics") pattern = std::string(path);
  if (path == "/mcp") pattern = base::escape_text(request.method.substr(0, 16)) + " /mcp";
  const Respond respond = [answer, pattern, skill = route ? route->id : std::string()](HttpResponse r) {
    r.facts.route = pattern;
    if (!skill.empty()) r.facts.skill = skill;  // /mcp: a call's skill, named by the endpoint
    answer(std::move(r));
  };
  if (path == "/healthz" || path == "/readyz")
    return respond(probe(path, request.method, draining_.load(), database_));
  const std::shared_ptr<const Tenancy> tenancy = this->tenancy();
  if (path == "/mcp") {
    const RespondStream stream = [answer_stream, pattern](HttpResponse head) {
      head.facts.route = pattern;
      return answer_stream(std::move(head));
    };
    return handle_mcp(*tenancy, std::move(request), respond, stream);
  }
  if (!request.listener_tenant.empty()) {
    return respond(
        error_response(404, "not_found",
                       "this listener has no authentication (auth = \"none\") and serves only /mcp; "
                       "use a listener with keys for the rest of the API (docs/server.md)"));
  }
  if (path == "/metrics") return respond(metrics(*tenancy, request));
  if (!route) {
    return respond(
        error_response(404, "not_found",
                       "no route \"" + base::escape_text(path.substr(0, 200)) +
                           "\"; the API is /v1/skills, /v1/skills/ID (and its run, tools, hooks, "
                           "store and workspace), /v1/run, /v1/runs/ID and /mcp (docs/server.md)"));
  }
  if (request.method != route->method) {
    const std::string allow(route->allow.empty() ? route->method : route->allow);
    return respond(with_header(error_response(405, "method_not_allowed", "use " + allow), "Allow", allow));
  }
  std::shared_ptr<const Tenant> tenant = authenticate(*tenancy, request);
  if (draining_.load()) return respond(draining(tenant.get()));
  if (tenant == nullptr) return respond(unauthorized(request));
  RespondStream stream;
  if (route->kind == Route::Kind::run && wants_ndjson(request)) {
    stream = [answer_stream, pattern, skill = route->id](HttpResponse head) {
      head.facts.route = pattern;
      head.facts.skill = skill;
      return answer_stream(std::move(head));
    };
  }
  admit(tenant, *route, std::move(request), respond, stream);
}

void Api::handle_mcp(const Tenancy& tenancy, HttpRequest request, const Respond& respond,
                     const RespondStream& stream) {
  // DNS rebinding: a page of another origin that reaches a local listener gets nowhere, key or not.
  if (std::optional<HttpResponse> refused = mcp_->refuse_origin(request)) return respond(std::move(*refused));
  std::shared_ptr<const Tenant> tenant;
  if (!request.listener_tenant.empty()) {
    for (const auto& t : tenancy.tenants)
      if (t->config.id == request.listener_tenant) tenant = t;
  } else {
    tenant = authenticate(tenancy, request);
  }
  if (draining_.load()) return respond(draining(tenant.get()));
  if (tenant == nullptr) return respond(unauthorized(request));
  mcp_->handle(tenant->index, std::move(request), respond, stream);
}

HttpResponse Api::draining(const Tenant* tenant) const {
  HttpResponse refused = error_response(503, "draining", "the server is shutting down; try another replica");
  if (tenant != nullptr) {
    metrics_.shed(tenant->index, ShedReason::draining);
    refused.tenant = tenant->config.id;
  }
  return refused;
}

std::optional<KeyHash> Api::presented_key(const HttpRequest& request) {
  std::string_view value = request.authorization;
  constexpr std::string_view scheme = "bearer ";
  if (value.size() <= scheme.size()) return std::nullopt;
  for (size_t i = 0; i < scheme.size(); ++i) {
    const char c = value[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return std::nullopt;
  }
  value.remove_prefix(scheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > kMaxApiKeyBytes) return std::nullopt;
  return hash_api_key(value);
}

std::shared_ptr<const Api::Tenant> Api::authenticate(const Tenancy& tenancy, const HttpRequest& request) {
  const std::optional<KeyHash> presented = presented_key(request);
  if (!presented) return nullptr;
  // Every stored hash is compared, whichever matches, so the time taken does not say which tenant (or
  // whether any) holds the key.
  std::shared_ptr<const Tenant> found;
  for (const auto& t : tenancy.tenants) {
    for (const KeyHash& h : t->config.key_hashes) {
      if (key_hashes_equal(*presented, h)) found = t;
    }
  }
  return found;
}

HttpResponse Api::metrics(const Tenancy& tenancy, const HttpRequest& request) const {
  if (request.method != "GET") {
    return with_header(error_response(405, "method_not_allowed", "use GET"), "Allow", "GET");
  }
  // Off unless the operator named a key: the series name every tenant, which no tenant may learn.
  if (tenancy.metrics_keys.empty()) {
    return error_response(
        404, "not_found",
        "/metrics is off; set metrics_key_sha256 in the config to turn it on (docs/server.md)");
  }
  bool allowed = false;
  if (const std::optional<KeyHash> presented = presented_key(request)) {
    for (const KeyHash& h : tenancy.metrics_keys) allowed = key_hashes_equal(*presented, h) || allowed;
  }
  if (!allowed) {
    if (authenticate(tenancy, request) != nullptr) {
      return error_response(403, "forbidden", "/metrics needs the operator's metrics key, not a tenant's");
    }
    return unauthorized(request);
  }
  HttpResponse r = json_ok(metrics_.render(queue_.counts()));
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

void Api::admit(const std::shared_ptr<const Tenant>& owner, const Route& route, HttpRequest request,
                const Respond& respond, const RespondStream& stream) {
  const std::string id = request.request_id;
  const CancelToken cancel;
  const bool is_run = route.runs();
  const Tenant& tenant = *owner;
  // Quotas before the queue: a refused run takes no place in it, and a queued one has paid its run.
  if (is_run) {
    if (const std::optional<Quotas::Refusal> refused =
            quotas_.admit(tenant.config.id, tenant.config.quota, Quotas::Clock::now())) {
      return respond(quota_refusal(tenant, *refused));
    }
  }
  // The async runs' own requests: ledger work, beside the run threads (api.h "Admission").
  if (route.kind == Route::Kind::run_record ||
      (route.kind == Route::Kind::run && async_query(request.target).value_or(false))) {
    auto work = [this, owner, route, request = std::move(request), respond] {
      std::optional<HttpResponse> response;
      try {
        response = serve(*owner, route, request, RunQueue::Clock::duration::zero(), CancelToken(), {});
      } catch (const std::exception& e) {
        response = error_response(500, "internal",
                                  "internal error; see the server's log for request " + request.request_id);
        const std::string line = "skillbox serve: request_id=" + request.request_id +
                                 " internal error: " + base::escape_text(e.what()) + "\n";
        (void)std::fwrite(line.data(), 1, line.size(), stderr);
      }
      if (response) {
        response->tenant = owner->config.id;
        respond(std::move(*response));
      }
    };
    if (ledger_work_ && ledger_work_->submit(std::move(work))) return;
    if (is_run) quotas_.give_back(tenant.config.id, tenant.config.quota, Quotas::Clock::now());
    return respond(refusal(tenant, RunQueue::Admission::server_full));
  }
  // The job holds its tenant as the request found it: a reload meanwhile does not change its run.
  auto job = [this, owner, route, request = std::move(request), respond, stream,
              cancel](RunQueue::Clock::duration waited) -> RunQueue::Then {
    const Tenant& mine = *owner;
    metrics_.queue_waited(mine.index, seconds(waited));
    // What the client sees (the answer, a streamed answer's end) waits until the thread is free again.
    const auto held = std::make_shared<HeldAnswer>(respond, stream);
    const RespondStream held_stream = held->stream();
    bool streamed = false;  // the head of a streamed answer went out: respond must not be called
    const RespondStream tracked = !stream ? RespondStream() : [&streamed, &held_stream](HttpResponse head) {
      streamed = true;
      return held_stream(std::move(head));
    };
    std::optional<HttpResponse> response;
    try {
      response = serve(mine, route, request, waited, cancel, tracked);
    } catch (const std::exception& e) {
      if (!streamed) {
        response = error_response(500, "internal",
                                  "internal error; see the server's log for request " + request.request_id);
      }
      const std::string line = "skillbox serve: request_id=" + request.request_id +
                               " internal error: " + base::escape_text(e.what()) + "\n";
      (void)std::fwrite(line.data(), 1, line.size(), stderr);
    }
    {
      base::MutexLock lock(pending_mu_);
      pending_.erase(request.request_id);
    }
    if (response) {
      response->tenant = mine.config.id;
      held->respond()(std::move(*response));
    }
    return held->then();
  };
  RunQueue::Ticket ticket;
  {
    // Held across submit, so that the job, which erases its entry when it ends, finds it there.
    base::MutexLock lock(pending_mu_);
    ticket = queue_.submit(tenant.index, std::move(job));
    if (ticket.admission == RunQueue::Admission::queued) {
      pending_.emplace(id, Pending{.ticket = ticket.id,
                                   .cancel = cancel,
                                   .respond = respond,
                                   .tenant = tenant.index,
                                   .tenant_id = tenant.config.id,
                                   .is_run = is_run});
      return;
    }
  }
  if (is_run) quotas_.give_back(tenant.config.id, tenant.config.quota, Quotas::Clock::now());
  respond(refusal(tenant, ticket.admission));
}

HttpResponse Api::refusal(const Tenant& tenant, RunQueue::Admission admission) const {
  HttpResponse refused;
  switch (admission) {
    case RunQueue::Admission::lane_full:
      metrics_.shed(tenant.index, ShedReason::tenant_queue_full);
      refused = with_header(
          error_response(429, "too_many_requests",
                         "this tenant already has " + std::to_string(tenant.config.max_concurrent_runs) +
                             " requests running (max_concurrent_runs) and " +
                             std::to_string(tenant.config.max_queued_runs) +
                             " waiting (max_queued_runs); retry later"),
          "Retry-After", "1");
      break;
    case RunQueue::Admission::server_full:
      metrics_.shed(tenant.index, ShedReason::server_busy);
      refused = with_header(error_response(503, "server_busy",
                                           "every run thread is busy and the server's queue is full "
                                           "(queue_limit); retry later"),
                            "Retry-After", "1");
      break;
    default:
      metrics_.shed(tenant.index, ShedReason::draining);
      refused = error_response(503, "draining", "the server is shutting down; try another replica");
      break;
  }
  refused.tenant = tenant.config.id;
  return refused;
}

HttpResponse Api::quota_refusal(const Tenant& tenant, const Quotas::Refusal& refused) const {
  metrics_.shed(tenant.index, shed_reason(refused));
  HttpResponse r = with_header(error_response(429, "quota_exceeded", describe(refused, tenant.config.quota)),
                               "Retry-After", std::to_string(refused.retry_after_s));
  r.tenant = tenant.config.id;
  return r;
}

void Api::client_gone(const std::string& request_id) {
  Pending gone;
  {
    base::MutexLock lock(pending_mu_);
    const auto it = pending_.find(request_id);
    if (it == pending_.end()) return;
    if (!queue_.withdraw(it->second.ticket)) {
      // On a run thread already: the runner stops the run (a worker is killed) and the job answers.
      it->second.cancel.cancel();
      return;
    }
    gone = std::move(it->second);
    pending_.erase(it);
  }
  if (gone.is_run) metrics_.run_ended(gone.tenant, Outcome::cancelled, /*ran=*/false, 0);
  HttpResponse r = error_response(499, "client_closed_request",
                                  "the client closed its connection before the request reached a run thread");
  r.tenant = gone.tenant_id;
  if (gone.is_run) r.outcome = std::string(to_string(Outcome::cancelled));
  gone.respond(std::move(r));  // nobody reads it; it closes the request's books (and its log line)
}

std::optional<HttpResponse> Api::serve(const Tenant& tenant, const Route& route, const HttpRequest& request,
                                       RunQueue::Clock::duration waited, const CancelToken& cancel,
                                       const RespondStream& stream) const {
  const SkillSources sources{.skills_dir = tenant.config.skills_dir, .data_dir = tenant.config.data_dir};
  if (route.kind == Route::Kind::list) return json_ok(tenant_skill_list_json(sources));
  if (route.kind == Route::Kind::inline_run) return inline_run(tenant, request, waited, cancel, stream);
  if (route.kind == Route::Kind::upload) return upload(tenant, route, request);
  if (route.kind == Route::Kind::remove) return remove_upload(tenant, route);
  if (route.kind == Route::Kind::run_record) return run_record(tenant, route);
  Result<FoundSkill, SkillProblem> found = find_tenant_skill(sources, route.id);
  if (!found) return problem_response(found.error());
  // A run keeps the version it started with: pruning by a later upload leaves its folder.
  const VersionPins::Pin pin = found->uploaded ? pins_.pin(found->skill.dir()) : VersionPins::Pin();
  std::optional<HttpResponse> r = serve_skill(tenant, route, *found, request, waited, cancel, stream);
  if (r) r->facts.digest = found->digest;
  return r;
}

std::optional<HttpResponse> Api::run(const Tenant& tenant, const Skill& skill, const HttpRequest& request,
                                     RunQueue::Clock::duration waited, const CancelToken& cancel,
                                     const RespondStream& stream, const std::string& digest) const {
  Result<RunRequest> body = parse_run_request(request.body);
  if (!body) return error_response(400, "invalid_request", body.error().message);
  const Limits effective = tenant.context->ceilings.apply(skill.manifest().limits);
  Result<LimitOverrides> overrides = run_overrides(*body, effective);
  if (!overrides) return error_response(400, "limit_too_high", overrides.error().message);
  // Every error is known by now: what follows is a run's result, in one response or a stream.
  RunAnswer answer(stream, tenant.config.id,
                   RequestFacts{.route = {},
                                .skill = {},
                                .digest = digest,
                                .export_name = body->export_name,
                                .usage_json = {},
                                .permissions_json = permission_summary_json(
                                    narrow_policy(skill.manifest().permissions, body->narrowing)),
                                .origins_json = {}});
  // The deadline runs from the request's arrival, not from its start: the run gets what the queue left.
  const auto waited_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count());
  const uint64_t timeout_ms = overrides->timeout_ms.value_or(effective.timeout_ms);
  if (waited_ms >= timeout_ms) {
    metrics_.run_ended(tenant.index, Outcome::timeout, /*ran=*/false, 0);
    return answer.finish(expired_in_queue(timeout_ms, waited_ms));
  }
  overrides->timeout_ms = timeout_ms - waited_ms;
  // The drain's cancellation reaches this run through its own token, which the client's leaving
  // cancels too (client_gone).
  const CancelToken::Subscription drain = cancel_.subscribe([cancel] { cancel.cancel(); });
  // The runner's audit record of this run names the origins it contacted: a tap keeps them for ours.
  const TappedTenant tapped = tap_origins(*tenant.context);
  const auto started = RunQueue::Clock::now();
  const Invocation invocation{.skill = skill,
                              .export_name = body->export_name,
                              .input_json = body->input_json,
                              .overrides = *overrides,
                              .narrowing = body->narrowing,
                              .observer = answer.observer(started),
                              .cancel = cancel,
                              .tenant = tapped.context};
  const RunResult result = runner_.run(invocation);
  const auto ended = RunQueue::Clock::now();
  metrics_.run_ended(tenant.index, result.outcome, /*ran=*/true, seconds(ended - started));
  quotas_.charge_cpu(tenant.config.id, tenant.config.quota, result.usage.cpu_ms, ended);
  // 200 whatever the outcome: the HTTP exchange worked, and the outcome (error, timeout, ...) is in
  // the result, exactly as `skillbox run --json` prints it.
  return answer.finish(result, tapped.tap->origins_json());
}

}  // namespace skillbox::server

namespace skillbox::server {

Api::Tenant Api::scratch_tenant(const Tenant& tenant, const std::filesystem::path& data_dir) {
  Tenant out = tenant;
  auto context = std::make_shared<TenantContext>(*tenant.context);
  std::shared_ptr<TenantContext> fresh = local_tenant(tenant.config.id, data_dir);
  auto state = std::make_shared<state::Backends>(*fresh->state);
  state->credentials = tenant.context->state->credentials;  // the operator's grants still hold
  state->audit = tenant.context->state->audit;
  context->state = std::move(state);
  out.context = std::move(context);
  out.state_in_database = false;
  return out;
}

std::optional<HttpResponse> Api::serve_skill(const Tenant& tenant, const Route& route,
                                             const FoundSkill& found, const HttpRequest& request,
                                             RunQueue::Clock::duration waited, const CancelToken& cancel,
                                             const RespondStream& stream) const {
  const DataView view{.state = *tenant.context->state,
                      .data_dir = tenant.config.data_dir,
                      .id = route.id,
                      .local = !tenant.state_in_database};
  switch (route.kind) {
    case Route::Kind::detail:
      return json_ok(skill_detail_json(found, route.id, tenant.context->ceilings));
    case Route::Kind::run: {
      const std::optional<bool> async = async_query(request.target);
      if (!async) {
        return error_response(400, "invalid_query", "the query parameter async is true or false");
      }
      if (*async) return enqueue(tenant, route, found, request);
      if (request.header("idempotency-key") != nullptr) {
        return keyed_run(tenant, route, found, request, waited, cancel, stream);
      }
      return run(tenant, found.skill, request, waited, cancel, stream, found.digest);
    }
    case Route::Kind::store_keys: {
      const size_t q = request.target.find('?');
      return store_keys_response(
          view, q == std::string::npos ? "" : std::string_view(request.target).substr(q + 1));
    }
    case Route::Kind::store_value:
      return store_value_response(view, route.arg);
    case Route::Kind::workspace:
      return workspace_response(view, route.arg);
    default:
      return bundle(tenant, route, found, request, waited, cancel, stream);
  }
}

HttpResponse Api::upload(const Tenant& tenant, const Route& route, const HttpRequest& request) const {
  const CodeConfig& code = tenant.config.code;
  if (!code.allow_upload) {
    return code_not_allowed("upload_not_allowed", "upload skills", "allow_upload");
  }
  if (std::optional<HttpResponse> refused =
          upload_id_problem(tenant.config, route.id, "upload under another id"))
    return std::move(*refused);
  const UploadBounds bounds{.max_files = code.max_files, .max_bytes = code.max_bytes};
  Result<SkillFiles, SkillProblem> files = upload_files(request, bounds);
  if (!files) return problem_response(files.error());
  Result<StoredUpload, SkillProblem> stored =
      store_upload(tenant.config.data_dir, route.id, *files, code.keep_versions, pins_);
  if (!stored) return problem_response(stored.error());
  nlohmann::ordered_json body{{"id", route.id},
                              {"digest", stored->digest},
                              {"version", stored->version},
                              {"created", stored->changed}};
  HttpResponse r = json_ok(base::json_text::write(body));
  r.status = stored->changed ? 201 : 200;
  r.facts.digest = stored->digest;
  return r;
}

HttpResponse Api::remove_upload(const Tenant& tenant, const Route& route) const {
  if (!tenant.config.code.allow_upload) {
    return code_not_allowed("upload_not_allowed", "upload or delete skills", "allow_upload");
  }
  // An id uploaded before the operator added a folder of that name may still be deleted.
  if (!current_upload(tenant.config.data_dir, route.id)) {
    if (std::optional<HttpResponse> refused =
            upload_id_problem(tenant.config, route.id, "only uploaded skills can be deleted"))
      return std::move(*refused);
  }
  Result<std::string, SkillProblem> deleted = delete_upload(tenant.config.data_dir, route.id, pins_);
  if (!deleted) return problem_response(deleted.error());
  HttpResponse r = empty_response(204);
  r.facts.digest = *deleted;
  return r;
}

std::optional<HttpResponse> Api::inline_run(const Tenant& tenant, const HttpRequest& request,
                                            RunQueue::Clock::duration waited, const CancelToken& cancel,
                                            const RespondStream& stream) const {
  const CodeConfig& code = tenant.config.code;
  if (!code.allow_inline) {
    return code_not_allowed("inline_not_allowed", "run code it sends", "allow_inline");
  }
  Result<InlineSkill, SkillProblem> sent =
      inline_skill(request.body, UploadBounds{.max_files = code.max_files, .max_bytes = code.max_bytes});
  if (!sent) return problem_response(sent.error());
  // A private folder per request (0700), removed with everything in it when the run ends.
  const base::ScratchDir scratch("skillbox-inline-");
  const std::filesystem::path dir = scratch.path() / "skill";
  std::error_code ec;
  if (scratch.path().empty() || !std::filesystem::create_directory(dir, ec) ||
      !write_skill_files(dir, sent->files)) {
    return error_response(500, "internal", "could not write the inline skill to a temporary folder");
  }
  Result<Skill, SkillProblem> skill = load_skill_folder(dir, "");
  if (!skill) return problem_response(skill.error());
  if (std::optional<SkillProblem> refused = sent_skill_problem(*skill)) {
    return problem_response(*refused);
  }
  HttpRequest as_run = request;
  as_run.body = sent->run_body;
  return run(scratch_tenant(tenant, scratch.path() / "data"), *skill, as_run, waited, cancel, stream,
             skill_digest(sent->files));
}

std::optional<HttpResponse> Api::bundle(const Tenant& tenant, const Route& route, const FoundSkill& found,
                                        const HttpRequest& request, RunQueue::Clock::duration waited,
                                        const CancelToken& cancel, const RespondStream& stream) const {
  if (found.skill.manifest().format != SkillFormat::openhuman) {
    return error_response(422, "not_a_bundle",
                          "\"" + route.id +
                              "\" is a skillbox skill (skill.json), not an OpenHuman bundle: it has no "
                              "tools or hooks; run it with POST /v1/skills/" +
                              route.id + "/run");
  }
  HttpRequest as_run = request;
  if (route.kind == Route::Kind::tools) {
    // Listing runs the bundle's top-level code: in a throwaway data directory, so it changes no state.
    const base::ScratchDir scratch("skillbox-tools-");
    as_run.body = R"({"export":"tools"})";
    // Without a stream, run answers with a response.
    HttpResponse r =
        *run(scratch_tenant(tenant, scratch.path()), found.skill, as_run, waited, cancel, {}, found.digest);
    const nlohmann::ordered_json result = base::json_text::parse_ordered(r.body);
    if (r.status != 200 || r.outcome != "ok") {
      const std::string why = result.contains("error") && result["error"].is_object()
                                  ? result["error"].value("message", std::string())
                                  : std::string();
      HttpResponse refused =
          error_response(r.status != 200 ? r.status : 422, "tools_unavailable",
                         "the bundle's tools could not be listed (outcome " + r.outcome + "): " + why);
      refused.outcome = r.outcome;
      refused.facts = r.facts;
      return refused;
    }
    HttpResponse out = r;
    out.body = base::json_text::write(nlohmann::ordered_json{{"tools", result["value"]}});
    return out;
  }
  if (!is_bundle_member_name(route.arg)) {
    return error_response(400, "invalid_name",
                          "a tool or hook name is 1 to 128 characters from A-Z, a-z, 0-9, '_', '.' and '-'");
  }
  const bool call = route.kind == Route::Kind::call;
  Result<std::string, SkillProblem> body =
      bundle_run_body(request.body, (call ? "tool:" : "hook:") + route.arg, call ? "arguments" : "input");
  if (!body) return problem_response(body.error());
  as_run.body = std::move(*body);
  return run(tenant, found.skill, as_run, waited, cancel, stream, found.digest);
}

Result<state::Enqueued, HttpResponse> Api::store_run(const Tenant& tenant, const Route& route,
                                                     const FoundSkill& found, const HttpRequest& request,
                                                     bool claim) const {
  // The body is checked now, as a synchronous run checks it: a bad one is refused before it is stored.
  Result<RunRequest> body = parse_run_request(request.body);
  if (!body) return error_response(400, "invalid_request", body.error().message);
  const Limits effective = tenant.context->ceilings.apply(found.skill.manifest().limits);
  if (Result<LimitOverrides> overrides = run_overrides(*body, effective); !overrides) {
    return error_response(400, "limit_too_high", overrides.error().message);
  }
  if (request.header_count("idempotency-key") > 1) {
    return error_response(400, "invalid_idempotency_key", "send one Idempotency-Key header, not several");
  }
  const std::string* key = request.header("idempotency-key");
  if (key != nullptr && !is_idempotency_key(*key)) {
    return error_response(400, "invalid_idempotency_key",
                          "an Idempotency-Key is 1 to 255 visible ASCII characters (no spaces)");
  }
  state::NewRun run;
  run.skill_id = route.id;
  run.body = request.body;
  run.idempotency_key = key != nullptr ? *key : std::string();
  run.max_attempts = async_max_attempts_;
  if (claim) {
    run.claim_for = async_->owner();
    run.claim_lease = async_->lease();
  }
  Result<state::Enqueued> stored = tenant.runs->enqueue(run);
  if (!stored) {
    const std::string line = "skillbox serve: request_id=" + request.request_id +
                             " run not stored: " + base::escape_text(stored.error().message) + "\n";
    (void)std::fwrite(line.data(), 1, line.size(), stderr);
    return with_header(error_response(503, "runs_unavailable",
                                      "the run could not be stored (the server's log says why); retry later "
                                      "with the same Idempotency-Key"),
                       "Retry-After", "1");
  }
  if (stored->full) {
    return with_header(error_response(429, "too_many_async_runs",
                                      "this tenant has " + std::to_string(state::kMaxPendingRuns) +
                                          " async runs queued or running; retry once some have ended"),
                       "Retry-After", "5");
  }
  if (stored->conflict) {
    return error_response(422, "idempotency_key_reused",
                          "this Idempotency-Key was used for another request (run " + stored->run.id +
                              " of skill \"" + stored->run.skill_id +
                              "\", with another body); a key names one request: send a new key");
  }
  return std::move(*stored);
}

std::optional<HttpResponse> Api::keyed_run(const Tenant& tenant, const Route& route, const FoundSkill& found,
                                           const HttpRequest& request, RunQueue::Clock::duration waited,
                                           const CancelToken& cancel, const RespondStream& stream) const {
  if (stream) {
    return error_response(
        400, "invalid_idempotency_key",
        "an Idempotency-Key is taken by a run answered in one JSON object, not by a streamed "
        "one (Accept: application/x-ndjson)");
  }
  Result<state::Enqueued, HttpResponse> stored = store_run(tenant, route, found, request, /*claim=*/true);
  if (!stored) return stored.error();
  if (!stored->claimed) {
    // The key's run was stored before: its answer, once it has one.
    const state::RunRecord& r = stored->run;
    if (r.state == state::RunState::queued || r.state == state::RunState::running) {
      return with_header(
          with_header(error_response(409, "idempotency_key_in_use",
                                     "the run of this Idempotency-Key (" + r.id +
                                         ") has not ended yet; send the request again later, or read "
                                         "/v1/runs/" +
                                         r.id),
                      "Retry-After", "1"),
          "Location", "/v1/runs/" + r.id);
    }
    HttpResponse replay = json_ok(r.result);
    replay.status = static_cast<unsigned>(r.status);
    const nlohmann::json answer = nlohmann::json::parse(r.result, nullptr, false);
    if (answer.is_object() && answer.contains("outcome") && answer["outcome"].is_string()) {
      replay.outcome = answer["outcome"].get<std::string>();
    }
    return with_header(std::move(replay), "Idempotent-Replayed", "true");
  }
  const state::ClaimedRun claimed = *stored->claimed;
  const AsyncRuns::Source source{.lane = tenant.index, .tenant = tenant.config.id, .ledger = tenant.runs};
  // Its lease is renewed while it runs; a lost lease stops it as it stops the request's own cancellation.
  const CancelToken lease_lost = async_->adopt(source, claimed);
  const CancelToken::Subscription stop = lease_lost.subscribe([cancel] { cancel.cancel(); });
  std::optional<HttpResponse> answer = run(tenant, found.skill, request, waited, cancel, {}, found.digest);
  // The client got this answer (whatever the outcome), so it is the key's: stored as it went out. A run
  // cancelled (its client left, the server drains) goes back to the queue, and a replica finishes it.
  state::RunEnding ending;
  if (!answer || answer->outcome == to_string(Outcome::cancelled)) {
    ending = state::RunEnding::requeue(std::chrono::milliseconds(0), true);
  } else {
    ending =
        state::RunEnding::end(answer->status == 200 ? state::RunState::completed : state::RunState::failed,
                              static_cast<int>(answer->status), answer->body);
  }
  if (Result<bool> kept = tenant.runs->finish(claimed.id, claimed.fence, ending); !kept || !*kept) {
    const std::string line =
        "skillbox serve: request_id=" + request.request_id + " run " + claimed.id +
        ": its answer was not stored (" +
        (kept ? std::string("another claim took it over") : base::escape_text(kept.error().message)) + ")\n";
    (void)std::fwrite(line.data(), 1, line.size(), stderr);
  }
  async_->forget(claimed);
  if (answer) answer->headers.emplace_back("Location", "/v1/runs/" + claimed.id);
  return answer;
}

HttpResponse Api::enqueue(const Tenant& tenant, const Route& route, const FoundSkill& found,
                          const HttpRequest& request) const {
  Result<state::Enqueued, HttpResponse> stored = store_run(tenant, route, found, request, /*claim=*/false);
  if (!stored) return stored.error();
  async_->wake();
  HttpResponse r = json_ok(run_record_json(stored->run));
  r.status = 202;
  return with_header(std::move(r), "Location", "/v1/runs/" + stored->run.id);
}

HttpResponse Api::run_record(const Tenant& tenant, const Route& route) const {
  const auto not_found = [&] {
    return error_response(404, "not_found",
                          "this tenant has no run \"" + base::escape_text(route.arg.substr(0, 64)) +
                              "\" (run ids are run_ and 32 hex digits)");
  };
  if (!state::is_run_id(route.arg)) return not_found();
  Result<std::optional<state::RunRecord>> found = tenant.runs->get(route.arg);
  if (!found) {
    const std::string line = "skillbox serve: async run " + route.arg +
                             " could not be read: " + base::escape_text(found.error().message) + "\n";
    (void)std::fwrite(line.data(), 1, line.size(), stderr);
    return with_header(
        error_response(503, "runs_unavailable",
                       "the run could not be read now (the server's log says why); retry later"),
        "Retry-After", "1");
  }
  if (!*found) return not_found();
  return json_ok(run_record_json(**found));
}

HttpResponse Api::execute_async(const std::string& tenant_id, const state::ClaimedRun& run,
                                const CancelToken& cancel) {
  std::shared_ptr<const Tenant> tenant;
  for (const auto& t : tenancy()->tenants)
    if (t->config.id == tenant_id) tenant = t;
  if (tenant == nullptr) {
    return error_response(404, "tenant_gone", "the tenant of this run is no longer served by this server");
  }
  HttpRequest request;
  request.request_id = random_hex(16);
  request.method = "POST";
  request.target = "/v1/skills/" + run.skill_id + "/run";
  request.body = run.body;
  const Route route{Route::Kind::run, "POST", run.skill_id, "/v1/skills/{id}/run"};
  // The run waited in the ledger, not against its timeout: its whole timeout is its own.
  std::optional<HttpResponse> r =
      serve(*tenant, route, request, RunQueue::Clock::duration::zero(), cancel, {});
  return r ? std::move(*r) : error_response(500, "internal", "the run gave no answer");
}

}  // namespace skillbox::server
