#include "runner/host_endpoint.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>
#include <variant>

#include "base/json_text.h"
#include "bundle_db/db_engine.h"
#include "capabilities/env/env_capability.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/http/http_capability.h"
#include "capabilities/http/url_check.h"
#include "capabilities/log/log_capability.h"
#include "capabilities/store/store_capability.h"
#include "runner/credential_vault.h"
#include "state/binding_registry.h"
#include "state/db_backend.h"
#include "state/store_backend.h"
#include "state/workspace_backend.h"

namespace skillbox::runner {
namespace {

// The bytes of a request that grow with what the skill passed (paths and names are capped at a few
// KiB by the wire limits and left to the fixed overhead).
struct PayloadSize {
  uint64_t operator()(const bus::LogRequest& r) const { return r.text.size(); }
  uint64_t operator()(const bus::FsWriteFileRequest& r) const { return r.data.size(); }
  uint64_t operator()(const bus::HttpRequest& r) const {
    uint64_t n = r.url.size() + r.body.size();
    for (const auto& [name, value] : r.headers) n += name.size() + value.size();
    return n;
  }
  uint64_t operator()(const bus::StoreSetRequest& r) const { return r.key.size() + r.value_json.size(); }
  uint64_t operator()(const bus::StoreCompareAndSetRequest& r) const {
    return r.key.size() + (r.expected_json ? r.expected_json->size() : 0) +
           (r.value_json ? r.value_json->size() : 0);
  }
  uint64_t operator()(const auto& /*small*/) const { return 0; }
};

uint64_t payload_bytes(const bus::Request& request) {
  return std::visit(PayloadSize{}, request);
}

}  // namespace

namespace {

// Events of one run: enough for any bundle's notifications, bounded like the log.
constexpr size_t kMaxEvents = 1000;
constexpr size_t kMaxEventBytes = 1u << 20;

// The types the bundle glue emits (compat/bundle_glue.h). A worker is hostile, so the host checks
// what it records and streams: a known type and one JSON object (which also means valid UTF-8).
constexpr std::array<std::string_view, 5> kEventTypes = {"notify", "memory.insert", "oauth.revoke",
                                                         "cron.register", "cron.unregister"};

std::optional<bus::ErrorReply> check_event(const bus::EventRequest& r) {
  bool known = false;
  for (std::string_view t : kEventTypes) known = known || r.type == t;
  if (!known)
    return bus::ErrorReply{bus::ErrorCode::InvalidArgument,
                           "event: unknown event type (expected notify, memory.insert, oauth.revoke, "
                           "cron.register or cron.unregister)"};
  // Checked as text, never built into a tree: a worker may send anything (lone-surrogate escapes from
  // JSON.stringify are fine; nesting is bounded so every reader of the event can parse it).
  const base::json_text::Checked data = base::json_text::check(r.data_json, base::json_text::kMaxDepth);
  if (data.kind == base::json_text::Kind::too_deep)
    return bus::ErrorReply{bus::ErrorCode::InvalidArgument,
                           "event " + r.type + ": data is nested deeper than " +
                               std::to_string(base::json_text::kMaxDepth) + " levels of arrays and objects"};
  if (data.kind != base::json_text::Kind::object)
    return bus::ErrorReply{bus::ErrorCode::InvalidArgument,
                           "event " + r.type + ": data is not a JSON object"};
  return std::nullopt;
}

}  // namespace

struct HostEndpoint::RedactingSink final : bus::CompletionSink {
  RedactingSink(bus::CompletionSink& n, const CredentialVault& v) : next(n), vault(v) {}
  void complete(uint64_t request_id, bus::Reply reply) override {
    vault.redact(reply);
    next.complete(request_id, std::move(reply));
  }
  bus::CompletionSink& next;
  const CredentialVault& vault;
};

struct HostEndpoint::Capabilities {
  Capabilities(const InvocationContext& c, bus::MemoryBudget* budget)
      : log(budget), vault(c.credentials, c.skill_id, c.setup_modes) {}
  capabilities::LogCapability log;
  CredentialVault vault;
  std::unique_ptr<capabilities::Workspace> fs;
  std::unique_ptr<capabilities::HttpCapability> http;
  // Requests carrying a real credential: a capability of their own that follows no redirect, so a
  // secret in any header never reaches a host it is not bound to.
  std::unique_ptr<capabilities::HttpCapability> http_credentialed;
  std::unique_ptr<state::DbLease> db_lease;  // the lease, from the first db call to finish_db()
  std::unique_ptr<bundle_db::DbEngine> db;   // in-process only: the engine on the image
  std::unique_ptr<capabilities::StoreCapability> store;
  std::unique_ptr<capabilities::EnvCapability> env;
};

// One overload per request type and no catch-all: std::visit does not compile while a type of
// bus::Request has no overload here, so a new request type cannot silently reach some capability.
struct HostEndpoint::Router {
  HostEndpoint& self;
  uint64_t request_id;
  bus::HostBytes& held;  // the request's payload, counted in the budget (an http body keeps it)

