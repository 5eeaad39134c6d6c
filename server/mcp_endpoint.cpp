// server/mcp_endpoint.cpp — see mcp_endpoint.h.
#include "server/mcp_endpoint.h"

#include <stdlib.h>  // mkdtemp

#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/scratch_dir.h"
#include "mcp/jsonrpc.h"
#include "mcp/session.h"
#include "mcp/tools.h"
#include "mcp/watch.h"
#include "server/api_key.h"
#include "server/audit.h"
#include "server/held_answer.h"
#include "server/origin_tap.h"
#include "server/skill_catalog.h"
#include "server/skill_uploads.h"

namespace skillbox::server {
namespace {

using Clock = std::chrono::steady_clock;

/// The JSON-RPC error codes of the transport's own refusals, as the official SDKs send them: -32000
/// (implementation-defined server error) for a request the transport will not take, -32001 for a
/// session that does not exist.
constexpr auto kTransportError = static_cast<mcp::ErrorCode>(-32000);
constexpr auto kSessionNotFound = static_cast<mcp::ErrorCode>(-32001);

/// Bytes of randomness in a session id (192 bits; MCP asks for a cryptographically secure id).
constexpr size_t kSessionIdBytes = 24;

/// How often the sweeper looks for idle sessions, at most.
constexpr std::chrono::milliseconds kSweepPeriod{1000};

/// How often an open GET stream gets an SSE comment when nothing else was sent: well under the 30 to 60
/// seconds after which common proxies close a quiet connection, and a dead client is noticed by then.
constexpr Clock::duration kKeepAlivePeriod = std::chrono::seconds(15);

/// How often the sweeper compares each tenant's skills folder with what its sessions were given.
constexpr Clock::duration kToolsCheckPeriod = std::chrono::seconds(2);

/// The fingerprint of a tenant's skills: its skills folder's path and what mcp::folder_fingerprint sees
/// there, then the current digest of each skill it uploaded (an upload changes it, a repeated one not).
std::string skills_fingerprint(const McpTenant& tenant) {
  std::string out = tenant.skills_dir.string() + '\0' + mcp::folder_fingerprint(tenant.skills_dir);
  for (const std::string& id : uploaded_ids(tenant.data_dir, kMaxListedSkills)) {
    const std::optional<UploadedVersion> v = current_upload(tenant.data_dir, id);
    out += '\0' + id + '=' + (v ? v->digest : std::string());
  }
  return out;
}

/// SSE framing (WHATWG HTML "Server-sent events"): one event of type "message" whose data is the
/// message's text (one line: the JSON texts the session writes hold no newline).
std::string sse_event(const std::string& text) {
  return "event: message\ndata: " + text + "\n\n";
}

/// The head of an event stream.
HttpResponse sse_head(const std::string& tenant) {
  return HttpResponse{.status = 200,
                      .body = {},
                      .content_type = "text/event-stream",
                      .headers = {{"Cache-Control", "no-cache"}},
                      .tenant = tenant,
                      .outcome = {},
                      .facts = {}};
}

/// A refusal: `status` with a JSON-RPC error for `id` (null when the message had none) as the body.
HttpResponse rpc_error(unsigned status, const nlohmann::json& id, mcp::ErrorCode code,
                       std::string_view message) {
  return HttpResponse{.status = status,
                      .body = mcp::error_text(id, code, message),
                      .content_type = {},
                      .headers = {},
                      .tenant = {},
                      .outcome = {},
                      .facts = {}};
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The media types of an Accept header, lower case, without their parameters.
bool accepts_json_and_sse(const std::string* accept) {
  if (accept == nullptr) return false;
  bool json = false;
  bool sse = false;
  std::string_view rest = *accept;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::string type = lower(trim(item.substr(0, item.find(';'))));
    json = json || type == "application/json";
    sse = sse || type == "text/event-stream";
  }
  return json && sse;
}

bool json_content(const std::string* type) {
  return type != nullptr &&
         lower(trim(std::string_view(*type).substr(0, type->find(';')))) == "application/json";
}

/// True when `origin` is in `allowed`; "scheme://host:*" stands for that scheme and host with any port
/// or none.
bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a == origin) return true;
    if (!a.ends_with(":*")) continue;
    const std::string_view base(a.data(), a.size() - 2);
    if (origin == base) return true;
    if (!origin.starts_with(base) || origin.size() < base.size() + 2 || origin[base.size()] != ':') continue;
    bool digits = true;
    for (const char c : origin.substr(base.size() + 1)) digits = digits && c >= '0' && c <= '9';
    if (digits) return true;
  }
  return false;
}

