// server/api.cpp — see api.h.
#include "server/api.h"

#include <cstdio>
#include <exception>
#include <optional>
#include <string_view>

#include "base/escape.h"
#include "server/api_key.h"
#include "server/run_request.h"
#include "server/skill_catalog.h"
#include "skillbox/json.h"

namespace skillbox::server {

struct Api::Tenant {
  TenantConfig config;
  std::shared_ptr<const TenantContext> context;
  /// Requests of this tenant on the RunQueue (queued or running); at most config.max_concurrent_runs.
  std::atomic<size_t> admitted{0};
};

struct Api::Route {
  enum class Kind : uint8_t { list, detail, run };
  Kind kind = Kind::list;
  std::string_view method;
  std::string id;  // as sent (never decoded); checked by find_skill before it meets a path
};

namespace {

/// The path of a request target: everything before '?'. The query string is never read: no key,
/// tenant or id can arrive through it.
std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

/// The route `path` names, or std::nullopt. Segments are matched exactly, undecoded: "%2e%2e" is an id
/// (which the id rule then refuses), and "/v1/skills/../x/run" has too many segments to be a route.
template <class Route>
std::optional<Route> match_route(std::string_view path) {
  constexpr std::string_view prefix = "/v1/skills";
  if (!path.starts_with(prefix)) return std::nullopt;
  std::string_view rest = path.substr(prefix.size());
  if (rest.empty()) return Route{Route::Kind::list, "GET", {}};
  if (rest.front() != '/') return std::nullopt;
  rest.remove_prefix(1);
  const size_t slash = rest.find('/');
  const std::string_view id = rest.substr(0, slash);
  if (id.empty()) return std::nullopt;
  if (slash == std::string_view::npos) return Route{Route::Kind::detail, "GET", std::string(id)};
  if (rest.substr(slash) == "/run") return Route{Route::Kind::run, "POST", std::string(id)};
  return std::nullopt;
}

HttpResponse json_ok(std::string body) {
  return HttpResponse{.status = 200, .body = std::move(body), .headers = {}, .tenant = {}};
}

HttpResponse with_header(HttpResponse r, std::string name, std::string value) {
  r.headers.emplace_back(std::move(name), std::move(value));
  return r;
}

HttpResponse probe(std::string_view path, std::string_view method, bool draining) {
  if (method != "GET") {
    return with_header(error_response(405, "method_not_allowed", "use GET"), "Allow", "GET");
  }
  if (path == "/readyz" && draining) return error_response(503, "draining", "the server is shutting down");
  return json_ok(R"({"status":"ok"})");
}

}  // namespace

Api::Api(const ServerConfig& config, Runner& runner, RunQueue& queue, const std::atomic<bool>& draining,
         CancelToken cancel)
    : runner_(runner), queue_(queue), draining_(draining), cancel_(std::move(cancel)) {
  for (const TenantConfig& c : config.tenants) {
    auto t = std::make_unique<Tenant>();
    t->config = c;
    std::shared_ptr<TenantContext> context = local_tenant(c.id, c.data_dir);
    context->ceilings = c.ceilings;  // no env values and no origin map in this slice (docs/serve.md)
    t->context = std::move(context);
    tenants_.push_back(std::move(t));
  }
}

Api::~Api() = default;

void Api::handle(HttpRequest request, const Respond& respond) {
  const std::string_view path = path_of(request.target);
  if (path == "/healthz" || path == "/readyz") return respond(probe(path, request.method, draining_.load()));
  const std::optional<Route> route = match_route<Route>(path);
  if (!route) {
    return respond(error_response(404, "not_found",
                                  "no route \"" + base::escape_text(path.substr(0, 200)) +
                                      "\"; the API is GET /v1/skills, GET /v1/skills/ID and "
                                      "POST /v1/skills/ID/run (docs/serve.md)"));
  }
  if (request.method != route->method) {
    return respond(with_header(error_response(405, "method_not_allowed", "use " + std::string(route->method)),
                               "Allow", std::string(route->method)));
  }
  if (draining_.load()) {
    return respond(error_response(503, "draining", "the server is shutting down; try another replica"));
  }
  Tenant* tenant = authenticate(request);
  if (tenant == nullptr) {
    const bool missing = request.authorization.empty();
    return respond(
        with_header(error_response(401, "unauthorized",
                                   missing ? "missing API key: send the header Authorization: Bearer KEY"
                                           : "the API key is not valid (send Authorization: Bearer KEY)"),
                    "WWW-Authenticate", "Bearer"));
  }
  admit(*tenant, *route, std::move(request), respond);
}

Api::Tenant* Api::authenticate(const HttpRequest& request) const {
  std::string_view value = request.authorization;
  constexpr std::string_view scheme = "bearer ";
  if (value.size() <= scheme.size()) return nullptr;
  for (size_t i = 0; i < scheme.size(); ++i) {
    const char c = value[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return nullptr;
  }
  value.remove_prefix(scheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > kMaxApiKeyBytes) return nullptr;
  // Every stored hash is compared, whichever matches, so the time taken does not say which tenant (or
  // whether any) holds the key.
  const KeyHash presented = hash_api_key(value);
  Tenant* found = nullptr;
  for (const auto& t : tenants_) {
    for (const KeyHash& h : t->config.key_hashes) {
      if (key_hashes_equal(presented, h)) found = t.get();
    }
  }
  return found;
}

void Api::admit(Tenant& tenant, const Route& route, HttpRequest request, const Respond& respond) {
  if (tenant.admitted.fetch_add(1) >= tenant.config.max_concurrent_runs) {
    --tenant.admitted;
    HttpResponse busy =
        error_response(429, "too_many_requests",
                       "this tenant already has " + std::to_string(tenant.config.max_concurrent_runs) +
                           " requests in progress (max_concurrent_runs); retry later");
    busy.tenant = tenant.config.id;
    return respond(with_header(std::move(busy), "Retry-After", "1"));
  }
  auto job = [this, &tenant, route, request = std::move(request), respond] {
    HttpResponse response;
    try {
      response = serve(tenant, route, request);
    } catch (const std::exception& e) {
      response = error_response(500, "internal",
                                "internal error; see the server's log for request " + request.request_id);
      const std::string line = "skillbox serve: request_id=" + request.request_id +
                               " internal error: " + base::escape_text(e.what()) + "\n";
      (void)std::fwrite(line.data(), 1, line.size(), stderr);
    }
    response.tenant = tenant.config.id;
    --tenant.admitted;
    respond(std::move(response));
  };
  if (!queue_.submit(std::move(job))) {
    --tenant.admitted;
    HttpResponse full =
        error_response(503, "server_busy", "every run thread is busy and the queue is full; retry later");
    full.tenant = tenant.config.id;
    respond(with_header(std::move(full), "Retry-After", "1"));
  }
}

HttpResponse Api::serve(const Tenant& tenant, const Route& route, const HttpRequest& request) const {
  if (route.kind == Route::Kind::list) return json_ok(skill_list_json(tenant.config.skills_dir));
  Result<Skill, SkillProblem> skill = find_skill(tenant.config.skills_dir, route.id);
  if (!skill) return error_response(skill.error().status, skill.error().code, skill.error().message);
  if (route.kind == Route::Kind::detail) {
    return json_ok(skill_detail_json(*skill, route.id, tenant.context->ceilings));
  }
  return run(tenant, *skill, request);
}

HttpResponse Api::run(const Tenant& tenant, const Skill& skill, const HttpRequest& request) const {
  Result<RunRequest> body = parse_run_request(request.body);
  if (!body) return error_response(400, "invalid_request", body.error().message);
  const Limits effective = tenant.context->ceilings.apply(skill.manifest().limits);
  Result<LimitOverrides> overrides = run_overrides(*body, effective);
  if (!overrides) return error_response(400, "limit_too_high", overrides.error().message);
  const Invocation invocation{.skill = skill,
                              .export_name = body->export_name,
                              .input_json = body->input_json,
                              .overrides = *overrides,
                              .narrowing = {},
                              .observer = {},
                              .cancel = cancel_,
                              .tenant = tenant.context};
  // 200 whatever the outcome: the HTTP exchange worked, and the outcome (error, timeout, ...) is in
  // the result, exactly as `skillbox run --json` prints it.
  return json_ok(to_json(runner_.run(invocation)));
}

}  // namespace skillbox::server