  [[nodiscard]] Capabilities& caps() const { return *self.caps_; }
  [[nodiscard]] const InvocationContext& ctx() const { return self.context_; }

  // Identity (docs/manifest.md): the first request that reaches the id's data (workspace, store,
  // granted env) binds the id to this folder; a folder that does not own it is refused.
  [[nodiscard]] std::optional<bus::ErrorReply> identity() const {
    if (!self.bound_) {
      self.bound_ = true;
      if (!self.skill_dir_.empty()) {
        if (!ctx().state->bindings) {
          self.identity_ =
              bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                              "the tenant has no skill binding registry: no data request is served"};
        } else if (auto owner = ctx().state->bindings->bind(ctx().skill_id, self.skill_dir_); !owner) {
          self.identity_ = bus::ErrorReply{bus::ErrorCode::PermissionDenied, owner.error().message};
        }
      }
    }
    return self.identity_;
  }

  // Mode none touches nothing on disk (the workspace refuses first), so it binds nothing either.
  [[nodiscard]] std::optional<bus::ErrorReply> fs_identity() const {
    if (ctx().policy.fs.mode == FsMode::none) return std::nullopt;
    return identity();
  }

  capabilities::Workspace& fs() const {
    if (!caps().fs)
      caps().fs = std::make_unique<capabilities::Workspace>(ctx().state->workspace, ctx().skill_id,
                                                            ctx().policy.fs, self.stop_, self.budget_);
    return *caps().fs;
  }
  // Every store request: the identity check, then the tenant's store backend (made lazily; a tenant
  // without one is refused).
  template <class StoreRequest>
  std::optional<bus::Reply> store(const StoreRequest& r) const {
    if (auto refused = identity()) return *refused;
    if (!caps().store) {
      if (!ctx().state->store)
        return bus::ErrorReply{bus::ErrorCode::IoError,
                               "the tenant has no store backend: store.* is unavailable"};
      caps().store = std::make_unique<capabilities::StoreCapability>(
          ctx().state->store, ctx().skill_id, ctx().policy.store, self.stop_, self.budget_);
    }
    return caps().store->handle(r);
  }

  std::optional<bus::Reply> operator()(bus::LogRequest& r) const { return caps().log.handle(r); }

  std::optional<bus::Reply> operator()(bus::FsReadFileRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsWriteFileRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsReaddirRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsStatRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsExistsRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsMkdirRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsRemoveRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::FsRenameRequest& r) const {
    if (auto refused = fs_identity()) return *refused;
    return fs().handle(r);
  }

  // The operator's origin map: policy is checked on the original URL here (a mapping never widens
  // what the skill may reach), then the request goes to the mapped origin with the same path and query.
  std::optional<bus::Reply> map_origin(bus::HttpRequest& r) const {
    if (ctx().origin_map.empty()) return std::nullopt;
    auto url = capabilities::http::parse_url(r.url, nullptr);
    if (!url) return std::nullopt;  // the capability reports a bad URL with its own message
    if (!capabilities::http::Allowlist(ctx().policy.http.allow).allows(*url))
      return bus::ErrorReply{
          bus::ErrorCode::PermissionDenied,
          "http: " + url->display() + " is not in permissions.http.allow" +
              (ctx().policy.http.allow_narrowed ? " as narrowed for this run by --allow-http" : "")};
    for (const auto& [from, to] : ctx().origin_map) {
      HttpAllowList f;
      if (f.push_back(from + "/") || f.entries().empty()) continue;
      const HttpAllowEntry& e = f.entries().front();
      if (e.scheme != url->scheme() || e.host != url->host() || e.port != url->port()) continue;
      const std::string text = url->text();
      const size_t slash = text.find('/', text.find("://") + 3);
      r.url = to + (slash == std::string::npos ? std::string("/") : text.substr(slash));
      break;
    }
    return std::nullopt;
  }