/// True when the Host header names a loopback host (127.0.0.1, localhost, [::1]), with or without a port.
bool loopback_host(const std::string* host) {
  if (host == nullptr) return false;
  std::string_view h = *host;
  const size_t colon = h.rfind(':');
  if (colon != std::string_view::npos && h.find(']', colon) == std::string_view::npos) h = h.substr(0, colon);
  const std::string name = lower(h);
  return name == "127.0.0.1" || name == "localhost" || name == "[::1]";
}

bool supported_version(std::string_view v) {
  for (std::string_view s : mcp::kProtocolVersions)
    if (s == v) return true;
  return false;
}

std::string id_key(const nlohmann::json& id) {
  return base::json_text::write(id);
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

void log_line(const std::string& text) {
  const std::string line = "skillbox serve: mcp: " + base::escape_text(text) + "\n";
  (void)std::fwrite(line.data(), 1, line.size(), stderr);
}

/// Counts the runs of a tenant's MCP calls in the metrics, as /v1 runs are.
class MeteredRunner final : public Runner {
 public:
  MeteredRunner(Runner& inner, Metrics& metrics, size_t tenant)
      : inner_(inner), metrics_(metrics), tenant_(tenant) {}
  RunResult run(const Invocation& invocation) override {
    metrics_.mcp_call(tenant_);
    const auto started = Clock::now();
    RunResult result = inner_.run(invocation);
    metrics_.run_ended(tenant_, result.outcome, /*ran=*/true, seconds(Clock::now() - started));
    return result;
  }

 private:
  Runner& inner_;
  Metrics& metrics_;
  size_t tenant_;
};

/// The tools of a tenant's skills (its /v1/skills catalog: the folder's and the uploaded ones, an upload
/// shadowing a folder of the same id). A skill that does not load, or a bundle
/// whose tools cannot be listed, is left out with a log line; it does not stop the others. Bundles are
/// evaluated in a throwaway data directory under the tenant's ceilings.
std::vector<mcp::Tool> tenant_tools(const McpTenant& tenant, Runner& runner, bool bare_names,
                                    std::map<std::string, std::string>& digests) {
  std::vector<mcp::Tool> tools;
  std::set<std::string> names;
  base::ScratchDir scratch("skillbox-mcp-");
  std::shared_ptr<TenantContext> lister = local_tenant(tenant.id, scratch.path());
  lister->ceilings = tenant.context->ceilings;
  const SkillSources sources{.skills_dir = tenant.skills_dir, .data_dir = tenant.data_dir};
  for (const std::string& id : tenant_skill_ids(sources)) {
    Result<FoundSkill, SkillProblem> found = find_tenant_skill(sources, id);
    if (!found) {
      log_line("tenant=" + tenant.id + ": skill " + id +
               " is not served as a tool: " + found.error().message);
      continue;
    }
    std::vector<std::string> warnings;
    Result<std::vector<mcp::Tool>> listed =
        mcp::tools_of({found->skill}, runner, lister, warnings,
                      bare_names ? mcp::ToolNaming::bare : mcp::ToolNaming::prefixed);
    for (const std::string& w : warnings) log_line("tenant=" + tenant.id + ": warning: " + w);
    if (!listed) {
      log_line("tenant=" + tenant.id + ": skill " + id +
               " is not served as a tool: " + listed.error().message);
      continue;
    }
    digests[id] = found->digest;
    for (mcp::Tool& t : *listed) {
      // Bare names ([mcp] tool_names) may meet across skills; prefixed ones never do.
      if (!names.insert(t.name).second) {
        log_line("tenant=" + tenant.id + ": tool " + t.name + " of skill " + id +
                 " is not served: an earlier skill has a tool of that name");
        continue;
      }
      tools.push_back(std::move(t));
    }
  }
  return tools;
}

}  // namespace

/// One request waiting for its answer: where the session's messages about it go. The first
/// notification turns the answer into an event stream; a response alone is sent as JSON.
struct McpEndpoint::Route {
  Respond respond;
  RespondStream start_stream;
  std::string tenant;  // for the log line
  bool hold = false;   // initialize: keep the response text for serve() instead of sending it
  base::Mutex mu;
  std::condition_variable cv;
  std::shared_ptr<ResponseStream> stream SKILLBOX_GUARDED_BY(mu);
  bool done SKILLBOX_GUARDED_BY(mu) = false;
  std::string held SKILLBOX_GUARDED_BY(mu);
  /// A tools/call's run, for the request's log and audit lines: its skill, digest, tool, permissions,
  /// usage and the origins it contacted (through `tap`), and its outcome.
  RequestFacts facts SKILLBOX_GUARDED_BY(mu);
  std::string outcome SKILLBOX_GUARDED_BY(mu);
  std::shared_ptr<OriginTap> tap SKILLBOX_GUARDED_BY(mu);

