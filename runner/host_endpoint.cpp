#include "runner/host_endpoint.h"

#include <utility>
#include <variant>

#include "capabilities/env/env_capability.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/http/http_capability.h"
#include "capabilities/log/log_capability.h"
#include "capabilities/store/store_capability.h"

namespace skillbox::runner {

struct HostEndpoint::Capabilities {
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

  [[nodiscard]] Capabilities& caps() const { return *self.caps_; }
  [[nodiscard]] const InvocationContext& ctx() const { return self.context_; }

  capabilities::Workspace& fs() const {
    if (!caps().fs)
      caps().fs = std::make_unique<capabilities::Workspace>(ctx().data_dir, ctx().skill_id, ctx().policy.fs,
                                                            self.stop_);
    return *caps().fs;
  }
  capabilities::StoreCapability& store() const {
    if (!caps().store)
      caps().store =
          std::make_unique<capabilities::StoreCapability>(ctx().data_dir, ctx().skill_id, ctx().policy.store);
    return *caps().store;
  }

  std::optional<bus::Reply> operator()(bus::LogRequest& r) const { return caps().log.handle(r); }

  std::optional<bus::Reply> operator()(bus::FsReadFileRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsWriteFileRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsReaddirRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsStatRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsExistsRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsMkdirRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsRemoveRequest& r) const { return fs().handle(r); }
  std::optional<bus::Reply> operator()(bus::FsRenameRequest& r) const { return fs().handle(r); }

  std::optional<bus::Reply> operator()(bus::HttpRequest& r) const {
    if (!caps().http)
      caps().http = std::make_unique<capabilities::HttpCapability>(ctx().policy.http, ctx().extra_ca_file,
                                                                   self.sink_, self.counters_,
                                                                   capabilities::HttpTuning{}, self.stop_);
    return caps().http->start(request_id, std::move(r));
  }

  std::optional<bus::Reply> operator()(bus::StoreGetRequest& r) const { return store().handle(r); }
  std::optional<bus::Reply> operator()(bus::StoreSetRequest& r) const { return store().handle(r); }
  std::optional<bus::Reply> operator()(bus::StoreDeleteRequest& r) const { return store().handle(r); }
  std::optional<bus::Reply> operator()(bus::StoreKeysRequest& r) const { return store().handle(r); }

  std::optional<bus::Reply> operator()(bus::EnvGetRequest& r) const {
    if (!caps().env) caps().env = std::make_unique<capabilities::EnvCapability>(ctx().policy.env, ctx().env);
    capabilities::EnvAnswer answer = caps().env->handle(r);
    // The note is a log line like any other: it counts against the run's log budget, and a budget
    // already spent drops it (the env reply itself is unaffected).
    if (answer.note) (void)caps().log.handle(*answer.note);
    return std::move(answer.reply);
  }
};

HostEndpoint::HostEndpoint(InvocationContext context, bus::CompletionSink& sink, const bus::StopToken& stop)
    : context_(std::move(context)), sink_(sink), stop_(stop), caps_(std::make_unique<Capabilities>()) {}

HostEndpoint::~HostEndpoint() {
  cancel_all();
}

void HostEndpoint::cancel_all() {
  if (caps_->http) caps_->http->cancel_all();
}

std::vector<LogEntry> HostEndpoint::take_logs() {
  logs_streamed_ = 0;
  return caps_->log.take();
}

void HostEndpoint::report(RunResult& result) {
  result.usage.host_calls = counters_.host_calls.load();
  result.usage.http_bytes_in = counters_.http_bytes_in.load();
  result.usage.http_bytes_out = counters_.http_bytes_out.load();
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
  if (live_ == nullptr) return std::visit(Router{*this, request_id}, request);
  // Observed: the request is described before it is moved into its capability; new log lines (the
  // line itself, an env note, the budget marker) are streamed after it was served.
  const bool is_log = std::holds_alternative<bus::LogRequest>(request);
  std::string detail = !is_log && live_->wants_events() ? describe_request(request) : std::string();
  std::optional<bus::Reply> reply = std::visit(Router{*this, request_id}, request);
  const std::vector<LogEntry>& lines = caps_->log.entries();
  for (; logs_streamed_ < lines.size(); ++logs_streamed_) live_->log(lines[logs_streamed_]);
  if (!detail.empty()) {
    if (const auto* err = reply ? std::get_if<bus::ErrorReply>(&*reply) : nullptr)
      detail += std::string(" -> ") + bus::error_name(err->code);
    live_->event(RunEvent::Kind::host_call, detail);
  }
  return reply;
}

}  // namespace skillbox::runner