  std::optional<bus::Reply> operator()(bus::HttpRequest& r) const {
    bool carries_secret = false;
    if (auto refused = caps().vault.prepare(r, carries_secret)) return std::move(*refused);
    if (auto refused = map_origin(r)) return refused;
    auto& http = carries_secret ? caps().http_credentialed : caps().http;
    if (!http) {
      HttpPolicy policy = ctx().policy.http;
      if (carries_secret) policy.max_redirects = 0;
      // Mapped targets are the operator's; the original URL was checked in map_origin().
      for (const auto& [from, to] : ctx().origin_map) (void)policy.allow.push_back(to + "/");
      capabilities::HttpTuning tuning;
      tuning.exempt_endpoints = ctx().trusted_endpoints;
      if (ctx().contacted) {
        tuning.on_hop = [contacted = ctx().contacted](const std::string& origin) { contacted->add(origin); };
      }
      for (const auto& [from, to] : ctx().origin_map) {
        HttpAllowList f;
        if (f.push_back(from + "/") || f.entries().empty()) continue;
        const HttpAllowEntry& e = f.entries().front();
        tuning.mapped_origins.push_back(e.scheme + "://" + e.host + ":" + std::to_string(e.port));
        HttpAllowList t;
        if (t.push_back(to + "/") || t.entries().empty()) continue;
        const HttpAllowEntry& target = t.entries().front();
        tuning.shown_origins.emplace_back(
            target.scheme + "://" + target.host + ":" + std::to_string(target.port), from);
      }
      http = std::make_unique<capabilities::HttpCapability>(std::move(policy), ctx().extra_ca_file,
                                                            *self.http_sink_, self.counters_, tuning,
                                                            self.stop_, self.budget_);
    }
    std::optional<bus::Reply> reply = http->start(request_id, std::move(r), std::move(held));
    if (reply) caps().vault.redact(*reply);
    return reply;
  }

  std::optional<bus::Reply> operator()(bus::EventRequest& r) const {
    if (auto refused = bundle_only("platform events")) return *refused;
    if (auto refused = check_event(r)) return std::move(*refused);
    if (self.events_.size() >= kMaxEvents || self.event_bytes_ + r.data_json.size() > kMaxEventBytes)
      return bus::ErrorReply{bus::ErrorCode::QuotaExceeded, "the run's event budget is used up (at most " +
                                                                std::to_string(kMaxEvents) + " events, " +
                                                                std::to_string(kMaxEventBytes) + " bytes)"};
    self.event_bytes_ += r.data_json.size();
    self.events_.push_back(Event{std::move(r.type), std::move(r.data_json)});
    return bus::OkReply{};
  }

  // The OpenHuman API exists only for bundles; a worker of a plain skill that sends one of its
  // requests is refused like any request its skill cannot make.
  [[nodiscard]] std::optional<bus::ErrorReply> bundle_only(const char* what) const {
    if (ctx().format == SkillFormat::openhuman) return std::nullopt;
    return bus::ErrorReply{
        bus::ErrorCode::PermissionDenied,
        std::string(what) + " belongs to the OpenHuman bundle API; this skill is not a bundle"};
  }

  [[nodiscard]] bundle_db::DbSettings db_settings() const {
    return bundle_db::DbSettings{ctx().policy.db.quota_bytes, ctx().memory_bytes};
  }

  // The lease and the image (docs/openhuman.md "db"), waited for until the invocation stops.
  [[nodiscard]] Result<bus::Bytes, bus::ErrorReply> open_db_image() const {
    if (auto refused = identity()) return *refused;  // the database is the skill's data, like its store
    if (!ctx().state->db)
      return bus::ErrorReply{bus::ErrorCode::IoError, "db: the tenant has no database backend"};
    auto lease = ctx().state->db->acquire(ctx().skill_id, self.stop_);
    if (!lease) return lease.error();
    auto image = (*lease)->read_image(bundle_db::db_max_image_bytes(db_settings()));
    if (!image) {
      bus::ErrorReply e = std::move(image.error());
      if (e.code == bus::ErrorCode::PayloadTooLarge)
        e.message += " (permissions.db.quota_bytes, and half of limits.memory_mb)";
      return e;
    }
    caps().db_lease = std::move(*lease);
    return std::move(*image);
  }