  static std::string event(const std::string& text) { return sse_event(text); }

  void open_stream() SKILLBOX_REQUIRES(mu) { stream = start_stream(sse_head(tenant)); }

  void message(const mcp::Outgoing& m) {
    base::MutexLock lock(mu);
    if (done) return;
    if (!m.response) {
      if (!stream) open_stream();
      stream->write(event(m.text));
      return;
    }
    if (hold) {
      held = m.text;
    } else if (stream) {
      if (!m.text.empty()) stream->write(event(m.text));
      stream->end_with(outcome, facts);
    } else if (m.text.empty()) {
      open_stream();  // answered with nothing: an empty stream (MCP "Cancellation": no response)
      stream->end_with(outcome, facts);
    } else {
      respond(HttpResponse{.status = 200,
                           .body = m.text,
                           .content_type = {},
                           .headers = {},
                           .tenant = tenant,
                           .outcome = outcome,
                           .facts = facts});
    }
    done = true;
    cv.notify_all();
  }

  /// Answers with `refusal` unless answered already (a session that ended under it).
  void fail(HttpResponse refusal) {
    base::MutexLock lock(mu);
    if (done) return;
    if (stream) {
      stream->end();
    } else if (!hold) {
      refusal.tenant = tenant;
      respond(std::move(refusal));
    }
    done = true;
    cv.notify_all();
  }

  void wait() {
    base::MutexLock lock(mu);
    lock.wait(cv, [this] {
      mu.assert_held();
      return done;
    });
  }
};

/// A tenant's tools as listed from its skills folder when the folder had `fingerprint`.
struct McpEndpoint::Listing {
  std::string fingerprint;
  std::vector<mcp::Tool> tools;
  std::map<std::string, std::string> digests;  // of the skills listed, by id
};

/// One MCP session over HTTP: the mcp::Session and the requests waiting for its answers.
struct McpEndpoint::Conversation {
  std::string id;   // Mcp-Session-Id
  std::string key;  // its hex SHA-256: the key of McpEndpoint::sessions_
  size_t tenant = 0;
  std::unique_ptr<mcp::Session> session;
  base::Mutex receive_mu;  // Session::receive takes one message at a time
  base::Mutex routes_mu;
  std::map<std::string, std::shared_ptr<Route>> routes SKILLBOX_GUARDED_BY(routes_mu);  // by id's JSON text
  std::atomic<size_t> active{0};  // requests of the session being served or queued
  std::atomic<int64_t> last_used_ms{0};
  std::atomic<bool> ended{false};
  /// The fingerprint of the skills folder whose tools the session serves (McpEndpoint::refresh_tools),
  /// and the digest of each of those skills by id (for the audit).
  base::Mutex tools_mu;
  std::string listed SKILLBOX_GUARDED_BY(tools_mu);
  std::map<std::string, std::string> digests SKILLBOX_GUARDED_BY(tools_mu);
  /// The session's GET stream, when one is open, and when something was last written on it.
  base::Mutex listen_mu;
  std::shared_ptr<ResponseStream> listener SKILLBOX_GUARDED_BY(listen_mu);
  Clock::time_point listener_written SKILLBOX_GUARDED_BY(listen_mu);

  void touch() { last_used_ms = now_ms(); }

  /// The route of the request `id` while it waits for its answer; null once answered.
  std::shared_ptr<Route> route_of(const nlohmann::json& request_id) {
    base::MutexLock lock(routes_mu);
    const auto it = routes.find(id_key(request_id));
    return it == routes.end() ? nullptr : it->second;
  }

  /// The session's sink: each message to the request it belongs to. A message whose request has no
  /// route (its POST was answered already) is dropped; one that belongs to no request (list_changed)
  /// goes to the GET stream, or nowhere when none is open (the client sees the change at tools/list).
  void deliver(const mcp::Outgoing& m) {
    std::shared_ptr<Route> route;
    {
      base::MutexLock lock(routes_mu);
      const auto it = routes.find(id_key(m.request_id));
      if (it == routes.end()) {
        if (m.request_id.is_null() && !m.response) write_listener(sse_event(m.text));
        return;
      }
      route = it->second;
      if (m.response) routes.erase(it);
    }
    route->message(m);
  }

  /// Writes `bytes` on the GET stream, if one is open and its client still there.
  void write_listener(std::string bytes) {
    base::MutexLock lock(listen_mu);
    if (!listener || listener->gone()) return;
    listener->write(std::move(bytes));
    listener_written = Clock::now();
  }

  /// Ends the GET stream, if one is open.
  void end_listener() {
    base::MutexLock lock(listen_mu);
    if (listener) listener->end();
    listener.reset();
  }

