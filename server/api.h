// server/api.h — the HTTP API of `skillbox serve` (docs/serve.md "API"): routing, authentication,
// admission, and the work of each route on the RunQueue.
//
//   GET  /healthz                 200 while the process lives (no key)
//   GET  /readyz                  200 while accepting, 503 while draining (no key)
//   GET  /v1/skills               the tenant's skills
//   GET  /v1/skills/{id}          one skill: manifest, exports, effective limits and permissions
//   POST /v1/skills/{id}/run      one run: the RunResult JSON of skillbox/json.h, whatever the outcome
//
// The key (Authorization: Bearer KEY) alone names the tenant; nothing else a client sends (the query
// string, other headers, the id) can reach another tenant's skills folder, data directory or runs.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "server/config.h"
#include "server/http_types.h"
#include "server/run_queue.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

class Api {
 public:
  /// `runner`, `queue` and `draining` must outlive the Api; `cancel` is given to every run (the server
  /// cancels it when the drain timeout passes).
  Api(const ServerConfig& config, Runner& runner, RunQueue& queue, const std::atomic<bool>& draining,
      CancelToken cancel);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  /// Serves one request (server/http_types.h Handler): answers at once, or queues the work on the
  /// RunQueue and answers from there.
  void handle(HttpRequest request, const Respond& respond);

 private:
  struct Tenant;
  struct Route;
  Tenant* authenticate(const HttpRequest& request) const;
  void admit(Tenant& tenant, const Route& route, HttpRequest request, const Respond& respond);
  HttpResponse serve(const Tenant& tenant, const Route& route, const HttpRequest& request) const;
  HttpResponse run(const Tenant& tenant, const Skill& skill, const HttpRequest& request) const;

  Runner& runner_;
  RunQueue& queue_;
  const std::atomic<bool>& draining_;
  CancelToken cancel_;
  std::vector<std::unique_ptr<Tenant>> tenants_;
};

}  // namespace skillbox::server
