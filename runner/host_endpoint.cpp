#include "runner/host_endpoint.h"

#include <utility>
#include <variant>

#include "capabilities/env/env_capability.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/http/http_capability.h"
#include "capabilities/log/log_capability.h"
#include "capabilities/store/store_capability.h"
#include "policy/skill_binding.h"

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
  uint64_t operator()(const auto& /*small*/) const { return 0; }
};

uint64_t payload_bytes(const bus::Request& request) {
  return std::visit(PayloadSize{}, request);
}

}  // namespace

struct HostEndpoint::Capabilities {
  explicit Capabilities(bus::MemoryBudget* budget) : log(budget) {}
  capabilities::LogCapability log;
  std::unique_ptr<capabilities::Workspace> fs;
  std::unique_ptr<capabilities::HttpCapability> http;
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
        if (auto owner = policy::bind_skill_id(ctx().data_dir, ctx().skill_id, self.skill_dir_); !owner)
          self.identity_ = bus::ErrorReply{bus::ErrorCode::PermissionDenied, owner.error().message};
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
      caps().fs = std::make_unique<capabilities::Workspace>(ctx().data_dir, ctx().skill_id, ctx().policy.fs,
                                                            self.stop_, self.budget_);
    return *caps().fs;
  }
  capabilities::StoreCapability& store() const {
    if (!caps().store)
      caps().store = std::make_unique<capabilities::StoreCapability>(
          ctx().data_dir, ctx().skill_id, ctx().policy.store, self.stop_, self.budget_);
    return *caps().store;
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

  std::optional<bus::Reply> operator()(bus::HttpRequest& r) const {
    if (!caps().http)
      caps().http = std::make_unique<capabilities::HttpCapability>(
          ctx().policy.http, ctx().extra_ca_file, self.sink_, self.counters_, capabilities::HttpTuning{},
          self.stop_, self.budget_);
    return caps().http->start(request_id, std::move(r), std::move(held));
  }

  std::optional<bus::Reply> operator()(bus::StoreGetRequest& r) const {
    if (auto refused = identity()) return *refused;
    return store().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::StoreSetRequest& r) const {
    if (auto refused = identity()) return *refused;
    return store().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::StoreDeleteRequest& r) const {
    if (auto refused = identity()) return *refused;
    return store().handle(r);
  }
  std::optional<bus::Reply> operator()(bus::StoreKeysRequest& r) const {
    if (auto refused = identity()) return *refused;
    return store().handle(r);
  }

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
      caps_(std::make_unique<Capabilities>(budget)) {}

HostEndpoint::~HostEndpoint() {
  cancel_all();
}

void HostEndpoint::cancel_all() {
  if (caps_->http) caps_->http->cancel_all();
}

std::vector<LogEntry> HostEndpoint::take_logs() {
  return caps_->log.take();
}

void HostEndpoint::report(RunResult& result) {
  result.usage.host_calls = counters_.host_calls.load();
  result.usage.http_bytes_in = counters_.http_bytes_in.load();
  result.usage.http_bytes_out = counters_.http_bytes_out.load();
  if (budget_ != nullptr) result.usage.host_peak_bytes = budget_->host_peak_bytes();
  result.logs = take_logs();
}

std::optional<bus::Reply> HostEndpoint::send(uint64_t request_id, bus::Request request) {
  counters_.host_calls.fetch_add(1, std::memory_order_relaxed);
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
  return std::visit(Router{*this, request_id, held}, request);
}

}  // namespace skillbox::runner