  std::optional<bus::Reply> operator()(bus::DbRequest& r) const {
    if (auto refused = bundle_only("db")) return *refused;
    if (self.db_in_worker_)
      return bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                             "db: statements run inside the worker process; the host serves none"};
    if (!caps().db) {
      Result<bus::Bytes, bus::ErrorReply> image = open_db_image();
      if (!image) return image.error();
      caps().db =
          std::make_unique<bundle_db::DbEngine>(std::move(*image), db_settings(), self.stop_, self.budget_);
    }
    return caps().db->handle(r);
  }

  std::optional<bus::Reply> operator()(bus::DbOpenRequest& /*r*/) const {
    if (auto refused = bundle_only("db")) return *refused;
    if (!self.db_in_worker_ || caps().db_lease)
      return bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                             "db: the database is opened once per invocation, by its worker"};
    Result<bus::Bytes, bus::ErrorReply> image = open_db_image();
    if (!image) return image.error();
    bus::HostBytes image_held(self.budget_);
    (void)image_held.charge(image->size());  // within the limit: db_max_image_bytes capped it at half of it
    return bus::BytesReply(std::move(*image), std::move(image_held));
  }

  // The worker's own module graph walk asks for files; the supervisor serves that (worker_supervision)
  // before any capability sees a request, so it never reaches here from an honest worker, and the
  // in-process engine never sends one.
  std::optional<bus::Reply> operator()(bus::SourcesRequest& /*r*/) const {
    return bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                           "sources: the skill's files are read before it runs; the host serves none now"};
  }

  std::optional<bus::Reply> operator()(bus::CredentialRequest& r) const {
    if (auto refused = bundle_only("oauth/auth")) return *refused;
    return caps().vault.handle(r);
  }

  std::optional<bus::Reply> operator()(bus::StoreGetRequest& r) const { return store(r); }
  std::optional<bus::Reply> operator()(bus::StoreSetRequest& r) const { return store(r); }
  std::optional<bus::Reply> operator()(bus::StoreDeleteRequest& r) const { return store(r); }
  std::optional<bus::Reply> operator()(bus::StoreKeysRequest& r) const { return store(r); }
  std::optional<bus::Reply> operator()(bus::StoreIncrementRequest& r) const { return store(r); }
  std::optional<bus::Reply> operator()(bus::StoreCompareAndSetRequest& r) const { return store(r); }

  std::optional<bus::Reply> operator()(bus::EnvGetRequest& r) const {
    if (auto refused = identity()) return *refused;
    if (!caps().env) caps().env = std::make_unique<capabilities::EnvCapability>(ctx().policy.env, ctx().env);
    capabilities::EnvAnswer answer = caps().env->handle(r);
    // The note is a log line like any other: it counts against the run's log budget, and a budget
    // already spent drops it (the env reply itself is unaffected).
    if (answer.note) (void)caps().log.handle(*answer.note);
    return std::move(answer.reply);
  }
};

HostEndpoint::HostEndpoint(InvocationContext context, bus::CompletionSink& sink, const bus::StopToken& stop,
                           bus::MemoryBudget* budget)
    : context_(std::move(context)),
      sink_(sink),
      stop_(stop),
      budget_(budget),
      caps_(std::make_unique<Capabilities>(context_, budget)),
      http_sink_(std::make_unique<RedactingSink>(sink_, caps_->vault)) {}

void ContactedOrigins::add(const std::string& origin) {
  base::MutexLock lock(mu_);
  if (std::find(origins_.begin(), origins_.end(), origin) != origins_.end()) return;
  if (origins_.size() < kMaxOrigins) {
    origins_.push_back(origin);
  } else if (origins_.size() == kMaxOrigins) {
    origins_.push_back("...");  // more than kMaxOrigins: the list says it is cut
  }
}

std::vector<std::string> ContactedOrigins::list() const {
  base::MutexLock lock(mu_);
  return origins_;
}

HostEndpoint::~HostEndpoint() {
  cancel_all();
}

void HostEndpoint::cancel_all() {
  if (caps_->http) caps_->http->cancel_all();
  if (caps_->http_credentialed) caps_->http_credentialed->cancel_all();
}

std::vector<LogEntry> HostEndpoint::take_logs() {
  sender_.assert_entered();
  logs_streamed_ = 0;
  return caps_->log.take();
}

