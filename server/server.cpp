// server/server.cpp — see server.h.
#include "server/server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <thread>

#include "server/api.h"
#include "server/audit.h"
#include "server/database.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/run_queue.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

namespace {

/// One line on stderr, written whole.
void log_line(const std::string& text) {
  const std::string line = "skillbox serve: " + text + "\n";
  (void)std::fwrite(line.data(), 1, line.size(), stderr);
}

/// Where audit = "database" stores its lines: `database`, which outlives every AuditLog (the Impl
/// destroys the audit first). Empty without a database.
AuditBatchWriter audit_writer(const Database* database) {
  if (database == nullptr) return {};
  return [database](const std::vector<std::string>& lines) { return database->store_audit(lines); };
}

}  // namespace

// Members in construction order; destroyed in reverse: the queue (its threads joined, so no run still
// answers), then the HTTP server (sockets, I/O context), the API, and last the runner.
struct Server::Impl {
  ServerConfig config;
  std::unique_ptr<Runner> runner;
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<Database> database;  // serve --database: the tenants' state; null without one
  std::shared_ptr<AuditLog> audit;     // I/O thread only (the HTTP server's Served, and reload)
  std::atomic<bool> draining{false};
  CancelToken cancel_all;
  std::unique_ptr<Api> api;
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<RunQueue> queue;
  std::vector<std::string> urls;
  std::thread drainer;
  std::vector<Listener> file_listeners;       // the config file's listen, as last read
  DatabaseConfig file_database;               // the config file's [database], as last read
  std::atomic<uint64_t> drain_timeout_ms{0};  // the drainer thread reads it
  int signals = 0;                            // I/O thread only
};

Server::Server() : impl_(std::make_unique<Impl>()) {}

Server::~Server() {
  if (impl_->drainer.joinable()) impl_->drainer.join();
  if (impl_->api) impl_->api->shutdown_mcp();
  if (impl_->api) impl_->api->stop_async();
  if (impl_->api) impl_->api->shutdown_ledger_work();
  impl_->queue.reset();
  impl_->http.reset();
}

Result<std::unique_ptr<Server>> Server::start(ServerConfig config) {
  if (const std::string problems = config_problems(config); !problems.empty()) return Error{problems};
  if (config.isolation == "process") {
    if (Result<void> support = WorkerRunner::check_support(); !support) {
      return Error{"process isolation is not available here: " + support.error().message +
                   "; set isolation = \"inprocess\" in the config to serve without it"};
    }
  }
  std::unique_ptr<Database> database;
  if (!config.database.url.empty()) {
    Result<std::unique_ptr<Database>> opened =
        Database::open(config.database, [](const std::string& line) { log_line("database: " + line); });
    if (!opened) return opened.error();
    database = std::move(*opened);
  }
  std::unique_ptr<AuditLog> audit;
  if (!config.audit.empty()) {
    Result<std::unique_ptr<AuditLog>> opened = AuditLog::open(config.audit, audit_writer(database.get()));
    if (!opened) return Error{"audit: " + opened.error().message};
    audit = std::move(*opened);
  }
  std::unique_ptr<Server> server(new Server());
  Impl& s = *server->impl_;
  s.config = std::move(config);
  s.database = std::move(database);
  s.audit = std::move(audit);
  s.file_listeners = s.config.listeners;
  s.file_database = s.config.database;
  s.drain_timeout_ms = s.config.drain_timeout_ms;
  if (s.config.isolation == "inprocess") {
    s.runner = std::make_unique<InProcessRunner>();
  } else {
    s.runner = std::make_unique<WorkerRunner>();
  }
  std::vector<LaneConfig> lanes;
  std::vector<std::string> names;
  for (const TenantConfig& t : s.config.tenants) {
    lanes.push_back(LaneConfig{
        .weight = t.weight, .max_running = t.max_concurrent_runs, .max_queued = t.max_queued_runs});
    names.push_back(t.id);
  }
  s.metrics = std::make_unique<Metrics>(std::move(names));
  s.queue = std::make_unique<RunQueue>(s.config.run_threads, s.config.queue_limit, std::move(lanes));
  s.api = std::make_unique<Api>(s.config, *s.runner, *s.queue, *s.metrics, s.draining, s.cancel_all,
                                s.database.get());
  Api* api = s.api.get();
  s.http = std::make_unique<HttpServer>(
      s.config,
      [api](HttpRequest request, const Respond& respond, const RespondStream& stream) {
        api->handle(std::move(request), respond, stream);
      },
      [api](const std::string& request_id) { api->client_gone(request_id); },
      [&s](std::string_view request_id, std::string_view method, const HttpResponse& response) {
        if (s.audit) s.audit->record(request_id, method, response);
      });
  for (const Listener& l : s.config.listeners) {
    Result<std::string> url = s.http->listen(l);
    if (!url) return url.error();
    s.urls.push_back(std::move(*url));
  }
  return server;
}

const std::vector<std::string>& Server::urls() const {
  return impl_->urls;
}