  /// Ends the session: cancels its calls, waits for them, and answers whatever still waits.
  void close() {
    ended = true;
    end_listener();
    if (session) session->close(mcp::Session::Close::cancel);
    std::map<std::string, std::shared_ptr<Route>> left;
    {
      base::MutexLock lock(routes_mu);
      left.swap(routes);
    }
    for (auto& [route_key, route] : left)
      route->fail(rpc_error(404, nullptr, kSessionNotFound, "the session ended while the request waited"));
  }
};

McpEndpoint::McpEndpoint(const McpConfig& config, Runner& runner, RunQueue& queue, Metrics& metrics,
                         Quotas& quotas, std::vector<McpTenant> tenants)
    : config_(config), runner_(runner), queue_(queue), metrics_(metrics), quotas_(quotas) {
  set_tenants(std::move(tenants));
  sweeper_ = std::thread([this] { sweep(); });
}

void McpEndpoint::set_tenants(std::vector<McpTenant> tenants) {
  base::MutexLock lock(tenants_mu_);
  for (McpTenant& t : tenants) {
    const size_t index = t.index;
    if (index >= tenants_.size()) {
      tenants_.resize(index + 1);
      metered_.resize(index + 1);
    }
    if (!metered_[index]) metered_[index] = std::make_unique<MeteredRunner>(runner_, metrics_, index);
    tenants_[index] = std::make_shared<const McpTenant>(std::move(t));
  }
}

std::shared_ptr<const McpTenant> McpEndpoint::tenant_at(size_t index) const {
  base::MutexLock lock(tenants_mu_);
  return tenants_.at(index);
}

Runner* McpEndpoint::metered_at(size_t index) const {
  base::MutexLock lock(tenants_mu_);
  return metered_.at(index).get();
}

McpEndpoint::~McpEndpoint() {
  shutdown();
}