void HostEndpoint::report(RunResult& result) {
  sender_.assert_entered();
  result.usage.host_calls = counters_.host_calls.load();
  result.usage.http_bytes_in = counters_.http_bytes_in.load();
  result.usage.http_bytes_out = counters_.http_bytes_out.load();
  if (budget_ != nullptr) result.usage.host_peak_bytes = budget_->host_peak_bytes();
  result.logs = take_logs();
  result.events = std::move(events_);
  events_.clear();
}

Result<void> HostEndpoint::finish_db(Outcome outcome, std::optional<bus::Bytes> worker_image) {
  sender_.assert_entered();
  const bool keep = outcome == Outcome::ok || outcome == Outcome::error;
  std::optional<bus::Bytes> image = std::move(worker_image);
  if (caps_->db) {
    // After a limit nothing more is done for the run: the image is not even taken out.
    if (keep) image = caps_->db->finish();
    caps_->db.reset();
  }
  Result<void> stored;
  if (keep && image && caps_->db_lease) {
    // A worker's image is untrusted: it must be a database (or nothing) and within the cap.
    const bool looks_right = state::looks_like_sqlite(*image);
    const uint64_t cap = bundle_db::db_max_image_bytes(
        bundle_db::DbSettings{context_.policy.db.quota_bytes, context_.memory_bytes});
    if (!looks_right || image->size() > cap) {
      stored = Error{"the run's database image was not a database within the quota; it was not stored"};
    } else if (auto replaced = caps_->db_lease->replace_image(*image); !replaced) {
      stored = Error{replaced.error().message};
    }
  }
  caps_->db_lease.reset();  // releases the lease
  return stored;
}

std::optional<bus::Reply> HostEndpoint::send(uint64_t request_id, bus::Request request) {
  sender_.assert_entered();
  // db statements run beside the engine (in the worker process in worker mode, which fetches the
  // database once with a DbOpenRequest), so neither is a host call: both modes count and observe the
  // same requests.
  const bool db_statement =
      std::holds_alternative<bus::DbRequest>(request) || std::holds_alternative<bus::DbOpenRequest>(request);
  if (!db_statement) counters_.host_calls.fetch_add(1, std::memory_order_relaxed);
  if (request.valueless_by_exception())
    return bus::ErrorReply{bus::ErrorCode::IoError,
                           "internal error: the host received a request without a type and served nothing"};
  // Nothing happens after a limit: checked here, before any capability sees the request, and not in
  // each binding. The token also reads the clock, so a deadline the engine has not noticed yet (it
  // was inside a native call) already counts.
  if (stop_.stop_requested())
    return bus::ErrorReply{bus::ErrorCode::Timeout,
                           "the invocation is ending (a limit was reached or its deadline passed); the host "
                           "served nothing"};
  // The payload is already a host copy (made by the binding, or decoded from a worker's frame): it is
  // counted from here for as long as a capability works on it, and a request whose payload does not
  // fit the invocation's memory limit is refused before any capability sees it.
  bus::HostBytes held(budget_);
  const uint64_t payload = payload_bytes(request);
  if (!held.charge(payload))
    return bus::ErrorReply{bus::ErrorCode::PayloadTooLarge,
                           "the request was refused: its " + budget_->refusal(payload)};
  if (live_ == nullptr) return std::visit(Router{*this, request_id, held}, request);
  // Observed: the request is described before it is moved into its capability; new log lines (the
  // line itself, an env note, the budget marker) are streamed after it was served.
  const bool is_log = std::holds_alternative<bus::LogRequest>(request);
  const size_t events_before = events_.size();
  std::string detail =
      !is_log && !db_statement && live_->wants_events() ? describe_request(request) : std::string();
  std::optional<bus::Reply> reply = std::visit(Router{*this, request_id, held}, request);
  const std::vector<LogEntry>& lines = caps_->log.entries();
  for (; logs_streamed_ < lines.size(); ++logs_streamed_) live_->log(lines[logs_streamed_]);
  if (!detail.empty()) {
    if (const auto* err = reply ? std::get_if<bus::ErrorReply>(&*reply) : nullptr)
      detail += std::string(" -> ") + bus::error_name(err->code);
    live_->event(RunEvent::Kind::host_call, detail);
  }
  // A bundle's event, once accepted (an EventRequest is the only request that adds one).
  for (size_t i = events_before; i < events_.size(); ++i) live_->skill_event(events_[i]);
  return reply;
}

}  // namespace skillbox::runner