void Server::run() {
  impl_->http->run([this](int signal) {
    if (signal == SIGHUP) return reload();
    if (++impl_->signals == 1) {
      begin_drain();
    } else {
      impl_->cancel_all.cancel();  // a second signal: stop waiting for the runs
    }
  });
  if (impl_->drainer.joinable()) impl_->drainer.join();
}

namespace {

bool same_listeners(const std::vector<Listener>& a, const std::vector<Listener>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Listener& x, const Listener& y) {
    return x.kind == y.kind && x.address == y.address && x.port == y.port && x.path == y.path &&
           x.tls_cert == y.tls_cert && x.tls_key == y.tls_key;
  });
}

}  // namespace

// On the I/O thread, as every use of the audit.
void Server::reopen_audit() {
  Impl& s = *impl_;
  if (!s.audit) return;
  if (Result<void> reopened = s.audit->reopen(); !reopened) {
    log_line("SIGHUP: the audit stays on its old file: " + reopened.error().message);
  }
}

// On the I/O thread (a SIGHUP), so that no two reloads overlap.
void Server::reload() {
  Impl& s = *impl_;
  reopen_audit();
  for (const std::string& problem : s.http->reload_tls()) log_line("SIGHUP: " + problem);
  if (s.draining.load()) {
    log_line("SIGHUP while shutting down: the config is not read again");
    return;
  }
  if (s.config.source.empty()) {
    log_line("SIGHUP: no config file to reload (started without --config); nothing changed");
    return;
  }
  Result<ServerConfig> next = load_config(s.config.source);
  if (!next) {
    std::istringstream lines(next.error().message);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) log_line("reload refused, the running config stays: " + line);
    }
    return;
  }
  // Fixed at start: the sockets are bound, the runner and the run threads made. A change is logged once
  // (against the file's last reading; with --listen, the file's listen differs from the start, and
  // the first reload says so).
  const auto fixed = [&](bool changed, const std::string& key) {
    if (changed) {
      log_line("reload: " + key + " cannot change on reload (it is fixed at start; restart the server " +
               "to change it); keeping the running value");
    }
  };
  fixed(!same_listeners(next->listeners, s.file_listeners), "listen");
  fixed(next->isolation != s.config.isolation, "isolation");
  fixed(next->run_threads != s.config.run_threads, "run_threads");
  fixed(next->queue_limit != s.config.queue_limit, "queue_limit");
  fixed(next->mcp.allowed_origins != s.config.mcp.allowed_origins ||
            next->mcp.max_sessions_per_tenant != s.config.mcp.max_sessions_per_tenant ||
            next->mcp.session_idle_timeout_ms != s.config.mcp.session_idle_timeout_ms,
        "mcp");
  fixed(next->database.url != s.file_database.url ||
            next->database.max_connections != s.file_database.max_connections ||
            next->database.vault_key_file != s.file_database.vault_key_file,
        "database");
  fixed(next->async.lease_ms != s.config.async.lease_ms ||
            next->async.max_attempts != s.config.async.max_attempts ||
            next->async.poll_ms != s.config.async.poll_ms,
        "async");
  s.file_listeners = next->listeners;
  s.file_database = next->database;
  next->database = s.config.database;
  next->listeners = s.config.listeners;
  next->isolation = s.config.isolation;
  next->run_threads = s.config.run_threads;
  next->queue_limit = s.config.queue_limit;
  next->mcp = s.config.mcp;
  next->async = s.config.async;
  if (next->audit != s.config.audit) {
    Result<std::unique_ptr<AuditLog>> opened =
        next->audit.empty() ? Result<std::unique_ptr<AuditLog>>(nullptr)
                            : AuditLog::open(next->audit, audit_writer(s.database.get()));
    if (!opened) {
      log_line("reload refused, the running config stays: audit: " + opened.error().message);
      return;
    }
    s.audit = std::move(*opened);
  }
  s.http->reconfigure(*next);
  s.api->reload(*next);
  s.drain_timeout_ms = next->drain_timeout_ms;
  s.config = std::move(*next);
  log_line("config reloaded from " + s.config.source.string() + ": " +
           std::to_string(s.config.tenants.size()) + " tenants");
}

void Server::begin_drain() {
  impl_->draining = true;
  impl_->http->stop_accepting();
  impl_->api->stop_async();
  impl_->queue->shutdown();
  impl_->drainer = std::thread([this] { drain_watch(); });
}

void Server::drain_watch() {
  using Clock = std::chrono::steady_clock;
  Impl& s = *impl_;
  const auto idle = [&s] { return s.queue->pending() == 0 && s.http->open_requests() == 0; };
  const auto wait_until = [&](Clock::time_point deadline) {
    while (!idle() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  wait_until(Clock::now() + std::chrono::milliseconds(s.drain_timeout_ms.load()));
  if (!idle()) {
    s.cancel_all.cancel();
    // A cancelled run stops at its next step (a worker is killed); its response then goes out.
    wait_until(Clock::now() + std::chrono::seconds(5));
  }
  s.http->stop();
}

}  // namespace skillbox::server
