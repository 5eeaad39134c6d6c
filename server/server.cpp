// server/server.cpp — see server.h.
#include "server/server.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "server/api.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/run_queue.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

// Members in construction order; destroyed in reverse: the queue (its threads joined, so no run still
// answers), then the HTTP server (sockets, I/O context), the API, and last the runner.
struct Server::Impl {
  ServerConfig config;
  std::unique_ptr<Runner> runner;
  std::unique_ptr<Metrics> metrics;
  std::atomic<bool> draining{false};
  CancelToken cancel_all;
  std::unique_ptr<Api> api;
  std::unique_ptr<HttpServer> http;
  std::unique_ptr<RunQueue> queue;
  std::vector<std::string> urls;
  std::thread drainer;
  int signals = 0;  // I/O thread only
};

Server::Server() : impl_(std::make_unique<Impl>()) {}

Server::~Server() {
  if (impl_->drainer.joinable()) impl_->drainer.join();
  if (impl_->api) impl_->api->shutdown_mcp();
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
  std::unique_ptr<Server> server(new Server());
  Impl& s = *server->impl_;
  s.config = std::move(config);
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
  s.api = std::make_unique<Api>(s.config, *s.runner, *s.queue, *s.metrics, s.draining, s.cancel_all);
  Api* api = s.api.get();
  s.http = std::make_unique<HttpServer>(
      s.config,
      [api](HttpRequest request, const Respond& respond, const RespondStream& stream) {
        api->handle(std::move(request), respond, stream);
      },
      [api](const std::string& request_id) { api->client_gone(request_id); });
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
  impl_->http->run([this](int /*signal*/) {
    if (++impl_->signals == 1) {
      begin_drain();
    } else {
      impl_->cancel_all.cancel();  // a second signal: stop waiting for the runs
    }
  });
  if (impl_->drainer.joinable()) impl_->drainer.join();
}

void Server::begin_drain() {
  impl_->draining = true;
  impl_->http->stop_accepting();
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
  wait_until(Clock::now() + std::chrono::milliseconds(s.config.drain_timeout_ms));
  if (!idle()) {
    s.cancel_all.cancel();
    // A cancelled run stops at its next step (a worker is killed); its response then goes out.
    wait_until(Clock::now() + std::chrono::seconds(5));
  }
  s.http->stop();
}

}  // namespace skillbox::server