void McpEndpoint::shutdown() {
  {
    base::MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

void McpEndpoint::cancel_all() {
  {
    base::MutexLock lock(mu_);
    cancel_all_ = true;
  }
  wake_.notify_all();
}

std::optional<HttpResponse> McpEndpoint::refuse_origin(const HttpRequest& request) const {
  // A listener without keys is reachable only from this machine, but a browser on it can still be
  // pointed there by a rebound DNS name: then Host names that name, never a loopback one.
  if (!request.listener_tenant.empty() && !loopback_host(request.header("host"))) {
    return rpc_error(403, nullptr, kTransportError,
                     "forbidden: this listener has no authentication and answers only Host 127.0.0.1, "
                     "localhost or [::1] (DNS rebinding defence)");
  }
  const std::string* origin = request.header("origin");
  if (origin == nullptr || origin_allowed(*origin, config_.allowed_origins)) return std::nullopt;
  return rpc_error(403, nullptr, kTransportError,
                   "forbidden: the Origin \"" + base::escape_text(origin->substr(0, 200)) +
                       "\" is not allowed (DNS rebinding defence); the operator lists the allowed ones in "
                       "[mcp] allowed_origins");
}

void McpEndpoint::handle(size_t tenant, HttpRequest request, const Respond& respond,
                         const RespondStream& stream) {
  const auto arrived = RunQueue::Clock::now();
  const auto refuse = [&](HttpResponse r) {
    r.tenant = tenant_at(tenant)->id;
    respond(std::move(r));
  };
  if (request.method != "POST" && request.method != "DELETE" && request.method != "GET") {
    return refuse(with_header(
        rpc_error(405, nullptr, kTransportError,
                  "method not allowed: POST a JSON-RPC message, GET the session's event stream, or DELETE "
                  "to end a session"),
        "Allow", "GET, POST, DELETE"));
  }
  if (const std::string* v = request.header("mcp-protocol-version"); v != nullptr && !supported_version(*v)) {
    return refuse(rpc_error(400, nullptr, kTransportError,
                            "bad request: unsupported MCP-Protocol-Version \"" +
                                base::escape_text(v->substr(0, 64)) +
                                "\"; this server speaks 2025-06-18 and 2025-11-25"));
  }
  const std::string* session_id = request.header("mcp-session-id");
  if (request.method == "DELETE") {
    if (session_id == nullptr)
      return refuse(rpc_error(400, nullptr, kTransportError,
                              "bad request: DELETE needs the Mcp-Session-Id header of the session to end"));
    const std::shared_ptr<Conversation> c = find(tenant, *session_id);
    if (!c)
      return refuse(rpc_error(404, nullptr, kSessionNotFound, "session not found (it ended or expired)"));
    end(c->key);
    return refuse(empty_response(204));
  }
  if (request.method == "GET") return listen(tenant, request, respond, stream);
  if (!accepts_json_and_sse(request.header("accept"))) {
    return refuse(
        rpc_error(406, nullptr, kTransportError,
                  "not acceptable: send Accept: application/json, text/event-stream (MCP Streamable "
                  "HTTP: the client takes both)"));
  }
  if (!json_content(request.header("content-type"))) {
    return refuse(rpc_error(415, nullptr, kTransportError,
                            "unsupported media type: send the JSON-RPC message with Content-Type: "
                            "application/json"));
  }
  Result<mcp::Message, mcp::RpcError> message = mcp::parse_message(request.body);
  if (!message)
    return refuse(rpc_error(400, message.error().id, message.error().code, message.error().message));
  const bool is_request = message->kind == mcp::Message::Kind::request;
  if (session_id == nullptr) {
    if (is_request && message->method == "initialize")
      return admit(tenant, std::move(request), respond, stream, nullptr,
                   Asked{.id = message->id,
                         .initialize = true,
                         .refresh_tools = false,
                         .call = false,
                         .arrived = arrived});
    return refuse(rpc_error(400, is_request ? message->id : nlohmann::json(), kTransportError,
                            "bad request: missing the Mcp-Session-Id header; send initialize (without one) "
                            "first, then the id its response carried with every request"));
  }
  std::shared_ptr<Conversation> c = find(tenant, *session_id);
  if (!c) {
    return refuse(rpc_error(404, is_request ? message->id : nlohmann::json(), kSessionNotFound,
                            "session not found: it ended, expired or never existed; send initialize "
                            "(without Mcp-Session-Id) to start a new one"));
  }
  c->touch();
  if (!is_request) {
    {
      base::MutexLock lock(c->receive_mu);
      c->session->receive(request.body);
    }
    return refuse(empty_response(202));
  }
  ++c->active;
  admit(tenant, std::move(request), respond, stream, c,
        Asked{.id = message->id,
              .initialize = false,
              .refresh_tools = message->method == "tools/list" || message->method == "tools/call",
              .call = message->method == "tools/call",
              .arrived = arrived});
}

void McpEndpoint::listen(size_t tenant, const HttpRequest& request, const Respond& respond,
                         const RespondStream& stream) {
  const std::string tenant_id = tenant_at(tenant)->id;
  const auto refuse = [&](HttpResponse r) {
    r.tenant = tenant_id;
    respond(std::move(r));
  };
  const std::string* accept = request.header("accept");
  if (accept == nullptr || lower(*accept).find("text/event-stream") == std::string::npos)
    return refuse(
        rpc_error(406, nullptr, kTransportError,
                  "not acceptable: GET /mcp opens an event stream; send Accept: text/event-stream"));
  const std::string* session_id = request.header("mcp-session-id");
  if (session_id == nullptr)
    return refuse(rpc_error(400, nullptr, kTransportError,
                            "bad request: GET /mcp needs the Mcp-Session-Id header of the session whose "
                            "stream to open"));
  const std::shared_ptr<Conversation> c = find(tenant, *session_id);
  if (!c) return refuse(rpc_error(404, nullptr, kSessionNotFound, "session not found (it ended or expired)"));
  if (queue_.stopped())
    return refuse(
        rpc_error(503, nullptr, kTransportError, "the server is shutting down; try another replica"));
  base::MutexLock lock(c->listen_mu);
  if (c->listener && !c->listener->gone())
    return refuse(rpc_error(409, nullptr, kTransportError,
                            "conflict: this session already has its GET stream open (one per session); "
                            "close it first, or keep reading it"));
  c->listener = stream(sse_head(tenant_id));
  // A first comment, so that the client sees the stream open before anything happens.
  c->listener->write(": skillbox: the session's stream\n\n");
  c->listener_written = Clock::now();
}

void McpEndpoint::admit(size_t tenant, HttpRequest request, const Respond& respond,
                        const RespondStream& stream, const std::shared_ptr<Conversation>& conversation,
                        Asked asked) {
  const nlohmann::json id = asked.id;
  const bool call = asked.call;
  // A tools/call is a run: the tenant's quotas admit it before the queue, as they admit a /v1 run.
  if (call) {
    const std::shared_ptr<const McpTenant> held = tenant_at(tenant);
    if (const std::optional<Quotas::Refusal> refused =
            quotas_.admit(held->id, held->quota, Quotas::Clock::now())) {
      if (conversation) --conversation->active;
      metrics_.shed(tenant, shed_reason(*refused));
      HttpResponse r = with_header(rpc_error(429, id, kTransportError, describe(*refused, held->quota)),
                                   "Retry-After", std::to_string(refused->retry_after_s));
      r.tenant = held->id;
      return respond(std::move(r));
    }
  }
  auto job = [this, tenant, request = std::move(request), respond, stream, conversation,
              asked = std::move(asked)](RunQueue::Clock::duration waited) -> RunQueue::Then {
    metrics_.queue_waited(tenant, seconds(waited));
    const auto held = std::make_shared<HeldAnswer>(respond, stream);
    serve(tenant, request, held->respond(), held->stream(), conversation, asked);
    return held->then();
  };
  const RunQueue::Ticket ticket = queue_.submit(tenant, std::move(job));
  if (ticket.admission == RunQueue::Admission::queued) return;
  if (conversation) --conversation->active;
  const std::shared_ptr<const McpTenant> held = tenant_at(tenant);
  const McpTenant& t = *held;
  if (call) quotas_.give_back(t.id, t.quota, Quotas::Clock::now());
  HttpResponse refused;
  switch (ticket.admission) {
    case RunQueue::Admission::lane_full:
      metrics_.shed(tenant, ShedReason::tenant_queue_full);
      refused = with_header(
          rpc_error(429, id, kTransportError,
                    "too many requests: this tenant already has " + std::to_string(t.max_concurrent_runs) +
                        " requests running (max_concurrent_runs) and " + std::to_string(t.max_queued_runs) +
                        " waiting (max_queued_runs); retry later"),
          "Retry-After", "1");
      break;
    case RunQueue::Admission::server_full:
      metrics_.shed(tenant, ShedReason::server_busy);
      refused = with_header(rpc_error(503, id, kTransportError,
                                      "server busy: every run thread is busy and the server's queue is full "
                                      "(queue_limit); retry later"),
                            "Retry-After", "1");
      break;
    default:
      metrics_.shed(tenant, ShedReason::draining);
      refused = rpc_error(503, id, kTransportError, "the server is shutting down; try another replica");
      break;
  }
  refused.tenant = t.id;
  respond(std::move(refused));
}

void McpEndpoint::serve(size_t tenant, const HttpRequest& request, const Respond& respond,
                        const RespondStream& stream, std::shared_ptr<Conversation> conversation,
                        const Asked& asked) {
  const nlohmann::json& id = asked.id;
  const bool initialize = asked.initialize;
  const std::shared_ptr<const McpTenant> held = tenant_at(tenant);
  const McpTenant& t = *held;
  if (initialize) {
    std::string error;
    unsigned status = 0;
    conversation = open(tenant, error, status);
    if (!conversation) {
      HttpResponse r = rpc_error(status, id, kTransportError, error);
      if (status == 429) r.headers.emplace_back("Retry-After", "1");
      r.tenant = t.id;
      return respond(std::move(r));
    }
  }
  Conversation& c = *conversation;
  auto route = std::make_shared<Route>();
  route->respond = respond;
  route->start_stream = stream;
  route->tenant = t.id;
  route->hold = initialize;
  bool registered = false;
  {
    base::MutexLock lock(c.routes_mu);
    registered = c.routes.emplace(id_key(id), route).second;
  }
  if (!registered) {
    route->fail(rpc_error(200, id, mcp::ErrorCode::invalid_request,
                          "invalid request: id " + id_key(id) +
                              " is already used by a request in progress on this session; use a new id"));
  } else if (c.ended) {
    route->fail(rpc_error(404, id, kSessionNotFound, "session not found: it ended"));
  } else {
    // The list a client asks for, and the tool it calls, are those of the tenant's skills of now (an
    // upload makes a new version folder: the call runs it at once, as /v1 would).
    if (asked.refresh_tools) refresh_tools(c);
    base::MutexLock lock(c.receive_mu);
    c.session->receive(request.body, asked.arrived);
  }
  // A call keeps its run thread until it is answered: the tenant's concurrency bounds MCP calls too.
  route->wait();
  c.touch();
  --c.active;
  if (!initialize) return;
  std::string text;
  {
    base::MutexLock lock(route->mu);
    text = route->held;
  }
  if (text.empty()) {
    // The session ended before it answered (the server is shutting down).
    HttpResponse r = rpc_error(503, id, kTransportError, "the server is shutting down; try another replica");
    r.tenant = t.id;
    return respond(std::move(r));
  }
  const nlohmann::json answer = nlohmann::json::parse(text, nullptr, false);
  const bool ok = answer.is_object() && answer.contains("result");
  HttpResponse r{.status = 200,
                 .body = text,
                 .content_type = {},
                 .headers = {},
                 .tenant = t.id,
                 .outcome = {},
                 .facts = {}};
  if (ok) {
    r.headers.emplace_back("Mcp-Session-Id", c.id);
  } else {
    end(c.key);  // a refused initialize leaves no session behind
  }
  respond(std::move(r));
}

std::shared_ptr<McpEndpoint::Conversation> McpEndpoint::open(size_t tenant, std::string& error,
                                                             unsigned& status) {
  const std::shared_ptr<const McpTenant> held = tenant_at(tenant);
  const McpTenant& t = *held;
  // Whether there is room, asked before the tools are listed (which runs bundles) and again after.
  const auto refused = [&]() SKILLBOX_REQUIRES(mu_) {
    if (stopping_) {
      status = 503;
      error = "the server is shutting down; try another replica";
      return true;
    }
    size_t open = 0;
    for (const auto& [key, s] : sessions_) open += s->tenant == tenant ? size_t{1} : size_t{0};
    if (open < config_.max_sessions_per_tenant) return false;
    status = 429;
    error = "too many sessions: this tenant has " + std::to_string(open) +
            " open (max_sessions_per_tenant); end one with DELETE /mcp, or wait for an idle one to expire";
    return true;
  };
  {
    base::MutexLock lock(mu_);
    if (refused()) return nullptr;
  }
  auto c = std::make_shared<Conversation>();
  c->tenant = tenant;
  c->id = random_hex(kSessionIdBytes);
  c->key = key_hash_hex(hash_api_key(c->id));
  c->active = 1;  // the initialize request itself
  c->touch();
  Conversation* raw = c.get();
  const std::shared_ptr<const Listing> tools = listing(tenant);
  {
    base::MutexLock lock(c->tools_mu);
    c->listed = tools->fingerprint;
    c->digests = tools->digests;
  }
  c->session = std::make_unique<mcp::Session>(
      mcp::SessionOptions{.tools = tools->tools,
                          .runner = metered_at(tenant),
                          .overrides = {},
                          .tenant = t.context,
                          .page_size = 100,
                          .list_changed = true,
                          .max_running_calls = t.max_concurrent_runs,
                          .max_waiting_calls = t.max_queued_runs + t.max_concurrent_runs,
                          .hooks = call_hooks(tenant, raw)},
      mcp::RoutedSink([raw](const mcp::Outgoing& m) { raw->deliver(m); }),
      mcp::NoteSink(
          [tenant_id = t.id](const std::string& text) { log_line("tenant=" + tenant_id + ": " + text); }));
  {
    base::MutexLock lock(mu_);
    if (refused()) return nullptr;
    sessions_.emplace(c->key, c);
  }
  metrics_.mcp_sessions(tenant, +1);
  return c;
}

mcp::CallHooks McpEndpoint::call_hooks(size_t tenant, Conversation* c) {
  // The session, whose calls these hooks serve, is closed (its calls joined) before `c` goes.
  return mcp::CallHooks{
      .starting =
          [c](const nlohmann::json& id, const mcp::Tool& tool, std::shared_ptr<const TenantContext> context) {
            const std::shared_ptr<Route> route = c->route_of(id);
            if (!route || !context) return context;
            const Manifest& manifest = tool.skill.manifest();
            std::string digest;
            {
              base::MutexLock lock(c->tools_mu);
              const auto it = c->digests.find(manifest.id);
              if (it != c->digests.end()) digest = it->second;
            }
            TappedTenant tapped = tap_origins(*context);
            base::MutexLock lock(route->mu);
            route->tap = std::move(tapped.tap);
            route->facts.skill = manifest.id;
            route->facts.digest = std::move(digest);
            route->facts.export_name = tool.name;
            route->facts.permissions_json = permission_summary_json(manifest.permissions);
            return tapped.context;
          },
      .ended =
          [this, tenant, c](const nlohmann::json& id, const mcp::Tool& /*tool*/, const RunResult& result) {
            const std::shared_ptr<const McpTenant> t = tenant_at(tenant);
            quotas_.charge_cpu(t->id, t->quota, result.usage.cpu_ms, Quotas::Clock::now());
            const std::shared_ptr<Route> route = c->route_of(id);
            if (!route) return;
            base::MutexLock lock(route->mu);
            route->outcome = std::string(to_string(result.outcome));
            route->facts.usage_json = usage_json(result);
            if (route->tap) route->facts.origins_json = route->tap->origins_json();
          }};
}

std::shared_ptr<McpEndpoint::Conversation> McpEndpoint::find(size_t tenant, const std::string& session_id) {
  const std::string key = key_hash_hex(hash_api_key(session_id));
  base::MutexLock lock(mu_);
  const auto it = sessions_.find(key);
  // Another tenant's session is answered as an unknown one: an id never says whose it is.
  if (it == sessions_.end() || it->second->tenant != tenant || it->second->ended) return nullptr;
  return it->second;
}

void McpEndpoint::end(const std::string& key) {
  {
    base::MutexLock lock(mu_);
    const auto it = sessions_.find(key);
    if (it == sessions_.end()) return;
    it->second->ended = true;  // find() no longer gives it
    ending_.push_back(it->second);
    sessions_.erase(it);
  }
  wake_.notify_all();
}

std::shared_ptr<const McpEndpoint::Listing> McpEndpoint::listing(size_t tenant) {
  const std::shared_ptr<const McpTenant> t = tenant_at(tenant);
  std::string fingerprint = skills_fingerprint(*t);
  base::MutexLock lock(listing_mu_);
  std::shared_ptr<const Listing>& slot = listings_[tenant];
  if (slot && slot->fingerprint == fingerprint) return slot;
  Listing fresh{.fingerprint = std::move(fingerprint), .tools = {}, .digests = {}};
  fresh.tools = tenant_tools(*t, runner_, config_.bare_tool_names, fresh.digests);
  slot = std::make_shared<const Listing>(std::move(fresh));
  return slot;
}

void McpEndpoint::refresh_tools(Conversation& c) {
  const std::shared_ptr<const Listing> now = listing(c.tenant);
  base::MutexLock lock(c.tools_mu);
  if (c.listed == now->fingerprint) return;
  c.listed = now->fingerprint;
  c.digests = now->digests;
  // Sends notifications/tools/list_changed (to the GET stream) when the tools differ.
  c.session->replace_tools(now->tools);
}

void McpEndpoint::check_tools(std::map<size_t, std::string>& pending) {
  std::map<size_t, std::vector<std::shared_ptr<Conversation>>> by_tenant;
  {
    base::MutexLock lock(mu_);
    for (const auto& [key, c] : sessions_) by_tenant[c->tenant].push_back(c);
  }
  for (const auto& [tenant, conversations] : by_tenant) {
    const std::string now = skills_fingerprint(*tenant_at(tenant));
    bool listed_now = false;
    {
      base::MutexLock lock(listing_mu_);
      const auto it = listings_.find(tenant);
      listed_now = it != listings_.end() && it->second->fingerprint == now;
    }
    if (listed_now) {
      pending.erase(tenant);
    } else if (pending[tenant] != now) {
      pending[tenant] = now;  // changed: look again next time, when a save in several writes is done
      continue;
    }
    for (const std::shared_ptr<Conversation>& c : conversations)
      if (!c->ended) refresh_tools(*c);
  }
}

void McpEndpoint::keep_alive(bool draining) {
  std::vector<std::shared_ptr<Conversation>> all;
  {
    base::MutexLock lock(mu_);
    for (const auto& [key, c] : sessions_) all.push_back(c);
  }
  const auto now = Clock::now();
  for (const std::shared_ptr<Conversation>& c : all) {
    base::MutexLock lock(c->listen_mu);
    if (!c->listener) continue;
    if (draining || c->listener->gone()) {
      // Draining: an open stream would hold the server up until the drain timeout.
      c->listener->end();
      c->listener.reset();
    } else if (now - c->listener_written >= kKeepAlivePeriod) {
      c->listener->write(": keep-alive\n\n");  // an SSE comment: clients ignore it
      c->listener_written = now;
    }
  }
}

void McpEndpoint::sweep() {
  std::map<size_t, std::string> pending;  // per tenant: a changed skills folder's fingerprint
  auto next_tools_check = Clock::now() + kToolsCheckPeriod;
  for (;;) {
    std::vector<std::shared_ptr<Conversation>> closing;
    bool stop = false;
    {
      base::MutexLock lock(mu_);
      lock.wait_for(wake_, kSweepPeriod, [this] {
        mu_.assert_held();
        return stopping_ || cancel_all_ || !ending_.empty();
      });
      const int64_t idle_before = now_ms() - static_cast<int64_t>(config_.session_idle_timeout_ms);
      for (auto it = sessions_.begin(); it != sessions_.end();) {
        const Conversation& c = *it->second;
        const bool idle = c.active.load() == 0 && c.last_used_ms.load() < idle_before;
        if (stopping_ || cancel_all_ || idle) {
          if (idle) log_line("tenant=" + tenant_at(c.tenant)->id + ": a session expired (idle)");
          it->second->ended = true;
          closing.push_back(it->second);
          it = sessions_.erase(it);
        } else {
          ++it;
        }
      }
      cancel_all_ = false;
      for (auto& c : ending_) closing.push_back(std::move(c));
      ending_.clear();
      stop = stopping_;
    }
    for (const std::shared_ptr<Conversation>& c : closing) {
      c->close();
      metrics_.mcp_sessions(c->tenant, -1);
    }
    if (stop) return;
    keep_alive(queue_.stopped());
    if (Clock::now() >= next_tools_check) {
      check_tools(pending);
      next_tools_check = Clock::now() + kToolsCheckPeriod;
    }
  }
}

}  // namespace skillbox::server
